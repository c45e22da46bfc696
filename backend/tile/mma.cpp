// mma: c[M, N] = a[M, K] b[K, N]; mma_nt: c[M, N] = a[M, K] b[N, K]^T. Two lowerings:
// - on the target's matrix instruction where the operands are bf16 or f16 and the shape is a
//   multiple of its block (ir::mmaMisfit): the operands are staged in shared memory at their
//   16-bit dtype, k contiguous, and the accumulators of each output tile stay in registers over
//   all of K. Per warp (wave) on Target::mmaStep (mma.sync m16n8k16 on NVPTX, MFMA 16x16x16 on
//   AMDGPU), from rows padded against bank conflicts; per warpgroup on Target::groupMma (wgmma
//   on sm_90a) where M and K are multiples of 64, from 128-byte-swizzled panels (mma's b N-major,
//   as it lies, where N is a multiple of a panel);
// - otherwise on CUDA cores / VALU, every target alike (f32 operands, any shape).
// Both are in today's value model: the result is an f32 shared-memory tile.
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <optional>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

// The staged operands' rows: K elements and 16 bytes of padding, an odd number of 16-byte units
// since K is a multiple of 16, so the eight rows one fragment load touches start on distinct banks.
std::optional<TileGen::MmaTiling> TileGen::mmaTiling(const Expr& e) {
  const Target& tg = *env_.target;
  if (!onMatrixInstruction(tg, e)) return std::nullopt;
  if (fragmentProducts_.count(&e)) return fragmentTiling(e);
  const Expr& a = operand(e, 0);
  const Expr& b = operand(e, 1);
  const bool nt = e.kind == ExprKind::MmaNt;
  MmaTiling t;
  t.nt = nt;
  t.M = a.shape[0], t.K = a.shape[1], t.N = b.shape[nt ? 0 : 1];
  t.shape = tg.arch().mma;
  t.ld = t.K + 8;
  t.perBlock = tg.mmaAccumulators();
  if (env_.warpgroupMma && T() % kGroupThreads == 0 && t.M % 64 == 0 && t.K % 64 == 0 && t.N % 8 == 0) {
    t.group = true;
    t.bNMajor = !nt && t.N % 64 == 0;
    t.mb = 1;
    tileForGroups(t, 1);
    return t;
  }
  // Each warp takes tiles of mb x nb blocks: a k step loads mb a fragments and nb b fragments
  // for mb * nb products, so the larger and squarer the tile, the fewer shared-memory bytes a
  // product reads. The largest tile that still gives every warp one and holds at most
  // kMaxTileAccumulators a lane; single blocks (the most tiles) when none does.
  const int warps = T() / tg.warpSize(), perBlock = tg.mmaAccumulators();
  const int64_t across = t.N / t.shape.n, down = t.M / t.shape.m;
  double best = 0;
  for (int mb : {1, 2, 4})
    for (int nb : {1, 2, 4, 8}) {
      if (down % mb || across % nb || mb * nb * perBlock > kMaxTileAccumulators) continue;
      if ((down / mb) * (across / nb) < warps && mb * nb > 1) continue;
      // Area first; among equal areas the squarer, then the wider (an mma.sync a fragment is
      // twice a b fragment).
      const double score = mb * nb * 4.0 - (1.0 / mb + 1.0 / nb) + nb * 1e-3;
      if (score > best) best = score, t.mb = mb, t.nb = nb;
    }
  t.tilesAcross = across / t.nb;
  t.tiles = (down / t.mb) * t.tilesAcross;
  t.tilesPerWarp = int((t.tiles + warps - 1) / warps);
  return t;
}

TileGen::MmaTiling TileGen::fragmentTiling(const Expr& e) {
  const Target& tg = *env_.target;
  const bool nt = e.kind == ExprKind::MmaNt;
  MmaTiling t;
  t.nt = nt;
  t.M = operand(e, 0).shape[0], t.K = operand(e, 0).shape[1], t.N = operand(e, 1).shape[nt ? 0 : 1];
  t.shape = tg.arch().mma;
  t.ld = t.K + 8;
  t.perBlock = tg.mmaAccumulators();
  t.bNMajor = !nt;
  t.mb = 1, t.nb = int(t.N / t.shape.n);
  t.tilesAcross = 1, t.tiles = t.M / t.shape.m, t.tilesPerWarp = 1;
  return t;
}

// A fragment run's product for this warp's strip (rows 16 w ..) and all N columns, over all of K,
// onto `init` (else zeros): a from registers where it is a tree over the run's owned elements (no
// staged operand), else as b, staged at the run's start (stageRunProducts). Accumulator q of
// block c is owned element c * perBlock + q, as fragmentIndex numbers them.
std::vector<V> TileGen::fragmentMma(const Expr& e, std::vector<V> init) {
  const MmaTiling t = fragmentTiling(e);
  const Target::MmaOperands& ops = runOperands_.at(&e);
  const Expr& a = operand(e, 0);
  V lane = b_.CreateURem(runTid_, ci(32));
  V m0 = b_.CreateMul(b_.CreateUDiv(runTid_, ci(32)), ci(t.shape.m));
  std::vector<V> acc = init.empty() ? std::vector<V>(size_t(t.nb * t.perBlock), cf(0)) : std::move(init);
  for (int64_t k0 = 0; k0 < t.K; k0 += t.shape.k) {
    if (ops.a) {
      env_.target->mmaStep(b_, ops, lane, m0, ci(0), ci(k0), 1, t.nb, acc);
      continue;
    }
    // a's owned elements of n blocks 2s and 2s + 1 of its [M, K] (s = k0 / 16).
    std::vector<V> values;
    const int64_t first = k0 / t.shape.n * t.perBlock;
    for (int64_t j = first; j < first + 2 * t.perBlock; ++j) {
      V i = fragmentIndex(a.shape, j, &ownedHalf_);
      ownedElement_ = j;
      values.push_back(convert(a.dtype, DType::F32, elem(a, i)));
    }
    env_.target->mmaStepRegisterA(b_, ops, values, lane, ci(0), ci(k0), t.nb, acc);
  }
  return acc;
}

