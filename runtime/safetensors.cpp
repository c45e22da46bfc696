#include "runtime/safetensors.h"

#include "abi/json.h"
#include "abi/layout.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

namespace mk::runtime {

using abi::JsonError;
using abi::JsonValue;
using abi::parseJson;

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little endian; a big-endian host needs byte swaps");

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& msg) {
  throw SafetensorsError(file + ": " + msg);
}

// The JSON reader is abi/json.h; its errors become this file's.
JsonValue parseHeaderJson(std::string_view text, const std::string& file) {
  try {
    return parseJson(text);
  } catch (const JsonError& e) {
    fail(file, "malformed JSON header at byte " + std::to_string(e.offset()) + ": " + e.what());
  }
}

// A non-negative integer JSON number, or nullopt.
std::optional<uint64_t> asUint(const JsonValue& v) {
  if (v.kind != JsonValue::Number || v.text.empty() || v.text.size() > 19) return std::nullopt;
  uint64_t n = 0;
  for (char c : v.text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + uint64_t(c - '0');
  }
  return n;
}

constexpr uint64_t kMaxHeader = 100u << 20;  // the limit of the reference implementation

}  // namespace

std::optional<unsigned> safetensorsDTypeSize(const std::string& d) {
  static const std::map<std::string, unsigned> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2},
      {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},    {"U32", 4},     {"F32", 4},
      {"I64", 8},  {"U64", 8}, {"F64", 8}};
  auto it = sizes.find(d);
  if (it == sizes.end()) return std::nullopt;
  return it->second;
}

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The file's bytes: an mmap, or (where mmap is refused) a heap copy.
struct SafetensorsFile::Mapping {
  const uint8_t* ptr = nullptr;
  size_t size = 0;
  bool mapped = false;
  std::vector<uint8_t> copy;
  ~Mapping() {
    if (mapped) munmap(const_cast<uint8_t*>(ptr), size);
  }
};

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  auto map = std::make_shared<Mapping>();
  {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      fail(path, "not a regular file");
    }
    map->size = size_t(st.st_size);
    if (map->size > 0) {
      void* p = mmap(nullptr, map->size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        map->ptr = static_cast<const uint8_t*>(p);
        map->mapped = true;
      } else {
        map->copy.resize(map->size);
        size_t got = 0;
        while (got < map->size) {
          ssize_t r = ::read(fd, map->copy.data() + got, map->size - got);
          if (r <= 0) break;
          got += size_t(r);
        }
        if (got != map->size) {
          ::close(fd);
          fail(path, "cannot read the file");
        }
        map->ptr = map->copy.data();
      }
    }
    ::close(fd);
  }
  const size_t size = map->size;
  if (size < 8)
    fail(path, "file of " + std::to_string(size) +
                   " bytes is too small for safetensors (the header length alone takes 8)");
  uint64_t n = 0;
  std::memcpy(&n, map->ptr, 8);
  if (n > size - 8)
    fail(path, "header length " + std::to_string(n) + " runs past the end of the file (" +
                   std::to_string(size) + " bytes): truncated or not safetensors");
  if (n > kMaxHeader) fail(path, "header length " + std::to_string(n) + " exceeds the 100 MB limit");
  std::string_view header(reinterpret_cast<const char*>(map->ptr + 8), n);
  const uint64_t dataSize = size - 8 - n;

  JsonValue root = parseHeaderJson(header, path);
  if (root.kind != JsonValue::Object) fail(path, "the header is not a JSON object");
  for (auto& [name, v] : root.members) {
    if (name == "__metadata__") {
      if (v.kind != JsonValue::Object) fail(path, "__metadata__ must be an object of strings");
      for (auto& [k, mv] : v.members) {
        if (mv.kind != JsonValue::String) fail(path, "__metadata__ value \"" + k + "\" is not a string");
        f.metadata_[k] = mv.text;
      }
      continue;
    }
    auto bad = [&](const std::string& msg) { fail(path, "tensor \"" + name + "\": " + msg); };
    if (v.kind != JsonValue::Object) bad("entry is not an object");
    TensorInfo t;
    t.name = name;
    bool hasDtype = false, hasShape = false, hasOffsets = false;
    for (auto& [k, fv] : v.members) {
      if (k == "dtype") {
        if (fv.kind != JsonValue::String) bad("dtype is not a string");
        t.dtype = fv.text;
        hasDtype = true;
      } else if (k == "shape") {
        if (fv.kind != JsonValue::Array) bad("shape is not an array");
        for (auto& d : fv.items) {
          auto u = asUint(d);
          if (!u || *u > uint64_t(std::numeric_limits<int64_t>::max())) bad("shape holds a non-integer or negative dimension");
          t.shape.push_back(int64_t(*u));
        }
        hasShape = true;
      } else if (k == "data_offsets") {
        if (fv.kind != JsonValue::Array || fv.items.size() != 2) bad("data_offsets is not [begin, end]");
        auto b = asUint(fv.items[0]), e = asUint(fv.items[1]);
        if (!b || !e) bad("data_offsets holds a non-integer or negative value");
        t.begin = *b;
        t.end = *e;
        hasOffsets = true;
      } else {
        bad("unexpected key \"" + k + "\"");
      }
    }
    if (!hasDtype || !hasShape || !hasOffsets) bad("needs dtype, shape and data_offsets");
    auto esize = safetensorsDTypeSize(t.dtype);
    if (!esize) bad("unknown dtype \"" + t.dtype + "\"");
    if (t.begin > t.end) bad("data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "] are reversed");
    if (t.end > dataSize)
      bad("data_offsets end " + std::to_string(t.end) + " is past the data section (" +
          std::to_string(dataSize) + " bytes)");
    // Element count times element size, overflow-checked, must equal the byte range.
    unsigned __int128 want = *esize;
    for (int64_t d : t.shape) {
      want *= uint64_t(d);
      if (want > dataSize) break;
    }
    if (want != t.end - t.begin)
      bad("shape " + abi::shapeString(t.shape) + " of " + t.dtype + " does not match data_offsets [" +
          std::to_string(t.begin) + ", " + std::to_string(t.end) + "]");
    f.tensors_.push_back(std::move(t));
  }
  // Like the reference implementation: the tensors tile the data section exactly, no holes, no
  // overlaps (so no byte is read as two tensors and none is unaccounted for).
  std::sort(f.tensors_.begin(), f.tensors_.end(),
            [](const TensorInfo& a, const TensorInfo& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t at = 0;
  for (const auto& t : f.tensors_) {
    if (t.begin != at)
      fail(path, "tensor \"" + t.name + "\" starts at byte " + std::to_string(t.begin) + " but the previous tensor ends at " +
                     std::to_string(at) + " (data offsets overlap or leave a hole)");
    at = t.end;
  }
  if (at != dataSize)
    fail(path, "the tensors cover " + std::to_string(at) + " bytes of a " + std::to_string(dataSize) +
                   "-byte data section");
  for (size_t i = 0; i < f.tensors_.size(); ++i) f.byName_[f.tensors_[i].name] = i;
  f.data_ = map->ptr + 8 + n;
  f.map_ = std::move(map);
  return f;
}

const TensorInfo* SafetensorsFile::find(const std::string& name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> SafetensorsFile::bytes(const TensorInfo& t) const {
  return {data_ + t.begin, size_t(t.end - t.begin)};
}

// ---- Sets ------------------------------------------------------------------------------------

SafetensorsSet SafetensorsSet::fromFile(SafetensorsFile f) {
  SafetensorsSet s;
  s.files_.push_back(std::move(f));
  for (const auto& t : s.files_[0].tensors()) s.index_[t.name] = 0;
  return s;
}

SafetensorsSet SafetensorsSet::open(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path), indexPath;
  if (fs::is_directory(p, ec)) {
    if (fs::exists(p / "model.safetensors.index.json", ec)) indexPath = p / "model.safetensors.index.json";
    else if (fs::exists(p / "model.safetensors", ec)) return fromFile(SafetensorsFile::open((p / "model.safetensors").string()));
    else fail(path, "directory holds neither model.safetensors.index.json nor model.safetensors");
  } else if (path.size() > 11 && path.ends_with(".index.json")) {
    indexPath = p;
  } else {
    return fromFile(SafetensorsFile::open(path));
  }

  const std::string ip = indexPath.string();
  std::ifstream in(indexPath, std::ios::binary);
  if (!in) fail(ip, "cannot open the index");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  JsonValue root = parseHeaderJson(text, ip);
  const JsonValue* map = nullptr;
  if (root.kind == JsonValue::Object)
    for (auto& [k, v] : root.members)
      if (k == "weight_map") map = &v;
  if (!map || map->kind != JsonValue::Object) fail(ip, "no \"weight_map\" object");

  SafetensorsSet s;
  std::map<std::string, size_t> fileIndex;
  for (auto& [name, v] : map->members) {
    if (v.kind != JsonValue::String) fail(ip, "weight_map entry \"" + name + "\" is not a file name");
    // Shards live beside the index: no absolute paths, no way out of its folder.
    if (std::filesystem::path(v.text).is_absolute() || v.text.find("..") != std::string::npos || v.text.empty())
      fail(ip, "weight_map entry \"" + name + "\" names \"" + v.text + "\", which is not a file beside the index");
    auto [it, fresh] = fileIndex.try_emplace(v.text, s.files_.size());
    if (fresh) s.files_.push_back(SafetensorsFile::open((indexPath.parent_path() / v.text).string()));
    const auto& file = s.files_[it->second];
    const TensorInfo* t = file.find(name);
    if (!t) fail(file.path(), "tensor \"" + name + "\" listed in " + ip + " is not in this shard");
    s.index_[name] = it->second;
  }
  return s;
}

std::optional<SafetensorsSet::Ref> SafetensorsSet::find(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  const SafetensorsFile& f = files_[it->second];
  return Ref{&f, f.find(name)};
}

std::vector<std::string> SafetensorsSet::names() const {
  std::vector<std::string> out;
  for (auto& [k, v] : index_) out.push_back(k);
  return out;
}

// ---- Conversions -----------------------------------------------------------------------------

uint16_t f32ToBf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

float bf16ToF32(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

uint16_t f32ToF16(float f) {
  // Round to nearest even (F. Giesen's float_to_half_fast3_rtne).
  uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  uint16_t o;
  if (x >= (143u << 23)) {  // >= 2^16: infinity, or NaN
    o = x > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (x < (113u << 23)) {  // below 2^-14: a subnormal half or zero; let the FPU round
    const uint32_t magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    float r = std::bit_cast<float>(x) + std::bit_cast<float>(magic);
    o = uint16_t(std::bit_cast<uint32_t>(r) - magic);
  } else {
    uint32_t odd = (x >> 13) & 1u;
    x += (uint32_t(15 - 127) << 23) + 0xfffu + odd;
    o = uint16_t(x >> 13);
  }
  return uint16_t(o | sign);
}

float f16ToF32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

std::vector<double> toDoubles(const SafetensorsSet::Ref& t) {
  auto b = t.bytes();
  const std::string& d = t.info->dtype;
  const size_t n = size_t(t.info->elements());
  std::vector<double> out(n);
  auto each = [&]<typename T>(T) {
    for (size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
      out[i] = double(v);
    }
  };
  if (d == "F64") each(double{});
  else if (d == "F32") each(float{});
  else if (d == "I64") each(int64_t{});
  else if (d == "I32") each(int32_t{});
  else if (d == "I16") each(int16_t{});
  else if (d == "I8") each(int8_t{});
  else if (d == "U8" || d == "BOOL") each(uint8_t{});
  else if (d == "U16") each(uint16_t{});
  else if (d == "U32") each(uint32_t{});
  else if (d == "U64") each(uint64_t{});
  else if (d == "BF16" || d == "F16") {
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, b.data() + 2 * i, 2);
      out[i] = d == "BF16" ? bf16ToF32(h) : f16ToF32(h);
    }
  } else {
    fail(t.file->path(), "tensor \"" + t.info->name + "\": dtype " + d + " cannot be converted to numbers");
  }
  return out;
}

// ---- Writer ----------------------------------------------------------------------------------

std::vector<uint8_t> encodeFloats(const std::vector<float>& values, const std::string& dtype) {
  std::vector<uint8_t> out;
  if (dtype == "F32") {
    out.resize(values.size() * 4);
    if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  } else if (dtype == "BF16" || dtype == "F16") {
    out.resize(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
      uint16_t h = dtype == "BF16" ? f32ToBf16(values[i]) : f32ToF16(values[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  } else {
    throw SafetensorsError("encodeFloats: unsupported dtype " + dtype + " (F32, BF16 or F16)");
  }
  return out;
}

void writeSafetensors(const std::string& path, const std::vector<TensorData>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  // Written by hand rather than with abi::jsonText: the header's shapes have spaces after their
  // commas, the rest is compact, and files written before keep their bytes.
  std::string header = "{";
  bool first = true;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (auto& [k, v] : metadata) header += (first ? "" : ",") + abi::jsonQuote(k) + ":" + abi::jsonQuote(v), first = false;
    header += "}";
    first = false;
  }
  uint64_t at = 0;
  std::set<std::string> names;
  for (const auto& t : tensors) {
    auto esize = safetensorsDTypeSize(t.dtype);
    if (!esize) fail(path, "tensor \"" + t.name + "\": unknown dtype \"" + t.dtype + "\"");
    if (t.name == "__metadata__" || !names.insert(t.name).second) fail(path, "tensor name \"" + t.name + "\" is reserved or repeated");
    int64_t n = 1;
    for (int64_t d : t.shape) {
      if (d < 0) fail(path, "tensor \"" + t.name + "\": negative dimension");
      n *= d;
    }
    if (uint64_t(n) * *esize != t.data.size())
      fail(path, "tensor \"" + t.name + "\": " + std::to_string(t.data.size()) + " bytes for shape " +
                     abi::shapeString(t.shape) + " of " + t.dtype);
    header += std::string(first ? "" : ",") + abi::jsonQuote(t.name) + ":{\"dtype\":" + abi::jsonQuote(t.dtype) +
              ",\"shape\":" + abi::shapeString(t.shape) + ",\"data_offsets\":[" + std::to_string(at) + "," +
              std::to_string(at + t.data.size()) + "]}";
    first = false;
    at += t.data.size();
  }
  header += "}";
  while (header.size() % 8) header += ' ';  // keeps the data section 8-byte aligned
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, "cannot create the file");
  uint64_t n = header.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out.write(header.data(), std::streamsize(header.size()));
  for (const auto& t : tensors) out.write(reinterpret_cast<const char*>(t.data.data()), std::streamsize(t.data.size()));
  if (!out.flush()) fail(path, "write failed");
}

}  // namespace mk::runtime
