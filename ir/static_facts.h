// What an op body's scalars are before any task runs: which are known from the task's indices
// alone, and what every value of each is a multiple of. A pure function of the tile IR, the same
// for every task of the op (task indices unknown), flow-insensitive: a local counts only when it
// is written exactly once (a loop counter, or a single `let`). The backend decides from it which
// weight loads can stream (the loader warp must compute their regions) and which are 16-byte
// aligned. (lowering/regions.cpp's interval analysis is the other reading of scalars: per task,
// with the indices known, flow-sensitive; the two answer different questions.)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "ir/tile.h"

namespace mk::ir {

class StaticFacts {
 public:
  explicit StaticFacts(const TileFunc& fn);

  // Known before the task runs: constants, task indices, and locals that are loop counters of
  // static loops or written once from static values. Never loads or runtime scalars.
  bool isStatic(const Expr& e) const;
  bool staticSlot(int slot) const;

  // A positive number every value of the scalar `e` is a multiple of (1 when unknown).
  int64_t multipleOf(const Expr& e, int depth = 0) const;
  // The largest value of `e` over every task when it is a sum or product of non-negative
  // constants, task indices and `let`s of them; nullopt for anything else.
  std::optional<int64_t> largestValue(const Expr& e, int depth = 0) const;
  // The value of a local written once, by a `let`; nullptr otherwise.
  const Expr* letValue(int slot) const;

 private:
  const TileFunc& fn_;
  std::vector<int> assignments_;           // per local slot: Let/Assign/For statements writing it
  std::map<int, const Stmt*> loopOf_;      // For slot -> its statement
  std::map<int, const Expr*> letValue_;    // slots written by a Let with a value
};

}  // namespace mk::ir