// Padded: rows of ld elements. Swizzled (group): rows x K in K / 64 panels of rows x 64, each
// 1024-byte aligned since rows is a multiple of 8 (Target::GroupMmaTile).
int64_t TileGen::MmaTiling::stagedRowsBytes(int64_t rows) const { return align16(rows * (group ? K : ld) * 2); }
int64_t TileGen::MmaTiling::stagedBytes() const { return stagedRowsBytes(M) + stagedBBytes(); }
int64_t TileGen::MmaTiling::stagedBBytes() const { return bNMajor && !group ? align16(K * ldB() * 2) : stagedRowsBytes(N); }

V TileGen::stagedElement(const MmaTiling& t, V operand, int64_t rows, V row, V k, int64_t ld) {
  if (!t.group) return b_.CreateGEP(b_.getInt16Ty(), operand, b_.CreateAdd(b_.CreateMul(row, ci(ld ? ld : t.ld)), k));
  V panel = b_.CreateUDiv(k, ci(64)), within = b_.CreateURem(k, ci(64));
  V chunk = b_.CreateXor(b_.CreateUDiv(within, ci(8)), b_.CreateAnd(row, ci(7)));
  V at = b_.CreateAdd(b_.CreateAdd(b_.CreateMul(panel, ci(rows * 64)), b_.CreateMul(row, ci(64))),
                      b_.CreateAdd(b_.CreateMul(chunk, ci(8)), b_.CreateAnd(within, ci(7))));
  return b_.CreateGEP(b_.getInt16Ty(), operand, at);
}

// Staged operands: a's M rows from `base`, then b's N rows.
V TileGen::stagedB(const MmaTiling& t, V base) { return b_.CreateGEP(b_.getInt16Ty(), base, ci(t.stagedRowsBytes(t.M) / 2)); }

// K-major, the tile's n0 rows into each panel of 64 k, panels N rows apart; N-major, column n0 of
// the K rows of panel n0 / 64, panels K rows apart (n0 a multiple of 8, so a tile starts at a
// 16-byte chunk of a row, which the hardware swizzles as it does the chunks after it).
void TileGen::groupB(const MmaTiling& t, V b, V n0, Target::GroupMmaTile& tile) {
  tile.bNMajor = t.bNMajor;
  if (!t.bNMajor) {
    tile.b = b_.CreateGEP(b_.getInt8Ty(), b, b_.CreateMul(n0, ci(128)));
    tile.bPanelBytes = t.N * 128;
    return;
  }
  V at = b_.CreateAdd(b_.CreateMul(b_.CreateUDiv(n0, ci(64)), ci(t.K * 128)), b_.CreateMul(b_.CreateURem(n0, ci(64)), ci(2)));
  tile.b = b_.CreateGEP(b_.getInt8Ty(), b, at);
  tile.bPanelBytes = t.K * 128;
}

// An operand that is a load of the staged dtype with contiguous, 16-byte aligned rows of K elements
// (k, or n for an N-major b), and where they are: a streamed one in its ring slot (row-major there,
// loader.cpp), another in global memory where the layout has a contiguous last dimension. The
// region's starts are evaluated where this is called.
std::optional<TileGen::MmaRows> TileGen::mmaRows(const Expr& x, DType dt, int64_t K) {
  if (x.kind != ExprKind::Load || tensorOf(x.index).dtype != dt || K % 8 != 0) return std::nullopt;
  if (auto it = ring_.find(&x); it != ring_.end()) return MmaRows{it->second, K, false};
  if (v_.streamed.count(&x)) return std::nullopt;
  const ir::Tensor& src = tensorOf(x.index);
  // Rows and columns are the region's last two dimensions; where the kernel has the warpgroup
  // instruction (sm_90a), any before them may be single indices (a cache's head). Elsewhere such an
  // operand stays element by element: copied, it left the 8B's prefill (attention blocks of
  // 32 x 128 on mma.sync) over its registers on sm_90 and sm_80.
  const size_t dims = x.region.size();
  if (dims < 2 || (dims > 2 && !env_.warpgroupMma)) return std::nullopt;
  for (size_t d = 0; d + 2 < dims; ++d)
    if (x.region[d].length != 0 || !x.region[d].start) return std::nullopt;
  const ir::RegionDim &rowDim = x.region[dims - 2], &colDim = x.region[dims - 1];
  if (rowDim.length <= 0 || colDim.length != K || !rowDim.start || !colDim.start ||
      statics_.multipleOf(*colDim.start) % 8 != 0)
    return std::nullopt;
  int64_t pitch = 0, groupRows = 0, groupPitch = 0;
  const std::vector<int64_t> st = affineStrides(src);
  if (st.size() == dims && st[dims - 1] == 1) {
    pitch = st[dims - 2];
  } else if (dims == 2 && src.layout.kind == ir::Layout::Tiled && src.layout.args.size() == 2 && src.shape.size() == 2) {
    // Inside one R x C tile the rows are C apart, and row r + R is R * (the tensor's columns)
    // after row r (abi::physicalOffset): K columns from a multiple of K (K dividing C) of rows from
    // a multiple of R are rows of a pitch, in groups of R when there are more than R of them.
    const int64_t R = src.layout.args[0], C = src.layout.args[1], rows = x.region[0].length;
    if ((rows <= R || rows % R == 0) && statics_.multipleOf(*x.region[0].start) % R == 0 && C % K == 0 &&
        statics_.multipleOf(*x.region[1].start) % K == 0) {
      pitch = C;
      if (rows > R) groupRows = R, groupPitch = R * src.shape[1];
    }
  }
  if (pitch <= 0 || pitch % 8 != 0) return std::nullopt;
  return MmaRows{at(dt, args_.params[size_t(x.index)], physOffset(src, starts(x.region))), pitch, true, groupRows,
                 groupPitch};
}

