#include "support/dtype.h"

namespace mk {

const char* dtypeName(DType t) {
  switch (t) {
    case DType::BF16: return "bf16";
    case DType::F16: return "f16";
    case DType::F32: return "f32";
    case DType::I32: return "i32";
    case DType::Bool: return "bool";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view n) {
  if (n == "bf16") return DType::BF16;
  if (n == "f16") return DType::F16;
  if (n == "f32") return DType::F32;
  if (n == "i32") return DType::I32;
  if (n == "bool") return DType::Bool;
  return std::nullopt;
}

bool isFloat(DType t) { return t == DType::BF16 || t == DType::F16 || t == DType::F32; }

unsigned dtypeBytes(DType t) {
  switch (t) {
    case DType::BF16:
    case DType::F16: return 2;
    case DType::Bool: return 1;
    default: return 4;
  }
}

}  // namespace mk
