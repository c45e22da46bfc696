// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}: a warp multiplies a 16 x 16 block of a by a
// 16 x 8 block of b (k x n, "col": k contiguous per column, as the staged b[n, k] is) into
// 16 x 8 f32 accumulators. With g = lane / 4 and t = lane % 4 (PTX ISA, "Matrix Fragments for
// mma.m16n8k16 with floating point type"), each lane holds, as 32-bit words of two elements
// adjacent in k:
//   a: {a[g][2t..], a[g + 8][2t..], a[g][2t + 8..], a[g + 8][2t + 8..]}
//   b: {b[2t.., g], b[2t + 8.., g]}  (rows k, column n)
//   c: c[g][2t], c[g][2t + 1], c[g + 8][2t], c[g + 8][2t + 1]
// Staged rows padded to an odd number of 16-byte units (tile/mma.cpp) put a warp's 32 word loads
// on 32 distinct banks.
#include "backend/nvptx/mma_sync.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

namespace mk::backend::nvptx {

using llvm::Value;

namespace {
constexpr int kM = 16, kN = 8;

// The 32-bit word holding elements (row, col) and (row, col + 1) of a staged operand.
Value* loadWord(Builder& b, Value* base, int64_t ld, Value* row, Value* col) {
  Value* elem = b.CreateAdd(b.CreateMul(row, b.getInt32(uint32_t(ld))), col);
  return b.CreateAlignedLoad(b.getInt32Ty(), b.CreateGEP(b.getInt16Ty(), base, elem), llvm::Align(4));
}
}  // namespace

int mmaSyncAccumulators() { return kM * kN / 32; }

std::pair<Value*, Value*> mmaSyncAccumulatorAt(Builder& b, Value* lane, int j) {
  Value* g = b.CreateLShr(lane, 2);
  Value* t = b.CreateAnd(lane, 3);
  return {b.CreateAdd(g, b.getInt32(8 * (j >> 1))), b.CreateAdd(b.CreateShl(t, 1), b.getInt32(j & 1))};
}

void mmaSyncStep(Builder& b, const Target::MmaOperands& ops, Value* lane, Value* m0, Value* n0, Value* k0, int mBlocks,
                 int nBlocks, std::vector<Value*>& acc) {
  Value* g = b.CreateLShr(lane, 2);
  Value* k = b.CreateAdd(k0, b.CreateShl(b.CreateAnd(lane, 3), 1));
  Value* k8 = b.CreateAdd(k, b.getInt32(8));
  const bool bf16 = ops.dtype == DType::BF16;
  // The f16 form takes its operand words as <2 x half>.
  auto word = [&](Value* w) { return bf16 ? w : b.CreateBitCast(w, llvm::FixedVectorType::get(b.getHalfTy(), 2)); };
  std::vector<std::vector<Value*>> a(static_cast<size_t>(mBlocks)), bw(static_cast<size_t>(nBlocks));
  for (int i = 0; i < mBlocks; ++i) {
    Value* row = b.CreateAdd(m0, b.CreateAdd(g, b.getInt32(i * kM)));
    Value* row8 = b.CreateAdd(row, b.getInt32(8));
    for (auto [r, c] : {std::pair{row, k}, {row8, k}, {row, k8}, {row8, k8}})
      a[size_t(i)].push_back(word(loadWord(b, ops.a, ops.lda, r, c)));
  }
  for (int j = 0; j < nBlocks; ++j) {
    Value* col = b.CreateAdd(n0, b.CreateAdd(g, b.getInt32(j * kN)));
    bw[size_t(j)] = {word(loadWord(b, ops.b, ops.ldb, col, k)), word(loadWord(b, ops.b, ops.ldb, col, k8))};
  }
  const auto id = bf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16 : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32;
  const int per = mmaSyncAccumulators();
  for (int i = 0; i < mBlocks; ++i)
    for (int j = 0; j < nBlocks; ++j) {
      std::vector<Value*> args = a[size_t(i)];
      args.insert(args.end(), bw[size_t(j)].begin(), bw[size_t(j)].end());
      const size_t first = size_t((i * nBlocks + j) * per);
      for (int q = 0; q < per; ++q) args.push_back(acc[first + size_t(q)]);
      Value* d = b.CreateIntrinsic(id, {}, args);
      for (int q = 0; q < per; ++q) acc[first + size_t(q)] = b.CreateExtractValue(d, {unsigned(q)});
    }
}

}  // namespace mk::backend::nvptx
