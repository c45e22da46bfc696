// The element types of .mk tensors, as every phase and the runtime spell and store them
// (docs/language.md §5). Storage: bf16/f16 2 bytes, f32/i32 4, bool 1 (0 or 1), little endian.
#pragma once

#include <optional>
#include <string_view>

namespace mk {

enum class DType { BF16, F16, F32, I32, Bool };

constexpr const char* dtypeName(DType t) {
  switch (t) {
    case DType::BF16: return "bf16";
    case DType::F16: return "f16";
    case DType::F32: return "f32";
    case DType::I32: return "i32";
    case DType::Bool: return "bool";
  }
  return "?";
}

constexpr std::optional<DType> parseDType(std::string_view name) {
  for (DType t : {DType::BF16, DType::F16, DType::F32, DType::I32, DType::Bool})
    if (name == dtypeName(t)) return t;
  return std::nullopt;
}

constexpr bool isFloat(DType t) { return t == DType::BF16 || t == DType::F16 || t == DType::F32; }

constexpr unsigned dtypeBytes(DType t) {
  switch (t) {
    case DType::BF16:
    case DType::F16: return 2;
    case DType::Bool: return 1;
    case DType::F32:
    case DType::I32: return 4;
  }
  return 4;
}

}  // namespace mk
