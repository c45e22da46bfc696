// Building and writing the server's JSON. Messages are read with runtime/json.h's strict reader and
// built in the same JsonValue type, written back with support/json.h's jsonQuote for strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/json.h"

namespace mk::lsp {

using Json = runtime::JsonValue;

Json jnull();
Json jbool(bool b);
Json jint(int64_t v);
Json jstr(std::string s);
Json jarr(std::vector<Json> items = {});
Json jobj();

// Sets member `key` of object `o` (replacing an earlier value of the same key) and returns `o`.
Json& set(Json& o, std::string_view key, Json value);
// Appends to array `a`.
Json& push(Json& a, Json value);

// Compact JSON text. With sortKeys, object members are written in key order (the transcript
// tests' normal form); otherwise in the order they were set.
std::string dump(const Json& v, bool sortKeys = false);
// Indented text (two spaces, keys in the order set), for transcripts written by --update.
std::string dumpPretty(const Json& v);

// Reading parameters: the member at a path of keys, or nullptr when any step is missing or not
// an object.
const Json* at(const Json* v, std::initializer_list<std::string_view> path);
std::optional<std::string> asString(const Json* v);
std::optional<int64_t> asInt(const Json* v);
std::optional<bool> asBool(const Json* v);

}  // namespace mk::lsp
