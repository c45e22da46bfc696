// The ring plan: which weight loads of an op stream through the shared-memory ring (their
// regions known before the task runs, rows 16-byte aligned), and the walks of the streamed
// loads both sides of the ring share.
#include <algorithm>
#include <functional>

#include "backend/tile/tile_gen.h"

namespace mk::backend::tile {

namespace {

void streamedIn(const Expr* e, const std::set<const Expr*>& streamed, std::vector<const Expr*>& out) {
  if (!e) return;
  if (streamed.count(e)) out.push_back(e);
  for (const auto& o : e->operands) streamedIn(o.get(), streamed, out);
  for (const auto& r : e->region) streamedIn(r.start.get(), streamed, out);
}

}  // namespace

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

int64_t regionElements(const std::vector<ir::RegionDim>& region) {
  int64_t n = 1;
  for (const auto& r : region) n *= std::max<int64_t>(r.length, 1);
  return n;
}

int64_t wholeTileBytes(const Expr& load, const ir::Tensor& t, const ir::StaticFacts& st) {
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


}  // namespace mk::backend::tile

namespace mk::backend {

using namespace tile;

void planStreaming(Variant& v, int64_t maxSlotBytes) {
  const ir::TileFunc& fn = *v.func;
  ir::StaticFacts st(fn);
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

}  // namespace mk::backend
