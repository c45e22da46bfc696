// Internal to backend/tile/: the tile lowering's context, shared by its files (one per op family
// and concern, each defining its part of TileGen). Tile IR -> LLVM IR for one task, shared by
// every target.
//
// How a block runs an op body: scalar values (loop counters, `pos`, reductions) are uniform,
// computed by every compute thread alike. A tile value is evaluated element by element where
// it is used: element i of an elementwise tree is computed by thread i % T from its leaves
// (loads, locals, iota), without materialising the intermediate tiles. Only what needs the whole
// block (reductions, dot products, rowdot/coldot) is computed block-wide into a shared-memory
// temporary first; tile locals live in shared memory too. Every statement that touches tiles
// ends with a barrier of the compute threads.
//
// Values are held as f32 for float dtypes (bf16/f16 values already rounded, as the interpreter
// does) and as i32 for i32 and bool; shared-memory tiles use 4 bytes per element.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend/codegen.h"
#include "ir/static_facts.h"

namespace mk::backend::tile {

using ir::BinaryOp;
using ir::Expr;
using ir::ExprKind;
using ir::Layout;
using ir::ReduceOp;
using ir::Stmt;
using ir::StmtKind;
using ir::UnaryOp;
using llvm::Value;
using V = llvm::Value*;

// --- Facts of the op body the ring plan and the lowering share (plan.cpp, layout.cpp).

// The physical element stride of each logical dimension when the layout is affine with a
// contiguous last dimension (row-major, interleaved rows, padded, tiled with full-width tiles);
// empty otherwise.
std::vector<int64_t> affineStrides(const ir::Tensor& t);
// The streamed loads of one statement, in the order both sides walk them.
std::vector<const Expr*> streamedOf(const Stmt& s, const std::set<const Expr*>& streamed);
bool containsStreamed(const ir::Block& block, const std::set<const Expr*>& streamed);
// Elements of a region, a dimension of length 0 (a single index) counting as 1.
int64_t regionElements(const std::vector<ir::RegionDim>& region);
// The bytes of `load` when it reads exactly one tile of a `tiled(R, C)` layout (rows start at a
// multiple of R, columns at a multiple of C, both known before the task runs): one contiguous
// block, copied in one piece. 0 otherwise.
int64_t wholeTileBytes(const Expr& load, const ir::Tensor& t, const ir::StaticFacts& st);

struct RowCheck;  // rows.cpp

class TileGen {
 public:
  TileGen(const TaskEnv& env, const Variant& v, const TaskArgs& args, Side side)
      : env_(env), b_(*env.b), v_(v), fn_(*v.func), args_(args), side_(side), statics_(*v.func) {}

  void run();  // task.cpp

 private:
  static int64_t align16(int64_t n) { return (n + 15) / 16 * 16; }
  // Bytes of shared memory a streamed matvec loop may use for its staged input vector.
  static constexpr int64_t kStagedBytes = 32 * 1024;
  llvm::LLVMContext& ctx() { return b_.getContext(); }
  llvm::Type* f32() { return b_.getFloatTy(); }
  llvm::Type* i32() { return b_.getInt32Ty(); }
  llvm::Type* repr(DType t) { return isFloat(t) ? f32() : i32(); }
  V cf(double x) { return llvm::ConstantFP::get(f32(), x); }
  V ci(int64_t x) { return b_.getInt32(uint32_t(int32_t(x))); }
  int T() const { return env_.computeThreads; }

  [[noreturn]] void unsupported(const std::string& what) { throw Unsupported{what, fn_.name}; }

  // --- Control flow helpers (task.cpp) -------------------------------------------------------
  llvm::BasicBlock* newBlock(const char* name) { return llvm::BasicBlock::Create(ctx(), name, env_.fn); }
  void loop(V lo, V hi, V step, const std::function<void(V)>& body, int unroll = 0) {
    emitLoop(b_, env_.fn, lo, hi, step, body, unroll);
  }
  void when(V cond, const std::function<void()>& then) { emitIf(b_, env_.fn, cond, then); }
  static constexpr int64_t kStraightRounds = 8;
  void forEachElement(int64_t n, const std::function<void(V)>& body);
  void forEachElement(int64_t n, const std::function<V(V)>& value, const std::function<void(V, V)>& put);
  void valuesThenPuts(V first, int64_t rounds, const std::function<V(V)>& value, const std::function<void(V, V)>& put);
  void forEachStatementElement(int64_t n, const Expr* value, const std::function<V(V)>& valueAt,
                               const std::function<void(V, V)>& put);
  static bool readsGlobal(const Expr& e);
  void barrier() { env_.target->barrier(b_, 1, T()); }

