#include "runtime/npy.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>

namespace mk::runtime {

static_assert(std::endian::native == std::endian::little, "'<f4' data is written as is");

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& msg) { throw NpyError(path + ": " + msg); }

// The value text following `'key':` in a header dict, up to the next top-level ',' or '}'.
std::string dictValue(const std::string& h, const std::string& key, const std::string& path) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) fail(path, "header has no '" + key + "'");
  size_t c = h.find(':', k);
  if (c == std::string::npos) fail(path, "malformed header");
  size_t b = c + 1, e = b;
  int depth = 0;
  for (; e < h.size(); ++e) {
    if (h[e] == '(') ++depth;
    else if (h[e] == ')') --depth;
    else if (depth == 0 && (h[e] == ',' || h[e] == '}')) break;
  }
  std::string v = h.substr(b, e - b);
  v.erase(0, v.find_first_not_of(' '));
  v.erase(v.find_last_not_of(' ') + 1);
  return v;
}

}  // namespace

void writeNpy(const std::string& path, const std::vector<int64_t>& shape, const float* data) {
  std::string dims;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) fail(path, "negative dimension");
    dims += std::to_string(d) + ", ";
    n *= d;
  }
  if (shape.size() > 1) dims.resize(dims.size() - 2);  // a 1-tuple keeps its trailing comma: (5,)
  else if (shape.size() == 1) dims.pop_back();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces so the data starts at a multiple of 64 bytes, then a newline (as numpy does).
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  if (header.size() > 65535) fail(path, "header too long for version 1.0");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, "cannot create the file");
  const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.write(magic, 8);
  uint16_t len = uint16_t(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out.write(header.data(), std::streamsize(header.size()));
  out.write(reinterpret_cast<const char*>(data), std::streamsize(n * 4));
  if (!out.flush()) fail(path, "write failed");
}

void writeNpy(const std::string& path, int64_t rows, int64_t cols, const std::vector<float>& data) {
  if (rows < 0 || cols < 0 || int64_t(data.size()) != rows * cols)
    fail(path, std::to_string(data.size()) + " values for shape [" + std::to_string(rows) + ", " +
                   std::to_string(cols) + "]");
  writeNpy(path, {rows, cols}, data.data());
}

NpyArray readNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) fail(path, "not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t len = 0, start = 0;
  if (major == 1) {
    len = static_cast<unsigned char>(bytes[8]) | size_t(static_cast<unsigned char>(bytes[9])) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(path, "truncated header");
    uint32_t l;
    std::memcpy(&l, bytes.data() + 8, 4);
    len = l;
    start = 12;
  } else {
    fail(path, "unsupported .npy version " + std::to_string(major));
  }
  if (start + len > bytes.size()) fail(path, "header runs past the end of the file");
  const std::string h = bytes.substr(start, len);
  const std::string descr = dictValue(h, "descr", path);
  if (descr != "'<f4'" && descr != "'|f4'") fail(path, "dtype " + descr + " is not float32 ('<f4')");
  if (dictValue(h, "fortran_order", path) != "False") fail(path, "Fortran order is not supported");
  std::string s = dictValue(h, "shape", path);
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') fail(path, "malformed shape " + s);
  NpyArray a;
  int64_t n = 1;
  for (size_t i = 1; i + 1 < s.size();) {
    while (i + 1 < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
    if (i + 1 >= s.size()) break;
    size_t j = i;
    int64_t d = 0;
    while (j + 1 < s.size() && s[j] >= '0' && s[j] <= '9') {
      d = d * 10 + (s[j] - '0');
      if (d > (int64_t(1) << 40)) fail(path, "dimension too large in shape " + s);
      ++j;
    }
    if (j == i) fail(path, "malformed shape " + s);
    a.shape.push_back(d);
    n *= d;
    if (n > (int64_t(1) << 40)) fail(path, "shape " + s + " too large");
    i = j;
  }
  const size_t data = start + len;
  if (bytes.size() - data != size_t(n) * 4)
    fail(path, "holds " + std::to_string(bytes.size() - data) + " data bytes; shape " + s + " needs " +
                   std::to_string(n * 4));
  a.data.resize(size_t(n));
  if (n) std::memcpy(a.data.data(), bytes.data() + data, size_t(n) * 4);
  return a;
}

}  // namespace mk::runtime