// rows x rowElements from `src` to the staged operand at `dst` (rows of k elements, or of n for an
// N-major b), 16 bytes a thread and round: loads and stores, or with `async` the target's
// asynchronous copies (global sources only).
void TileGen::copyMmaRows(const MmaRows& src, V dst, int64_t rows, int64_t rowElements, const MmaTiling& t, bool async) {
  const int64_t per = rowElements / 8;
  auto* v4 = llvm::FixedVectorType::get(i32(), 4);
  auto wide = [&](V x) { return b_.CreateZExt(x, b_.getInt64Ty()); };
  auto rowOf = [&](V i) { return b_.CreateUDiv(i, ci(per)); };
  auto col = [&](V i) { return wide(b_.CreateMul(b_.CreateURem(i, ci(per)), ci(8))); };
  auto from = [&](V i) {
    V r = rowOf(i), rowStart;
    if (src.groupRows > 0)
      rowStart = b_.CreateAdd(b_.CreateMul(wide(b_.CreateUDiv(r, ci(src.groupRows))), b_.getInt64(uint64_t(src.groupPitch))),
                              b_.CreateMul(wide(b_.CreateURem(r, ci(src.groupRows))), b_.getInt64(uint64_t(src.pitch))));
    else
      rowStart = b_.CreateMul(wide(r), b_.getInt64(uint64_t(src.pitch)));
    return b_.CreateGEP(b_.getInt16Ty(), src.base, b_.CreateAdd(rowStart, col(i)));
  };
  auto to = [&](V i) {
    if (t.group) return stagedElement(t, dst, rows, rowOf(i), b_.CreateMul(b_.CreateURem(i, ci(per)), ci(8)));
    // Padded rows: K (or an N-major b's N) and 8 elements.
    const int64_t ld = rowElements + 8;
    return b_.CreateGEP(b_.getInt16Ty(), dst, b_.CreateAdd(b_.CreateMul(wide(rowOf(i)), b_.getInt64(uint64_t(ld))), col(i)));
  };
  if (async) {
    forEachElement(rows * per, [&](V i) { env_.target->copy16(b_, to(i), from(i)); });
    return;
  }
  forEachElement(rows * per, [&](V i) { return b_.CreateAlignedLoad(v4, from(i), llvm::Align(16)); },
                 [&](V i, V x) { b_.CreateAlignedStore(x, to(i), llvm::Align(16)); });
}

// a's M rows at 16 bits from `sa`, k contiguous.
void TileGen::stageMmaA(const Expr& a, const MmaTiling& t, V sa) {
  const DType dt = a.dtype;
  const int64_t K = t.K;
  if (auto rows = mmaRows(a, dt, K)) return copyMmaRows(*rows, sa, t.M, K, t, false);
  forEachElement(t.M * K, [&](V i) { return elem(a, i); }, [&](V i, V x) {
    storeStorage(dt, stagedElement(t, sa, t.M, b_.CreateUDiv(i, ci(K)), b_.CreateURem(i, ci(K))), x);
  });
}

// b's N rows at 16 bits from `sb`, k contiguous: b[n, k], so mma's b[k, n] is written transposed;
// or, N-major, mma's b as it lies: K rows of n.
void TileGen::stageMmaB(const Expr& b, const MmaTiling& t, V sb) {
  const DType dt = b.dtype;
  const int64_t K = t.K;
  if (t.bNMajor) {
    if (std::optional<MmaRows> rows = mmaRows(b, dt, t.N)) return copyMmaRows(*rows, sb, K, t.N, t, false);
    forEachElement(t.N * K, [&](V i) { return elem(b, i); }, [&](V i, V x) {
      storeStorage(dt, stagedElement(t, sb, K, b_.CreateUDiv(i, ci(t.N)), b_.CreateURem(i, ci(t.N)), t.ldB()), x);
    });
    return;
  }
  if (std::optional<MmaRows> rows = t.nt ? mmaRows(b, dt, K) : std::nullopt)
    return copyMmaRows(*rows, sb, t.N, K, t, false);
  const int64_t bCols = t.nt ? K : t.N;
  forEachElement(t.N * K, [&](V i) { return elem(b, i); }, [&](V i, V x) {
    V r = b_.CreateUDiv(i, ci(bCols)), c = b_.CreateURem(i, ci(bCols));
    storeStorage(dt, stagedElement(t, sb, t.N, t.nt ? r : c, t.nt ? c : r), x);
  });
}

// Writes a and b from `base` (a's M rows, then b's N rows) and ends with a barrier.
// An operand a loop copies ahead (pipeline.cpp) is there already once its copies have landed: the
// wait leaves the next iteration's group in flight.
Target::MmaOperands TileGen::stageMma(const Expr& e, const MmaTiling& t, V base) {
  V sa = pipelinedOperand(operand(e, 0)), sb = pipelinedOperand(operand(e, 1));
  const bool copiedAhead = sa || sb;
  if (!sa) stageMmaA(operand(e, 0), t, sa = base);
  if (!sb) stageMmaB(operand(e, 1), t, sb = stagedB(t, base));
  if (copiedAhead) env_.target->asyncCopiesWait(b_, 1);
  if (t.group) env_.target->fenceSharedForGroupMma(b_);
  barrier();
  return {operand(e, 0).dtype, sa, t.ld, sb, t.ldB(), t.bNMajor && !t.group};
}

// Tile j of this warp is tile warp + j * warps, when there is one; accumulator q of block (r, c)
// of it sits at slot ((j * mb + r) * nb + c) * perBlock + q.
std::vector<llvm::AllocaInst*> TileGen::mmaAccumulatorSlots(const MmaTiling& t) {
  std::vector<llvm::AllocaInst*> slots;
  for (int j = 0; j < t.tilesPerWarp * t.mb * t.nb * t.perBlock; ++j) slots.push_back(entryAlloca(f32()));
  return slots;
}

// On the warpgroup instruction a tile goes to a warpgroup, and warp w of it takes rows 16 (w % 4)
// on of the tile's 64.
void TileGen::forEachMmaTile(const MmaTiling& t, const std::function<void(int j, V m0, V n0)>& body) {
  const int ws = env_.target->warpSize(), dealers = t.group ? T() / kGroupThreads : T() / ws;
  V warp = b_.CreateUDiv(env_.tid, ci(ws));
  V dealer = t.group ? b_.CreateUDiv(env_.tid, ci(kGroupThreads)) : warp;
  const int64_t tileRows = t.group ? 64 : int64_t(t.shape.m) * t.mb;
  for (int j = 0; j < t.tilesPerWarp; ++j) {
    V s = b_.CreateAdd(dealer, ci(int64_t(j) * dealers));
    auto tile = [&] {
      V m0 = b_.CreateMul(b_.CreateUDiv(s, ci(t.tilesAcross)), ci(tileRows));
      if (t.group) m0 = b_.CreateAdd(m0, b_.CreateMul(b_.CreateURem(warp, ci(kGroupThreads / ws)), ci(t.shape.m)));
      V n0 = b_.CreateMul(b_.CreateURem(s, ci(t.tilesAcross)), ci(int64_t(t.shape.n) * t.nb));
      body(j, m0, n0);
    };
    if (int64_t(j + 1) * dealers <= t.tiles) tile();  // every warp (warpgroup) has tile j
    else when(b_.CreateICmpULT(s, ci(t.tiles)), tile);
  }
}