  // --- Numbers and elementwise evaluation (elementwise.cpp) -----------------------------------
  V roundTo(DType t, V x);
  V toFloat(DType from, V x);
  V convert(DType from, DType to, V x);
  V expf(V x);
  V logf(V x);
  V unary(UnaryOp op, DType t, V x);
  V binary(BinaryOp op, DType t, DType ta, DType tb, V a, V b);
  V elem(const Expr& e, V idx);

  // --- Memory: storage and the layout address (layout.cpp) ------------------------------------
  llvm::Type* storageType(DType t) { return backend::storageType(b_, t); }
  V loadStorage(DType t, V ptr) { return backend::loadStorage(b_, t, ptr); }
  void storeStorage(DType t, V ptr, V x);
  V at(DType t, V base, V elemOffset /*i64*/) { return b_.CreateGEP(storageType(t), base, elemOffset); }
  V physOffset(const ir::Tensor& t, const std::vector<V>& c);

  // --- Prefetching (prefetch.cpp) -------------------------------------------------------------
  static bool fromIndices(const Expr& e, int loopSlot = -1);
  void prefetchLoads();
  int64_t prefetchLines(const Expr& load, int64_t firstThread, bool l2);
  std::vector<const Expr*> iterationLoads(const Stmt& loopStmt);
  void prefetchIteration(const Stmt& loopStmt, const std::vector<const Expr*>& loads, V k);
  void atLoopValue(const Stmt& loopStmt, V value, V restore, const std::function<void()>& body);

  // --- Values: tiles, locals, parameters, scalars (values.cpp) --------------------------------
  struct TileRef {
    V base = nullptr;  // ptr addrspace(3), 4-byte elements
    DType dtype = DType::F32;
  };
  const ir::Tensor& tensorOf(int param);
  V tilePtr(int64_t offset) { return smemPtr(env_, ci(offset)); }
  V allocBytes(int64_t bytes, int64_t align = 16);  // a temporary of `bytes` above the others
  TileRef allocTemp(int64_t elements, DType t);
  V readTile(const TileRef& t, V idx);
  void writeTile(const TileRef& t, V idx, V x) { b_.CreateStore(x, b_.CreateGEP(repr(t.dtype), t.base, idx)); }
  TileRef localTile(int slot);
  V scalarSlot(int slot) { return (*env_.scalarSlots)[size_t(slot)]; }
  V readScalarLocal(int slot);
  void writeScalarLocal(int slot, V x);
  llvm::AllocaInst* entryAlloca(llvm::Type* t);
  V paramScalar(int index, DType want);
  std::vector<V> starts(const std::vector<ir::RegionDim>& region);
  std::vector<V> coordsOf(const std::vector<ir::RegionDim>& region, const std::vector<V>& s, V idx);
  V scalar(const Expr& e);
  const Expr& operand(const Expr& e, size_t i);
  V scalarRaw(const Expr& e);
  void prepare(const Expr& e);

  // --- Block reductions and dot (reduce.cpp) --------------------------------------------------
  struct Partial {
    V value;
    V index;  // argmax/argmin position (i32), or null
  };
  Partial blockReduce(ReduceOp op, DType accT, Partial p);
  V reduceIdentity(ReduceOp op, DType accT);
  Partial reduceElements(ReduceOp op, DType accT, int64_t n, const std::function<V(V)>& value);
  V reduce(const Expr& e);
  V dot(const Expr& e);
  TileRef rowReduce(const Expr& e);
  V combineRow(ReduceOp op, DType accT, V x, V y);

