// Tile IR -> LLVM IR for one task, shared by every target.
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
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <span>

#include "abi/layout.h"
#include "backend/backend.h"
#include "backend/codegen.h"

namespace mk::backend {
namespace {

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

// ---------------------------------------------------------------------------------------------
// Static facts about an op body: which scalars are known before the task runs (the loader warp
// can compute them), what every value is a multiple of (for 16-byte alignment), which weight
// loads stream through the ring.

struct BodyFacts {
  std::vector<int> assignments;               // per local slot: Let/Assign statements writing it
  std::map<int, const Stmt*> loopOf;          // For slot -> its statement
  std::map<int, const Expr*> letValue;        // scalar slots written exactly once by a Let
};

void collectFacts(const ir::Block& block, BodyFacts& f) {
  for (const auto& s : block) {
    if (s->kind == StmtKind::Let || s->kind == StmtKind::Assign || s->kind == StmtKind::For) {
      if (size_t(s->slot) >= f.assignments.size()) f.assignments.resize(size_t(s->slot) + 1);
      ++f.assignments[size_t(s->slot)];
    }
    if (s->kind == StmtKind::For) f.loopOf[s->slot] = s.get();
    if (s->kind == StmtKind::Let && s->value) f.letValue[s->slot] = s->value.get();
    collectFacts(s->body, f);
    collectFacts(s->otherwise, f);
  }
}

class Statics {
 public:
  Statics(const ir::TileFunc& fn) : fn_(fn) { collectFacts(fn.body, facts_); }

  // Known before the task runs: constants, task indices, and locals that are loop counters of
  // static loops or written once from static values. Never loads or runtime scalars.
  bool isStatic(const Expr& e) const {
    switch (e.kind) {
      case ExprKind::Const:
      case ExprKind::TaskIndex: return true;
      case ExprKind::Local: return staticSlot(e.index);
      case ExprKind::Unary:
      case ExprKind::Binary:
      case ExprKind::Select:
      case ExprKind::Cast:
        if (!e.shape.empty()) return false;
        for (const auto& o : e.operands)
          if (!o || !isStatic(*o)) return false;
        return true;
      default: return false;
    }
  }

  bool staticSlot(int slot) const {
    if (slot < 0 || size_t(slot) >= fn_.locals.size() || !fn_.locals[size_t(slot)].shape.empty()) return false;
    if (size_t(slot) >= facts_.assignments.size() || facts_.assignments[size_t(slot)] != 1) return false;
    if (auto it = facts_.loopOf.find(slot); it != facts_.loopOf.end())
      return it->second->lo && it->second->hi && isStatic(*it->second->lo) && isStatic(*it->second->hi);
    auto it = facts_.letValue.find(slot);
    return it != facts_.letValue.end() && isStatic(*it->second);
  }

  // A positive number every value of the scalar `e` is a multiple of (1 when unknown).
  int64_t multipleOf(const Expr& e, int depth = 0) const {
    constexpr int64_t kLarge = int64_t(1) << 30;
    if (depth > 64 || !e.shape.empty()) return 1;
    auto op = [&](size_t i) { return i < e.operands.size() && e.operands[i] ? multipleOf(*e.operands[i], depth + 1) : 1; };
    switch (e.kind) {
      case ExprKind::Const: {
        int64_t v = std::llabs(int64_t(e.value));
        return double(int64_t(e.value)) != e.value ? 1 : v == 0 ? kLarge : std::min(v, kLarge);
      }
      case ExprKind::Local: {
        if (size_t(e.index) >= facts_.assignments.size() || facts_.assignments[size_t(e.index)] != 1) return 1;
        if (auto it = facts_.loopOf.find(e.index); it != facts_.loopOf.end())
          return it->second->lo ? std::gcd(multipleOf(*it->second->lo, depth + 1), it->second->step) : 1;
        if (auto it = facts_.letValue.find(e.index); it != facts_.letValue.end()) return multipleOf(*it->second, depth + 1);
        return 1;
      }
      case ExprKind::Binary:
        if (e.binary == BinaryOp::Add || e.binary == BinaryOp::Sub) return std::gcd(op(0), op(1));
        if (e.binary == BinaryOp::Mul) return std::min(op(0) * op(1), kLarge);
        return 1;
      case ExprKind::Cast: return e.dtype == DType::I32 && !e.operands.empty() && e.operands[0] && e.operands[0]->dtype == DType::I32 ? op(0) : 1;
      default: return 1;
    }
  }

  const BodyFacts& facts() const { return facts_; }

 private:
  const ir::TileFunc& fn_;
  BodyFacts facts_;
};

// The physical element stride of each logical dimension when the layout is affine with a
// contiguous last dimension (row-major, interleaved rows, padded, tiled with full-width tiles);
// empty otherwise.
std::vector<int64_t> affineStrides(const ir::Tensor& t) { return abi::affineStrides(t.layout, t.shape); }

// abi::physicalOffset's arithmetic as LLVM IR: coordinates are i32, offsets i64, both
// non-negative (so division and remainder are unsigned).
struct IRArithmetic {
  using Index = V;
  using Offset = V;
  Builder& b;
  V constant(int64_t x) const { return b.getInt64(uint64_t(x)); }
  V widen(V i) const { return b.CreateZExt(i, b.getInt64Ty()); }
  V indexDiv(V i, int64_t d) const { return b.CreateUDiv(i, b.getInt32(uint32_t(int32_t(d)))); }
  V indexRem(V i, int64_t d) const { return b.CreateURem(i, b.getInt32(uint32_t(int32_t(d)))); }
  V add(V x, V y) const { return b.CreateAdd(x, y); }
  V sub(V x, V y) const { return b.CreateSub(x, y); }
  V mul(V x, V y) const { return b.CreateMul(x, y); }
  V div(V x, V y) const { return b.CreateUDiv(x, y); }
  V rem(V x, V y) const { return b.CreateURem(x, y); }
  V bitXor(V x, V y) const { return b.CreateXor(x, y); }
};

// The streamed loads of one statement, in the order both sides walk them.
void streamedIn(const Expr* e, const std::set<const Expr*>& streamed, std::vector<const Expr*>& out) {
  if (!e) return;
  if (streamed.count(e)) out.push_back(e);
  for (const auto& o : e->operands) streamedIn(o.get(), streamed, out);
  for (const auto& r : e->region) streamedIn(r.start.get(), streamed, out);
}

std::vector<const Expr*> streamedOf(const Stmt& s, const std::set<const Expr*>& streamed) {
  std::vector<const Expr*> out;
  streamedIn(s.value.get(), streamed, out);
  for (const auto& r : s.region) streamedIn(r.start.get(), streamed, out);
  return out;
}

bool containsStreamed(const ir::Block& block, const std::set<const Expr*>& streamed) {
  for (const auto& s : block) {
    if (!streamedOf(*s, streamed).empty()) return true;
    if (containsStreamed(s->body, streamed) || containsStreamed(s->otherwise, streamed)) return true;
  }
  return false;
}

// Elements of a region, a dimension of length 0 (a single index) counting as 1.
int64_t regionElements(const std::vector<ir::RegionDim>& region) {
  int64_t n = 1;
  for (const auto& r : region) n *= std::max<int64_t>(r.length, 1);
  return n;
}

// The bytes of `load` when it reads exactly one tile of a `tiled(R, C)` layout (rows start at a
// multiple of R, columns at a multiple of C, both known before the task runs): one contiguous
// block, copied in one piece. 0 otherwise.
int64_t wholeTileBytes(const Expr& load, const ir::Tensor& t, const Statics& st) {
  if (t.layout.kind != Layout::Tiled || t.shape.size() != 2 || t.layout.args.size() != 2 || load.region.size() != 2)
    return 0;
  const int64_t R = t.layout.args[0], C = t.layout.args[1];
  for (int d = 0; d < 2; ++d) {
    const auto& r = load.region[size_t(d)];
    const int64_t n = d == 0 ? R : C;
    if (r.length != n || !r.start || !st.isStatic(*r.start) || st.multipleOf(*r.start) % n != 0) return 0;
  }
  const int64_t bytes = R * C * dtypeBytes(t.dtype);
  return bytes % 16 == 0 ? bytes : 0;
}

}  // namespace

void planStreaming(Variant& v, int64_t maxSlotBytes) {
  const ir::TileFunc& fn = *v.func;
  Statics st(fn);
  std::function<void(const Expr*)> visitExpr;
  visitExpr = [&](const Expr* e) {
    if (!e) return;
    for (const auto& o : e->operands) visitExpr(o.get());
    if (e->kind != ExprKind::Load || size_t(e->index) >= v.tensors.size()) return;
    const ir::Tensor* t = v.tensors[size_t(e->index)];
    if (!t || t->kind != ir::Tensor::Weight || e->region.empty() || e->region.size() != t->shape.size()) return;
    const int64_t eb = dtypeBytes(t->dtype);
    if (const int64_t bytes = wholeTileBytes(*e, *t, st); bytes > 0) {
      if (bytes > maxSlotBytes) return;
      v.streamed.insert(e);
      v.contiguous.insert(e);
      v.largestStreamedBytes = std::max(v.largestStreamedBytes, bytes);
      return;
    }
    std::vector<int64_t> strides = affineStrides(*t);
    if (strides.empty()) return;
    const auto& last = e->region.back();
    if (last.length <= 0 || (last.length * eb) % 16 != 0) return;
    for (size_t d = 0; d < e->region.size(); ++d) {
      const auto& r = e->region[d];
      if (!r.start || !st.isStatic(*r.start)) return;
      // Every row starts 16-byte aligned (arenas are; offsets are multiples of 16 bytes).
      if ((st.multipleOf(*r.start) * strides[d] * eb) % 16 != 0) return;
    }
    const int64_t bytes = regionElements(e->region) * eb;
    if (bytes > maxSlotBytes) return;
    v.streamed.insert(e);
    v.largestStreamedBytes = std::max(v.largestStreamedBytes, bytes);
  };
  // Only loads on every path (not under `if`) inside static loops: the loader must be able to
  // walk exactly the loads the compute threads will consume, in the same order.
  std::function<void(const ir::Block&)> visit = [&](const ir::Block& block) {
    for (const auto& s : block) {
      switch (s->kind) {
        case StmtKind::If: break;
        case StmtKind::For:
          if (s->lo && s->hi && st.isStatic(*s->lo) && st.isStatic(*s->hi) && st.staticSlot(s->slot)) visit(s->body);
          break;
        default:
          visitExpr(s->value.get());
          for (const auto& r : s->region) visitExpr(r.start.get());
      }
    }
  };
  visit(fn.body);
  std::function<void(const ir::Block&)> count = [&](const ir::Block& block) {
    for (const auto& s : block) {
      v.maxStreamedPerStatement = std::max(v.maxStreamedPerStatement, int(streamedOf(*s, v.streamed).size()));
      count(s->body);
      count(s->otherwise);
    }
  };
  count(fn.body);
}

void emitIf(Builder& b, llvm::Function* fn, V cond, const std::function<void()>& then) {
  llvm::LLVMContext& c = b.getContext();
  auto* t = llvm::BasicBlock::Create(c, "then", fn);
  auto* e = llvm::BasicBlock::Create(c, "endif", fn);
  b.CreateCondBr(cond, t, e);
  b.SetInsertPoint(t);
  then();
  b.CreateBr(e);
  b.SetInsertPoint(e);
}

void emitLoop(Builder& b, llvm::Function* fn, V lo, V hi, V step, const std::function<void(V)>& body, int unroll) {
  llvm::LLVMContext& c = b.getContext();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  auto* head = llvm::BasicBlock::Create(c, "loop", fn);
  auto* bodyBlock = llvm::BasicBlock::Create(c, "loop.body", fn);
  auto* exit = llvm::BasicBlock::Create(c, "loop.end", fn);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  auto* i = b.CreatePHI(b.getInt32Ty(), 2, "i");
  i->addIncoming(lo, pre);
  b.CreateCondBr(b.CreateICmpSLT(i, hi), bodyBlock, exit);
  b.SetInsertPoint(bodyBlock);
  body(i);
  i->addIncoming(b.CreateAdd(i, step), b.GetInsertBlock());
  auto* back = b.CreateBr(head);
  if (unroll > 0) {
    auto* how = unroll == 1 ? llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.unroll.disable")})
                            : llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.unroll.count"),
                                                    llvm::ConstantAsMetadata::get(b.getInt32(uint32_t(unroll)))});
    auto* self = llvm::MDNode::getDistinct(c, {nullptr, how});
    self->replaceOperandWith(0, self);
    back->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
  b.SetInsertPoint(exit);
}

llvm::Type* storageType(Builder& b, DType t) {
  switch (t) {
    case DType::BF16: case DType::F16: return b.getInt16Ty();
    case DType::F32: return b.getFloatTy();
    case DType::I32: return b.getInt32Ty();
    case DType::Bool: return b.getInt8Ty();
  }
  return b.getInt32Ty();
}

V widenStorage(Builder& b, DType t, V raw) {
  switch (t) {
    case DType::BF16: return b.CreateBitCast(b.CreateShl(b.CreateZExt(raw, b.getInt32Ty()), b.getInt32(16)), b.getFloatTy());
    case DType::F16: return b.CreateFPExt(b.CreateBitCast(raw, b.getHalfTy()), b.getFloatTy());
    case DType::Bool: return b.CreateZExt(b.CreateICmpNE(raw, b.getInt8(0)), b.getInt32Ty());
    default: return raw;
  }
}