void TileGen::forEachMmaAccumulator(const MmaTiling& t, const std::vector<llvm::AllocaInst*>& slots,
                                    const std::function<void(V element, llvm::AllocaInst* slot)>& visit) {
  V lane = b_.CreateURem(env_.tid, ci(env_.target->warpSize()));
  forEachMmaTile(t, [&](int j, V m0, V n0) {
    for (int r = 0; r < t.mb; ++r)
      for (int c = 0; c < t.nb; ++c)
        for (int q = 0; q < t.perBlock; ++q) {
          auto [row, col] = env_.target->mmaAccumulatorAt(b_, lane, q);
          row = b_.CreateAdd(b_.CreateAdd(m0, ci(int64_t(r) * t.shape.m)), row);
          col = b_.CreateAdd(b_.CreateAdd(n0, ci(int64_t(c) * t.shape.n)), col);
          visit(b_.CreateAdd(b_.CreateMul(row, ci(t.N)), col), slots[size_t(((j * t.mb + r) * t.nb + c) * t.perBlock + q)]);
        }
  });
}

// acc += a b^T over all of K for this warp's tiles of every product (all of one K), the
// accumulators in registers (the slots are entry allocas, which LLVM promotes). The k steps are
// the outer loop, so products of one staged a and the same tiling load its fragments once (the
// loads are the same values, which LLVM merges).
void TileGen::accumulateMma(const std::vector<MmaAccumulation>& products, bool wait) {
  if (products.front().t.group) return accumulateGroupMma(products, wait);
  V lane = b_.CreateURem(env_.tid, ci(env_.target->warpSize()));
  const MmaTiling& t0 = products.front().t;
  // Two k steps a pass where the products hold fewer than 32 accumulators a lane, else one: each
  // step's fragments are loaded up front, so a fully unrolled chunk spilled a 128 x 128 tile on
  // sm_90a (96 registers with the loader warp), and two steps spilled the 8B's prefill in sm_80's
  // 128 (its gate/up tasks of 128 x 112 hold 64).
  size_t accumulators = 0;
  for (const MmaAccumulation& p : products) accumulators += p.slots.size();
  const int unroll = accumulators < size_t(kMaxTileAccumulators) ? 2 : 1;
  loop(ci(0), ci(t0.K), ci(t0.shape.k), [&](V k0) {
    for (const MmaAccumulation& p : products)
      forEachMmaTile(p.t, [&](int j, V m0, V n0) {
        const size_t count = size_t(p.t.mb * p.t.nb * p.t.perBlock), first = size_t(j) * count;
        std::vector<V> acc;
        for (size_t q = 0; q < count; ++q) acc.push_back(b_.CreateLoad(f32(), p.slots[first + q]));
        env_.target->mmaStep(b_, p.ops, lane, m0, n0, k0, p.t.mb, p.t.nb, acc);
        for (size_t q = 0; q < count; ++q) b_.CreateStore(acc[q], p.slots[first + q]);
      });
  }, unroll);
}

// The same on the warpgroup instruction: one Target::groupMma for all of K and every product's
// tile j of this warpgroup, or, where some warpgroups lack a tile, one per tile under its
// condition (uniform across the warpgroup, as the instruction needs).
void TileGen::accumulateGroupMma(const std::vector<MmaAccumulation>& products, bool wait) {
  const int groups = T() / kGroupThreads;
  V group = b_.CreateUDiv(env_.tid, ci(kGroupThreads));
  struct Tile {
    const MmaAccumulation* p;
    int j;
  };
  auto run = [&](const std::vector<Tile>& set) {
    std::vector<std::vector<V>> acc(set.size());
    std::vector<Target::GroupMmaTile> tiles;
    for (size_t i = 0; i < set.size(); ++i) {
      const MmaTiling& t = set[i].p->t;
      const size_t count = size_t(t.nb * t.perBlock), first = size_t(set[i].j) * count;
      for (size_t q = 0; q < count; ++q) acc[i].push_back(b_.CreateLoad(f32(), set[i].p->slots[first + q]));
      V s = b_.CreateAdd(group, ci(int64_t(set[i].j) * groups));
      V m0 = b_.CreateMul(b_.CreateUDiv(s, ci(t.tilesAcross)), ci(64));
      V n0 = b_.CreateMul(b_.CreateURem(s, ci(t.tilesAcross)), ci(t.groupN));
      const auto& ops = set[i].p->ops;
      // A panel row is 128 bytes.
      Target::GroupMmaTile tile{b_.CreateGEP(b_.getInt8Ty(), ops.a, b_.CreateMul(m0, ci(128))), t.M * 128};
      groupB(t, ops.b, n0, tile);
      tile.n = t.groupN;
      tile.acc = &acc[i];
      tiles.push_back(tile);
    }
    env_.target->groupMma(b_, products.front().ops.dtype, tiles, products.front().t.K,
                          groupMmaChains(tiles, products.front().t), wait);
    for (size_t i = 0; i < set.size(); ++i) {
      const MmaTiling& t = set[i].p->t;
      const size_t count = size_t(t.nb * t.perBlock), first = size_t(set[i].j) * count;
      for (size_t q = 0; q < count; ++q) b_.CreateStore(acc[i][q], set[i].p->slots[first + q]);
    }
  };
  bool even = true;
  for (const MmaAccumulation& p : products) even = even && p.t.tiles % groups == 0;
  if (even) {
    std::vector<Tile> all;
    for (const MmaAccumulation& p : products)
      for (int j = 0; j < p.t.tilesPerWarp; ++j) all.push_back({&p, j});
    return run(all);
  }
  for (const MmaAccumulation& p : products)
    for (int j = 0; j < p.t.tilesPerWarp; ++j) {
      if (int64_t(j + 1) * groups <= p.t.tiles) run({{&p, j}});
      else when(b_.CreateICmpULT(b_.CreateAdd(group, ci(int64_t(j) * groups)), ci(p.t.tiles)), [&] { run({{&p, j}}); });
    }
}