  // --- Row-owned runs (rows.cpp) --------------------------------------------------------------
  // Consecutive statements over tiles of R rows in which each row's elements are computed by one
  // group of `lanes` threads of a warp (the same elements in every statement of the run) and
  // rows are reduced by shuffles within the group: no statement but the last needs a barrier.
  //
  // A fragment run (the target's mmaFragmentRuns) starts with a product of R rows, a multiple
  // of 16 up to 16 a warp: element (r, c) of its [R, C] tiles is owned where the target's accumulators of a
  // warp's 16-row strip put it, so a product's accumulators are its elements as computed, and a
  // product whose a is a tree over the run's owned elements takes its a fragment from them.
  // Products anywhere in the run are computed by each warp for its strip, their staged operands
  // copied once at the run's start. Locals that only fragment runs of the same rows reference (an
  // online softmax's max, sum and accumulator across its key blocks) live in registers.
  struct RowRun {
    int64_t rows = 0;
    int lanes = 0;
    bool first = false, last = false;
    bool fragment = false;
  };
  void findRowRuns(const ir::Block& stmts);
  std::optional<RowCheck> checkStatement(const Stmt& s, int64_t rows, int lanes, bool fragment);
  const RowRun* rowRunOf(const Stmt& s) const;
  // Each element of a tile of `shape` this thread owns in the run (rank 1: its row, computed by
  // every lane of the group alike; rank 2: its row's columns lane, lane + lanes, ...).
  void forEachOwnedElement(const std::vector<int64_t>& shape, const std::function<V(V)>& value,
                           const std::function<void(V, V)>& put);
  TileRef ownedRowReduce(const Expr& e);
  // Fragment runs: whether R rows make one (the target's layout, 16 rows a warp); a fragment
  // run's product (its accumulators: this thread's owned elements) and row reduction (its two
  // rows' values); the operands of every product of the run starting at `s`, staged (rows.cpp).
  bool fragmentRows(int64_t rows) const;
  void findFragmentStatements(const ir::Block& body);
  std::vector<V> fragmentMma(const Expr& e, std::vector<V> init = {});  // init: the accumulators' start
  std::vector<V> fragmentRowReduce(const Expr& e);
  void stageRunProducts(const Stmt& first);
  // Element j of this thread's owned elements of a fragment run's [R, C] (or [R]) tile: its
  // index in the tile, and the row (0 or 1) of the thread's two.
  V fragmentIndex(const std::vector<int64_t>& shape, int64_t j, int* half);
  // A local that only one run references, first by a let, at owned elements: it lives in
  // registers (its elements this thread owns), not in shared memory.
  bool privateLocal(int slot) const { return private_.count(slot) > 0; }
  llvm::AllocaInst* privateElement(int slot);
  V readPrivate(int slot);
  void writePrivate(int slot, V x);

  // --- Rowdot (rowdot.cpp) --------------------------------------------------------------------
  // How a rowdot reads its matrix: rows of `stride` elements from `base` when contiguous.
  struct RowAccess {
    V base = nullptr;  // the element (0, 0) of the operand; null: element by element
    DType storage = DType::F32;
    int64_t stride = 0;
    bool vector = false;  // rows can be read 16 bytes at a time
  };
  RowAccess rowAccess(const Expr& A, int64_t K);
  std::vector<V> loadVector(const RowAccess& a, V elemOffset /*i64*/, V swapHalves = nullptr);
  bool flatRowdot(const RowAccess& acc, int64_t M, int64_t K, const Expr& x, const std::function<void(V, V)>& put);
  TileRef rowdot(const Expr& e, const TileRef* into = nullptr);

  // --- Coldot (coldot.cpp) --------------------------------------------------------------------
  TileRef coldot(const Expr& e);

