// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}: a warp multiplies a 16 x 16 block of a by a
// 16 x 8 block of b (k x n, "col": k contiguous per column, as the staged b[n, k] is) into
// 16 x 8 f32 accumulators. With g = lane / 4 and t = lane % 4 (PTX ISA, "Matrix Fragments for
// mma.m16n8k16 with floating point type"), each lane holds, as 32-bit words of two elements
// adjacent in k:
//   a: {a[g][2t..], a[g + 8][2t..], a[g][2t + 8..], a[g + 8][2t + 8..]}
//   b: {b[2t.., g], b[2t + 8.., g]}  (rows k, column n)
//   c: c[g][2t], c[g][2t + 1], c[g + 8][2t], c[g + 8][2t + 1]
// The fragments come from shared memory through ldmatrix (m8n8, b16): each 8 x 8 block of 16-bit
// elements is 8 row addresses of 16 bytes, and lane l receives row l / 4's words 2 (l % 4) of it,
// which is the fragment layout above; one ldmatrix.x4 gives a's four words, or two n blocks' b.
// An N-major b (rows of n) comes through ldmatrix.trans, which gives lane l column l / 4's
// words 2 (l % 4) of each 8 x 8 block: b[2t.., g] again. And since c's layout is a's for 8
// columns, the accumulators of n blocks 2s and 2s + 1 are the a fragment of k step s.
// Staged rows padded to an odd number of 16-byte units (tile/mma.cpp) put each 8-row phase on
// distinct banks.
#include "backend/nvptx/mma_sync.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