// The independent accumulator sets a Target::groupMma over `tiles` deals t's k steps over: a power
// of two up to the target's TaskEnv::groupMmaChains that divides them, all the sets within
// kMaxLaneAccumulators a lane. A warpgroup's products onto one set run one after another, each
// taking the last one's sums, so a narrow tile may leave the tensor cores waiting on that chain.
int TileGen::groupMmaChains(const std::vector<Target::GroupMmaTile>& tiles, const MmaTiling& t) const {
  int accumulators = 0;
  for (const auto& tile : tiles) accumulators += tile.n / 2;
  const int64_t steps = t.K / t.shape.k;
  int chains = 1;
  while (chains * 2 <= env_.groupMmaChains && chains * 2 * accumulators <= kMaxLaneAccumulators && steps % (chains * 2) == 0)
    chains *= 2;
  return chains;
}

// Tiles of 64 x groupN for `products` products of t's shape dealt together: a width that divides N,
// at most kMaxLaneAccumulators a lane (groupN <= 128); the fewest columns on the busiest warpgroup,
// then the widest, so that gate and up of 128 x 64 give each of four warpgroups one 64 x 64 tile
// rather than a 64 x 32 of each, and of 128 x 128 one 64 x 128 rather than two 64 x 64: an
// instruction reads its 64 rows of a from shared memory for every groupN columns, and at n = 64
// both operands' bytes already take all of shared memory's bandwidth at the tensor cores' rate.
void TileGen::tileForGroups(MmaTiling& t, int products) {
  const int groups = T() / kGroupThreads;
  int64_t best = 0;
  for (int n = 2 * kMaxLaneAccumulators; n >= 8; n -= 8) {
    if (t.N % n) continue;
    const int64_t total = products * (t.M / 64) * (t.N / n), busiest = (total + groups - 1) / groups * n;
    if (!best || busiest < best) best = busiest, t.groupN = n;
  }
  t.nb = t.groupN / t.shape.n;
  t.tilesAcross = t.N / t.groupN;
  t.tiles = (t.M / 64) * t.tilesAcross;
  t.tilesPerWarp = int((t.tiles + groups - 1) / groups);
}

TileGen::GroupDeal TileGen::dealGroupTiles(const MmaTiling& t, int products) {
  GroupDeal d{t, products, 0, 0};
  tileForGroups(d.t, products);
  const int groups = T() / kGroupThreads;
  d.total = products * d.t.tiles;
  d.rounds = int((d.total + groups - 1) / groups);
  return d;
}

void TileGen::forEachDealtTile(const GroupDeal& d, const std::function<void(int r, V product, V m0, V n0)>& body) {
  const int groups = T() / kGroupThreads;
  V group = b_.CreateUDiv(env_.tid, ci(kGroupThreads));
  for (int r = 0; r < d.rounds; ++r) {
    V u = b_.CreateAdd(group, ci(int64_t(r) * groups));
    auto tile = [&] {
      V s = b_.CreateURem(u, ci(d.t.tiles));
      body(r, b_.CreateUDiv(u, ci(d.t.tiles)), b_.CreateMul(b_.CreateUDiv(s, ci(d.t.tilesAcross)), ci(64)),
           b_.CreateMul(b_.CreateURem(s, ci(d.t.tilesAcross)), ci(d.t.groupN)));
    };
    if (int64_t(r + 1) * groups <= d.total) tile();  // every warpgroup has a tile in round r
    else when(b_.CreateICmpULT(u, ci(d.total)), tile);
  }
}

// Round r's accumulators are slots (r * nb + c) * perBlock + q, of whichever product's tile this
// warpgroup has in that round: `locals` are the products' f32 tiles, one picked at run time.
void TileGen::forEachDealtAccumulator(const GroupDeal& d, const std::vector<V>& locals,
                                      const std::vector<llvm::AllocaInst*>& slots,
                                      const std::function<void(V local, V element, llvm::AllocaInst* slot)>& visit) {
  const int ws = env_.target->warpSize();
  V lane = b_.CreateURem(env_.tid, ci(ws));
  V strip = b_.CreateMul(b_.CreateURem(b_.CreateUDiv(env_.tid, ci(ws)), ci(kGroupThreads / ws)), ci(d.t.shape.m));
  forEachDealtTile(d, [&](int r, V product, V m0, V n0) {
    V local = locals[0];
    for (size_t i = 1; i < locals.size(); ++i) local = b_.CreateSelect(b_.CreateICmpEQ(product, ci(int64_t(i))), locals[i], local);
    for (int c = 0; c < d.t.nb; ++c)
      for (int q = 0; q < d.t.perBlock; ++q) {
        auto [row, col] = env_.target->mmaAccumulatorAt(b_, lane, q);
        row = b_.CreateAdd(b_.CreateAdd(m0, strip), row);
        col = b_.CreateAdd(b_.CreateAdd(n0, ci(int64_t(c) * d.t.shape.n)), col);
        visit(local, b_.CreateAdd(b_.CreateMul(row, ci(d.t.N)), col), slots[size_t((r * d.t.nb + c) * d.t.perBlock + q)]);
      }
  });
}

// One k chunk of the deal: product p's b rows start at b0 + p * bStride (bytes); a is shared. The
// rounds every warpgroup has go into one Target::groupMma, a last partial round into its own.
void TileGen::accumulateDealtMma(const GroupDeal& d, const std::vector<llvm::AllocaInst*>& slots, DType dt, V a, V b0,
                                 int64_t bStride, bool wait) {
  const int groups = T() / kGroupThreads;
  const size_t per = size_t(d.t.nb * d.t.perBlock);
  std::vector<std::vector<V>> acc(size_t(d.rounds));
  std::vector<Target::GroupMmaTile> full;
  forEachDealtTile(d, [&](int r, V product, V m0, V n0) {
    std::vector<V>& mine = acc[size_t(r)];
    for (size_t q = 0; q < per; ++q) mine.push_back(b_.CreateLoad(f32(), slots[size_t(r) * per + q]));
    // A panel row is 128 bytes.
    Target::GroupMmaTile tile{b_.CreateGEP(b_.getInt8Ty(), a, b_.CreateMul(m0, ci(128))), d.t.M * 128};
    groupB(d.t, b_.CreateGEP(b_.getInt8Ty(), b0, b_.CreateMul(product, ci(bStride))), n0, tile);
    tile.n = d.t.groupN;
    tile.acc = &mine;
    const bool everyGroup = int64_t(r + 1) * groups <= d.total;
    if (everyGroup) {
      full.push_back(tile);
      if (r + 1 < d.rounds && int64_t(r + 2) * groups <= d.total) return;  // more full rounds to come
      env_.target->groupMma(b_, dt, full, d.t.K, groupMmaChains(full, d.t), wait);
      for (const auto& f : full)
        for (size_t q = 0; q < per; ++q) b_.CreateStore((*f.acc)[q], slots[size_t(f.acc - acc.data()) * per + q]);
      return;
    }
    env_.target->groupMma(b_, dt, {tile}, d.t.K, groupMmaChains({tile}, d.t), wait);
    for (size_t q = 0; q < per; ++q) b_.CreateStore(mine[q], slots[size_t(r) * per + q]);
  });
}

