// Building and writing the server's JSON: abi/json.h's values, reader and writer, with the
// shorthands the server's handlers use.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "abi/json.h"

namespace mk::lsp {

using Json = abi::JsonValue;

inline Json jnull() { return abi::jsonNull(); }
inline Json jbool(bool b) { return abi::jsonBool(b); }
inline Json jint(int64_t v) { return abi::jsonInt(v); }
inline Json jstr(std::string s) { return abi::jsonString(std::move(s)); }
inline Json jarr(std::vector<Json> items = {}) { return abi::jsonArray(std::move(items)); }
inline Json jobj() { return abi::jsonObject(); }

// Sets member `key` of object `o` (replacing an earlier value of the same key) and returns `o`.
Json& set(Json& o, std::string_view key, Json value);
// Appends to array `a`.
Json& push(Json& a, Json value);

// Compact JSON text. With sortKeys, object members are written in key order (the transcript
// tests' normal form); otherwise in the order they were set.
inline std::string dump(const Json& v, bool sortKeys = false) { return abi::jsonText(v, {.sortKeys = sortKeys}); }
// Indented text (two spaces, keys in the order set), for transcripts written by --update.
inline std::string dumpPretty(const Json& v) { return abi::jsonText(v, {.indent = 2}); }

// Reading parameters: the member at a path of keys, or nullptr when any step is missing or not
// an object.
const Json* at(const Json* v, std::initializer_list<std::string_view> path);
std::optional<std::string> asString(const Json* v);
std::optional<int64_t> asInt(const Json* v);
std::optional<bool> asBool(const Json* v);

}  // namespace mk::lsp
