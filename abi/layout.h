// Tensor layouts (docs/language.md §5): their kinds and spelling, and the one formula that maps
// a tensor's logical coordinates to its storage offset. The formula is a template over the
// integer arithmetic so that the host evaluates it on integers (the runtime's repacking; the
// interpreter keeps tensors logical) and the backend emits it as LLVM IR (backend/tile/layout.cpp):
// both address a tensor exactly alike because there is only this one.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mk::abi {

// The kinds, shared with the frontend's layouts (whose arguments may still be symbolic).
struct LayoutKind {
  enum Kind { RowMajor, ColMajor, Tiled, Interleave, Padded, Swizzle };
};
inline constexpr LayoutKind::Kind kLayoutKinds[] = {LayoutKind::RowMajor, LayoutKind::ColMajor, LayoutKind::Tiled,
                                                    LayoutKind::Interleave, LayoutKind::Padded, LayoutKind::Swizzle};

// As written in .mk, the IR and the metadata: "tiled".
constexpr const char* layoutKindName(LayoutKind::Kind k) {
  switch (k) {
    case LayoutKind::RowMajor: return "row_major";
    case LayoutKind::ColMajor: return "col_major";
    case LayoutKind::Tiled: return "tiled";
    case LayoutKind::Interleave: return "interleave";
    case LayoutKind::Padded: return "padded";
    case LayoutKind::Swizzle: return "swizzle";
  }
  return "?";
}

constexpr std::optional<LayoutKind::Kind> parseLayoutKind(std::string_view name) {
  for (LayoutKind::Kind k : kLayoutKinds)
    if (name == layoutKindName(k)) return k;
  return std::nullopt;
}

// How many arguments a layout of kind `k` takes: tiled(R, C), interleave(R), padded(P), swizzle(B).
constexpr size_t layoutArgCount(LayoutKind::Kind k) {
  switch (k) {
    case LayoutKind::Tiled: return 2;
    case LayoutKind::Interleave:
    case LayoutKind::Padded:
    case LayoutKind::Swizzle: return 1;
    default: return 0;
  }
}

// "row_major", "tiled(16, 64)": the kind's name and, when there are any, the arguments as
// `argText` spells them.
template <class Arg, class ArgText>
std::string layoutSpelling(LayoutKind::Kind kind, const std::vector<Arg>& args, ArgText argText) {
  std::string s = layoutKindName(kind);
  if (args.empty()) return s;
  s += "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + argText(args[i]);
  return s + ")";
}

// A concrete layout, as the IR, the metadata and the runtime hold it.
struct Layout : LayoutKind {
  Kind kind = RowMajor;
  std::vector<int64_t> args;
  Layout() = default;
  Layout(Kind k, std::vector<int64_t> a = {}) : kind(k), args(std::move(a)) {}
  std::string str() const {
    return layoutSpelling(kind, args, [](int64_t a) { return std::to_string(a); });
  }
  bool operator==(const Layout& o) const { return kind == o.kind && args == o.args; }
};

