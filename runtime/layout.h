// Element types and tensor layouts as the host runtime sees them (docs/language.md §5), and the
// repacking between a tensor's logical row-major form and its physical storage.
//
// The physical addressing here is the kernel's (backend/tile.cpp physOffset), restated without
// compiler headers: runtime/ reads only the kernel's metadata JSON, whose layouts are the strings
// ir::Layout::str() prints ("row_major", "tiled(16, 2048)", "swizzle(128)", ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mk::runtime {

// The .mk dtypes. Storage: bf16/f16 2 bytes, f32/i32 4, bool 1 (0 or 1), little endian.
enum class ElemType { BF16, F16, F32, I32, Bool };
const char* elemTypeName(ElemType t);                  // "bf16", ...
std::optional<ElemType> parseElemType(std::string_view name);
unsigned elemTypeBytes(ElemType t);
bool elemTypeIsFloat(ElemType t);

std::string shapeString(const std::vector<int64_t>& shape);  // "[16, 64]"; "[]" for a scalar
int64_t shapeElements(const std::vector<int64_t>& shape);   // 1 for a scalar

struct Layout {
  enum Kind { RowMajor, ColMajor, Tiled, Interleave, Padded, Swizzle } kind = RowMajor;
  std::vector<int64_t> args;
  std::string str() const;  // as ir::Layout::str(): "row_major", "tiled(16, 64)"
  bool operator==(const Layout& o) const { return kind == o.kind && args == o.args; }
};

// Parses Layout::str()'s spelling (spaces after commas optional); nullopt if it is not one.
std::optional<Layout> parseLayout(std::string_view text);

// Why `layout` cannot describe a tensor of `shape` (rank, argument count and values, divisibility:
// the rules of docs/language.md §5), or "" when it can.
std::string layoutProblem(const Layout& layout, const std::vector<int64_t>& shape);

// Elements in storage: padded(P) rows hold P elements; every other layout holds exactly the
// tensor's elements.
int64_t storageElements(const Layout& layout, const std::vector<int64_t>& shape);

// The physical element index of the element at logical coordinates `coords` (one per dimension),
// exactly as the kernel computes it. The naive reference; repack() below is the fast path.
int64_t physicalIndex(const Layout& layout, const std::vector<int64_t>& shape, unsigned elemBytes,
                      const int64_t* coords);

// For swizzle(B), whose chunk permutation depends on the row: "" when every element lands on its
// own place inside the storage, else why not (rows narrower than a chunk can collide). Other
// layouts are always "".
std::string mappingProblem(const Layout& layout, const std::vector<int64_t>& shape, unsigned elemBytes);

// Moves a tensor between its logical row-major bytes (elements * elemBytes) and its physical
// storage bytes (storageElements * elemBytes). toPhysical leaves padding bytes untouched. The
// layout must be valid for the shape (layoutProblem and mappingProblem both "").
void toPhysical(const Layout& layout, const std::vector<int64_t>& shape, unsigned elemBytes, const uint8_t* logical,
                uint8_t* physical);
void fromPhysical(const Layout& layout, const std::vector<int64_t>& shape, unsigned elemBytes, const uint8_t* physical,
                  uint8_t* logical);

// Row-at-a-time repacking, for producers that build a tensor one dim-0 row at a time (the weight
// loader): a "row" is one index of dim 0 with all the trailing dimensions (the whole tensor for a
// scalar). scatter copies a row's logical bytes into the physical storage.
class RowPacker {
 public:
  RowPacker(const Layout& layout, const std::vector<int64_t>& shape, unsigned elemBytes);
  int64_t rows() const { return rows_; }
  size_t rowBytes() const { return rowBytes_; }
  void scatter(int64_t row, const uint8_t* rowData, uint8_t* physical) const;
  void gather(int64_t row, const uint8_t* physical, uint8_t* rowData) const;

 private:
  template <bool ToPhysical>
  void move(int64_t row, uint8_t* rowData, uint8_t* physical) const;
  Layout layout_;
  std::vector<int64_t> shape_;
  unsigned eb_;
  int64_t rows_ = 1;
  size_t rowBytes_ = 0;
};

}  // namespace mk::runtime
