// The runtime's layouts (runtime/layout.h): parsing the metadata's spelling, the rules, and
// repacking between logical and physical storage, each layout against a naive index formula
// written here from docs/language.md §5 (not from abi/layout.h's physicalOffset, which the
// runtime and the backend both use).
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/layout.h"

using namespace mk::runtime;

namespace {

// The physical element of logical (i, j) in a rank-2 tensor [R0, R1], written independently.
int64_t naive2(const Layout& l, int64_t R0, int64_t R1, unsigned eb, int64_t i, int64_t j) {
  switch (l.kind) {
    case Layout::RowMajor:
    case Layout::Interleave: return i * R1 + j;
    case Layout::ColMajor: return j * R0 + i;
    case Layout::Padded: return i * l.args[0] + j;
    case Layout::Tiled: {
      // R x C tiles, row-major over the tile grid, each tile row-major inside.
      const int64_t R = l.args[0], C = l.args[1];
      const int64_t tileRow = i / R, tileCol = j / C, tilesAcross = R1 / C;
      const int64_t tile = tileRow * tilesAcross + tileCol;
      return tile * (R * C) + (i - tileRow * R) * C + (j - tileCol * C);
    }
    case Layout::Swizzle: {
      // Row-major bytes; inside each B-byte span, 16-byte chunk k moves to k XOR (i mod B/16).
      const int64_t B = l.args[0];
      const int64_t byte = (i * R1 + j) * eb;
      const int64_t span = byte / B, chunk = (byte % B) / 16, within = byte % 16;
      const int64_t moved = span * B + (chunk ^ (i % (B / 16))) * 16 + within;
      return moved / eb;
    }
  }
  return -1;
}

// Checks toPhysical/fromPhysical and physicalIndex for one rank-2 case.
void checkRank2(const Layout& l, int64_t R0, int64_t R1, unsigned eb) {
  INFO(l.str() << " " << R0 << "x" << R1 << " eb " << eb);
  const std::vector<int64_t> shape{R0, R1};
  REQUIRE(layoutProblem(l, shape) == "");
  REQUIRE(mappingProblem(l, shape, eb) == "");
  const int64_t n = R0 * R1, storage = storageElements(l, shape);
  // Logical element e holds the bytes of e (little endian, truncated to eb bytes) + 1.
  auto tag = [&](int64_t e, uint8_t* out) {
    uint64_t v = uint64_t(e) * 2654435761u + 1;
    std::memcpy(out, &v, eb);
  };
  std::vector<uint8_t> logical(size_t(n) * eb), physical(size_t(storage) * eb, 0xEE);
  for (int64_t e = 0; e < n; ++e) tag(e, &logical[size_t(e) * eb]);
  toPhysical(l, shape, eb, logical.data(), physical.data());
  std::vector<bool> hit(size_t(storage), false);
  for (int64_t i = 0; i < R0; ++i)
    for (int64_t j = 0; j < R1; ++j) {
      const int64_t c[2] = {i, j};
      const int64_t want = naive2(l, R0, R1, eb, i, j);
      REQUIRE(physicalIndex(l, shape, eb, c) == want);
      REQUIRE(want >= 0);
      REQUIRE(want < storage);
      CHECK(std::memcmp(&physical[size_t(want) * eb], &logical[size_t(i * R1 + j) * eb], eb) == 0);
      hit[size_t(want)] = true;
    }
  for (int64_t p = 0; p < storage; ++p)  // padding stays untouched
    if (!hit[size_t(p)])
      for (unsigned b = 0; b < eb; ++b) CHECK(physical[size_t(p) * eb + b] == 0xEE);
  std::vector<uint8_t> back(logical.size(), 0);
  fromPhysical(l, shape, eb, physical.data(), back.data());
  CHECK(back == logical);
}

}  // namespace

TEST_CASE("runtime layouts: parse and print the metadata's spelling") {
  for (const char* s : {"row_major", "col_major", "tiled(16, 2048)", "interleave(16)", "padded(2056)", "swizzle(128)"}) {
    auto l = parseLayout(s);
    REQUIRE_MESSAGE(l, s);
    CHECK(l->str() == s);
  }
  CHECK(parseLayout("tiled(16,2048)")->args == std::vector<int64_t>{16, 2048});
  for (const char* bad : {"", "rowmajor", "tiled", "tiled(16)", "tiled(16, 2048, 1)", "tiled(16, )", "tiled(-1, 4)",
                          "swizzle(12", "swizzle()", "row_major(1)", "padded(1x)", "tiled(99999999999999999999, 1)"})
    CHECK_MESSAGE(!parseLayout(bad), bad);
}