TileGen::TileRef TileGen::matrixInstructionMma(const Expr& e, const MmaTiling& t) {
  V staged = allocBytes(t.stagedBytes(), t.stagedAlign());
  MmaAccumulation p{t, mmaAccumulatorSlots(t), stageMma(e, t, staged)};
  for (auto* slot : p.slots) b_.CreateStore(cf(0), slot);
  accumulateMma({p});
  TileRef out = allocTemp(t.M * t.N, DType::F32);
  forEachMmaAccumulator(t, p.slots, [&](V i, llvm::AllocaInst* slot) { writeTile(out, i, b_.CreateLoad(f32(), slot)); });
  barrier();
  return out;
}

// `acc += mma(a, b)` (or mma_nt) on the matrix instruction, onto an f32 tile local of the
// product's shape that the operands do not read: the accumulators start from acc and go back to
// it, without the product's own tile.
bool TileGen::accumulatesMma(const Stmt& s) {
  if (s.kind != StmtKind::Assign || s.assign != ir::AssignOp::Add || !s.value) return false;
  const Expr& v = *s.value;
  if (v.kind != ExprKind::Mma && v.kind != ExprKind::MmaNt) return false;
  const auto& L = fn_.locals.at(size_t(s.slot));
  if (L.dtype != DType::F32 || L.shape != v.shape || reads(v, s.slot)) return false;
  return mmaTiling(v).has_value();
}

// Whether two expressions compute the same value in one statement: the same tree. Locals are
// compared by slot (the loop body's accumulations write none that an operand reads).
static bool sameExpr(const Expr& x, const Expr& y) {
  if (x.kind != y.kind || x.dtype != y.dtype || x.shape != y.shape || x.value != y.value || x.index != y.index ||
      x.unary != y.unary || x.binary != y.binary || x.reduce != y.reduce || x.operands.size() != y.operands.size() ||
      x.region.size() != y.region.size())
    return false;
  for (size_t i = 0; i < x.operands.size(); ++i) {
    if (!x.operands[i] != !y.operands[i]) return false;
    if (x.operands[i] && !sameExpr(*x.operands[i], *y.operands[i])) return false;
  }
  for (size_t i = 0; i < x.region.size(); ++i) {
    const ir::RegionDim &rx = x.region[i], &ry = y.region[i];
    if (rx.length != ry.length || !rx.start != !ry.start) return false;
    if (rx.start && !sameExpr(*rx.start, *ry.start)) return false;
  }
  return true;
}