  // --- Mma and mma_nt (mma.cpp) ---------------------------------------------------------------
  // How a product on the matrix instruction is dealt out: its output in tiles of mb x nb
  // instruction blocks, round-robin over the warps (tilesPerWarp each at most).
  // On the warpgroup instruction (group) the tiles are 64 x groupN, dealt round-robin over the
  // warpgroups; each warp's view of one is a 16-row strip of mb = 1 by nb = groupN / n blocks.
  struct MmaTiling {
    bool nt = false;
    bool group = false;  // wgmma (Target::groupMma); the operands staged swizzled
    // mma's b[k, n] staged as it lies (rows of k, in panels of 64 columns) rather than transposed:
    // on wgmma where N is a multiple of a panel.
    bool bNMajor = false;
    int64_t M = 0, N = 0, K = 0;
    int64_t ld = 0;  // elements per staged row, without group
    ir::MmaShape shape{};
    int mb = 1, nb = 1, tilesPerWarp = 0, perBlock = 0, groupN = 0;
    int64_t tilesAcross = 0, tiles = 0;
    int64_t stagedBytes() const;
    int64_t stagedBBytes() const;  // b's
    // Elements from one staged row of b to the next: N-major b's rows of n on the per-warp
    // instruction are padded as a's (rows of k) are.
    int64_t ldB() const { return bNMajor && !group ? N + 8 : ld; }
    int64_t stagedRowsBytes(int64_t rows) const;  // an operand (or several) of `rows` rows
    int64_t stagedAlign() const { return group ? 1024 : 16; }
  };
  static constexpr int kGroupThreads = 128;  // a warpgroup
  // Accumulators a lane may hold for one warp tile, and across an accumulating loop.
  static constexpr int kMaxTileAccumulators = 32;
  static constexpr int kMaxLaneAccumulators = 64;
  static constexpr int kMaxMmaStages = 4;  // a loop's copy pipeline (mmaAccumulatingLoop)
  TileRef mma(const Expr& e);
  std::optional<MmaTiling> mmaTiling(const Expr& e);  // nullopt: the scalar lowering
  // A fragment run's product: per warp, a strip of 16 rows by all N columns on mma.sync-style
  // blocks; mma's b N-major.
  MmaTiling fragmentTiling(const Expr& e);
  struct MmaRows {
    V base = nullptr;    // row 0 of the operand
    int64_t pitch = 0;   // elements from one row to the next
    bool global = false; // in global memory (else a ring slot)
    // Rows in groups of groupRows (0: one group), groupPitch elements from one group to the next
    // (a region over several tiles of a tiled layout).
    int64_t groupRows = 0, groupPitch = 0;
  };
  std::optional<MmaRows> mmaRows(const Expr& x, DType dt, int64_t K);  // rows of K elements
  // Element (row, k) of a staged operand of `rows` rows at `operand` (ptr addrspace(3) to i16).
  V stagedElement(const MmaTiling& t, V operand, int64_t rows, V row, V k, int64_t ld = 0);
  void copyMmaRows(const MmaRows& src, V dst, int64_t rows, int64_t rowElements, const MmaTiling& t, bool async);
  // Where the warpgroup tile of b at column n0 starts in the staged b at `b`, with its layout.
  void groupB(const MmaTiling& t, V b, V n0, Target::GroupMmaTile& tile);
  V stagedB(const MmaTiling& t, V base);
  void stageMmaA(const Expr& a, const MmaTiling& t, V sa);
  void stageMmaB(const Expr& b, const MmaTiling& t, V sb);
  Target::MmaOperands stageMma(const Expr& e, const MmaTiling& t, V base);
  std::vector<llvm::AllocaInst*> mmaAccumulatorSlots(const MmaTiling& t);
  // One product's accumulators (mmaAccumulatorSlots) and where its operands are staged.
  struct MmaAccumulation {
    MmaTiling t;
    std::vector<llvm::AllocaInst*> slots;
    Target::MmaOperands ops{};
  };
  void forEachMmaTile(const MmaTiling& t, const std::function<void(int j, V m0, V n0)>& body);
  // A loop's products of one shape on the warpgroup instruction, dealt as one: tile u of the deal
  // is tile u % t.tiles of product u / t.tiles, and warpgroup g takes u = g + r * groups in round r.
  struct GroupDeal {
    MmaTiling t;  // each product's
    int products = 0, rounds = 0;
    int64_t total = 0;
  };
  void tileForGroups(MmaTiling& t, int products);
  int groupMmaChains(const std::vector<Target::GroupMmaTile>& tiles, const MmaTiling& t) const;
  GroupDeal dealGroupTiles(const MmaTiling& t, int products);
  void forEachDealtTile(const GroupDeal& d, const std::function<void(int r, V product, V m0, V n0)>& body);
  void forEachDealtAccumulator(const GroupDeal& d, const std::vector<V>& locals,
                               const std::vector<llvm::AllocaInst*>& slots,
                               const std::function<void(V local, V element, llvm::AllocaInst* slot)>& visit);
  // `wait`: the products are done on return; else on the warpgroup instruction they are left in
  // flight until waitGroupMma over their accumulators (on mma.sync they are done either way).
  void accumulateDealtMma(const GroupDeal& d, const std::vector<llvm::AllocaInst*>& slots, DType dt, V a, V b0,
                          int64_t bStride, bool wait);
  void forEachMmaAccumulator(const MmaTiling& t, const std::vector<llvm::AllocaInst*>& slots,
                             const std::function<void(V element, llvm::AllocaInst* slot)>& visit);
  void accumulateMma(const std::vector<MmaAccumulation>& products, bool wait = true);
  void accumulateGroupMma(const std::vector<MmaAccumulation>& products, bool wait);
  void waitGroupMma(const std::vector<llvm::AllocaInst*>& slots);
  TileRef matrixInstructionMma(const Expr& e, const MmaTiling& t);
  bool accumulatesMma(const Stmt& s);
  bool mmaAccumulatingLoop(const Stmt& loopStmt);
  void accumulateMmaStatement(const Stmt& s, const std::vector<V>& ringSlots);