// Parses Layout::str()'s spelling (spaces after commas optional); nullopt if it is not one or
// has the wrong number of arguments.
inline std::optional<Layout> parseLayout(std::string_view text) {
  const size_t open = text.find('(');
  auto kind = parseLayoutKind(text.substr(0, open));
  if (!kind) return std::nullopt;
  Layout l;
  l.kind = *kind;
  if (open == std::string_view::npos) {
    if (layoutArgCount(l.kind) != 0) return std::nullopt;
    return l;
  }
  if (text.back() != ')') return std::nullopt;
  std::string_view inner = text.substr(open + 1, text.size() - open - 2);
  size_t p = 0;
  for (;;) {
    while (p < inner.size() && inner[p] == ' ') ++p;
    const size_t start = p;
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
  if (l.args.size() != layoutArgCount(l.kind)) return std::nullopt;
  return l;
}

inline int64_t shapeElements(const std::vector<int64_t>& shape) {  // 1 for a scalar
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// "[16, 64]"; "[]" for a scalar.
inline std::string shapeString(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// Why `l` cannot describe a tensor of `shape` (rank, argument count and values, divisibility:
// the rules of docs/language.md §5), or "" when it can.
inline std::string layoutProblem(const Layout& l, const std::vector<int64_t>& s) {
  const std::string name = l.str();
  if (l.args.size() != layoutArgCount(l.kind))
    return name + " takes " + std::to_string(layoutArgCount(l.kind)) + " argument(s)";
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

// Elements in storage: padded(P) rows hold P elements; every other layout holds exactly the
// tensor's elements.
inline int64_t storageElements(const Layout& l, const std::vector<int64_t>& shape) {
  if (l.kind == Layout::Padded && shape.size() == 2 && !l.args.empty()) return shape[0] * l.args[0];
  return shapeElements(shape);
}

// The storage stride of each logical dimension when the layout is affine with a contiguous last
// dimension (row-major, interleaved rows, padded, tiled with full-width tiles); empty otherwise.
inline std::vector<int64_t> affineStrides(const Layout& l, const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size(), 1);
  auto rowMajor = [&] {
    for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
    return st;
  };
  switch (l.kind) {
    case Layout::RowMajor:
    case Layout::Interleave: return rowMajor();
    case Layout::Padded:
      if (s.size() == 2 && !l.args.empty()) return {l.args[0], 1};
      return {};
    case Layout::Tiled:
      if (s.size() == 2 && l.args.size() == 2 && l.args[1] == s[1]) return rowMajor();
      return {};
    default: return {};
  }
}

// The arithmetic physicalOffset computes in: `Index` is the type of a logical coordinate (the
// kernel's i32), `Offset` of a storage offset (i64). Coordinates are non-negative, so division
// and remainder may be unsigned. The host's is plain int64_t.
struct HostArithmetic {
  using Index = int64_t;
  using Offset = int64_t;
  Offset constant(int64_t v) const { return v; }
  Offset widen(Index i) const { return i; }
  Index indexDiv(Index i, int64_t d) const { return i / d; }
  Index indexRem(Index i, int64_t d) const { return i % d; }
  Offset add(Offset a, Offset b) const { return a + b; }
  Offset sub(Offset a, Offset b) const { return a - b; }
  Offset mul(Offset a, Offset b) const { return a * b; }
  Offset div(Offset a, Offset b) const { return a / b; }
  Offset rem(Offset a, Offset b) const { return a % b; }
  Offset bitXor(Offset a, Offset b) const { return a ^ b; }
};

// swizzle(B): the storage byte of row-major byte `byte` in row `row`: the 16-byte chunk within
// each B-byte span XOR (row % (B / 16)).
template <class Arith>
typename Arith::Offset swizzledByte(Arith& a, typename Arith::Offset byte, typename Arith::Index row, int64_t B) {
  auto inSpan = a.rem(byte, a.constant(B));
  auto chunk = a.bitXor(a.div(inSpan, a.constant(16)), a.widen(a.indexRem(row, B / 16)));
  return a.add(a.sub(byte, inSpan), a.add(a.mul(chunk, a.constant(16)), a.rem(byte, a.constant(16))));
}

// The storage element offset of the element at logical coordinates `c` (one per dimension) of
// a tensor of `shape` and `elemBytes`-byte elements in layout `l`; nullopt when the layout does
// not address a tensor of this rank. The order of the operations is the kernel's instruction
// order (the backend's output is compared byte for byte).
template <class Arith>
std::optional<typename Arith::Offset> physicalOffset(Arith& a, const Layout& l, const std::vector<int64_t>& s,
                                                     unsigned elemBytes, std::span<const typename Arith::Index> c) {
  if (c.empty()) return a.constant(0);
  const auto& arg = l.args;
  switch (l.kind) {
    case Layout::ColMajor:
      if (s.size() == 2) return a.add(a.mul(a.widen(c[1]), a.constant(s[0])), a.widen(c[0]));
      break;
    case Layout::Tiled:
      if (s.size() == 2 && arg.size() == 2 && arg[1] != s[1]) {  // full-width tiles are row-major
        const int64_t R = arg[0], C = arg[1];
        auto tile = a.add(a.mul(a.widen(a.indexDiv(c[0], R)), a.constant(s[1] / C)), a.widen(a.indexDiv(c[1], C)));
        auto in = a.add(a.mul(a.widen(a.indexRem(c[0], R)), a.constant(C)), a.widen(a.indexRem(c[1], C)));
        return a.add(a.mul(tile, a.constant(R * C)), in);
      }
      break;
    case Layout::Swizzle:
      if (s.size() == 2 && !arg.empty()) {
        const int64_t eb = elemBytes;
        auto byte = a.mul(a.add(a.mul(a.widen(c[0]), a.constant(s[1])), a.widen(c[1])), a.constant(eb));
        return a.div(swizzledByte(a, byte, c[0], arg[0]), a.constant(eb));
      }
      break;
    default: break;
  }
  const std::vector<int64_t> st = affineStrides(l, s);
  if (st.size() != c.size()) return std::nullopt;
  auto off = a.constant(0);
  for (size_t d = 0; d < c.size(); ++d) off = a.add(off, a.mul(a.widen(c[d]), a.constant(st[d])));
  return off;
}

}  // namespace mk::abi
