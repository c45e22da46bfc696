#include "lsp/json.h"

#include <algorithm>

#include "support/json.h"

namespace mk::lsp {

Json jnull() { return Json{}; }

Json jbool(bool b) {
  Json v;
  v.kind = Json::Bool;
  v.b = b;
  return v;
}

Json jint(int64_t i) {
  Json v;
  v.kind = Json::Number;
  v.text = std::to_string(i);
  return v;
}

Json jstr(std::string s) {
  Json v;
  v.kind = Json::String;
  v.text = std::move(s);
  return v;
}

Json jarr(std::vector<Json> items) {
  Json v;
  v.kind = Json::Array;
  v.items = std::move(items);
  return v;
}

Json jobj() {
  Json v;
  v.kind = Json::Object;
  return v;
}

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

namespace {
void write(std::string& out, const Json& v, bool sortKeys, int indent, int depth) {
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  switch (v.kind) {
    case Json::Null: out += "null"; return;
    case Json::Bool: out += v.b ? "true" : "false"; return;
    case Json::Number: out += v.text.empty() ? "0" : v.text; return;
    case Json::String: out += jsonQuote(v.text); return;
    case Json::Array: {
      out += '[';
      // Arrays of plain values stay on one line even when indenting.
      bool flat = std::all_of(v.items.begin(), v.items.end(),
                              [](const Json& x) { return x.kind != Json::Array && x.kind != Json::Object; });
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out += indent >= 0 && flat ? ", " : ",";
        if (!flat) newline(depth + 1);
        write(out, v.items[i], sortKeys, indent, depth + 1);
      }
      if (!flat && !v.items.empty()) newline(depth);
      out += ']';
      return;
    }
    case Json::Object: {
      std::vector<const runtime::JsonMember*> ms;
      for (const auto& m : v.members) ms.push_back(&m);
      if (sortKeys)
        std::sort(ms.begin(), ms.end(), [](const runtime::JsonMember* a, const runtime::JsonMember* b) { return a->first < b->first; });
      out += '{';
      for (size_t i = 0; i < ms.size(); ++i) {
        if (i) out += ',';
        newline(depth + 1);
        out += jsonQuote(ms[i]->first);
        out += indent >= 0 ? ": " : ":";
        write(out, ms[i]->second, sortKeys, indent, depth + 1);
      }
      if (!ms.empty()) newline(depth);
      out += '}';
      return;
    }
  }
}
}  // namespace

std::string dump(const Json& v, bool sortKeys) {
  std::string out;
  write(out, v, sortKeys, -1, 0);
  return out;
}

std::string dumpPretty(const Json& v) {
  std::string out;
  write(out, v, false, 2, 0);
  return out;
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
  return runtime::jsonInt64(*v);
}

std::optional<bool> asBool(const Json* v) {
  if (!v || v->kind != Json::Bool) return std::nullopt;
  return v->b;
}

}  // namespace mk::lsp
