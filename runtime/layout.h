// The layout rules as the host runtime checks them (docs/language.md §5), and the repacking
// between a tensor's logical row-major form and its physical storage. The layouts, their
// spelling and the address formula are abi/layout.h's, the kernel's own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "abi/dtype.h"
#include "abi/layout.h"

namespace mk::runtime {

using abi::Layout;
using abi::layoutProblem;
using abi::parseLayout;
using abi::shapeElements;
using abi::shapeString;
using abi::storageElements;

// The physical element index of the element at logical coordinates `coords` (one per dimension),
// exactly as the kernel computes it (abi::physicalOffset). The layout must be valid for the shape.
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