V loadStorage(Builder& b, DType t, V ptr) { return widenStorage(b, t, b.CreateLoad(storageType(b, t), ptr)); }

V smemPtr(const TaskEnv& env, V byteOffset) {
  return env.b->CreateGEP(env.b->getInt8Ty(), env.smem, byteOffset);
}

V boundedWait(const TaskEnv& env, const std::function<V(V& seen)>& poll, int kind, V counter, V expected, bool quickPoll) {
  Builder& b = *env.b;
  llvm::LLVMContext& c = b.getContext();
  auto* i32 = b.getInt32Ty();
  auto* loop = llvm::BasicBlock::Create(c, "wait", env.fn);
  auto* check = llvm::BasicBlock::Create(c, "wait.check", env.fn);
  auto* fail = llvm::BasicBlock::Create(c, "wait.fail", env.fn);
  auto* record = llvm::BasicBlock::Create(c, "wait.record", env.fn);
  auto* done = llvm::BasicBlock::Create(c, "wait.done", env.fn);
  // Most waits are over at the first poll: the clock is read only for one that is not.
  V firstSeen = nullptr;
  V firstOk = quickPoll ? poll(firstSeen) : b.getFalse();
  llvm::BasicBlock* quick = b.GetInsertBlock();
  auto* slow = llvm::BasicBlock::Create(c, "wait.slow", env.fn);
  b.CreateCondBr(firstOk, done, slow);
  b.SetInsertPoint(slow);
  V start = env.target->globalTimerNs(b);
  b.CreateBr(loop);

  b.SetInsertPoint(loop);
  auto* n = b.CreatePHI(i32, 2, "spins");
  n->addIncoming(b.getInt32(0), slow);
  V seen = nullptr;
  V ok = poll(seen);
  llvm::BasicBlock* polled = b.GetInsertBlock();
  V next = b.CreateAdd(n, b.getInt32(1));
  // The clock and the error word are read every 64 polls only: both cost more than a poll.
  auto* cont = llvm::BasicBlock::Create(c, "wait.cont", env.fn);
  b.CreateCondBr(ok, done, cont);
  b.SetInsertPoint(cont);
  b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(next, b.getInt32(63)), b.getInt32(0)), check, loop);
  n->addIncoming(next, cont);

  b.SetInsertPoint(check);
  V failedElsewhere = b.CreateICmpNE(env.target->loadVolatile(b, env.error), b.getInt32(0));
  V late = b.CreateICmpUGT(b.CreateSub(env.target->globalTimerNs(b), start), env.timeout);
  auto* sleepy = llvm::BasicBlock::Create(c, "wait.sleep", env.fn);
  b.CreateCondBr(b.CreateOr(failedElsewhere, late), fail, sleepy);
  b.SetInsertPoint(sleepy);
  env.target->sleep(b, 32);
  b.CreateBr(loop);
  n->addIncoming(next, sleepy);

  // First failure of the launch: claim word 0, then fill in the record.
  b.SetInsertPoint(fail);
  V old = env.target->atomicCas(b, env.error, b.getInt32(0), b.getInt32(1));
  b.CreateCondBr(b.CreateICmpEQ(old, b.getInt32(0)), record, done);
  b.SetInsertPoint(record);
  auto word = [&](int i, V v) {
    b.CreateStore(v, b.CreateConstGEP1_32(i32, env.error, i), /*isVolatile=*/true);
  };
  word(1, env.sm);
  word(2, env.taskId);
  word(3, counter);
  word(4, expected);
  word(5, seen);
  word(6, b.getInt32(kind));
  word(7, env.epoch);
  b.CreateBr(done);

  b.SetInsertPoint(done);
  auto* failed = b.CreatePHI(b.getInt1Ty(), 4, "wait.failed");
  failed->addIncoming(b.getFalse(), quick);
  failed->addIncoming(b.getFalse(), polled);
  failed->addIncoming(b.getTrue(), fail);
  failed->addIncoming(b.getTrue(), record);
  return failed;
}

namespace {

// ---------------------------------------------------------------------------------------------

class TileGen {
 public:
  TileGen(const TaskEnv& env, const Variant& v, const TaskArgs& args, Side side)
      : env_(env), b_(*env.b), v_(v), fn_(*v.func), args_(args), side_(side), statics_(*v.func) {}

  void run() {
    // Tile locals get fixed places for the whole task; temporaries stack above them.
    int64_t at = SmemLayout::kTiles;
    tileOffset_.assign(fn_.locals.size(), -1);
    for (size_t s = 0; s < fn_.locals.size(); ++s) {
      if (fn_.locals[s].shape.empty()) continue;
      tileOffset_[s] = at;
      at += align16(ir::elementCount(fn_.locals[s].shape) * 4);
    }
    localsEnd_ = at;
    top_ = at;
    peak_ = at - SmemLayout::kTiles;
    while (env_.scalarSlots->size() < fn_.locals.size()) {
      llvm::IRBuilder<> eb(&env_.fn->getEntryBlock(), env_.fn->getEntryBlock().begin());
      env_.scalarSlots->push_back(eb.CreateAlloca(b_.getInt32Ty(), nullptr, "local"));
    }
    if (side_ == Side::Compute) prefetchLoads();
    block(fn_.body);
    *env_.tilePeak = std::max(*env_.tilePeak, peak_);
  }

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

  // --- Control flow helpers ---------------------------------------------------------------
  llvm::BasicBlock* newBlock(const char* name) { return llvm::BasicBlock::Create(ctx(), name, env_.fn); }

  void loop(V lo, V hi, V step, const std::function<void(V)>& body, int unroll = 0) {
    emitLoop(b_, env_.fn, lo, hi, step, body, unroll);
  }
  void when(V cond, const std::function<void()>& then) { emitIf(b_, env_.fn, cond, then); }

  // Every element index 0 .. n-1 of a tile, spread over the compute threads. The rounds in which
  // every thread has an element are straight-line code, so their global loads are in flight
  // together (a loop would wait out each round's load latency before the next); longer tiles
  // loop, unrolled by as many rounds.
  static constexpr int64_t kStraightRounds = 8;
  void forEachElement(int64_t n, const std::function<void(V)>& body) {
    const int64_t full = n / T();
    if (full > kStraightRounds) {
      loop(env_.tid, ci(n), ci(T()), body, int(kStraightRounds));
      return;
    }
    for (int64_t j = 0; j < full; ++j) body(b_.CreateAdd(env_.tid, ci(j * T())));
    if (n % T() == 0) return;
    V last = b_.CreateAdd(env_.tid, ci(full * T()));
    when(b_.CreateICmpULT(last, ci(n)), [&] { body(last); });
  }
  // The same, for an element's value and then what is done with it: the straight-line rounds
  // compute every value before the first `put`, so no load waits behind another round's store.
  void forEachElement(int64_t n, const std::function<V(V)>& value, const std::function<void(V, V)>& put) {
    const int64_t full = n / T();
    if (full > kStraightRounds) {
      forEachElement(n, [&](V i) { put(i, value(i)); });
      return;
    }
    std::vector<std::pair<V, V>> done;
    for (int64_t j = 0; j < full; ++j) {
      V i = b_.CreateAdd(env_.tid, ci(j * T()));
      done.emplace_back(i, value(i));
    }
    for (auto& [i, x] : done) put(i, x);
    if (n % T() == 0) return;
    V last = b_.CreateAdd(env_.tid, ci(full * T()));
    when(b_.CreateICmpULT(last, ci(n)), [&] { put(last, value(last)); });
  }

  void barrier() { env_.target->barrier(b_, 1, T()); }

  // --- Numbers ------------------------------------------------------------------------------
  V roundTo(DType t, V x) {
    if (t == DType::BF16) return b_.CreateFPExt(b_.CreateFPTrunc(x, b_.getBFloatTy()), f32());
    if (t == DType::F16) return b_.CreateFPExt(b_.CreateFPTrunc(x, b_.getHalfTy()), f32());
    return x;
  }

  V toFloat(DType from, V x) { return isFloat(from) ? x : b_.CreateSIToFP(x, f32()); }

  V convert(DType from, DType to, V x) {
    switch (to) {
      case DType::F32: return toFloat(from, x);
      case DType::BF16:
      case DType::F16: return isFloat(from) && from == to ? x : roundTo(to, toFloat(from, x));
      case DType::Bool:
        return b_.CreateZExt(isFloat(from) ? b_.CreateFCmpUNE(x, cf(0)) : b_.CreateICmpNE(x, ci(0)), i32());
      case DType::I32: return isFloat(from) ? env_.target->floatToInt(b_, x) : x;
    }
    return x;
  }

  // e^x and ln x from the target's base-2 forms, for every target alike.
  V expf(V x) { return env_.target->exp2(b_, b_.CreateFMul(x, cf(1.4426950408889634))); }
  V logf(V x) { return b_.CreateFMul(env_.target->log2(b_, x), cf(0.6931471805599453)); }

  V unary(UnaryOp op, DType t, V x) {
    if (isFloat(t)) {
      V r = nullptr;
      switch (op) {
        case UnaryOp::Neg: r = b_.CreateFNeg(x); break;
        case UnaryOp::Abs: r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); break;
        case UnaryOp::Exp: r = expf(x); break;
        case UnaryOp::Log: r = logf(x); break;
        case UnaryOp::Sigmoid: r = b_.CreateFDiv(cf(1), b_.CreateFAdd(cf(1), expf(b_.CreateFNeg(x)))); break;
        case UnaryOp::Silu: r = b_.CreateFDiv(x, b_.CreateFAdd(cf(1), expf(b_.CreateFNeg(x)))); break;
        case UnaryOp::Tanh:  // 1 - 2 / (e^2x + 1): exact limits +-1 for large |x|
          r = b_.CreateFSub(cf(1), b_.CreateFDiv(cf(2), b_.CreateFAdd(expf(b_.CreateFMul(x, cf(2))), cf(1))));
          break;
        case UnaryOp::Not: unsupported("`not` of a float value");
        default: r = env_.target->unaryMath(b_, op, x);
      }
      if (!r) unsupported(std::string("`") + ir::spelling(op) + "` on this target");
      return roundTo(t, r);
    }
    switch (op) {
      case UnaryOp::Neg: return b_.CreateNeg(x);
      case UnaryOp::Abs: return b_.CreateSelect(b_.CreateICmpSLT(x, ci(0)), b_.CreateNeg(x), x);
      case UnaryOp::Not: return t == DType::Bool ? b_.CreateZExt(b_.CreateICmpEQ(x, ci(0)), i32()) : b_.CreateNot(x);
      default: unsupported(std::string("`") + ir::spelling(op) + "` of an integer value");
    }
  }

