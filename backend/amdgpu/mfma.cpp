// v_mfma_f32_16x16x16bf16_1k and v_mfma_f32_16x16x16f16: a wave64 multiplies a 16 x 16 block of a
// by a 16 x 16 block of b into 16 x 16 f32 accumulators. With i = lane % 16 and q = lane / 16
// (AMD's CDNA2/CDNA3 ISA, the 16x16x16 register layout), each lane holds four elements adjacent
// in k of each operand and four accumulators down a column:
//   a: a[i][4q .. 4q + 3]     b: b[4q .. 4q + 3][i] (rows k, column n; the staged b[n, k] row)
//   d: d[4q + j][i], j = 0 .. 3
#include "backend/amdgpu/mfma.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>

namespace mk::backend::amdgpu {

using llvm::Value;

namespace {
constexpr int kM = 16, kN = 16;

// Elements (row, col .. col + 3) of a staged operand, as the instruction takes them.
Value* loadFour(Builder& b, DType dtype, Value* base, int64_t ld, Value* row, Value* col) {
  Value* elem = b.CreateAdd(b.CreateMul(row, b.getInt32(uint32_t(ld))), col);
  auto* ty = llvm::FixedVectorType::get(dtype == DType::BF16 ? b.getInt16Ty() : b.getHalfTy(), 4);
  return b.CreateAlignedLoad(ty, b.CreateGEP(b.getInt16Ty(), base, elem), llvm::Align(8));
}
}  // namespace

int mfmaAccumulators() { return kM * kN / 64; }

std::pair<Value*, Value*> mfmaAccumulatorAt(Builder& b, Value* lane, int j) {
  return {b.CreateAdd(b.CreateShl(b.CreateLShr(lane, 4), 2), b.getInt32(j)), b.CreateAnd(lane, 15)};
}

void mfmaStep(Builder& b, const Target::MmaOperands& ops, Value* lane, Value* m0, Value* n0, Value* k0, int mBlocks,
              int nBlocks, std::vector<Value*>& acc) {
  Value* i = b.CreateAnd(lane, 15);
  Value* k = b.CreateAdd(k0, b.CreateShl(b.CreateLShr(lane, 4), 2));
  std::vector<Value*> a, bv;
  for (int r = 0; r < mBlocks; ++r)
    a.push_back(loadFour(b, ops.dtype, ops.a, ops.lda, b.CreateAdd(m0, b.CreateAdd(i, b.getInt32(r * kM))), k));
  for (int c = 0; c < nBlocks; ++c)
    bv.push_back(loadFour(b, ops.dtype, ops.b, ops.ldb, b.CreateAdd(n0, b.CreateAdd(i, b.getInt32(c * kN))), k));
  const auto id = ops.dtype == DType::BF16 ? llvm::Intrinsic::amdgcn_mfma_f32_16x16x16bf16_1k
                                           : llvm::Intrinsic::amdgcn_mfma_f32_16x16x16f16;
  auto* f32x4 = llvm::FixedVectorType::get(b.getFloatTy(), 4);
  const int per = mfmaAccumulators();
  for (int r = 0; r < mBlocks; ++r)
    for (int c = 0; c < nBlocks; ++c) {
      const size_t first = size_t((r * nBlocks + c) * per);
      Value* cv = llvm::PoisonValue::get(f32x4);
      for (int q = 0; q < per; ++q) cv = b.CreateInsertElement(cv, acc[first + size_t(q)], uint64_t(q));
      // cbsz, abid, blgp = 0: no broadcast between blocks or lane groups.
      Value* d = b.CreateIntrinsic(id, {}, {a[size_t(r)], bv[size_t(c)], cv, b.getInt32(0), b.getInt32(0), b.getInt32(0)});
      for (int q = 0; q < per; ++q) acc[first + size_t(q)] = b.CreateExtractElement(d, uint64_t(q));
    }
}

}  // namespace mk::backend::amdgpu