  // --- A loop's product operands copied an iteration ahead (pipeline.cpp) ----------------------
  struct LoopOperand {
    const Expr* load = nullptr;  // a product's operand: rows in global memory
    MmaTiling t;                 // its product's
    int64_t rows = 0, rowElements = 0;  // as copyMmaRows takes them
    int64_t bytes = 0;           // a buffer's: the staged operand's (an N-major b is K rows of N)
    bool invariant = false;      // a region the loop does not move: copied once, before it
    int64_t buffers[2] = {0, 0}; // its buffers' offsets (one when invariant)
  };
  struct LoopPipeline {
    std::vector<LoopOperand> operands;
    V turn = nullptr;  // this iteration's buffer, 0 or 1
  };
  std::vector<LoopOperand> loopOperands(const Stmt& loopStmt, V lo);
  void copyLoopOperands(const Stmt& loopStmt, const std::vector<LoopOperand>& ops, V value, V restore, V turn,
                        bool invariants);
  void pipelinedLoop(const Stmt& loopStmt, V lo, V hi, std::vector<LoopOperand> ops, std::vector<const Expr*> ahead);
  V loopOperandBuffer(const LoopOperand& op, V turn);
  V pipelinedOperand(const Expr& x);  // where this iteration's copy of `x` is staged, or null
  const LoopPipeline* pipeline_ = nullptr;
  int64_t loopBuffersEnd_ = 0;  // the end of the buffers enclosing loops keep (0: none)

  // --- The streamed matvec loop (matvec.cpp) --------------------------------------------------
  struct VectorSource {
    const Expr* tile = nullptr;  // a tile local (f32 in shared memory) ...
    const Expr* load = nullptr;  // ... or a load of a contiguous run of a float tensor
    const Expr* start = nullptr; // the element the run starts at within the local (null: 0)
  };
  struct FusedRowdot {
    const Stmt* stmt = nullptr;
    const Expr* weights = nullptr;  // the streamed load
    VectorSource x;
    int64_t rows = 0, cols = 0, per = 0, vecsPerRow = 0, seg = 0;
    int accumulators = 0;  // per thread
  };
  static const Expr* stripFloatCasts(const Expr* e);
  std::optional<VectorSource> vectorSource(const Expr& x, const std::map<int, const Expr*>& aliases);
  std::optional<std::vector<FusedRowdot>> fusedRowdots(const Stmt& loopStmt, std::map<int, const Expr*>& aliases);
  std::vector<V> loadRun(V base, DType storage, V off /*i64*/, int64_t per);
  std::vector<V> loadRunSpread(V base, V off /*i64*/, V upperFirst);
  bool fusedRowdotLoop(const Stmt& s);

