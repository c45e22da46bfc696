// Compile-time values and the types the checker gives to expressions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "abi/dtype.h"
#include "abi/layout.h"
#include "support/source.h"

namespace mk {

namespace ast {
struct Decl;
struct GroupDecl;
}  // namespace ast

// An integer polynomial over named symbols (generic parameters), so shapes like [N, 2 * K] can be
// compared before the symbols have values. Division and remainder that are not exact become
// opaque symbols, e.g. "(N / 3)".
class Poly {
 public:
  Poly() = default;
  static Poly constant(int64_t v);
  static Poly symbol(const std::string& name);

  bool isConstant() const;
  // The value of a constant polynomial (0 for the zero polynomial).
  int64_t value() const;
  std::string str() const;
  bool operator==(const Poly& o) const { return terms_ == o.terms_; }
  bool operator!=(const Poly& o) const { return terms_ != o.terms_; }
  bool operator<(const Poly& o) const { return terms_ < o.terms_; }

  // Arithmetic; nullopt on 64-bit overflow.
  static std::optional<Poly> add(const Poly& a, const Poly& b);
  static std::optional<Poly> sub(const Poly& a, const Poly& b);
  static std::optional<Poly> mul(const Poly& a, const Poly& b);
  // Truncating division and remainder; the divisor must not be zero. Not exact -> opaque symbol.
  static std::optional<Poly> div(const Poly& a, const Poly& b);
  static std::optional<Poly> mod(const Poly& a, const Poly& b);
  // Replaces symbols by the values in `env` (symbols missing from it stay).
  std::optional<Poly> substitute(const std::map<std::string, Poly>& env) const;

 private:
  using Monomial = std::vector<std::string>;  // sorted symbol names, repeated for powers
  std::map<Monomial, int64_t> terms_;         // no zero coefficients
};


// One dimension of a shape, with where it was written so errors can point there.
struct Dim {
  Poly value;
  SourceRange origin;
};
using Shape = std::vector<Dim>;
std::string shapeStr(const Shape& s);  // "[2048, N]"

// A layout as written, whose arguments may still be symbolic (abi::Layout once they are not).
struct Layout : abi::LayoutKind {
  Kind kind = RowMajor;
  std::vector<Poly> args;
  SourceRange origin;  // invalid where none was written
  bool written = false;
  std::string str() const;
  bool operator==(const Layout& o) const { return kind == o.kind && args == o.args; }
};
using abi::layoutKindName;  // as written in .mk: "tiled"

// What a tensor is in the program.
enum class Storage { Weight, State, Activation, OpParam, OpResult, StepInput };
const char* storageName(Storage s);

enum class TyKind {
  Error,      // already reported; silences follow-on errors
  Int,        // compile-time integer (value may be symbolic)
  Float,      // compile-time float
  Bool,       // compile-time bool
  Scalar,     // runtime scalar of a dtype
  Tile,       // runtime tile: dtype and static shape
  Tensor,     // a tensor in memory (weight, state, activation, op parameter or result)
  GroupArray, // a group: `layer`, indexed by a compile-time int
  GroupElem,  // one element of a group: `layer[l]`
  Tuple,      // several results of one call
  Void,       // a call with no results
};

struct Ty {
  TyKind kind = TyKind::Error;
  // Int / Float / Bool: the value, when known.
  std::optional<Poly> intValue;
  std::optional<double> floatValue;
  std::optional<bool> boolValue;
  // Scalar / Tile / Tensor
  DType dtype = DType::F32;
  Shape shape;
  // Tensor
  Layout layout;
  Storage storage = Storage::Activation;
  bool writable = false;   // state, op results and inout parameters
  std::string name;        // what the tensor is called, for messages
  SourceRange declRange;   // where it was declared
  // GroupArray / GroupElem
  const ast::GroupDecl* group = nullptr;
  std::optional<int64_t> groupIndex;
  // Tuple
  std::vector<Ty> elems;
  // While the step is elaborated into a graph (every value concrete): which graph tensor a
  // Tensor is, and which step input a Scalar is.
  int tensorId = -1;
  int inputIndex = -1;

  static Ty error() { return {}; }
  static Ty intConst(Poly v) {
    Ty t;
    t.kind = TyKind::Int;
    t.intValue = std::move(v);
    return t;
  }
  static Ty floatConst(std::optional<double> v) {
    Ty t;
    t.kind = TyKind::Float;
    t.floatValue = v;
    return t;
  }
  static Ty boolConst(std::optional<bool> v) {
    Ty t;
    t.kind = TyKind::Bool;
    t.boolValue = v;
    return t;
  }
  static Ty scalar(DType d) {
    Ty t;
    t.kind = TyKind::Scalar;
    t.dtype = d;
    return t;
  }
  static Ty tile(DType d, Shape s) {
    if (s.empty()) return scalar(d);
    Ty t;
    t.kind = TyKind::Tile;
    t.dtype = d;
    t.shape = std::move(s);
    return t;
  }

  bool isError() const { return kind == TyKind::Error; }
  bool isCompileTime() const { return kind == TyKind::Int || kind == TyKind::Float || kind == TyKind::Bool; }
  bool isValue() const { return isCompileTime() || kind == TyKind::Scalar || kind == TyKind::Tile; }
};

// How a type reads in messages: "bf16[2048, 64] tiled(16, 64)", "compile-time int", "layer[3]".
std::string tyStr(const Ty& t);

}  // namespace mk
