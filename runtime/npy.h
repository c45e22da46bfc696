// NumPy .npy files of float32 (little endian '<f4', C order): golden logits and dumps.
// Standard library only, like the rest of runtime/.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mk::runtime {

class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;  // C order
};

// Writes a version 1.0 .npy of any rank (an empty shape is a 0-d array).
void writeNpy(const std::string& path, const std::vector<int64_t>& shape, const float* data);
// The common case: a [rows, cols] matrix (e.g. the logits of `rows` steps).
void writeNpy(const std::string& path, int64_t rows, int64_t cols, const std::vector<float>& data);
// Reads a float32 .npy (versions 1.0 to 3.0); throws NpyError naming the file otherwise.
NpyArray readNpy(const std::string& path);

}  // namespace mk::runtime
