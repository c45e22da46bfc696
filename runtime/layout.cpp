#include "runtime/layout.h"

#include <algorithm>
#include <cstring>

namespace mk::runtime {

int64_t physicalIndex(const Layout& l, const std::vector<int64_t>& s, unsigned eb, const int64_t* c) {
  abi::HostArithmetic host;
  return abi::physicalOffset(host, l, s, eb, std::span<const int64_t>(c, s.size())).value();
}

std::string mappingProblem(const Layout& l, const std::vector<int64_t>& s, unsigned eb) {
  if (l.kind != Layout::Swizzle || s.size() != 2 || l.args.empty()) return "";
  const int64_t total = shapeElements(s);
  std::vector<bool> used(size_t(std::max<int64_t>(total, 0)), false);
  int64_t c[2];
  for (c[0] = 0; c[0] < s[0]; ++c[0])
    for (c[1] = 0; c[1] < s[1]; ++c[1]) {
      const int64_t p = physicalIndex(l, s, eb, c);
      if (p < 0 || p >= total)
        return l.str() + " of " + shapeString(s) + " maps element [" + std::to_string(c[0]) + ", " + std::to_string(c[1]) +
               "] past the end of the tensor's storage";
      if (used[size_t(p)])
        return l.str() + " of " + shapeString(s) + " maps element [" + std::to_string(c[0]) + ", " + std::to_string(c[1]) +
               "] onto another element (rows of " + std::to_string(s[1] * eb) + " bytes are too narrow for this swizzle)";
      used[size_t(p)] = true;
    }
  return "";
}

RowPacker::RowPacker(const Layout& layout, const std::vector<int64_t>& shape, unsigned elemBytes)
    : layout_(layout), shape_(shape), eb_(elemBytes) {
  int64_t rowElems = 1;
  if (!shape.empty()) {
    rows_ = shape[0];
    for (size_t d = 1; d < shape.size(); ++d) rowElems *= shape[d];
  }
  rowBytes_ = size_t(rowElems) * eb_;
}

template <bool ToPhysical>
void RowPacker::move(int64_t r, uint8_t* row, uint8_t* phys) const {
  auto copy = [&](size_t physOff, size_t rowOff, size_t n) {
    if (ToPhysical) std::memcpy(phys + physOff, row + rowOff, n);
    else std::memcpy(row + rowOff, phys + physOff, n);
  };
  const auto& s = shape_;
  const auto& a = layout_.args;
  const size_t eb = eb_;
  const bool rank2 = s.size() == 2;
  abi::HostArithmetic host;
  if (layout_.kind == Layout::Swizzle && rank2 && !a.empty()) {
    // Piecewise: a piece never crosses a 16-byte boundary, so it moves as one block.
    const int64_t begin = r * int64_t(rowBytes_), end = begin + int64_t(rowBytes_);
    for (int64_t p = begin; p < end;) {
      const int64_t pieceEnd = std::min(end, (p / 16 + 1) * 16);
      copy(size_t(abi::swizzledByte(host, p, r, a[0])), size_t(p - begin), size_t(pieceEnd - p));
      p = pieceEnd;
    }
    return;
  }
  // The row in runs of elements that lie contiguously in storage: single elements of a
  // col_major row, a tile's width of a tiled one, else the whole row.
  const int64_t rowElems = int64_t(rowBytes_ / eb);
  int64_t run = rowElems;
  if (rank2 && layout_.kind == Layout::ColMajor) run = 1;
  if (rank2 && layout_.kind == Layout::Tiled && a.size() == 2) run = a[1];
  std::vector<int64_t> c(std::max<size_t>(s.size(), 1), 0);
  c[0] = r;
  for (int64_t col = 0; col < rowElems; col += run) {
    if (rank2) c[1] = col;
    const int64_t at = s.empty() ? 0 : abi::physicalOffset(host, layout_, s, unsigned(eb), std::span<const int64_t>(c.data(), s.size())).value();
    copy(size_t(at) * eb, size_t(col) * eb, size_t(run) * eb);
  }
}

void RowPacker::scatter(int64_t row, const uint8_t* rowData, uint8_t* physical) const {
  move<true>(row, const_cast<uint8_t*>(rowData), physical);  // only read
}

void RowPacker::gather(int64_t row, const uint8_t* physical, uint8_t* rowData) const {
  move<false>(row, rowData, const_cast<uint8_t*>(physical));  // only read
}

void toPhysical(const Layout& layout, const std::vector<int64_t>& shape, unsigned eb, const uint8_t* logical,
                uint8_t* physical) {
  RowPacker p(layout, shape, eb);
  for (int64_t r = 0; r < p.rows(); ++r) p.scatter(r, logical + size_t(r) * p.rowBytes(), physical);
}

void fromPhysical(const Layout& layout, const std::vector<int64_t>& shape, unsigned eb, const uint8_t* physical,
                  uint8_t* logical) {
  RowPacker p(layout, shape, eb);
  for (int64_t r = 0; r < p.rows(); ++r) p.gather(r, physical, logical + size_t(r) * p.rowBytes());
}

}  // namespace mk::runtime