// A loop whose body is such accumulations, all of one a operand (`g += mma_nt(x, wg); u +=
// mma_nt(x, wu)`), keeps every accumulator in registers for the whole loop. Each iteration stages
// a once and every b after it into one of S buffers used in turn (so one barrier an iteration
// orders the staging after the products that last read that buffer), frees its ring slots and
// runs the k steps of all the products. Where the target has asynchronous copies, an operand that
// is rows in global memory (a prefill's activations; mma_nt's b, a weight's rows) is copied S - 1
// iterations ahead, one commit group an iteration: the copies of S - 1 iterations are in flight
// while one iteration's products run. S is 2 without such copies (1, with a second barrier, where
// the block's shared memory has no room for two), else as many as it leaves room for, up to
// kMaxMmaStages. The accumulators are read before the loop and written after it.
bool TileGen::mmaAccumulatingLoop(const Stmt& loopStmt) {
  if (loopStmt.body.empty() || !accumulatesMma(*loopStmt.body[0])) return false;
  const Expr& a = operand(*loopStmt.body[0]->value, 0);
  struct Product {
    const Stmt* stmt;
    MmaAccumulation acc;
    int64_t bRow;  // b's first row in the staged buffer
    bool asyncB = false;
  };
  std::vector<Product> products;
  int64_t rows = 0;
  int laneAccumulators = 0;
  for (const auto& st : loopStmt.body) {
    if (!accumulatesMma(*st) || !sameExpr(operand(*st->value, 0), a)) return false;
    for (const Product& p : products)
      if (p.stmt->slot == st->slot || reads(*st->value, p.stmt->slot) || reads(*p.stmt->value, st->slot)) return false;
    const MmaTiling t = *mmaTiling(*st->value);
    if (products.empty()) rows = t.M;
    products.push_back({st.get(), {t, {}, {}}, rows});
    rows += t.N;
    laneAccumulators += t.tilesPerWarp * t.mb * t.nb * t.perBlock;
  }
  // Products of one shape on the warpgroup instruction are dealt as one, their b rows staged one
  // product after another.
  std::optional<GroupDeal> deal;
  if (products.front().acc.t.group && products.size() > 1 &&
      std::all_of(products.begin(), products.end(), [&](const Product& p) { return p.acc.t.N == products[0].acc.t.N; }))
    deal = dealGroupTiles(products.front().acc.t, int(products.size()));
  if (deal) laneAccumulators = deal->rounds * deal->t.groupN / 2;
  if (laneAccumulators > kMaxLaneAccumulators) return false;
  const MmaTiling& t0 = products.front().acc.t;
  const int64_t stagedBytes = t0.stagedRowsBytes(rows);
  V lo = convert(loopStmt.lo->dtype, DType::I32, scalar(*loopStmt.lo));
  V hi = convert(loopStmt.hi->dtype, DType::I32, scalar(*loopStmt.hi));
  const DType counter = fn_.locals.at(size_t(loopStmt.slot)).dtype;
  std::vector<llvm::AllocaInst*> dealtSlots;
  std::vector<V> locals;
  if (deal) {
    for (int j = 0; j < deal->rounds * deal->t.nb * deal->t.perBlock; ++j) dealtSlots.push_back(entryAlloca(f32()));
    for (const Product& p : products) locals.push_back(localTile(p.stmt->slot).base);
    forEachDealtAccumulator(*deal, locals, dealtSlots, [&](V local, V i, llvm::AllocaInst* slot) {
      b_.CreateStore(readTile({local, DType::F32}, i), slot);
    });
  }
  for (Product& p : products) {
    if (deal) continue;
    p.acc.slots = mmaAccumulatorSlots(p.acc.t);
    TileRef acc = localTile(p.stmt->slot);
    forEachMmaAccumulator(p.acc.t, p.acc.slots, [&](V i, llvm::AllocaInst* slot) { b_.CreateStore(readTile(acc, i), slot); });
  }
  bool asyncA = false, anyAsyncB = false;
  if (env_.target->asyncCopies()) {
    atLoopValue(loopStmt, lo, nullptr, [&] {
      auto aRows = mmaRows(a, a.dtype, t0.K);
      asyncA = aRows && aRows->global;
      for (Product& p : products) {
        if (!p.acc.t.nt) continue;
        auto bRows = mmaRows(operand(*p.stmt->value, 1), a.dtype, t0.K);
        p.asyncB = bRows && bRows->global;
        anyAsyncB = anyAsyncB || p.asyncB;
      }
    });
  }
  const bool async = asyncA || anyAsyncB;
  // The accumulators are in registers for the loop's duration, so the staging buffers may take
  // their locals' bytes: they go above the other locals live during the loop.
  std::vector<int> accumulatorSlots;
  for (const Product& p : products) accumulatorSlots.push_back(p.stmt->slot);
  const int64_t floor = liveLocalsEnd(loopStmt, accumulatorSlots);
  int stages = 2;
  if (env_.smemPerBlock > 0) {
    // Below what the ring needs; the tile area ends on a 128-byte boundary.
    const int64_t room = env_.smemPerBlock - env_.ringNeedBytes - 127 - floor - (t0.stagedAlign() - 16);
    // What the loop's own temporaries may still need is left free.
    constexpr int64_t kReserve = 16 * 1024;
    if (async)
      stages = int(std::clamp<int64_t>((room - kReserve) / stagedBytes, 2, kMaxMmaStages));
    else if (room < 2 * stagedBytes)
      stages = 1;  // one buffer, and a second barrier an iteration (64 KB blocks, several products)
  }
  // On the warpgroup instruction an iteration's products run on while the next one stages its
  // operands (into another buffer) and are waited for before that one's barrier: with two buffers
  // or more, the one an iteration writes was last read two iterations before.
  const bool inFlight = t0.group && stages >= 2;
  auto ownedAccumulators = [&] {
    if (deal) return dealtSlots;
    std::vector<llvm::AllocaInst*> all;
    for (const Product& p : products) all.insert(all.end(), p.acc.slots.begin(), p.acc.slots.end());
    return all;
  };
  // The staging buffers sit below every statement's temporaries for the loop's duration.
  const int64_t align = t0.group ? t0.stagedAlign() : 1;
  const int64_t buffers = (floor + align - 1) / align * align, savedEnd = localsEnd_;
  localsEnd_ = std::max(savedEnd, buffers + stages * stagedBytes);
  peak_ = std::max(peak_, localsEnd_ - SmemLayout::kTiles);
  // Where they cover an accumulator's local, every thread reads its accumulators before the first
  // copy lands there, and writes them back after the last product has read its operands.
  const bool overAccumulators = buffers < savedEnd;
  auto buffer = [&](V turn) { return smemPtr(env_, b_.CreateAdd(ci(buffers), b_.CreateMul(turn, ci(stagedBytes)))); };
  auto bOf = [&](const Product& p, V base) { return b_.CreateGEP(b_.getInt16Ty(), base, ci(t0.stagedRowsBytes(p.bRow) / 2)); };
  // The async operands of the iteration at `value`, copied into buffer `turn`.
  auto copyAhead = [&](V value, V restore, V turn) {
    atLoopValue(loopStmt, value, restore, [&] {
      V base = buffer(turn);
      if (asyncA) copyMmaRows(*mmaRows(a, a.dtype, t0.K), base, t0.M, t0.K, t0, true);
      for (const Product& p : products)
        if (p.asyncB)
          copyMmaRows(*mmaRows(operand(*p.stmt->value, 1), a.dtype, t0.K), bOf(p, base), p.acc.t.N, t0.K, t0, true);
    });
  };
  if (overAccumulators) barrier();
  const std::vector<const Expr*> ahead = iterationLoads(loopStmt);
  if (!ahead.empty()) when(b_.CreateICmpSLT(lo, hi), [&] { prefetchIteration(loopStmt, ahead, lo); });
  if (async)
    for (int j = 0; j + 1 < stages; ++j) {
      V value = b_.CreateAdd(lo, ci(int64_t(j) * loopStmt.step));
      when(b_.CreateICmpSLT(value, hi), [&] { copyAhead(value, nullptr, ci(j)); });
      env_.target->asyncCopiesCommit(b_);  // a group every iteration, empty or not: the waits count them
    }
  loop(lo, hi, ci(loopStmt.step), [&](V i) {
    V next = b_.CreateAdd(i, ci(loopStmt.step));
    if (!ahead.empty()) when(b_.CreateICmpSLT(next, hi), [&] { prefetchIteration(loopStmt, ahead, next); });
    writeScalarLocal(loopStmt.slot, convert(DType::I32, counter, i));
    beginStatement();
    std::vector<V> ring;
    for (const Product& p : products) {
      std::vector<V> slots = acquireSlots(*p.stmt);
      ring.insert(ring.end(), slots.begin(), slots.end());
    }
    for (const Product& p : products)
      for (const auto& o : p.stmt->value->operands) prepare(*o);
    V n = b_.CreateUDiv(b_.CreateSub(i, lo), ci(loopStmt.step));
    V turn = b_.CreateURem(n, ci(stages));
    V base = buffer(turn);
    if (stages == 1) barrier();  // the previous iteration's products have read the buffer
    if (!asyncA) stageMmaA(a, t0, base);
    for (Product& p : products) {
      if (!p.asyncB) stageMmaB(operand(*p.stmt->value, 1), p.acc.t, bOf(p, base));
      p.acc.ops = {a.dtype, base, t0.ld, bOf(p, base), t0.ld};
    }
    // This iteration's group is the oldest of the stages - 1 in flight.
    if (async) env_.target->asyncCopiesWait(b_, stages - 2);
    // The previous iteration's products, left running over this one's staging, are done before
    // the barrier, after which the copies S - 1 iterations ahead overwrite their buffer.
    if (inFlight) waitGroupMma(ownedAccumulators());
    if (t0.group) env_.target->fenceSharedForGroupMma(b_);
    barrier();
    finishStatement(ring);
    auto copyLater = [&] {
      if (!async) return;
      // That buffer's last reader was the previous iteration, before the barrier above.
      V later = b_.CreateAdd(i, ci(int64_t(stages - 1) * loopStmt.step));
      when(b_.CreateICmpSLT(later, hi),
           [&] { copyAhead(later, i, b_.CreateURem(b_.CreateAdd(n, ci(stages - 1)), ci(stages))); });
      env_.target->asyncCopiesCommit(b_);
    };
    auto multiply = [&] {
      if (deal)
        return accumulateDealtMma(*deal, dealtSlots, a.dtype, base, bOf(products[0], base), t0.stagedRowsBytes(t0.N),
                                  !inFlight);
      std::vector<MmaAccumulation> accs;
      for (const Product& p : products) accs.push_back(p.acc);
      accumulateMma(accs, !inFlight);
    };
    // The copies are issued while the products run: before products that are waited for, after
    // those left in flight.
    if (inFlight) multiply(), copyLater();
    else copyLater(), multiply();
  });
  localsEnd_ = savedEnd;
  beginStatement();
  if (inFlight) waitGroupMma(ownedAccumulators());
  if (overAccumulators) barrier();
  if (deal)
    forEachDealtAccumulator(*deal, locals, dealtSlots, [&](V local, V i, llvm::AllocaInst* slot) {
      writeTile({local, DType::F32}, i, b_.CreateLoad(f32(), slot));
    });
  for (const Product& p : products) {
    if (deal) continue;
    TileRef acc = localTile(p.stmt->slot);
    forEachMmaAccumulator(p.acc.t, p.acc.slots, [&](V i, llvm::AllocaInst* slot) { writeTile(acc, i, b_.CreateLoad(f32(), slot)); });
  }
  barrier();
  return true;
}

