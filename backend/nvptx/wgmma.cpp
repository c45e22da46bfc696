// wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16} (PTX ISA, "Asynchronous Warpgroup Level
// Matrix Multiply-Accumulate"): the 128 threads of a warpgroup multiply a 64 x 16 block of a by a
// 16 x N block of b into 64 x N f32 accumulators, N / 2 a thread, laid out per warp as mma.sync's
// m16n8 accumulators are (mma_sync.cpp), one 8-column block after another.
//
// Both operands are read from shared memory through 64-bit matrix descriptors: the start address,
// the leading- and stride-dimension byte offsets (each >> 4, 14 bits) and the swizzle mode in
// bits 62-63 (1: 128 bytes). The operands are in panels of 128-byte rows with the 128-byte swizzle
// (Target::GroupMmaTile); the stride offset is one 8-row group, 1024 bytes. K-major, one
// instruction's 16 k elements lie inside a panel row, so the leading offset is unused, and a k
// step inside a panel advances the start address by 32 bytes. N-major (b only, the instruction's
// transpose flag), a panel row holds 64 columns of one k: a k step is 16 rows, 2048 bytes, and
// the leading offset goes from one panel of 64 columns to the next. The hardware applies the
// swizzle to the address bits, which is why a panel starts 1024-byte aligned.
//
// One inline PTX block holds a tile set's whole K: wgmma.fence (the accumulators were last written
// by ordinary instructions), every product and commit, then either the wait for all of them or,
// left in flight, a later block of its own (groupMmaWait) whose operands are those accumulators:
// the registers pass from one block to the next, so no instruction reads or writes them while a
// product that owns them is in flight.
#include "backend/nvptx/wgmma.h"

#include <string>

#include "backend/nvptx/inline_ptx.h"

namespace mk::backend::nvptx {

using llvm::Value;

namespace {
constexpr int64_t kPanelElements = 64, kK = 16;

// `leadingBytes`: 0 where the leading offset is unused (K-major).
Value* descriptor(Builder& b, Value* sharedPtr, int64_t leadingBytes = 0) {
  Value* addr = b.CreatePtrToInt(sharedPtr, b.getInt64Ty());
  addr = b.CreateLShr(b.CreateAnd(addr, b.getInt64(0x3FFFF)), 4);
  const uint64_t leading = leadingBytes ? uint64_t(leadingBytes) >> 4 : 1;
  constexpr uint64_t kStride = 1024 >> 4, kSwizzle128 = 1;
  return b.CreateOr(addr, b.getInt64((leading << 16) | (kStride << 32) | (kSwizzle128 << 62)));
}

}  // namespace

void groupMma(Builder& b, DType dt, const std::vector<Target::GroupMmaTile>& tiles, int64_t K, int chains, bool wait) {
  wait = wait || chains > 1;  // the chains are summed after their products
  const std::string type = dt == DType::BF16 ? "bf16" : "f16";
  int accumulators = 0;
  std::vector<int> firstAcc;
  for (const auto& t : tiles) firstAcc.push_back(accumulators), accumulators += t.n / 2;
  // k step s goes to chain s % chains: chain 0 accumulates onto acc, the others start from zero
  // (scale-d 0 at their first step) and are added to it after the wait.
  // Operands: the outputs (chain 0's accumulators $0 .., then each further chain's), each tile's a
  // and b descriptors at k = 0, then chain 0's inputs, tied to their outputs.
  const int outputs = accumulators * chains;
  std::vector<Value*> args;
  for (const auto& t : tiles)
    args.push_back(descriptor(b, t.a)), args.push_back(descriptor(b, t.b, t.bNMajor ? t.bPanelBytes : 0));
  std::string text = "{\n.reg .b64 mk_da, mk_db;\nwgmma.fence.sync.aligned;\n";
  for (int64_t k0 = 0, step = 0; k0 < K; k0 += kK, ++step)
    for (size_t i = 0; i < tiles.size(); ++i) {
      const auto& t = tiles[i];
      const int chain = int(step % chains);
      const bool fresh = chain > 0 && step < chains;
      const int64_t within = (k0 % kPanelElements) * 2, panel = k0 / kPanelElements;
      // Byte offsets >> 4 add to the descriptor's address field (shared addresses stay below 2^18).
      text += "add.s64 mk_da, $" + std::to_string(outputs + 2 * int(i)) + ", " +
              std::to_string((panel * t.aPanelBytes + within) >> 4) + ";\n";
      const int64_t bAt = t.bNMajor ? k0 * 128 : panel * t.bPanelBytes + within;
      text += "add.s64 mk_db, $" + std::to_string(outputs + 2 * int(i) + 1) + ", " + std::to_string(bAt >> 4) + ";\n";
      text += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(t.n) + "k16.f32." + type + "." + type + " {";
      for (int q = 0; q < t.n / 2; ++q)
        text += (q ? ", $" : "$") + std::to_string(chain * accumulators + firstAcc[i] + q);
      text += std::string("}, mk_da, mk_db, ") + (fresh ? "0" : "1") + ", 1, 1, 0, " + (t.bNMajor ? "1" : "0") + ";\n";
    }
  text += "wgmma.commit_group.sync.aligned;\n";
  if (wait) text += "wgmma.wait_group.sync.aligned 0;\n";
  text += "}";
  std::string constraints;
  for (int q = 0; q < outputs; ++q) constraints += "=f,";
  for (size_t i = 0; i < 2 * tiles.size(); ++i) constraints += "l,";
  for (int q = 0; q < accumulators; ++q) constraints += std::to_string(q) + ",";
  constraints += "~{memory}";
  for (const auto& t : tiles) args.insert(args.end(), t.acc->begin(), t.acc->end());
  std::vector<llvm::Type*> outs(size_t(outputs), b.getFloatTy());
  llvm::Type* ret = outputs == 1 ? outs[0] : llvm::StructType::get(b.getContext(), outs);
  Value* d = inlinePtx(b, ret, args, text, constraints, /*sideEffects=*/true);
  auto out = [&](int j) { return outputs == 1 ? d : b.CreateExtractValue(d, {unsigned(j)}); };
  for (size_t i = 0; i < tiles.size(); ++i)
    for (int q = 0; q < tiles[i].n / 2; ++q) {
      Value* sum = out(firstAcc[i] + q);
      for (int c = 1; c < chains; ++c) sum = b.CreateFAdd(sum, out(c * accumulators + firstAcc[i] + q));
      (*tiles[i].acc)[size_t(q)] = sum;
    }
}

void groupMmaWait(Builder& b, std::vector<Value*>& acc) {
  if (acc.empty()) return;
  std::string constraints;
  for (size_t q = 0; q < acc.size(); ++q) constraints += "=f,";
  for (size_t q = 0; q < acc.size(); ++q) constraints += std::to_string(q) + ",";
  constraints += "~{memory}";
  std::vector<llvm::Type*> outs(acc.size(), b.getFloatTy());
  llvm::Type* ret = acc.size() == 1 ? outs[0] : llvm::StructType::get(b.getContext(), outs);
  Value* d = inlinePtx(b, ret, acc, "wgmma.wait_group.sync.aligned 0;", constraints, /*sideEffects=*/true);
  for (size_t q = 0; q < acc.size(); ++q) acc[q] = acc.size() == 1 ? d : b.CreateExtractValue(d, {unsigned(q)});
}

void fenceSharedForGroupMma(Builder& b) {
  inlinePtx(b, b.getVoidTy(), {}, "fence.proxy.async.shared::cta;", "~{memory}", /*sideEffects=*/true);
}

}  // namespace mk::backend::nvptx
