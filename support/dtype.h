// Element types, shared by every phase and by the runtime.
#pragma once

#include <optional>
#include <string_view>

namespace mk {

enum class DType { BF16, F16, F32, I32, Bool };
const char* dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
bool isFloat(DType t);
unsigned dtypeBytes(DType t);

}  // namespace mk
