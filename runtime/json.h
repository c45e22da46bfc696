// A small strict JSON reader (RFC 8259): safetensors headers and index files, and the kernel
// metadata sidecar. Standard library only, like the rest of runtime/.
//
// Strict: no trailing commas, no comments, no duplicate keys, no lone surrogates, nesting at most
// 64 deep, nothing after the value. Numbers keep their literal text; callers convert and
// range-check them (asInt64 / asUint64 below accept integer literals only).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mk::runtime {

// A syntax error: `offset` is the byte where parsing stopped; what() is the bare reason.
class JsonError : public std::runtime_error {
 public:
  JsonError(size_t offset, const std::string& msg) : std::runtime_error(msg), offset_(offset) {}
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

struct JsonMember;
struct JsonValue {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool b = false;
  std::string text;  // String: the decoded string; Number: the literal as written
  std::vector<JsonValue> items;
  // In file order, keys unique. A named struct rather than std::pair: the pair template would
  // need JsonValue complete here, which clang rejects.
  std::vector<JsonMember> members;

  // The member named `key` of an object, or nullptr (also for non-objects).
  const JsonValue* get(std::string_view key) const;
};
struct JsonMember {
  std::string first;
  JsonValue second;
};

// Parses one complete JSON document; throws JsonError.
JsonValue parseJson(std::string_view text);

// The value of an integer literal (no fraction, no exponent) that fits; nullopt otherwise.
std::optional<int64_t> jsonInt64(const JsonValue& v);
std::optional<uint64_t> jsonUint64(const JsonValue& v);

// `s` as a JSON string literal (quotes, escapes for '"', '\\' and control characters).
std::string jsonQuoted(const std::string& s);

// "null", "true", "a number", "a string", "an array", "an object": for error messages.
const char* jsonKindName(JsonValue::Kind k);

}  // namespace mk::runtime