TEST_CASE("runtime layouts: the rules of each layout") {
  auto problem = [](const char* l, std::vector<int64_t> shape) { return layoutProblem(*parseLayout(l), shape); };
  CHECK(problem("row_major", {}) == "");
  CHECK(problem("row_major", {2, 3, 4}) == "");
  CHECK(problem("col_major", {4}).find("rank-2") != std::string::npos);
  CHECK(problem("tiled(2, 4)", {4, 8}) == "");
  CHECK(problem("tiled(3, 4)", {4, 8}).find("does not divide") != std::string::npos);
  CHECK(problem("tiled(2, 4)", {4, 8, 1}).find("rank-2") != std::string::npos);
  CHECK(problem("interleave(2)", {}).find("rank >= 1") != std::string::npos);
  CHECK(problem("padded(7)", {4, 8}).find("pitch") != std::string::npos);
  CHECK(problem("padded(8)", {4, 8}) == "");
  CHECK(problem("swizzle(48)", {4, 64}).find("32, 64 or 128") != std::string::npos);
  CHECK(storageElements(*parseLayout("padded(10)"), {4, 8}) == 40);
  CHECK(storageElements(*parseLayout("tiled(2, 4)"), {4, 8}) == 32);
  CHECK(storageElements(*parseLayout("row_major"), {}) == 1);
  // Swizzle rows narrower than the chunk permutation collide: reported, not repacked.
  CHECK(mappingProblem(*parseLayout("swizzle(128)"), {3, 8}, 2).find("onto another element") != std::string::npos);
  CHECK(mappingProblem(*parseLayout("swizzle(128)"), {3, 8}, 4).find("past the end") != std::string::npos);
  CHECK(mappingProblem(*parseLayout("swizzle(128)"), {8, 64}, 2) == "");
}

TEST_CASE("runtime layouts: repacking matches the naive index formula for every layout") {
  for (unsigned eb : {1u, 2u, 4u}) {
    checkRank2(*parseLayout("row_major"), 5, 7, eb);
    checkRank2(*parseLayout("interleave(2)"), 6, 3, eb);
    checkRank2(*parseLayout("col_major"), 5, 7, eb);
    checkRank2(*parseLayout("col_major"), 1, 9, eb);
    checkRank2(*parseLayout("tiled(2, 4)"), 6, 8, eb);
    checkRank2(*parseLayout("tiled(3, 8)"), 6, 8, eb);   // C = dim 1: row-major
    checkRank2(*parseLayout("tiled(1, 1)"), 3, 5, eb);
    checkRank2(*parseLayout("tiled(6, 2)"), 6, 8, eb);
    checkRank2(*parseLayout("padded(9)"), 4, 7, eb);
    checkRank2(*parseLayout("padded(7)"), 4, 7, eb);
  }
  // swizzle(B): rows of a multiple of B bytes, and narrower rows that still do not collide.
  for (int64_t B : {32, 64, 128}) {
    Layout s{Layout::Swizzle, {B}};
    checkRank2(s, 16, B / 2, 2);        // one span per row
    checkRank2(s, 12, 2 * B / 4, 4);    // two spans per row
    checkRank2(s, 9, B, 1);
    checkRank2(s, 16, 64, 2);
  }
  checkRank2(Layout{Layout::Swizzle, {128}}, 16, 32, 2);  // 64-byte rows: two rows share a span
  // Rank 0, 1 and 3 (row-major only).
  for (auto shape : std::vector<std::vector<int64_t>>{{}, {5}, {2, 3, 4}}) {
    Layout l;
    const int64_t n = shapeElements(shape);
    std::vector<uint8_t> logical(size_t(n) * 4), physical(logical.size());
    std::iota(logical.begin(), logical.end(), uint8_t(1));
    toPhysical(l, shape, 4, logical.data(), physical.data());
    CHECK(physical == logical);
    std::vector<int64_t> c(shape.size(), 0);
    if (shape.size() == 3) {
      c = {1, 2, 3};
      CHECK(physicalIndex(l, shape, 4, c.data()) == 1 * 12 + 2 * 4 + 3);
    }
  }
}

TEST_CASE("runtime layouts: RowPacker scatters and gathers single rows") {
  Layout t{Layout::Tiled, {2, 4}};
  RowPacker p(t, {4, 8}, 2);
  CHECK(p.rows() == 4);
  CHECK(p.rowBytes() == 16);
  std::vector<uint8_t> phys(64, 0), row(16), back(16);
  for (size_t k = 0; k < 16; ++k) row[k] = uint8_t(100 + k);
  p.scatter(3, row.data(), phys.data());
  // Row 3 is the second row of tile row 1: tiles 2 and 3, offset 1 * 4 elements in each.
  CHECK(std::memcmp(&phys[size_t((2 * 8 + 4) * 2)], &row[0], 8) == 0);
  CHECK(std::memcmp(&phys[size_t((3 * 8 + 4) * 2)], &row[8], 8) == 0);
  p.gather(3, phys.data(), back.data());
  CHECK(back == row);
}
