// The helpers the kernel skeleton and the tile lowering share (codegen.h): structured control
// flow, element storage, and the bounded wait.
#include "backend/codegen.h"

namespace mk::backend {

using V = llvm::Value*;

bool onMatrixInstruction(const Target& tg, const ir::Expr& e) {
  if ((e.kind != ir::ExprKind::Mma && e.kind != ir::ExprKind::MmaNt) || e.operands.size() != 2 || !e.operands[0] ||
      !e.operands[1])
    return false;
  const ir::Expr &a = *e.operands[0], &b = *e.operands[1];
  const bool nt = e.kind == ir::ExprKind::MmaNt;
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.dtype != b.dtype || !tg.hasMma(a.dtype)) return false;
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[nt ? 0 : 1];
  return (nt ? b.shape[1] : b.shape[0]) == K && !ir::mmaMisfit(tg.arch(), M, N, K);
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

}  // namespace mk::backend