void TileGen::waitGroupMma(const std::vector<llvm::AllocaInst*>& slots) {
  std::vector<V> acc;
  for (auto* slot : slots) acc.push_back(b_.CreateLoad(f32(), slot));
  env_.target->groupMmaWait(b_, acc);
  for (size_t q = 0; q < slots.size(); ++q) b_.CreateStore(acc[q], slots[q]);
}

// The same accumulation as a statement of its own.
void TileGen::accumulateMmaStatement(const Stmt& s, const std::vector<V>& ring) {
  const MmaTiling t = *mmaTiling(*s.value);
  TileRef acc = localTile(s.slot);
  for (const auto& o : s.value->operands) prepare(*o);
  MmaAccumulation p{t, mmaAccumulatorSlots(t), {}};
  forEachMmaAccumulator(t, p.slots, [&](V i, llvm::AllocaInst* slot) { b_.CreateStore(readTile(acc, i), slot); });
  V staged = allocBytes(t.stagedBytes(), t.stagedAlign());
  p.ops = stageMma(*s.value, t, staged);
  finishStatement(ring);
  accumulateMma({p});
  forEachMmaAccumulator(t, p.slots, [&](V i, llvm::AllocaInst* slot) { writeTile(acc, i, b_.CreateLoad(f32(), slot)); });
  barrier();
}

// Each operand is read M*N*K / (its size) times, so it is first written once into an f32
// shared-memory tile (unless it already is one); then thread i % T computes output i, summing
// over k in increasing order from 0 with one fma a term: the interpreter's order, so the
// results are bit-identical to it.
TileGen::TileRef TileGen::mma(const Expr& e) {
  const Expr& a = operand(e, 0);
  const Expr& b = operand(e, 1);
  const bool nt = e.kind == ExprKind::MmaNt;
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[nt ? 1 : 0])
    unsupported(std::string(nt ? "mma_nt" : "mma") + " of shapes " + abi::shapeString(a.shape) + " and " +
                abi::shapeString(b.shape));
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[nt ? 0 : 1];
  if (auto t = mmaTiling(e)) return matrixInstructionMma(e, *t);
  if (a.dtype == b.dtype && env_.target->hasMma(a.dtype) && env_.scalarMma)
    if (auto why = ir::mmaMisfit(env_.target->arch(), M, N, K)) env_.scalarMma(e, *why);
  bool staged = false;
  auto tileOf = [&](const Expr& x) -> TileRef {
    if (auto it = tiles_.find(&x); it != tiles_.end() && isFloat(it->second.dtype)) return it->second;
    if (x.kind == ExprKind::Local && x.dtype == fn_.locals.at(size_t(x.index)).dtype && !x.shape.empty())
      return localTile(x.index);
    TileRef t = allocTemp(abi::shapeElements(x.shape), DType::F32);
    forEachElement(abi::shapeElements(x.shape), [&](V i) { return convert(x.dtype, DType::F32, elem(x, i)); },
                   [&](V i, V v) { writeTile(t, i, v); });
    staged = true;
    return t;
  };
  TileRef ta = tileOf(a), tb = tileOf(b);
  if (staged) barrier();
  TileRef out = allocTemp(M * N, e.dtype);
  forEachElement(M * N, [&](V i) {
    V m = b_.CreateUDiv(i, ci(N)), n = b_.CreateURem(i, ci(N));
    V rowA = b_.CreateMul(m, ci(K));
    auto* sum = entryAlloca(f32());
    b_.CreateStore(cf(0), sum);
    loop(ci(0), ci(K), ci(1), [&](V k) {
      V x = readTile(ta, b_.CreateAdd(rowA, k));
      V y = readTile(tb, nt ? b_.CreateAdd(b_.CreateMul(n, ci(K)), k) : b_.CreateAdd(b_.CreateMul(k, ci(N)), n));
      b_.CreateStore(b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {x, y, b_.CreateLoad(f32(), sum)}), sum);
    }, /*unroll=*/4);
    writeTile(out, i, convert(DType::F32, e.dtype, b_.CreateLoad(f32(), sum)));
  });
  barrier();
  return out;
}

}  // namespace mk::backend::tile