namespace mk::backend::nvptx {

using llvm::Value;

namespace {
constexpr int kM = 16, kN = 8;

// ldmatrix of `count` (2 or 4) 8 x 8 blocks of a staged operand; this lane gives the address of
// row `row`, column `col` (a multiple of 8: 16-byte aligned rows) and receives one word a block.
std::vector<Value*> loadMatrices(Builder& b, int count, Value* base, int64_t ld, Value* row, Value* col,
                                 bool trans = false) {
  Value* elem = b.CreateAdd(b.CreateMul(row, b.getInt32(uint32_t(ld))), col);
  Value* ptr = b.CreateGEP(b.getInt16Ty(), base, elem);
  llvm::Type* shared = llvm::PointerType::get(b.getContext(), 3);
  if (ptr->getType() != shared) ptr = b.CreateAddrSpaceCast(ptr, shared);
  const auto id = trans ? (count == 4 ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                                      : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16)
                        : (count == 4 ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16
                                      : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16);
  Value* words = b.CreateIntrinsic(id, {shared}, {ptr});  // overloaded on the pointer
  std::vector<Value*> out;
  for (int i = 0; i < count; ++i) out.push_back(b.CreateExtractValue(words, {unsigned(i)}));
  return out;
}
}  // namespace

int mmaSyncAccumulators() { return kM * kN / 32; }

std::pair<Value*, Value*> mmaSyncAccumulatorAt(Builder& b, Value* lane, int j) {
  Value* g = b.CreateLShr(lane, 2);
  Value* t = b.CreateAnd(lane, 3);
  return {b.CreateAdd(g, b.getInt32(8 * (j >> 1))), b.CreateAdd(b.CreateShl(t, 1), b.getInt32(j & 1))};
}

namespace {

// The operand words as the instruction takes them: the f16 form as <2 x half>.
Value* operandWord(Builder& b, DType t, Value* w) {
  return t == DType::BF16 ? w : b.CreateBitCast(w, llvm::FixedVectorType::get(b.getHalfTy(), 2));
}

// b's words for n blocks 0 .. nBlocks - 1 from n0 at k step k0: block j at k 0-7 and k 8-15, two
// blocks an ldmatrix.x4 (x2 for a last odd one). Lane l addresses row l % 8 of matrix l / 8.
std::vector<std::vector<Value*>> loadB(Builder& b, const Target::MmaOperands& ops, Value* lane, Value* n0, Value* k0,
                                       int nBlocks) {
  Value* r8 = b.CreateAnd(lane, 7);
  Value* block = b.CreateLShr(lane, 3);
  Value* odd = b.CreateAnd(block, 1);
  Value* high = b.CreateLShr(block, 1);
  std::vector<std::vector<Value*>> bw(static_cast<size_t>(nBlocks));
  for (int j = 0; j < nBlocks; j += 2) {
    const int count = j + 1 < nBlocks ? 4 : 2;
    // K-major: matrix (block, k half) is rows n of k; N-major: rows k of n, transposed.
    Value* nRow = b.CreateAdd(n0, b.CreateAdd(b.CreateShl(high, 3), b.getInt32(j * kN)));
    Value* kCol = b.CreateAdd(k0, b.CreateShl(odd, 3));
    std::vector<Value*> w = ops.bNMajor
        ? loadMatrices(b, count, ops.b, ops.ldb, b.CreateAdd(kCol, r8), nRow, /*trans=*/true)
        : loadMatrices(b, count, ops.b, ops.ldb, b.CreateAdd(nRow, r8), kCol);
    bw[size_t(j)] = {operandWord(b, ops.dtype, w[0]), operandWord(b, ops.dtype, w[1])};
    if (count == 4) bw[size_t(j + 1)] = {operandWord(b, ops.dtype, w[2]), operandWord(b, ops.dtype, w[3])};
  }
  return bw;
}

// acc[(i * nBlocks + j) * 4 + q] += a block i times b block j.
void multiply(Builder& b, DType t, const std::vector<std::vector<Value*>>& a, const std::vector<std::vector<Value*>>& bw,
              std::vector<Value*>& acc) {
  const auto id = t == DType::BF16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                                   : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32;
  const int per = mmaSyncAccumulators(), nBlocks = int(bw.size());
  for (size_t i = 0; i < a.size(); ++i)
    for (int j = 0; j < nBlocks; ++j) {
      std::vector<Value*> args = a[i];
      args.insert(args.end(), bw[size_t(j)].begin(), bw[size_t(j)].end());
      const size_t first = (i * size_t(nBlocks) + size_t(j)) * size_t(per);
      for (int q = 0; q < per; ++q) args.push_back(acc[first + size_t(q)]);
      Value* d = b.CreateIntrinsic(id, {}, args);
      for (int q = 0; q < per; ++q) acc[first + size_t(q)] = b.CreateExtractValue(d, {unsigned(q)});
    }
}

}  // namespace

void mmaSyncStep(Builder& b, const Target::MmaOperands& ops, Value* lane, Value* m0, Value* n0, Value* k0, int mBlocks,
                 int nBlocks, std::vector<Value*>& acc) {
  // a's blocks in fragment order: rows 0-7 and 8-15 at k 0-7, then both at k 8-15.
  Value* r8 = b.CreateAnd(lane, 7);
  Value* block = b.CreateLShr(lane, 3);
  Value* aRow = b.CreateAdd(m0, b.CreateAdd(r8, b.CreateShl(b.CreateAnd(block, 1), 3)));
  Value* aCol = b.CreateAdd(k0, b.CreateShl(b.CreateLShr(block, 1), 3));
  std::vector<std::vector<Value*>> a(static_cast<size_t>(mBlocks));
  for (int i = 0; i < mBlocks; ++i)
    for (Value* w : loadMatrices(b, 4, ops.a, ops.lda, b.CreateAdd(aRow, b.getInt32(i * kM)), aCol))
      a[size_t(i)].push_back(operandWord(b, ops.dtype, w));
  multiply(b, ops.dtype, a, loadB(b, ops, lane, n0, k0, nBlocks), acc);
}

void mmaSyncStepRegisterA(Builder& b, const Target::MmaOperands& ops, const std::vector<Value*>& aValues, Value* lane,
                          Value* n0, Value* k0, int nBlocks, std::vector<Value*>& acc) {
  // a's words {a[g][2t..], a[g + 8][2t..], a[g][2t + 8..], a[g + 8][2t + 8..]} are accumulators
  // {0 1, 2 3} of block 2s, then of block 2s + 1; the lower k element in the low half.
  llvm::Type* half = ops.dtype == DType::BF16 ? b.getBFloatTy() : b.getHalfTy();
  auto* pair = llvm::FixedVectorType::get(half, 2);
  std::vector<Value*> words;
  for (size_t w = 0; w < 4; ++w) {
    Value* v = llvm::PoisonValue::get(pair);
    for (unsigned e = 0; e < 2; ++e) v = b.CreateInsertElement(v, b.CreateFPTrunc(aValues.at(2 * w + e), half), e);
    words.push_back(ops.dtype == DType::BF16 ? b.CreateBitCast(v, b.getInt32Ty()) : v);
  }
  multiply(b, ops.dtype, {words}, loadB(b, ops, lane, n0, k0, nBlocks), acc);
}

}  // namespace mk::backend::nvptx
