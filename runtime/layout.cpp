#include "runtime/layout.h"

#include <algorithm>
#include <cstring>

namespace mk::runtime {

const char* elemTypeName(ElemType t) {
  switch (t) {
    case ElemType::BF16: return "bf16";
    case ElemType::F16: return "f16";
    case ElemType::F32: return "f32";
    case ElemType::I32: return "i32";
    case ElemType::Bool: return "bool";
  }
  return "?";
}

std::optional<ElemType> parseElemType(std::string_view n) {
  if (n == "bf16") return ElemType::BF16;
  if (n == "f16") return ElemType::F16;
  if (n == "f32") return ElemType::F32;
  if (n == "i32") return ElemType::I32;
  if (n == "bool") return ElemType::Bool;
  return std::nullopt;
}

unsigned elemTypeBytes(ElemType t) {
  switch (t) {
    case ElemType::BF16:
    case ElemType::F16: return 2;
    case ElemType::F32:
    case ElemType::I32: return 4;
    case ElemType::Bool: return 1;
  }
  return 4;
}

bool elemTypeIsFloat(ElemType t) { return t == ElemType::BF16 || t == ElemType::F16 || t == ElemType::F32; }

std::string shapeString(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

int64_t shapeElements(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

namespace {
const char* const kLayoutNames[] = {"row_major", "col_major", "tiled", "interleave", "padded", "swizzle"};
constexpr size_t kLayoutArgs[] = {0, 0, 2, 1, 1, 1};
}  // namespace

std::string Layout::str() const {
  std::string s = kLayoutNames[kind];
  if (args.empty()) return s;
  s += "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + std::to_string(args[i]);
  return s + ")";
}

std::optional<Layout> parseLayout(std::string_view text) {
  size_t open = text.find('(');
  std::string_view name = text.substr(0, open);
  Layout l;
  bool found = false;
  for (int k = 0; k < 6; ++k)
    if (name == kLayoutNames[k]) l.kind = Layout::Kind(k), found = true;
  if (!found) return std::nullopt;
  if (open == std::string_view::npos) {
    if (kLayoutArgs[l.kind] != 0) return std::nullopt;
    return l;
  }
  if (text.back() != ')') return std::nullopt;
  std::string_view inner = text.substr(open + 1, text.size() - open - 2);
  size_t p = 0;
  for (;;) {
    while (p < inner.size() && inner[p] == ' ') ++p;
    size_t start = p;
    int64_t v = 0;
    while (p < inner.size() && inner[p] >= '0' && inner[p] <= '9') {
      if (v > (INT64_MAX - 9) / 10) return std::nullopt;
      v = v * 10 + (inner[p++] - '0');
    }
    if (p == start) return std::nullopt;
    l.args.push_back(v);
    if (p == inner.size()) break;
    if (inner[p++] != ',') return std::nullopt;
  }
  if (l.args.size() != kLayoutArgs[l.kind]) return std::nullopt;
  return l;
}

std::string layoutProblem(const Layout& l, const std::vector<int64_t>& s) {
  const std::string name = l.str();
  if (l.args.size() != kLayoutArgs[l.kind])
    return name + " takes " + std::to_string(kLayoutArgs[l.kind]) + " argument(s)";
  for (int64_t a : l.args)
    if (a <= 0) return name + ": arguments must be positive";
  for (int64_t d : s)
    if (d < 0) return "negative dimension in shape " + shapeString(s);
  auto rank2 = [&]() -> std::string {
    return s.size() == 2 ? "" : name + " needs a rank-2 tensor; the shape is " + shapeString(s);
  };
  switch (l.kind) {
    case Layout::RowMajor: return "";
    case Layout::ColMajor: return rank2();
    case Layout::Tiled:
      if (auto p = rank2(); !p.empty()) return p;
      if (s[0] % l.args[0] != 0 || s[1] % l.args[1] != 0)
        return name + ": the tile does not divide the shape " + shapeString(s);
      return "";
    case Layout::Interleave:
      if (s.empty()) return name + " needs a tensor of rank >= 1";
      return "";
    case Layout::Padded:
      if (auto p = rank2(); !p.empty()) return p;
      if (l.args[0] < s[1]) return name + ": the pitch is smaller than the rows of " + shapeString(s);
      return "";
    case Layout::Swizzle:
      if (auto p = rank2(); !p.empty()) return p;
      if (l.args[0] != 32 && l.args[0] != 64 && l.args[0] != 128) return name + ": the width must be 32, 64 or 128 bytes";
      return "";
  }
  return "unknown layout";
}

int64_t storageElements(const Layout& l, const std::vector<int64_t>& s) {
  if (l.kind == Layout::Padded && s.size() == 2 && !l.args.empty()) return s[0] * l.args[0];
  return shapeElements(s);
}

namespace {
// The swizzled byte of logical byte `byte` in row `row` (backend/tile.cpp physOffset).
inline int64_t swizzleByte(int64_t byte, int64_t row, int64_t B) {
  const int64_t inSpan = byte % B;
  const int64_t chunk = (inSpan / 16) ^ (row % (B / 16));
  return byte - inSpan + chunk * 16 + byte % 16;
}
}  // namespace

int64_t physicalIndex(const Layout& l, const std::vector<int64_t>& s, unsigned eb, const int64_t* c) {
  if (s.empty()) return 0;
  const auto& a = l.args;
  switch (l.kind) {
    case Layout::ColMajor:
      if (s.size() == 2) return c[1] * s[0] + c[0];
      break;
    case Layout::Tiled:
      if (s.size() == 2 && a.size() == 2) {
        const int64_t R = a[0], C = a[1];
        return ((c[0] / R) * (s[1] / C) + c[1] / C) * (R * C) + (c[0] % R) * C + c[1] % C;
      }
      break;
    case Layout::Padded:
      if (s.size() == 2 && !a.empty()) return c[0] * a[0] + c[1];
      break;
    case Layout::Swizzle:
      if (s.size() == 2 && !a.empty()) return swizzleByte((c[0] * s[1] + c[1]) * int64_t(eb), c[0], a[0]) / int64_t(eb);
      break;
    default: break;
  }
  int64_t off = 0;  // row-major (interleave is row-major once assembled)
  for (size_t d = 0; d < s.size(); ++d) off = off * s[d] + c[d];
  return off;
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
  switch (layout_.kind) {
    case Layout::ColMajor:
      if (rank2) {
        for (int64_t j = 0; j < s[1]; ++j) copy(size_t(j * s[0] + r) * eb, size_t(j) * eb, eb);
        return;
      }
      break;
    case Layout::Tiled:
      if (rank2 && a.size() == 2) {
        const int64_t R = a[0], C = a[1], tilesPerRow = s[1] / C;
        for (int64_t tc = 0; tc < tilesPerRow; ++tc)
          copy(size_t(((r / R) * tilesPerRow + tc) * (R * C) + (r % R) * C) * eb, size_t(tc * C) * eb, size_t(C) * eb);
        return;
      }
      break;
    case Layout::Padded:
      if (rank2 && !a.empty()) {
        copy(size_t(r * a[0]) * eb, 0, rowBytes_);
        return;
      }
      break;
    case Layout::Swizzle:
      if (rank2 && !a.empty()) {
        // Piecewise: a piece never crosses a 16-byte boundary, so it moves as one block.
        const int64_t begin = r * int64_t(rowBytes_), end = begin + int64_t(rowBytes_);
        for (int64_t p = begin; p < end;) {
          const int64_t pieceEnd = std::min(end, (p / 16 + 1) * 16);
          copy(size_t(swizzleByte(p, r, a[0])), size_t(p - begin), size_t(pieceEnd - p));
          p = pieceEnd;
        }
        return;
      }
      break;
    default: break;
  }
  copy(size_t(r) * rowBytes_, 0, rowBytes_);  // row-major, interleave, scalars
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