  V binary(BinaryOp op, DType t, DType ta, DType tb, V a, V b) {
    switch (op) {
      case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt:
      case BinaryOp::Ge: case BinaryOp::Eq: case BinaryOp::Ne: {
        V r;
        if (isFloat(ta) || isFloat(tb)) {
          a = toFloat(ta, a), b = toFloat(tb, b);
          auto p = op == BinaryOp::Lt ? llvm::CmpInst::FCMP_OLT : op == BinaryOp::Le ? llvm::CmpInst::FCMP_OLE
                 : op == BinaryOp::Gt ? llvm::CmpInst::FCMP_OGT : op == BinaryOp::Ge ? llvm::CmpInst::FCMP_OGE
                 : op == BinaryOp::Eq ? llvm::CmpInst::FCMP_OEQ : llvm::CmpInst::FCMP_UNE;
          r = b_.CreateFCmp(p, a, b);
        } else {
          auto p = op == BinaryOp::Lt ? llvm::CmpInst::ICMP_SLT : op == BinaryOp::Le ? llvm::CmpInst::ICMP_SLE
                 : op == BinaryOp::Gt ? llvm::CmpInst::ICMP_SGT : op == BinaryOp::Ge ? llvm::CmpInst::ICMP_SGE
                 : op == BinaryOp::Eq ? llvm::CmpInst::ICMP_EQ : llvm::CmpInst::ICMP_NE;
          r = b_.CreateICmp(p, a, b);
        }
        return b_.CreateZExt(r, i32());
      }
      case BinaryOp::And:
      case BinaryOp::Or:
        if (isFloat(t)) unsupported("`and`/`or` of float values");
        if (t == DType::Bool) {
          V x = b_.CreateICmpNE(a, ci(0)), y = b_.CreateICmpNE(b, ci(0));
          return b_.CreateZExt(op == BinaryOp::And ? b_.CreateAnd(x, y) : b_.CreateOr(x, y), i32());
        }
        return op == BinaryOp::And ? b_.CreateAnd(a, b) : b_.CreateOr(a, b);
      default: break;
    }
    if (isFloat(t)) {
      V x = toFloat(ta, a), y = toFloat(tb, b), r = nullptr;
      switch (op) {
        case BinaryOp::Add: r = b_.CreateFAdd(x, y); break;
        case BinaryOp::Sub: r = b_.CreateFSub(x, y); break;
        case BinaryOp::Mul: r = b_.CreateFMul(x, y); break;
        case BinaryOp::Div: r = b_.CreateFDiv(x, y); break;
        case BinaryOp::Mod:  // fmod: x - trunc(x / y) * y
          r = b_.CreateFSub(x, b_.CreateFMul(b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, b_.CreateFDiv(x, y)), y));
          break;
        case BinaryOp::Min: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, y); break;
        case BinaryOp::Max: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, y); break;
        case BinaryOp::Pow: r = env_.target->exp2(b_, b_.CreateFMul(y, env_.target->log2(b_, x))); break;
        default: break;
      }
      return roundTo(t, r);
    }
    switch (op) {
      case BinaryOp::Add: return b_.CreateAdd(a, b);
      case BinaryOp::Sub: return b_.CreateSub(a, b);
      case BinaryOp::Mul: return b_.CreateMul(a, b);
      case BinaryOp::Div: return b_.CreateSDiv(a, b);
      case BinaryOp::Mod: return b_.CreateSRem(a, b);
      case BinaryOp::Min: return b_.CreateSelect(b_.CreateICmpSLT(a, b), a, b);
      case BinaryOp::Max: return b_.CreateSelect(b_.CreateICmpSGT(a, b), a, b);
      case BinaryOp::Pow: {  // x^min(y, 64) wrapping, y >= 0: square and multiply over 7 bits
        V e = b_.CreateSelect(b_.CreateICmpSGT(b, ci(64)), ci(64), b);
        e = b_.CreateSelect(b_.CreateICmpSLT(e, ci(0)), ci(0), e);
        V r = ci(1), base = a;
        for (int bit = 0; bit < 7; ++bit) {
          V on = b_.CreateICmpNE(b_.CreateAnd(b_.CreateLShr(e, ci(bit)), ci(1)), ci(0));
          r = b_.CreateSelect(on, b_.CreateMul(r, base), r);
          base = b_.CreateMul(base, base);
        }
        return r;
      }
      default: break;
    }
    unsupported(std::string("operator ") + ir::spelling(op));
  }

  // --- Memory -------------------------------------------------------------------------------
  llvm::Type* storageType(DType t) { return backend::storageType(b_, t); }
  V loadStorage(DType t, V ptr) { return backend::loadStorage(b_, t, ptr); }

  void storeStorage(DType t, V ptr, V x) {  // x: the repr of a value of dtype t
    switch (t) {
      case DType::BF16: b_.CreateStore(b_.CreateBitCast(b_.CreateFPTrunc(x, b_.getBFloatTy()), b_.getInt16Ty()), ptr); return;
      case DType::F16: b_.CreateStore(b_.CreateBitCast(b_.CreateFPTrunc(x, b_.getHalfTy()), b_.getInt16Ty()), ptr); return;
      case DType::Bool: b_.CreateStore(b_.CreateTrunc(x, b_.getInt8Ty()), ptr); return;
      default: b_.CreateStore(x, ptr); return;
    }
  }

  V at(DType t, V base, V elemOffset /*i64*/) { return b_.CreateGEP(storageType(t), base, elemOffset); }

  // Physical element offset (i64) of logical coordinates (i32, non-negative) in tensor t.
  V physOffset(const ir::Tensor& t, const std::vector<V>& c) {
    IRArithmetic a{b_};
    std::optional<V> off = abi::physicalOffset(a, t.layout, t.shape, dtypeBytes(t.dtype), std::span<const V>(c));
    if (!off) unsupported("the layout " + t.layout.str() + " of '" + t.name + "'");
    return *off;
  }

  // Each load whose region is known from the task's indices alone (and that does not stream
  // through the ring) is brought towards the SM when the task starts, so the statement that
  // reads it later (a matvec's residual, the combine's partials) finds it close instead of
  // waiting out a round trip to L2. The waits are done: what it brings is what the task reads.
  // Whether scalar `e` follows from the task's indices alone, or also from the scalar local
  // `loopSlot` (a loop variable; -1: none).
  static bool fromIndices(const Expr& e, int loopSlot = -1) {
    if (e.kind == ExprKind::Local) return loopSlot >= 0 && e.index == loopSlot && e.shape.empty();
    if (e.kind != ExprKind::Const && e.kind != ExprKind::TaskIndex && e.kind != ExprKind::Binary &&
        e.kind != ExprKind::Unary && e.kind != ExprKind::Cast)
      return false;
    for (const auto& o : e.operands)
      if (!o || !fromIndices(*o, loopSlot)) return false;
    return e.shape.empty();
  }
  void prefetchLoads() {
    std::vector<const Expr*> loads;
    std::function<void(const Expr*)> expr = [&](const Expr* e) {
      if (!e) return;
      for (const auto& o : e->operands) expr(o.get());
      for (const auto& r : e->region) expr(r.start.get());
      if (e->kind == ExprKind::Load && !v_.streamed.count(e) && !e->region.empty() &&
          std::all_of(e->region.begin(), e->region.end(), [](const ir::RegionDim& r) { return r.start && fromIndices(*r.start); }))
        loads.push_back(e);
    };
    // Not under an `if`: a branch not taken may guard a region that is out of bounds.
    std::function<void(const ir::Block&)> walk = [&](const ir::Block& body) {
      for (const auto& st : body) {
        if (st->kind == StmtKind::If) continue;
        expr(st->value.get());
        expr(st->lo.get());
        expr(st->hi.get());
        for (const auto& r : st->region) expr(r.start.get());
        walk(st->body);
      }
    };
    walk(fn_.body);
    // A large region is left alone: the statement's own loads are many in flight anyway.
    for (const Expr* load : loads) prefetchLines(*load, 0, /*l2=*/false);
  }

  // Prefetches every line `load`'s region may touch, one line per compute thread from thread
  // `firstThread` on. Returns the threads used, or 0 (and prefetches nothing) when they would be
  // more than the block has.
  int64_t prefetchLines(const Expr& load, int64_t firstThread, bool l2) {
    constexpr int64_t kLine = 128;
    const ir::Tensor& t = tensorOf(load.index);
    const int64_t last = std::max<int64_t>(load.region.back().length, 1);
    const int64_t rows = regionElements(load.region) / last;
    // Every line a row may touch, whatever its alignment: offsets 0, 128, ... and its last byte.
    const int64_t rowBytes = last * dtypeBytes(t.dtype);
    const int64_t lines = (rowBytes + kLine - 1) / kLine + 1;
    if (firstThread + rows * lines > T()) return 0;
    V mine = b_.CreateSub(env_.tid, ci(firstThread));
    when(b_.CreateICmpULT(mine, ci(rows * lines)), [&] {
      V row = b_.CreateUDiv(mine, ci(lines)), line = b_.CreateURem(mine, ci(lines));
      std::vector<V> c = coordsOf(load.region, starts(load.region), b_.CreateMul(row, ci(last)));
      V first = at(t.dtype, args_.params[size_t(load.index)], physOffset(t, c));
      V offset = b_.CreateZExt(b_.CreateMul(line, ci(kLine)), b_.getInt64Ty());
      offset = b_.CreateSelect(b_.CreateICmpULT(offset, b_.getInt64(uint64_t(rowBytes))), offset, b_.getInt64(uint64_t(rowBytes - 1)));
      V linePtr = b_.CreateGEP(b_.getInt8Ty(), first, offset);
      if (l2) env_.target->prefetchLineL2(b_, linePtr);
      else env_.target->prefetchLine(b_, linePtr);
    });
    return rows * lines;
  }

  // A loop's loads whose regions follow from the task's indices and the loop variable (an
  // attention loop's cache tiles): while iteration i runs, iteration i + 1's lines are brought
  // into L2, and before the loop the first iteration's, so that its later loads (the values
  // after the keys) do not each wait out a trip to memory.
  std::vector<const Expr*> iterationLoads(const Stmt& loopStmt) {
    std::vector<const Expr*> loads;
    std::function<void(const Expr*)> expr = [&](const Expr* e) {
      if (!e) return;
      for (const auto& o : e->operands) expr(o.get());
      if (e->kind == ExprKind::Load && !v_.streamed.count(e) && !e->region.empty() &&
          std::all_of(e->region.begin(), e->region.end(),
                      [&](const ir::RegionDim& r) { return r.start && fromIndices(*r.start, loopStmt.slot); }))
        loads.push_back(e);
    };
    // Statements every iteration runs: not those under an `if` or in an inner loop.
    for (const auto& st : loopStmt.body) {
      if (st->kind == StmtKind::If || st->kind == StmtKind::For) continue;
      expr(st->value.get());
    }
    return loads;
  }
  // Prefetches the lines `loads` touch with the loop variable at `k`, one line per thread.
  void prefetchIteration(const Stmt& loopStmt, const std::vector<const Expr*>& loads, V k) {
    atLoopValue(loopStmt, k, nullptr, [&] {
      int64_t firstThread = 0;
      for (const Expr* load : loads) firstThread += prefetchLines(*load, firstThread, /*l2=*/true);
    });
  }
  // Emits `body` with the loop variable of `loopStmt` at `value` (another iteration's regions),
  // then sets the variable back to `restore` where given. Called under a condition: what `body`
  // evaluates must not stay in the scalar cache, so the cache is set aside meanwhile.
  void atLoopValue(const Stmt& loopStmt, V value, V restore, const std::function<void()>& body) {
    const DType t = fn_.locals.at(size_t(loopStmt.slot)).dtype;
    auto saved = std::move(scalars_);
    scalars_.clear();
    writeScalarLocal(loopStmt.slot, convert(DType::I32, t, value));
    body();
    if (restore) writeScalarLocal(loopStmt.slot, convert(DType::I32, t, restore));
    scalars_ = std::move(saved);
  }

  // --- Values -------------------------------------------------------------------------------
  struct TileRef {
    V base = nullptr;  // ptr addrspace(3), 4-byte elements
    DType dtype = DType::F32;
  };

  const ir::Tensor& tensorOf(int param) {
    if (param < 0 || size_t(param) >= v_.tensors.size() || !v_.tensors[size_t(param)])
      unsupported("a load or store of a parameter that is not a tensor");
    return *v_.tensors[size_t(param)];
  }

  V tilePtr(int64_t offset) { return smemPtr(env_, ci(offset)); }

  TileRef allocTemp(int64_t elements, DType t) {
    TileRef r{tilePtr(top_), t};
    top_ += align16(elements * 4);
    peak_ = std::max(peak_, top_ - SmemLayout::kTiles);
    return r;
  }

  V readTile(const TileRef& t, V idx) {
    V p = b_.CreateGEP(repr(t.dtype), t.base, idx);
    return b_.CreateLoad(repr(t.dtype), p);
  }
  void writeTile(const TileRef& t, V idx, V x) { b_.CreateStore(x, b_.CreateGEP(repr(t.dtype), t.base, idx)); }

  TileRef localTile(int slot) {
    const auto& L = fn_.locals.at(size_t(slot));
    return {tilePtr(tileOffset_.at(size_t(slot))), L.dtype};
  }

  V scalarSlot(int slot) { return (*env_.scalarSlots)[size_t(slot)]; }
  V readScalarLocal(int slot) {
    V raw = b_.CreateLoad(i32(), scalarSlot(slot));
    return isFloat(fn_.locals[size_t(slot)].dtype) ? b_.CreateBitCast(raw, f32()) : raw;
  }
  void writeScalarLocal(int slot, V x) {
    b_.CreateStore(x->getType()->isFloatTy() ? b_.CreateBitCast(x, i32()) : x, scalarSlot(slot));
  }

  V paramScalar(int index, DType want) {
    if (index < 0 || size_t(index) >= args_.params.size() || !args_.params[size_t(index)])
      unsupported("a scalar parameter without a value");
    V x = args_.params[size_t(index)];
    DType have = x->getType()->isFloatTy() ? DType::F32 : DType::I32;
    return convert(have, want, x);
  }

  // Region starts (i32, uniform), one per dimension.
  std::vector<V> starts(const std::vector<ir::RegionDim>& region) {
    std::vector<V> s;
    for (const auto& r : region) {
      if (!r.start) unsupported("a region without a start");
      s.push_back(convert(r.start->dtype, DType::I32, scalar(*r.start)));
    }
    return s;
  }

  // Logical coordinates of element `idx` of a region's value (dims of length 0 stay at start).
  std::vector<V> coordsOf(const std::vector<ir::RegionDim>& region, const std::vector<V>& s, V idx) {
    std::vector<V> c(region.size());
    V rest = idx;
    for (size_t d = region.size(); d-- > 0;) {
      if (region[d].length <= 0) {
        c[d] = s[d];
        continue;
      }
      c[d] = b_.CreateAdd(s[d], b_.CreateURem(rest, ci(region[d].length)));
      rest = b_.CreateUDiv(rest, ci(region[d].length));
    }
    return c;
  }

  // Uniform value of a scalar expression (computed once per statement).
  V scalar(const Expr& e) {
    if (auto it = scalars_.find(&e); it != scalars_.end()) return it->second;
    V r = scalarRaw(e);
    scalars_[&e] = r;
    return r;
  }

  const Expr& operand(const Expr& e, size_t i) {
    if (i >= e.operands.size() || !e.operands[i]) unsupported("an expression with a missing operand");
    return *e.operands[i];
  }

  V scalarRaw(const Expr& e) {
    if (!e.shape.empty()) unsupported("a tile where a scalar is needed");
    switch (e.kind) {
      case ExprKind::Const: return isFloat(e.dtype) ? roundTo(e.dtype, cf(e.value)) : ci(int64_t(e.value));
      case ExprKind::Local: {
        const auto& L = fn_.locals.at(size_t(e.index));
        return convert(L.dtype, e.dtype, readScalarLocal(e.index));
      }
      case ExprKind::TaskIndex:
        if (e.index < 0 || size_t(e.index) >= args_.index.size()) unsupported("a task index out of range");
        return convert(DType::I32, e.dtype, args_.index[size_t(e.index)]);
      case ExprKind::Scalar: return roundTo(e.dtype, paramScalar(e.index, e.dtype));
      case ExprKind::Reduce: return reduce(e);
      case ExprKind::Dot: return dot(e);
      default: return elem(e, ci(0));  // loads, slices, arithmetic of one element
    }
  }

  // Element `idx` (i32) of the tile (or scalar) `e`, in the calling thread.
  V elem(const Expr& e, V idx) {
    if (e.shape.empty() && e.kind != ExprKind::Load && e.kind != ExprKind::Slice && e.kind != ExprKind::Unary &&
        e.kind != ExprKind::Binary && e.kind != ExprKind::Select && e.kind != ExprKind::Cast)
      return scalar(e);
    if (e.shape.empty()) {
      if (auto it = scalars_.find(&e); it != scalars_.end()) return it->second;
    }
    if (auto it = tiles_.find(&e); it != tiles_.end()) return readTile(it->second, idx);
    switch (e.kind) {
      case ExprKind::Const: return isFloat(e.dtype) ? roundTo(e.dtype, cf(e.value)) : ci(int64_t(e.value));
      case ExprKind::Local: {
        const auto& L = fn_.locals.at(size_t(e.index));
        if (L.shape.empty()) return convert(L.dtype, e.dtype, readScalarLocal(e.index));
        return convert(L.dtype, e.dtype, readTile(localTile(e.index), idx));
      }
      case ExprKind::Load: {
        const ir::Tensor& t = tensorOf(e.index);
        V x;
        if (auto it = ring_.find(&e); it != ring_.end()) {
          x = loadStorage(t.dtype, at(t.dtype, it->second, b_.CreateZExt(idx, b_.getInt64Ty())));
        } else {
          std::vector<V> s = starts(e.region);
          V off = physOffset(t, coordsOf(e.region, s, idx));
          x = loadStorage(t.dtype, at(t.dtype, args_.params[size_t(e.index)], off));
        }
        return convert(t.dtype, e.dtype, x);
      }
      case ExprKind::Slice: {
        const Expr& a = operand(e, 0);
        std::vector<V> s = starts(e.region);
        std::vector<V> c = coordsOf(e.region, s, idx);
        if (c.size() != a.shape.size()) unsupported("a slice whose rank differs from its operand's");
        V lin = ci(0);
        for (size_t d = 0; d < c.size(); ++d) lin = b_.CreateAdd(b_.CreateMul(lin, ci(a.shape[d])), c[d]);
        return convert(a.dtype, e.dtype, elem(a, lin));
      }
      case ExprKind::Unary: return unary(e.unary, e.dtype, elem(operand(e, 0), idx));
      case ExprKind::Binary: {
        const Expr& a = operand(e, 0);
        const Expr& bb = operand(e, 1);
        return binary(e.binary, e.dtype, a.dtype, bb.dtype, elem(a, idx), elem(bb, idx));
      }
      case ExprKind::Select: {
        const Expr& c = operand(e, 0);
        const Expr& a = operand(e, 1);
        const Expr& bb = operand(e, 2);
        V cond = b_.CreateICmpNE(convert(c.dtype, DType::Bool, elem(c, idx)), ci(0));
        return b_.CreateSelect(cond, convert(a.dtype, e.dtype, elem(a, idx)), convert(bb.dtype, e.dtype, elem(bb, idx)));
      }
      case ExprKind::Cast: {
        const Expr& a = operand(e, 0);
        return convert(a.dtype, e.dtype, elem(a, idx));
      }
      case ExprKind::Iota: return convert(DType::I32, e.dtype, idx);
      case ExprKind::Concat: {
        const Expr& a = operand(e, 0);
        const Expr& bb = operand(e, 1);
        const int64_t na = ir::elementCount(a.shape), nb = ir::elementCount(bb.shape);
        // Both sides read an index in range; the select keeps the right one.
        V inA = b_.CreateICmpSLT(idx, ci(na));
        V ia = b_.CreateSelect(inA, idx, ci(0));
        V ib = b_.CreateSelect(inA, ci(0), b_.CreateSub(idx, ci(na)));
        (void)nb;
        return b_.CreateSelect(inA, convert(a.dtype, e.dtype, elem(a, ia)), convert(bb.dtype, e.dtype, elem(bb, ib)));
      }
      case ExprKind::TaskIndex:
      case ExprKind::Scalar:
      case ExprKind::Reduce:
      case ExprKind::Dot: return scalar(e);
      case ExprKind::RowDot:
      case ExprKind::ColDot: unsupported("a rowdot/coldot that was not prepared");
    }
    unsupported("an unknown expression");
  }

  // Before a statement's element loops: every scalar subexpression once (uniform), every
  // block-wide subexpression into shared memory.
  void prepare(const Expr& e) {
    for (const auto& o : e.operands)
      if (o) prepare(*o);
    for (const auto& r : e.region)
      if (r.start) prepare(*r.start);
    if (e.shape.empty()) scalar(e);
    else if (e.kind == ExprKind::RowDot || e.kind == ExprKind::ColDot) tiles_[&e] = e.kind == ExprKind::RowDot ? rowdot(e) : coldot(e);
  }

  // --- Block-wide operations ------------------------------------------------------------------
  struct Partial {
    V value;
    V index;  // argmax/argmin position (i32), or null
  };

  // Combines per-thread partials across the compute threads; every thread gets the result.
  Partial blockReduce(ReduceOp op, DType accT, Partial p) {
    const int W = T() / 32;
    auto combine = [&](Partial a, Partial o) -> Partial {
      if (op == ReduceOp::Sum || op == ReduceOp::Mean)
        return {isFloat(accT) ? b_.CreateFAdd(a.value, o.value) : b_.CreateAdd(a.value, o.value), nullptr};
      bool isMin = op == ReduceOp::Min;
      V better = isFloat(accT) ? (isMin ? b_.CreateFCmpOLT(o.value, a.value) : b_.CreateFCmpOGT(o.value, a.value))
                               : (isMin ? b_.CreateICmpSLT(o.value, a.value) : b_.CreateICmpSGT(o.value, a.value));
      V same = isFloat(accT) ? b_.CreateFCmpOEQ(o.value, a.value) : b_.CreateICmpEQ(o.value, a.value);
      // The first extreme wins, as in the interpreter.
      V take = b_.CreateOr(better, b_.CreateAnd(same, b_.CreateICmpSLT(o.index, a.index)));
      return {b_.CreateSelect(take, o.value, a.value), b_.CreateSelect(take, o.index, a.index)};
    };
    for (int m = 16; m >= 1; m /= 2) {
      Partial o{env_.target->shuffleXor(b_, p.value, m), p.index ? env_.target->shuffleXor(b_, p.index, m) : nullptr};
      p = combine(p, o);
    }
    V lane = b_.CreateURem(env_.tid, ci(32)), warp = b_.CreateUDiv(env_.tid, ci(32));
    V vals = smemPtr(env_, ci(SmemLayout::kScratch));
    V idxs = smemPtr(env_, ci(SmemLayout::kScratch + 4 * 64));
    when(b_.CreateICmpEQ(lane, ci(0)), [&] {
      b_.CreateStore(p.value, b_.CreateGEP(p.value->getType(), vals, warp));
      if (p.index) b_.CreateStore(p.index, b_.CreateGEP(i32(), idxs, warp));
    });
    barrier();
    Partial r{b_.CreateLoad(p.value->getType(), vals), p.index ? b_.CreateLoad(i32(), idxs) : nullptr};
    for (int w = 1; w < W; ++w) {
      Partial o{b_.CreateLoad(p.value->getType(), b_.CreateConstGEP1_32(p.value->getType(), vals, w)),
                p.index ? b_.CreateLoad(i32(), b_.CreateConstGEP1_32(i32(), idxs, w)) : nullptr};
      r = combine(r, o);
    }
    barrier();  // the scratch is free again
    return r;
  }

  // Per-thread accumulation over n elements, then the block-wide combination.
  Partial reduceElements(ReduceOp op, DType accT, int64_t n, const std::function<V(V)>& value) {
    const bool withIndex = op != ReduceOp::Sum && op != ReduceOp::Mean;
    V init = nullptr;
    if (op == ReduceOp::Sum || op == ReduceOp::Mean) init = isFloat(accT) ? cf(0) : ci(0);
    else if (isFloat(accT)) init = cf(op == ReduceOp::Min ? INFINITY : -INFINITY);
    else init = ci(op == ReduceOp::Min ? INT32_MAX : INT32_MIN);
    auto* accSlot = entryAlloca(repr(accT));
    auto* idxSlot = entryAlloca(i32());
    b_.CreateStore(init, accSlot);
    b_.CreateStore(ci(INT32_MAX), idxSlot);  // loses every tie: threads without elements
    forEachElement(n, [&](V idx) {
      V x = value(idx);
      V acc = b_.CreateLoad(repr(accT), accSlot);
      if (!withIndex) {
        b_.CreateStore(isFloat(accT) ? b_.CreateFAdd(acc, x) : b_.CreateAdd(acc, x), accSlot);
        return;
      }
      V cur = b_.CreateLoad(i32(), idxSlot);
      bool isMin = op == ReduceOp::Min;
      V better = isFloat(accT) ? (isMin ? b_.CreateFCmpOLT(x, acc) : b_.CreateFCmpOGT(x, acc))
                               : (isMin ? b_.CreateICmpSLT(x, acc) : b_.CreateICmpSGT(x, acc));
      // A thread's first element always counts (so that NaN-free data finds an index).
      V first = b_.CreateICmpEQ(cur, ci(INT32_MAX));
      V take = b_.CreateOr(better, first);
      b_.CreateStore(b_.CreateSelect(take, x, acc), accSlot);
      b_.CreateStore(b_.CreateSelect(take, idx, cur), idxSlot);
    });
    Partial p{b_.CreateLoad(repr(accT), accSlot), withIndex ? b_.CreateLoad(i32(), idxSlot) : nullptr};
    return blockReduce(op, accT, p);
  }

  llvm::AllocaInst* entryAlloca(llvm::Type* t) {
    llvm::IRBuilder<> eb(&env_.fn->getEntryBlock(), env_.fn->getEntryBlock().begin());
    return eb.CreateAlloca(t);
  }

  V reduce(const Expr& e) {
    const Expr& a = operand(e, 0);
    const int64_t n = ir::elementCount(a.shape);
    if (a.shape.empty()) {
      V x = scalar(a);
      if (e.reduce == ReduceOp::Argmax) return convert(DType::I32, e.dtype, ci(0));
      return convert(a.dtype, e.dtype, x);
    }
    switch (e.reduce) {
      case ReduceOp::Sum:
      case ReduceOp::Mean: {
        DType accT = isFloat(e.dtype) ? DType::F32 : DType::I32;
        Partial p = reduceElements(e.reduce, accT, n, [&](V i) { return convert(a.dtype, accT, elem(a, i)); });
        V s = p.value;
        if (e.reduce == ReduceOp::Mean) s = isFloat(accT) ? b_.CreateFDiv(s, cf(double(n))) : b_.CreateSDiv(s, ci(n));
        return convert(accT, e.dtype, s);
      }
      case ReduceOp::Max:
      case ReduceOp::Min:
      case ReduceOp::Argmax: {
        DType accT = isFloat(a.dtype) ? DType::F32 : DType::I32;
        ReduceOp op = e.reduce == ReduceOp::Min ? ReduceOp::Min : ReduceOp::Max;
        Partial p = reduceElements(op, accT, n, [&](V i) { return elem(a, i); });
        if (e.reduce == ReduceOp::Argmax) return convert(DType::I32, e.dtype, p.index);
        return convert(a.dtype, e.dtype, p.value);
      }
    }
    unsupported("a reduction");
  }

  V dot(const Expr& e) {
    const Expr& a = operand(e, 0);
    const Expr& bb = operand(e, 1);
    const int64_t n = ir::elementCount(a.shape);
    Partial p = reduceElements(ReduceOp::Sum, DType::F32, n, [&](V i) {
      V x = convert(a.dtype, DType::F32, elem(a, i)), y = convert(bb.dtype, DType::F32, elem(bb, i));
      return b_.CreateFMul(x, y);
    });
    return convert(DType::F32, e.dtype, p.value);
  }

  // How a rowdot reads its matrix: rows of `stride` elements from `base` when contiguous.
  struct RowAccess {
    V base = nullptr;  // the element (0, 0) of the operand; null: element by element
    DType storage = DType::F32;
    int64_t stride = 0;
    bool vector = false;  // rows can be read 16 bytes at a time
  };

  RowAccess rowAccess(const Expr& A, int64_t K) {
    const Expr* m = &A;
    // A cast to f32 of a float value changes nothing in the f32 representation.
    while (m->kind == ExprKind::Cast && m->dtype == DType::F32 && !m->operands.empty() && m->operands[0] &&
           isFloat(m->operands[0]->dtype))
      m = m->operands[0].get();
    RowAccess r;
    // Shared-memory tiles hold every float as f32.
    if (auto it = tiles_.find(m); it != tiles_.end() && isFloat(it->second.dtype)) return {it->second.base, DType::F32, K, K % 4 == 0};
    if (m->kind == ExprKind::Local && !fn_.locals.at(size_t(m->index)).shape.empty()) {
      TileRef t = localTile(m->index);
      if (isFloat(t.dtype)) return {t.base, DType::F32, K, K % 4 == 0};
      return r;
    }
    if (m->kind != ExprKind::Load) return r;
    const ir::Tensor& t = tensorOf(m->index);
    if (!isFloat(t.dtype) || m->dtype != t.dtype) return r;
    if (auto it = ring_.find(m); it != ring_.end())
      return {it->second, t.dtype, K, t.dtype != DType::F32 ? K % 8 == 0 : K % 4 == 0};
    // One whole tile of a tiled(R, C) layout, read from global memory (no ring): R contiguous
    // rows of C = K elements from a 16-byte aligned start.
    if (wholeTileBytes(*m, t, statics_) > 0)
      return {at(t.dtype, args_.params[size_t(m->index)], physOffset(t, starts(m->region))), t.dtype, K,
              (K * dtypeBytes(t.dtype)) % 16 == 0};
    std::vector<int64_t> st = affineStrides(t);
    if (st.size() != m->region.size()) return r;
    // The two dims of length > 0: rows, then the contiguous last dim of the tensor.
    std::vector<size_t> dims;
    for (size_t d = 0; d < m->region.size(); ++d)
      if (m->region[d].length > 0) dims.push_back(d);
    if (dims.size() != 2 || dims[1] != m->region.size() - 1) return r;
    std::vector<V> s = starts(m->region);
    r.base = at(t.dtype, args_.params[size_t(m->index)], physOffset(t, s));
    r.storage = t.dtype;
    r.stride = st[dims[0]];
    const int64_t eb = dtypeBytes(t.dtype), per = 16 / eb;
    bool aligned = K % per == 0 && (r.stride * eb) % 16 == 0;
    for (size_t d = 0; d < m->region.size() && aligned; ++d)
      aligned = (statics_.multipleOf(*m->region[d].start) * st[d] * eb) % 16 == 0;
    r.vector = aligned;
    return r;
  }

  // Loads `n` consecutive elements (16 bytes) as f32 values; where `swapHalves`, the upper 8 bytes'
  // elements come first.
  std::vector<V> loadVector(const RowAccess& a, V elemOffset /*i64*/, V swapHalves = nullptr) {
    const int n = 16 / int(a.storage == DType::F32 || a.storage == DType::I32 ? 4 : 2);
    V p = at(a.storage, a.base, elemOffset);
    auto* vt = llvm::FixedVectorType::get(b_.getInt32Ty(), 4);
    V ld = b_.CreateAlignedLoad(vt, p, llvm::Align(16));
    if (swapHalves) ld = b_.CreateSelect(swapHalves, b_.CreateShuffleVector(ld, {2, 3, 0, 1}), ld);
    std::vector<V> out;
    for (int w = 0; w < 4; ++w) {
      V word = b_.CreateExtractElement(ld, uint64_t(w));
      if (n == 4) {
        out.push_back(b_.CreateBitCast(word, f32()));
        continue;
      }
      V lo = b_.CreateTrunc(word, b_.getInt16Ty()), hi = b_.CreateTrunc(b_.CreateLShr(word, ci(16)), b_.getInt16Ty());
      for (V h : {lo, hi}) out.push_back(widenStorage(b_, a.storage, h));
    }
    return out;
  }

  // y[M] = A[M, K] x[K] over the flat list of the matrix's 16-byte pieces: piece f = tid + j * T
  // is row f / P, columns (f % P) * per .. (P pieces per row), so every thread has work even when
  // rows are short (an attention chunk's 64-element key rows: 8 pieces). The lanes of a row's
  // segment of a warp butterfly-sum, the segments' sums go to shared memory, each row adds its
  // segments. False (nothing emitted) when the rows are not 16-byte pieces that tile a warp.
  bool flatRowdot(const RowAccess& acc, int64_t M, int64_t K, const Expr& x, const std::function<void(V, V)>& put) {
    if (!acc.base || !acc.vector) return false;
    const int64_t per = acc.storage == DType::F32 || acc.storage == DType::I32 ? 4 : 8;
    const int64_t pieces = K / per, total = M * pieces;
    if (K % per != 0 || (pieces % 32 != 0 && 32 % pieces != 0)) return false;
    const int64_t rounds = (total + T() - 1) / T();
    if (rounds > 4) return false;  // long rows: the row-per-warp form keeps fewer sums live
    const int64_t seg = std::min<int64_t>(pieces, 32);
    TileRef part = allocTemp(total / seg, DType::F32);
    V lane = b_.CreateURem(env_.tid, ci(32));
    // Every round's load first, unconditionally (a thread past the end of a partial round reads
    // piece 0 and drops it): one memory round trip for the whole rowdot instead of one a round.
    struct Round {
      V flat, in, col;
      std::vector<V> w;
    };
    std::vector<Round> issued(static_cast<size_t>(rounds));
    for (int64_t j = 0; j < rounds; ++j) {
      Round& r = issued[size_t(j)];
      r.flat = b_.CreateAdd(env_.tid, ci(j * T()));
      const bool full = (j + 1) * T() <= total;
      r.in = full ? b_.getTrue() : b_.CreateICmpULT(r.flat, ci(total));
      V piece = full ? r.flat : b_.CreateSelect(r.in, r.flat, ci(0));
      V row = b_.CreateUDiv(piece, ci(pieces));
      r.col = b_.CreateMul(b_.CreateURem(piece, ci(pieces)), ci(per));
      r.w = loadVector(acc, b_.CreateAdd(b_.CreateMul(b_.CreateZExt(row, b_.getInt64Ty()), b_.getInt64(uint64_t(acc.stride))),
                                         b_.CreateZExt(r.col, b_.getInt64Ty())));
    }
    for (const Round& r : issued) {
      V s = cf(0);
      for (int64_t e = 0; e < per; ++e)
        s = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()},
                               {r.w[size_t(e)], convert(x.dtype, DType::F32, elem(x, b_.CreateAdd(r.col, ci(e)))), s});
      s = b_.CreateSelect(r.in, s, cf(0));
      // Every lane shuffles (lanes past the end hold 0), so the warp stays converged.
      for (int mask = int(seg) / 2; mask >= 1; mask /= 2) s = b_.CreateFAdd(s, env_.target->shuffleXor(b_, s, mask));
      when(b_.CreateAnd(r.in, b_.CreateICmpEQ(b_.CreateURem(lane, ci(seg)), ci(0))),
           [&] { writeTile(part, b_.CreateUDiv(r.flat, ci(seg)), s); });
    }
    barrier();
    const int64_t segsPerRow = pieces / seg;
    forEachElement(M, [&](V m) {
      V s = cf(0);
      for (int64_t q = 0; q < segsPerRow; ++q) s = b_.CreateFAdd(s, readTile(part, b_.CreateAdd(b_.CreateMul(m, ci(segsPerRow)), ci(q))));
      put(m, s);
    });
    barrier();
    return true;
  }

  // y[M] = A[M, K] x[K]: whole rows go to warps round-robin while every warp gets one; the
  // M % W rows left over are split across all W warps (W / left warps per row, partial sums in
  // shared memory), so no warp does much more than M / W rows. Lanes stride over a row with
  // 16-byte loads where the rows allow, f32 fma, then a butterfly sum.
  // With `into`, adds the result to that f32 tile instead (`acc += rowdot(...)` without a
  // temporary, its barrier and a second pass).
  TileRef rowdot(const Expr& e, const TileRef* into = nullptr) {
    const Expr& A = operand(e, 0);
    const Expr& x = operand(e, 1);
    if (A.shape.size() != 2) unsupported("rowdot of a matrix of rank " + std::to_string(A.shape.size()));
    const int64_t M = A.shape[0], K = A.shape[1];
    const int W = T() / 32;
    const int64_t whole = M / W * W, left = M - whole;
    const int g = left > 0 ? W / int(left) : 1;  // warps per left-over row
    TileRef out = into ? *into : allocTemp(M, e.dtype);
    // Row m's result: stored, or added to the accumulator.
    auto put = [&](V m, V s) {
      if (into) writeTile(out, m, b_.CreateFAdd(readTile(out, m), s));
      else writeTile(out, m, convert(DType::F32, e.dtype, s));
    };
    RowAccess acc = rowAccess(A, K);
    V lane = b_.CreateURem(env_.tid, ci(32)), warp = b_.CreateUDiv(env_.tid, ci(32));
    if (flatRowdot(acc, M, K, x, put)) return out;
    TileRef partial = g > 1 ? allocTemp(left * g, DType::F32) : TileRef{};

    // The sum over stripe `part` of `parts` of row m, in every lane of the warp.
    auto rowSum = [&](V m, V part, int parts) {
      auto* sum = entryAlloca(f32());
      b_.CreateStore(cf(0), sum);
      V rowBase = b_.CreateMul(b_.CreateZExt(m, b_.getInt64Ty()), b_.getInt64(uint64_t(acc.stride)));
      if (acc.base && acc.vector) {
        const int per = acc.storage == DType::F32 || acc.storage == DType::I32 ? 4 : 8;
        V first = b_.CreateMul(b_.CreateAdd(b_.CreateMul(part, ci(32)), lane), ci(per));
        loop(first, ci(K), ci(int64_t(per) * 32 * parts), [&](V k) {
          std::vector<V> w = loadVector(acc, b_.CreateAdd(rowBase, b_.CreateZExt(k, b_.getInt64Ty())));
          V s = b_.CreateLoad(f32(), sum);
          for (int j = 0; j < per; ++j) {
            V xj = convert(x.dtype, DType::F32, elem(x, b_.CreateAdd(k, ci(j))));
            s = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {w[size_t(j)], xj, s});
          }
          b_.CreateStore(s, sum);
        });
      } else {
        loop(b_.CreateAdd(b_.CreateMul(part, ci(32)), lane), ci(K), ci(32 * parts), [&](V k) {
          V a = acc.base ? loadStorage(acc.storage, at(acc.storage, acc.base, b_.CreateAdd(rowBase, b_.CreateZExt(k, b_.getInt64Ty()))))
                         : elem(A, b_.CreateAdd(b_.CreateMul(m, ci(K)), k));
          a = convert(acc.base ? acc.storage : A.dtype, DType::F32, a);
          V xk = convert(x.dtype, DType::F32, elem(x, k));
          b_.CreateStore(b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {a, xk, b_.CreateLoad(f32(), sum)}), sum);
        });
      }
      V s = b_.CreateLoad(f32(), sum);
      for (int mask = 16; mask >= 1; mask /= 2) s = b_.CreateFAdd(s, env_.target->shuffleXor(b_, s, mask));
      return s;
    };

    if (whole > 0) {
      loop(warp, ci(whole), ci(W), [&](V m) {
        V s = rowSum(m, ci(0), 1);
        when(b_.CreateICmpEQ(lane, ci(0)), [&] { put(m, s); });
      }, /*unroll=*/1);  // rows are independent: unrolling them only multiplies live registers
    }
    if (left > 0) {
      V slot = b_.CreateUDiv(warp, ci(g)), part = b_.CreateURem(warp, ci(g));
      when(b_.CreateICmpULT(slot, ci(left)), [&] {
        V m = b_.CreateAdd(slot, ci(whole));
        V s = rowSum(m, part, g);
        when(b_.CreateICmpEQ(lane, ci(0)), [&] {
          if (g == 1) put(m, s);
          else writeTile(partial, b_.CreateAdd(b_.CreateMul(slot, ci(g)), part), s);
        });
      });
    }
    barrier();
    if (g > 1) {
      forEachElement(left, [&](V r) {
        V s = cf(0);
        for (int j = 0; j < g; ++j) s = b_.CreateFAdd(s, readTile(partial, b_.CreateAdd(b_.CreateMul(r, ci(g)), ci(j))));
        put(b_.CreateAdd(r, ci(whole)), s);
      });
      barrier();
    }
    return out;
  }

  // --- Streamed matvec loops ------------------------------------------------------------------
  // `for k in .. by C { let xc = xn[k : +C]; acc += rowdot(load W[rows, k : +C], xc); ... }` with
  // W streamed through the ring: each thread keeps its share of every rowdot's products in
  // registers for the whole loop (flat 16-byte column f = tid + j * T of the [M, C] chunk, the
  // same (row, column) pairs every iteration), each warp frees a ring slot as soon as it has read
  // it, and the block reduces once after the loop. No barrier per iteration: warps run ahead
  // within the ring, and the loader's copies overlap the compute of earlier chunks.
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

  static const Expr* stripFloatCasts(const Expr* e) {
    while (e && e->kind == ExprKind::Cast && e->dtype == DType::F32 && !e->operands.empty() && e->operands[0] &&
           isFloat(e->operands[0]->dtype))
      e = e->operands[0].get();
    return e;
  }

  // Where the 1-D f32-representable operand `x` of length n can be read 16 bytes at a time.
  std::optional<VectorSource> vectorSource(const Expr& x, const std::map<int, const Expr*>& aliases) {
    const Expr* e = stripFloatCasts(&x);
    if (!e || e->shape.size() != 1) return std::nullopt;
    if (e->kind == ExprKind::Local) {
      if (auto it = aliases.find(e->index); it != aliases.end()) e = it->second;
      else return fn_.locals.at(size_t(e->index)).shape.size() == 1 ? std::optional(VectorSource{e, nullptr, nullptr}) : std::nullopt;
    }
    if (e->kind == ExprKind::Slice) {
      const Expr* t = e->operands.empty() ? nullptr : e->operands[0].get();
      if (!t || t->kind != ExprKind::Local || t->shape.size() != 1 || e->region.size() != 1 || !e->region[0].start ||
          fn_.locals.at(size_t(t->index)).shape.size() != 1 || !isFloat(t->dtype))
        return std::nullopt;
      if (statics_.multipleOf(*e->region[0].start) % 4 != 0) return std::nullopt;  // f32: 16 bytes = 4
      return VectorSource{t, nullptr, e->region[0].start.get()};
    }
    if (e->kind == ExprKind::Load) {
      const ir::Tensor& t = tensorOf(e->index);
      if (!isFloat(t.dtype) || e->dtype != t.dtype || e->region.size() != 1 || t.shape.size() != 1 || !e->region[0].start ||
          t.layout.kind != Layout::RowMajor)
        return std::nullopt;
      if ((statics_.multipleOf(*e->region[0].start) * dtypeBytes(t.dtype)) % 16 != 0) return std::nullopt;
      return VectorSource{nullptr, e, nullptr};
    }
    return std::nullopt;
  }

  // The loop's parts when it has the streamed-matvec shape above, else nullopt.
  std::optional<std::vector<FusedRowdot>> fusedRowdots(const Stmt& loopStmt, std::map<int, const Expr*>& aliases) {
    std::vector<FusedRowdot> parts;
    int accumulators = 0;
    for (const auto& st : loopStmt.body) {
      if (st->kind == StmtKind::Let && st->value && st->value->kind == ExprKind::Slice &&
          fn_.locals.at(size_t(st->slot)).shape.size() == 1) {
        aliases[st->slot] = st->value.get();
        continue;
      }
      if (!accumulatesRowdot(*st)) return std::nullopt;
      const Expr& rd = *st->value;
      const Expr* A = stripFloatCasts(rd.operands.size() == 2 ? rd.operands[0].get() : nullptr);
      if (!A || A->kind != ExprKind::Load || !v_.streamed.count(A) || A->shape.size() != 2) return std::nullopt;
      FusedRowdot f;
      f.stmt = st.get();
      f.weights = A;
      f.rows = A->shape[0];
      f.cols = A->shape[1];
      const DType wt = tensorOf(A->index).dtype;
      f.per = 16 / dtypeBytes(wt);
      if (!isFloat(wt) || f.cols % f.per != 0) return std::nullopt;
      f.vecsPerRow = f.cols / f.per;
      if (f.vecsPerRow % 32 != 0 && 32 % f.vecsPerRow != 0) return std::nullopt;
      f.seg = std::min<int64_t>(f.vecsPerRow, 32);
      auto x = vectorSource(*rd.operands[1], aliases);
      if (!x) return std::nullopt;
      if (x->tile && !aliases.count(stripFloatCasts(rd.operands[1].get())->index) && !x->start &&
          ir::elementCount(fn_.locals.at(size_t(x->tile->index)).shape) != f.cols)
        return std::nullopt;
      f.x = *x;
      f.accumulators = int((f.rows * f.vecsPerRow + T() - 1) / T());
      accumulators += f.accumulators;
      parts.push_back(f);
    }
    // Past this many registers of partial sums the fused form would spill; the general path is slower but fits.
    if (parts.empty() || accumulators > 24) return std::nullopt;
    return parts;
  }

  // `per` consecutive elements from `base` (f32 in shared memory, or a float tensor's storage)
  // at element offset `off`, as f32, in 16-byte loads.
  std::vector<V> loadRun(V base, DType storage, V off /*i64*/, int64_t per) {
    RowAccess a{base, storage, 0, true};
    std::vector<V> out;
    const int64_t perLoad = 16 / (storage == DType::F32 || storage == DType::I32 ? 4 : 2);
    for (int64_t i = 0; i < per; i += perLoad) {
      std::vector<V> w = loadVector(a, b_.CreateAdd(off, b_.getInt64(uint64_t(i))));
      out.insert(out.end(), w.begin(), w.end());
    }
    return out;
  }

  // An f32 run of 8 (two 16-byte loads) per lane in shared memory: lanes 32 bytes apart, so lanes
  // i and i + 4 of a quarter warp would hit the same banks. Where `upperFirst` (the odd fours of a
  // quarter warp), the lane reads its upper half first, which spreads each load over all 32
  // banks; the caller pairs the values with its weights in the same order.
  std::vector<V> loadRunSpread(V base, V off /*i64*/, V upperFirst) {
    RowAccess a{base, DType::F32, 0, true};
    V upper = b_.CreateAdd(off, b_.getInt64(4));
    std::vector<V> out = loadVector(a, b_.CreateSelect(upperFirst, upper, off));
    std::vector<V> second = loadVector(a, b_.CreateSelect(upperFirst, off, upper));
    out.insert(out.end(), second.begin(), second.end());
    return out;
  }

  bool fusedRowdotLoop(const Stmt& s) {
    std::map<int, const Expr*> aliases;
    auto parts = fusedRowdots(s, aliases);
    if (!parts) return false;
    V lane = b_.CreateURem(env_.tid, ci(32));
    V upperFirst = b_.CreateICmpNE(b_.CreateAnd(lane, ci(4)), ci(0));
    std::vector<std::vector<llvm::AllocaInst*>> sums(parts->size());
    for (size_t p = 0; p < parts->size(); ++p)
      for (int j = 0; j < (*parts)[p].accumulators; ++j) {
        sums[p].push_back(entryAlloca(f32()));
        b_.CreateStore(cf(0), sums[p].back());
      }
    V lo = convert(s.lo->dtype, DType::I32, scalar(*s.lo)), hi = convert(s.hi->dtype, DType::I32, scalar(*s.hi));
    const DType counterType = fn_.locals.at(size_t(s.slot)).dtype;
    // A vector read from global memory chunk by chunk would put a load's latency in every
    // iteration of every warp: copy the loop's whole run of it to shared memory first.
    top_ = localsEnd_;
    std::map<const Expr*, V> staged;  // x load -> its copy's element at lo
    for (const FusedRowdot& f : *parts) {
      if (!f.x.load || staged.count(f.x.load)) continue;
      const Expr& start = *f.x.load->region[0].start;
      if (start.kind != ExprKind::Local || start.index != s.slot || s.lo->kind != ExprKind::Const ||
          s.hi->kind != ExprKind::Const || s.step != f.cols)
        continue;
      const ir::Tensor& t = tensorOf(f.x.load->index);
      const int64_t first = int64_t(s.lo->value), bytes = (int64_t(s.hi->value) - first) * dtypeBytes(t.dtype);
      if (bytes <= 0 || bytes > kStagedBytes || bytes % 16 != 0 || (first * dtypeBytes(t.dtype)) % 16 != 0) continue;
      V dst = allocTemp((bytes + 3) / 4, DType::F32).base;
      V src = at(t.dtype, args_.params[size_t(f.x.load->index)], physOffset(t, {ci(first)}));
      auto* v4 = llvm::FixedVectorType::get(i32(), 4);
      auto piece = [&](V base, V i) { return b_.CreateGEP(b_.getInt8Ty(), base, b_.CreateMul(i, ci(16))); };
      forEachElement(bytes / 16, [&](V i) { return static_cast<V>(b_.CreateAlignedLoad(v4, piece(src, i), llvm::Align(16))); },
                     [&](V i, V x) { b_.CreateAlignedStore(x, piece(dst, i), llvm::Align(16)); });
      staged[f.x.load] = dst;
    }
    if (!staged.empty()) barrier();
    const int64_t floor = top_;  // the staged copies stay while any warp is still in the loop
    loop(lo, hi, ci(s.step), [&](V k) {
      writeScalarLocal(s.slot, convert(DType::I32, counterType, k));
      for (size_t p = 0; p < parts->size(); ++p) {
        const FusedRowdot& f = (*parts)[p];
        beginStatement();
        top_ = floor;
        std::vector<V> slots = acquireSlots(*f.stmt);
        V wBase = ring_.at(f.weights);
        const DType wt = tensorOf(f.weights->index).dtype;
        V xBase;
        DType xt = DType::F32;
        if (f.x.tile) {
          xBase = localTile(f.x.tile->index).base;
          if (f.x.start) xBase = b_.CreateGEP(f32(), xBase, convert(f.x.start->dtype, DType::I32, scalar(*f.x.start)));
        } else if (auto it = staged.find(f.x.load); it != staged.end()) {
          xt = tensorOf(f.x.load->index).dtype;
          xBase = at(xt, it->second, b_.CreateZExt(b_.CreateSub(k, lo), b_.getInt64Ty()));
        } else {
          const ir::Tensor& t = tensorOf(f.x.load->index);
          xt = t.dtype;
          xBase = at(t.dtype, args_.params[size_t(f.x.load->index)], physOffset(t, starts(f.x.load->region)));
        }
        const int64_t total = f.rows * f.vecsPerRow;
        for (int j = 0; j < f.accumulators; ++j) {
          V flat = b_.CreateAdd(env_.tid, ci(int64_t(j) * T()));
          auto body = [&] {
            V row = b_.CreateUDiv(flat, ci(f.vecsPerRow));
            V col = b_.CreateMul(b_.CreateURem(flat, ci(f.vecsPerRow)), ci(f.per));
            V col64 = b_.CreateZExt(col, b_.getInt64Ty());
            V wOff = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(row, b_.getInt64Ty()), b_.getInt64(uint64_t(f.cols))), col64);
            // 16-bit weights against an f32 vector: 8 of each per lane, the vector's read spread
            // over the banks (the weights' halves swapped to match).
            const bool spread = xt == DType::F32 && f.per == 8 && dtypeBytes(wt) == 2;
            std::vector<V> w = spread ? loadVector(RowAccess{wBase, wt, 0, true}, wOff, upperFirst) : loadRun(wBase, wt, wOff, f.per);
            std::vector<V> xv = spread ? loadRunSpread(xBase, col64, upperFirst) : loadRun(xBase, xt, col64, f.per);
            V acc = b_.CreateLoad(f32(), sums[p][size_t(j)]);
            for (int64_t e = 0; e < f.per; ++e)
              acc = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {w[size_t(e)], xv[size_t(e)], acc});
            b_.CreateStore(acc, sums[p][size_t(j)]);
          };
          if (env_.ablateMath) continue;
          if (int64_t(j + 1) * T() <= total) body();
          else when(b_.CreateICmpULT(flat, ci(total)), body);
        }
        // This warp is done with the slots: free them without waiting for the other warps.
        releaseSlots(slots, /*warpDone=*/false);
      }
    });
    // One reduction per rowdot: lanes of a segment (one row's columns within a warp) butterfly,
    // the segments' sums go to shared memory, and each row adds its segments in order. (Above
    // the staged copies: other warps may still be reading them.)
    top_ = floor;
    std::vector<TileRef> partials;
    for (size_t p = 0; p < parts->size(); ++p) {
      const FusedRowdot& f = (*parts)[p];
      const int64_t total = f.rows * f.vecsPerRow;
      TileRef part = allocTemp(total / f.seg, DType::F32);
      partials.push_back(part);
      for (int j = 0; j < f.accumulators; ++j) {
        V flat = b_.CreateAdd(env_.tid, ci(int64_t(j) * T()));
        V sum = b_.CreateLoad(f32(), sums[p][size_t(j)]);
        for (int mask = int(f.seg) / 2; mask >= 1; mask /= 2) sum = b_.CreateFAdd(sum, env_.target->shuffleXor(b_, sum, mask));
        V writes = b_.CreateAnd(b_.CreateICmpEQ(b_.CreateURem(lane, ci(f.seg)), ci(0)), b_.CreateICmpULT(flat, ci(total)));
        when(writes, [&] { writeTile(part, b_.CreateUDiv(flat, ci(f.seg)), sum); });
      }
    }
    barrier();
    for (size_t p = 0; p < parts->size(); ++p) {
      const FusedRowdot& f = (*parts)[p];
      const int64_t segsPerRow = f.vecsPerRow / f.seg;
      TileRef acc = localTile(f.stmt->slot);
      forEachElement(f.rows, [&](V m) {
        V sum = cf(0);
        for (int64_t q = 0; q < segsPerRow; ++q)
          sum = b_.CreateFAdd(sum, readTile(partials[p], b_.CreateAdd(b_.CreateMul(m, ci(segsPerRow)), ci(q))));
        writeTile(acc, m, b_.CreateFAdd(readTile(acc, m), sum));
      });
    }
    barrier();
    // A ring wait that failed set the abort flag; every compute thread is past the barrier.
    V abort = b_.CreateLoad(i32(), smemPtr(env_, ci(SmemLayout::kAbortFlag)));
    auto* go = newBlock("fused.ok");
    b_.CreateCondBr(b_.CreateICmpNE(abort, ci(0)), env_.exit, go);
    b_.SetInsertPoint(go);
    beginStatement();
    return true;
  }

  // y[K] = A[M, K]^T x[M]. Rows of 16-byte pieces: thread (g, c) sums column piece c over rows
  // g, g + G, ... (G row groups, as many as the threads and a bounded scratch allow), then each
  // column adds its G partial sums. Otherwise one thread per column, sequential over the rows.
  TileRef coldot(const Expr& e) {
    const Expr& A = operand(e, 0);
    const Expr& y = operand(e, 1);
    if (A.shape.size() != 2) unsupported("coldot of a matrix of rank " + std::to_string(A.shape.size()));
    const int64_t M = A.shape[0], K = A.shape[1];
    TileRef out = allocTemp(K, e.dtype);
    RowAccess acc = rowAccess(A, K);
    const int64_t per = acc.storage == DType::F32 || acc.storage == DType::I32 ? 4 : 8;
    const int64_t pieces = K / per;
    // Row groups: thread tid reads column piece tid % pieces of rows tid / pieces + r * groups.
    const int64_t groups = pieces > 0 ? std::min<int64_t>(int64_t(T()) / pieces, M) : 0;
    if (acc.base && acc.vector && K % per == 0 && groups >= 2) {
      const int64_t rows = (M + groups - 1) / groups, active = groups * pieces;
      // The groups of one warp add up with shuffles first, so shared memory holds one partial a warp.
      const int64_t inWarp = pieces < 32 && 32 % pieces == 0 ? 32 / pieces : 1;
      const int64_t partials = (groups + inWarp - 1) / inWarp;
      TileRef part = allocTemp(partials * K, DType::F32);
      V busy = b_.CreateICmpULT(env_.tid, ci(active));
      V g = b_.CreateUDiv(env_.tid, ci(pieces));
      V col = b_.CreateMul(b_.CreateURem(env_.tid, ci(pieces)), ci(per));
      // A batch of rows: every row's load before the first product, one memory round trip, not
      // one per row. A thread with no row there reads row 0 and weighs it 0.
      std::vector<llvm::AllocaInst*> sumSlots;
      for (int64_t j = 0; j < per; ++j) {
        sumSlots.push_back(entryAlloca(f32()));
        b_.CreateStore(cf(0), sumSlots.back());
      }
      auto batch = [&](V firstRow /*this thread's first row of the batch*/, int64_t count, bool inRange) {
        std::vector<std::vector<V>> w(static_cast<size_t>(count));
        std::vector<V> weight(static_cast<size_t>(count));
        for (int64_t r = 0; r < count; ++r) {
          V m = b_.CreateAdd(firstRow, ci(r * groups));
          V ok = inRange ? busy : b_.CreateAnd(busy, b_.CreateICmpULT(m, ci(M)));
          V row = b_.CreateSelect(ok, m, ci(0));
          w[size_t(r)] = loadVector(acc, b_.CreateAdd(b_.CreateMul(b_.CreateZExt(row, b_.getInt64Ty()), b_.getInt64(uint64_t(acc.stride))),
                                                      b_.CreateZExt(col, b_.getInt64Ty())));
          weight[size_t(r)] = b_.CreateSelect(ok, convert(y.dtype, DType::F32, elem(y, row)), cf(0));
        }
        std::vector<V> x;
        for (auto* slot : sumSlots) x.push_back(b_.CreateLoad(f32(), slot));
        for (int64_t r = 0; r < count; ++r)
          for (int64_t j = 0; j < per; ++j)
            x[size_t(j)] = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {w[size_t(r)][size_t(j)], weight[size_t(r)], x[size_t(j)]});
        for (int64_t j = 0; j < per; ++j) b_.CreateStore(x[size_t(j)], sumSlots[size_t(j)]);
      };
      // Up to 8 rows a thread in one batch (32 words of loads in flight); more rows in a loop of
      // such batches, so the registers stay bounded.
      constexpr int64_t kBatchRows = 8;
      if (rows <= kBatchRows) batch(g, rows, rows * groups <= M);
      else loop(ci(0), ci(rows), ci(kBatchRows), [&](V r0) { batch(b_.CreateAdd(g, b_.CreateMul(r0, ci(groups))), kBatchRows, false); }, /*unroll=*/1);
      std::vector<V> sums;
      for (auto* slot : sumSlots) sums.push_back(b_.CreateLoad(f32(), slot));
      for (int64_t mask = pieces; inWarp > 1 && mask < 32; mask *= 2)
        for (V& x : sums) x = b_.CreateFAdd(x, env_.target->shuffleXor(b_, x, int(mask)));
      when(b_.CreateAnd(busy, b_.CreateICmpEQ(b_.CreateURem(g, ci(inWarp)), ci(0))), [&] {
        V base = b_.CreateAdd(b_.CreateMul(b_.CreateUDiv(g, ci(inWarp)), ci(K)), col);
        for (int64_t j = 0; j < per; ++j) writeTile(part, b_.CreateAdd(base, ci(j)), sums[size_t(j)]);
      });
      barrier();
      forEachElement(K, [&](V k) {
        V s = cf(0);
        for (int64_t q = 0; q < partials; ++q) s = b_.CreateFAdd(s, readTile(part, b_.CreateAdd(ci(q * K), k)));
        writeTile(out, k, convert(DType::F32, e.dtype, s));
      });
      barrier();
      return out;
    }
    forEachElement(K, [&](V k) {
      V s = cf(0);
      auto* sum = entryAlloca(f32());
      b_.CreateStore(s, sum);
      loop(ci(0), ci(M), ci(1), [&](V m) {
        V a = convert(A.dtype, DType::F32, elem(A, b_.CreateAdd(b_.CreateMul(m, ci(K)), k)));
        V ym = convert(y.dtype, DType::F32, elem(y, m));
        b_.CreateStore(b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {a, ym, b_.CreateLoad(f32(), sum)}), sum);
      }, /*unroll=*/4);
      writeTile(out, k, convert(DType::F32, e.dtype, b_.CreateLoad(f32(), sum)));
    });
    barrier();
    return out;
  }

  // --- Statements -----------------------------------------------------------------------------
  // Whether `e` reads local `slot` at another element than the one being written.
  static bool readsShifted(const Expr& e, int slot, bool shifted) {
    if (e.kind == ExprKind::Local && e.index == slot) return shifted;
    bool s = shifted || e.kind == ExprKind::Slice || e.kind == ExprKind::Concat || e.kind == ExprKind::RowDot ||
             e.kind == ExprKind::ColDot || e.kind == ExprKind::Reduce || e.kind == ExprKind::Dot;
    for (const auto& o : e.operands)
      if (o && readsShifted(*o, slot, s)) return true;
    return false;
  }

  void beginStatement() {
    scalars_.clear();
    tiles_.clear();
    ring_.clear();
    top_ = localsEnd_;
  }

  // Traced kernels: adds the time since `since` to the i64 at `acc` (on chip) and returns the time now.
  V addElapsed(V acc, V since) {
    V now = env_.target->globalTimerNs(b_);
    b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), acc), b_.CreateSub(now, since)), acc);
    return now;
  }

  // The compute side's half of the ring: wait until the statement's weight tiles are in their
  // slots (every thread observes the mbarrier phase itself).
  std::vector<V> acquireSlots(const Stmt& s) {
    std::vector<V> slots;
    for (const Expr* load : streamedOf(s, v_.streamed)) {
      V since = env_.ringWaitNs ? env_.target->globalTimerNs(b_) : nullptr;
      V seq = b_.CreateLoad(i32(), env_.seq);
      V slot = b_.CreateURem(seq, env_.ringSlots);
      V parity = b_.CreateAnd(b_.CreateUDiv(seq, env_.ringSlots), ci(1));
      V full = smemPtr(env_, b_.CreateAdd(ci(SmemLayout::kBarriers), b_.CreateMul(slot, ci(8))));
      V failed = boundedWait(env_, [&](V& seen) {
        V ok = env_.target->mbarrierTryWait(b_, full, parity);
        seen = b_.CreateZExt(ok, i32());
        return ok;
      }, ErrRingFull, slot, parity, /*quickPoll=*/false);  // a second poll here costs sm_80 spills in the matvec loops
      when(failed, [&] { b_.CreateStore(ci(1), smemPtr(env_, ci(SmemLayout::kAbortFlag))); });
      if (since) when(b_.CreateICmpEQ(env_.tid, ci(0)), [&] { addElapsed(env_.ringWaitNs, since); });
      b_.CreateStore(b_.CreateAdd(seq, ci(1)), env_.seq);
      ring_[load] = smemPtr(env_, b_.CreateAdd(env_.ringBase, b_.CreateMul(slot, ci(env_.slotBytes))));
      slots.push_back(slot);
    }
    // No barrier here: each thread has seen the tile land itself; whether a wait failed is
    // decided after the statement's closing barrier (finishStatement).
    return slots;
  }

  // Each compute warp arrives once on a slot's `empty` barrier (its count is the number of
  // compute warps). After the statement's closing barrier (`blockDone`) every thread is done
  // with the slot; otherwise the warp syncs first so all its lanes have read it.
  void releaseSlots(const std::vector<V>& slots, bool blockDone = true) {
    if (slots.empty()) return;
    if (!blockDone) env_.target->warpSync(b_);
    when(b_.CreateICmpEQ(b_.CreateURem(env_.tid, ci(32)), ci(0)), [&] {
      for (V slot : slots)
        env_.target->mbarrierArrive(b_, smemPtr(env_, b_.CreateAdd(ci(SmemLayout::kBarriers + SmemLayout::kMaxSlots * 8), b_.CreateMul(slot, ci(8)))));
    });
  }

  void block(const ir::Block& stmts) {
    for (const auto& s : stmts) statement(*s);
  }

  void statement(const Stmt& s) {
    if (side_ == Side::Loader) return loaderStatement(s);
    beginStatement();
    switch (s.kind) {
      case StmtKind::For: {
        if (!s.lo || !s.hi || s.step <= 0) unsupported("a loop without bounds or with a step <= 0");
        if (fusedRowdotLoop(s)) return;
        V lo = convert(s.lo->dtype, DType::I32, scalar(*s.lo)), hi = convert(s.hi->dtype, DType::I32, scalar(*s.hi));
        const DType t = fn_.locals.at(size_t(s.slot)).dtype;
        const std::vector<const Expr*> ahead = iterationLoads(s);
        if (!ahead.empty()) when(b_.CreateICmpSLT(lo, hi), [&] { prefetchIteration(s, ahead, lo); });
        loop(lo, hi, ci(s.step), [&](V i) {
          if (!ahead.empty()) {
            V next = b_.CreateAdd(i, ci(s.step));
            when(b_.CreateICmpSLT(next, hi), [&] { prefetchIteration(s, ahead, next); });
          }
          writeScalarLocal(s.slot, convert(DType::I32, t, i));
          block(s.body);
        });
        return;
      }
      case StmtKind::If: {
        if (!s.value || !s.value->shape.empty()) unsupported("an `if` whose condition is not a scalar");
        prepare(*s.value);
        V c = b_.CreateICmpNE(convert(s.value->dtype, DType::Bool, scalar(*s.value)), ci(0));
        auto* t = newBlock("if.then");
        auto* e = newBlock("if.else");
        auto* j = newBlock("if.end");
        b_.CreateCondBr(c, t, e);
        b_.SetInsertPoint(t);
        block(s.body);
        b_.CreateBr(j);
        b_.SetInsertPoint(e);
        block(s.otherwise);
        b_.CreateBr(j);
        b_.SetInsertPoint(j);
        return;
      }
      default: break;
    }
    std::vector<V> slots = acquireSlots(s);
    if (accumulatesRowdot(s)) {
      const Expr& rd = *s.value;
      for (const auto& o : rd.operands) prepare(*o);
      TileRef acc = localTile(s.slot);
      rowdot(rd, &acc);  // ends with a barrier
      finishStatement(slots);
      return;
    }
    if (s.value) prepare(*s.value);
    bool tiles = false;
    switch (s.kind) {
      case StmtKind::Let:
      case StmtKind::Assign: {
        const auto& L = fn_.locals.at(size_t(s.slot));
        if (L.shape.empty()) {
          if (!s.value) {
            writeScalarLocal(s.slot, isFloat(L.dtype) ? cf(0) : ci(0));
          } else if (s.kind == StmtKind::Let || s.assign == ir::AssignOp::Set) {
            writeScalarLocal(s.slot, convert(s.value->dtype, L.dtype, scalar(*s.value)));
          } else {
            V cur = readScalarLocal(s.slot);
            writeScalarLocal(s.slot, binary(compound(s.assign), L.dtype, L.dtype, s.value->dtype, cur, scalar(*s.value)));
          }
          break;
        }
        tiles = true;
        const int64_t n = ir::elementCount(L.shape);
        TileRef dst = localTile(s.slot);
        if (!s.value) {
          forEachElement(n, [&](V i) { writeTile(dst, i, isFloat(L.dtype) ? cf(0) : ci(0)); });
          break;
        }
        const Expr& val = *s.value;
        const bool set = s.kind == StmtKind::Let || s.assign == ir::AssignOp::Set;
        // A value that reads this local at other elements is computed in full first.
        auto value = [&](V i) { return elem(val, val.shape.empty() ? ci(0) : i); };
        if (readsShifted(val, s.slot, false)) {
          TileRef tmp = allocTemp(n, val.dtype);
          forEachElement(n, value, [&](V i, V x) { writeTile(tmp, i, x); });
          barrier();
          tiles_[&val] = tmp;
        }
        forEachElement(n, value, [&](V i, V x) {
          if (set) writeTile(dst, i, convert(val.dtype, L.dtype, x));
          else writeTile(dst, i, binary(compound(s.assign), L.dtype, L.dtype, val.dtype, readTile(dst, i), x));
        });
        break;
      }
      case StmtKind::Store: {
        if (!s.value) unsupported("a store without a value");
        const ir::Tensor& t = tensorOf(s.tensor);
        std::vector<V> st = starts(s.region);
        const int64_t n = regionElements(s.region);
        const Expr& val = *s.value;
        auto value = [&](V i) { return convert(val.dtype, t.dtype, elem(val, val.shape.empty() ? ci(0) : i)); };
        auto put = [&](V i, V x) {
          storeStorage(t.dtype, at(t.dtype, args_.params[size_t(s.tensor)], physOffset(t, coordsOf(s.region, st, i))), x);
        };
        tiles = true;
        if (n == 1) when(b_.CreateICmpEQ(env_.tid, ci(0)), [&] { put(ci(0), value(ci(0))); });
        else forEachElement(n, value, put);
        break;
      }
      default: break;
    }
    if (tiles || !slots.empty()) barrier();
    finishStatement(slots);
  }

  // `acc += rowdot(A, x)` on an f32 tile local that the operands do not read.
  bool accumulatesRowdot(const Stmt& s) const {
    if (s.kind != StmtKind::Assign || s.assign != ir::AssignOp::Add || !s.value || s.value->kind != ExprKind::RowDot) return false;
    const auto& L = fn_.locals.at(size_t(s.slot));
    if (L.shape.empty() || L.dtype != DType::F32 || s.value->dtype != DType::F32 || L.shape != s.value->shape) return false;
    std::function<bool(const Expr&)> reads = [&](const Expr& e) {
      if (e.kind == ExprKind::Local && e.index == s.slot) return true;
      for (const auto& o : e.operands)
        if (o && reads(*o)) return true;
      for (const auto& r : e.region)
        if (r.start && reads(*r.start)) return true;
      return false;
    };
    return !reads(*s.value);
  }

  // After the statement's closing barrier: leave if a ring wait of this statement failed (every
  // compute thread has passed the barrier, so they all leave together), else free its slots.
  void finishStatement(const std::vector<V>& slots) {
    if (slots.empty()) return;
    V abort = b_.CreateLoad(i32(), smemPtr(env_, ci(SmemLayout::kAbortFlag)));
    auto* go = newBlock("ring.ok");
    b_.CreateCondBr(b_.CreateICmpNE(abort, ci(0)), env_.exit, go);
    b_.SetInsertPoint(go);
    releaseSlots(slots);
  }

  static BinaryOp compound(ir::AssignOp a) {
    return a == ir::AssignOp::Add ? BinaryOp::Add : a == ir::AssignOp::Sub ? BinaryOp::Sub
         : a == ir::AssignOp::Mul ? BinaryOp::Mul : BinaryOp::Div;
  }

  // --- The loader warp ----------------------------------------------------------------------
  // Walks the same static loops and issues the same streamed loads, in the same order, as the
  // compute threads consume them; the ring's mbarriers keep the two sides in step.
  void loaderStatement(const Stmt& s) {
    scalars_.clear();
    switch (s.kind) {
      case StmtKind::Let:
        if (statics_.staticSlot(s.slot) && s.value) writeScalarLocal(s.slot, convert(s.value->dtype, fn_.locals[size_t(s.slot)].dtype, scalar(*s.value)));
        break;
      case StmtKind::For: {
        if (!containsStreamed(s.body, v_.streamed)) return;
        V lo = convert(s.lo->dtype, DType::I32, scalar(*s.lo)), hi = convert(s.hi->dtype, DType::I32, scalar(*s.hi));
        const DType t = fn_.locals.at(size_t(s.slot)).dtype;
        LoaderLoop here{&s, hi, nullptr, nullptr};
        if (env_.l2AheadTiles > 0) {
          here.ahead = entryAlloca(i32());
          b_.CreateStore(lo, here.ahead);
        }
        loaderLoops_.push_back(&here);
        loop(lo, hi, ci(s.step), [&](V i) {
          here.now = i;
          writeScalarLocal(s.slot, convert(DType::I32, t, i));
          block(s.body);
        });
        loaderLoops_.pop_back();
        return;
      }
      default: break;
    }
    if (s.kind == StmtKind::If) return;
    for (const Expr* load : streamedOf(s, v_.streamed)) issue(*load);
  }

  // The loader's enclosing K loop: its statement, bound, current value, and (with l2AheadTiles)
  // the next loop value whose tile is not yet prefetched. One position for all the loop's
  // streamed loads: the first load's waits advance it (docs/backend.md).
  struct LoaderLoop {
    const Stmt* stmt;
    V hi, now, ahead;
  };

  // One poll's worth of look-ahead while the loader waits for a slot: the tile of the next loop
  // value not yet prefetched, if within l2AheadTiles iterations of the one being issued, goes to
  // L2 one 128-byte line per lane and round.
  void prefetchAhead(const Expr& load, const LoaderLoop& l, int64_t bytes) {
    const Stmt& s = *l.stmt;
    V next = b_.CreateLoad(i32(), l.ahead);
    V limit = b_.CreateAdd(l.now, ci(int64_t(env_.l2AheadTiles) * s.step));
    V go = b_.CreateAnd(b_.CreateICmpSLT(next, l.hi), b_.CreateICmpSLT(next, limit));
    when(go, [&] {
      V base = nullptr;
      atLoopValue(s, next, l.now, [&] {
        const ir::Tensor& tensor = tensorOf(load.index);
        base = at(tensor.dtype, args_.params[size_t(load.index)], physOffset(tensor, starts(load.region)));
      });
      for (int64_t line = 0; line * 128 < bytes; line += 32) {
        V off = b_.CreateMul(b_.CreateAdd(env_.tid, ci(line)), ci(128));
        when(b_.CreateICmpULT(off, ci(bytes)), [&] { env_.target->prefetchLineL2(b_, b_.CreateGEP(b_.getInt8Ty(), base, off)); });
      }
      b_.CreateStore(b_.CreateAdd(next, ci(s.step)), l.ahead);
    });
  }

  void issue(const Expr& load) {
    const ir::Tensor& t = tensorOf(load.index);
    const int64_t eb = dtypeBytes(t.dtype);
    const bool whole = v_.contiguous.count(&load) > 0;  // one tile of a tiled layout: one block
    const int64_t bytes = regionElements(load.region) * eb;
    const int64_t rowBytes = whole ? bytes : load.region.back().length * eb;
    const int64_t rows = bytes / rowBytes;
    V lane = env_.tid;  // the loader's lanes count from 0
    std::vector<V> st = starts(load.region);
    // The global address of row r: outer coordinates from r, the last dim at its start.
    auto rowSrc = [&](V r) {
      if (whole) return at(t.dtype, args_.params[size_t(load.index)], physOffset(t, st));
      std::vector<V> c(load.region.size());
      V rest = r;
      for (size_t d = load.region.size(); d-- > 0;) {
        if (d + 1 == load.region.size() || load.region[d].length <= 0) {
          c[d] = st[d];
          continue;
        }
        c[d] = b_.CreateAdd(st[d], b_.CreateURem(rest, ci(load.region[d].length)));
        rest = b_.CreateUDiv(rest, ci(load.region[d].length));
      }
      return at(t.dtype, args_.params[size_t(load.index)], physOffset(t, c));
    };
    V since = env_.loaderWaitNs ? env_.target->globalTimerNs(b_) : nullptr;
    V seq = b_.CreateLoad(i32(), env_.seq);
    V slot = b_.CreateURem(seq, env_.ringSlots);
    V use = b_.CreateUDiv(seq, env_.ringSlots);
    V full = smemPtr(env_, b_.CreateAdd(ci(SmemLayout::kBarriers), b_.CreateMul(slot, ci(8))));
    V empty = smemPtr(env_, b_.CreateAdd(ci(SmemLayout::kBarriers + SmemLayout::kMaxSlots * 8), b_.CreateMul(slot, ci(8))));
    // The slot's previous tile must have been consumed (no wait for a slot's first use).
    const LoaderLoop* ahead = whole && env_.l2AheadTiles > 0 && !loaderLoops_.empty() ? loaderLoops_.back() : nullptr;
    if (ahead)
      b_.CreateStore(binary(BinaryOp::Max, DType::I32, DType::I32, DType::I32, b_.CreateLoad(i32(), ahead->ahead), ahead->now),
                     ahead->ahead);
    when(b_.CreateICmpUGT(use, ci(0)), [&] {
      V parity = b_.CreateAnd(b_.CreateSub(use, ci(1)), ci(1));
      bool firstPoll = true;  // boundedWait's quick poll: the slot may be free already
      V failed = boundedWait(env_, [&](V& seen) {
        if (ahead && !firstPoll) prefetchAhead(load, *ahead, bytes);
        firstPoll = false;
        V ok = env_.target->mbarrierTryWait(b_, empty, parity);
        seen = b_.CreateZExt(ok, i32());
        return ok;
      }, ErrRingEmpty, slot, parity);
      auto* go = newBlock("loader.ok");
      b_.CreateCondBr(failed, env_.exit, go);
      b_.SetInsertPoint(go);
    });
    if (since) {
      when(b_.CreateICmpEQ(lane, ci(0)), [&] {
        V now = addElapsed(env_.loaderWaitNs, since);
        V first = b_.CreateLoad(b_.getInt64Ty(), env_.loaderFirst);
        b_.CreateStore(b_.CreateSelect(b_.CreateICmpEQ(first, b_.getInt64(0)), now, first), env_.loaderFirst);
        b_.CreateStore(now, env_.loaderLast);
      });
    }
    V dst = smemPtr(env_, b_.CreateAdd(env_.ringBase, b_.CreateMul(slot, ci(env_.slotBytes))));
    if (env_.ablateCopies) {
      // The slot is handed over as it is (the phase completes without data).
      if (env_.target->bulkCopy()) when(b_.CreateICmpEQ(lane, ci(0)), [&] { env_.target->mbarrierArrive(b_, full); });
      else env_.target->mbarrierArrive(b_, full);
    } else if (env_.target->bulkCopy()) {
      when(b_.CreateICmpEQ(lane, ci(0)), [&] { env_.target->mbarrierArriveExpectTx(b_, full, ci(bytes)); });
      loop(lane, ci(rows), ci(32), [&](V r) {
        V d = b_.CreateGEP(b_.getInt8Ty(), dst, b_.CreateMul(r, ci(rowBytes)));
        env_.target->copyBulk(b_, d, rowSrc(r), ci(rowBytes), full);
      }, /*unroll=*/1);
    } else {
      // Row by row, 16 bytes per lane and copy; unrolling this loop only keeps more addresses live.
      const int64_t perRow = rowBytes / 16;
      loop(ci(0), ci(rows), ci(1), [&](V r) {
        V src = rowSrc(r);
        V d = b_.CreateGEP(b_.getInt8Ty(), dst, b_.CreateMul(r, ci(rowBytes)));
        loop(lane, ci(perRow), ci(32), [&](V k) {
          V off = b_.CreateMul(k, ci(16));
          env_.target->copy16(b_, b_.CreateGEP(b_.getInt8Ty(), d, off), b_.CreateGEP(b_.getInt8Ty(), src, off));
        }, /*unroll=*/2);
      }, /*unroll=*/1);
      env_.target->copyArriveOnComplete(b_, full);
    }
    b_.CreateStore(b_.CreateAdd(seq, ci(1)), env_.seq);
  }

  const TaskEnv& env_;
  Builder& b_;
  const Variant& v_;
  const ir::TileFunc& fn_;
  const TaskArgs& args_;
  Side side_;
  Statics statics_;
  std::vector<int64_t> tileOffset_;
  int64_t localsEnd_ = 0, top_ = 0, peak_ = 0;
  std::map<const Expr*, V> scalars_;
  std::map<const Expr*, TileRef> tiles_;
  std::map<const Expr*, V> ring_;
  std::vector<const LoaderLoop*> loaderLoops_;  // the loader side's enclosing K loops, innermost last
};

}  // namespace

void emitTask(const TaskEnv& env, const Variant& v, const TaskArgs& args, Side side) {
  TileGen(env, v, args, side).run();
}

}  // namespace mk::backend
