#include "lsp/json.h"

namespace mk::lsp {

Json& set(Json& o, std::string_view key, Json value) {
  for (auto& m : o.members)
    if (m.first == key) {
      m.second = std::move(value);
      return o;
    }
  o.members.push_back({std::string(key), std::move(value)});
  return o;
}

Json& push(Json& a, Json value) {
  a.items.push_back(std::move(value));
  return a;
}

const Json* at(const Json* v, std::initializer_list<std::string_view> path) {
  for (std::string_view key : path) {
    if (!v || v->kind != Json::Object) return nullptr;
    v = v->get(key);
  }
  return v;
}

std::optional<std::string> asString(const Json* v) {
  if (!v || v->kind != Json::String) return std::nullopt;
  return v->text;
}

std::optional<int64_t> asInt(const Json* v) {
  if (!v || v->kind != Json::Number) return std::nullopt;
  return abi::jsonInt64(*v);
}

std::optional<bool> asBool(const Json* v) {
  if (!v || v->kind != Json::Bool) return std::nullopt;
  return v->b;
}

}  // namespace mk::lsp