  // --- Statements (task.cpp) ------------------------------------------------------------------
  static bool readsShifted(const Expr& e, int slot, bool shifted);
  void beginStatement();
  void block(const ir::Block& stmts);
  void statement(const Stmt& s);
  bool accumulatesRowdot(const Stmt& s) const;
  static BinaryOp compound(ir::AssignOp a);

  // --- The weight ring, compute side (ring.cpp) -----------------------------------------------
  V addElapsed(V acc, V since);
  std::vector<V> acquireSlots(const Stmt& s);
  void releaseSlots(const std::vector<V>& slots, bool blockDone = true);
  void finishStatement(const std::vector<V>& slots);

  // --- The loader warp (loader.cpp) -----------------------------------------------------------
  // The loader's enclosing K loop: its statement, bound, current value, and (with l2AheadTiles)
  // the next loop value whose tile is not yet prefetched. One position for all the loop's
  // streamed loads: the first load's waits advance it (docs/backend.md).
  struct LoaderLoop {
    const Stmt* stmt;
    V hi, now, ahead;
  };
  void loaderStatement(const Stmt& s);
  void prefetchAhead(const Expr& load, const LoaderLoop& l, int64_t bytes);
  void issue(const Expr& load);

  // --- Where tile locals live (locals.cpp) ---------------------------------------------------
 public:
  // A local's references, as indices of the body's statements in order (-1: none).
  struct LiveRange {
    int64_t first = -1, last = -1;
    bool definedFirst = false;  // the first reference writes the whole local
  };
  static bool reads(const Expr& e, int slot);  // whether `e` reads local `slot` at all (task.cpp)
  // A `for` of the body: its statement index and its body's last.
  struct LoopSpan {
    const Stmt* loop;
    int64_t head, end;
  };

 private:
  void placeLocals();
  int64_t localBytes(int slot) const;  // a tile local's bytes in shared memory
  int64_t liveLocalsEnd(const Stmt& loop, const std::vector<int>& except);

  const TaskEnv& env_;
  Builder& b_;
  const Variant& v_;
  const ir::TileFunc& fn_;
  const TaskArgs& args_;
  Side side_;
  ir::StaticFacts statics_;
  std::vector<int64_t> tileOffset_;
  std::vector<LiveRange> live_;
  std::vector<LoopSpan> loops_;  // in the order they end: inner loops first
  int64_t localsEnd_ = 0, top_ = 0, peak_ = 0;
  std::map<const Expr*, V> scalars_;
  std::map<const Expr*, TileRef> tiles_;
  std::map<const Expr*, V> ring_;
  std::map<const Stmt*, RowRun> rowRuns_;
  const RowRun* run_ = nullptr;  // the run of the statement being emitted
  // A run's lets read only at owned elements, and the elements a thread owns of each: private
  // (private_) where placeLocals finds every reference in the run, the let first.
  std::map<int, int64_t> privateCandidates_, private_;
  std::map<int, std::vector<llvm::AllocaInst*>> privateSlots_;
  int64_t ownedElement_ = 0;  // which of its owned elements a run's thread is computing
  int ownedHalf_ = 0;         // in a fragment run, which of its two rows that element is in
  std::set<const Expr*> fragmentProducts_;               // products of fragment runs
  std::map<const Stmt*, std::vector<const Stmt*>> runMembers_;  // by a fragment run's first
  std::map<const Expr*, Target::MmaOperands> runOperands_;     // the open fragment run's products
  std::map<const Expr*, std::vector<V>> fragments_;            // this statement's (fragmentMma, ...)
  llvm::BasicBlock* runEnd_ = nullptr;  // where the warps without a strip wait for the open run
  V runTid_ = nullptr;                  // the open fragment run's thread id, Target::pinned
  std::map<int, int64_t> fragmentPrivate_;  // locals only fragment runs reference: elements owned
  std::vector<const LoaderLoop*> loaderLoops_;  // the loader side's enclosing K loops, innermost last
};

}  // namespace mk::backend::tile
