// The project's JSON: one value type, a strict reader (RFC 8259) and one writer with one quoting
// function. Standard library only, so that the runtime (safetensors headers, the metadata
// sidecar), the compiler's outputs and the LSP share it.
//
// Strict: no trailing commas, no comments, no duplicate keys, no lone surrogates, no invalid UTF-8,
// nesting at most 64 deep, nothing after the value. Numbers keep their literal text; callers
// convert and range-check them (jsonInt64 / jsonUint64 accept integer literals only).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "abi/utf8.h"

namespace mk::abi {

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

inline const JsonValue* JsonValue::get(std::string_view key) const {
  if (kind != Object) return nullptr;
  for (const JsonMember& m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

// "null", "a boolean", "a number", "a string", "an array", "an object": for error messages.
constexpr const char* jsonKindName(JsonValue::Kind k) {
  switch (k) {
    case JsonValue::Null: return "null";
    case JsonValue::Bool: return "a boolean";
    case JsonValue::Number: return "a number";
    case JsonValue::String: return "a string";
    case JsonValue::Array: return "an array";
    case JsonValue::Object: return "an object";
  }
  return "?";
}

namespace json_detail {

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  JsonValue document() {
    ws();
    JsonValue v = value(0);
    ws();
    if (p_ != s_.size()) error("unexpected text after the JSON value");
    return v;
  }

 private:
  std::string_view s_;
  size_t p_ = 0;

  [[noreturn]] void error(const std::string& msg) { throw JsonError(p_, msg); }
  void ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r')) ++p_;
  }
  bool eat(char c) {
    if (p_ < s_.size() && s_[p_] == c) return ++p_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) error(std::string("expected '") + c + "'");
  }
  void literal(std::string_view word) {
    if (s_.substr(p_, word.size()) != word) error("unexpected character");
    p_ += word.size();
  }

  JsonValue value(int depth) {
    if (depth > 64) error("nesting too deep");
    if (p_ >= s_.size()) error("unexpected end of input");
    JsonValue v;
    const char c = s_[p_];
    if (c == '{') {
      v.kind = JsonValue::Object;
      ++p_;
      ws();
      if (eat('}')) return v;
      std::set<std::string> seen;
      do {
        ws();
        if (p_ >= s_.size() || s_[p_] != '"') error("expected a string key");
        std::string key = string();
        if (!seen.insert(key).second) error("duplicate key \"" + key + "\"");
        ws();
        expect(':');
        ws();
        JsonValue member = value(depth + 1);
        v.members.push_back(JsonMember{std::move(key), std::move(member)});
        ws();
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      v.kind = JsonValue::Array;
      ++p_;
      ws();
      if (eat(']')) return v;
      do {
        ws();
        v.items.push_back(value(depth + 1));
        ws();
      } while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = JsonValue::String;
      v.text = string();
    } else if (c == 't') {
      literal("true");
      v.kind = JsonValue::Bool;
      v.b = true;
    } else if (c == 'f') {
      literal("false");
      v.kind = JsonValue::Bool;
    } else if (c == 'n') {
      literal("null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = JsonValue::Number;
      v.text = number();
    } else {
      error("unexpected character");
    }
    return v;
  }

  bool digit() const { return p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9'; }

  std::string number() {
    const size_t start = p_;
    eat('-');
    if (eat('0')) {
    } else if (digit()) {
      while (digit()) ++p_;
    } else {
      error("bad number");
    }
    if (eat('.')) {
      if (!digit()) error("bad number");
      while (digit()) ++p_;
    }
    if (eat('e') || eat('E')) {
      if (!eat('+')) eat('-');
      if (!digit()) error("bad number");
      while (digit()) ++p_;
    }
    return std::string(s_.substr(start, p_ - start));
  }

  unsigned hex4() {
    if (p_ + 4 > s_.size()) error("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[p_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else error("bad \\u escape");
    }
    return v;
  }

  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (p_ >= s_.size()) error("unterminated string");
      const unsigned char c = s_[p_++];
      if (c == '"') return out;
      if (c < 0x20) error("control character in string");
      if (c >= 0x80) {  // JSON text is UTF-8 (RFC 8259 8.1): a string holds only what it can echo
        const size_t n = utf8Length(s_, p_ - 1);
        if (n == 0) {
          --p_;
          error("invalid UTF-8 in string");
        }
        out.append(s_.substr(p_ - 1, n));
        p_ += n - 1;
        continue;
      }
      if (c != '\\') {
        out += char(c);
        continue;
      }
      if (p_ >= s_.size()) error("unterminated string");
      switch (s_[p_++]) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {  // a high surrogate must be followed by a low one
            if (!(eat('\\') && eat('u'))) error("lone surrogate in \\u escape");
            const unsigned lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) error("lone surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            error("lone surrogate in \\u escape");
          }
          utf8(out, cp);
          break;
        }
        default: error("bad escape in string");
      }
    }
  }
};

}  // namespace json_detail

// Parses one complete JSON document; throws JsonError.
inline JsonValue parseJson(std::string_view text) { return json_detail::Parser(text).document(); }

// The value of an integer literal (no fraction, no exponent) that fits; nullopt otherwise.
inline std::optional<uint64_t> jsonUint64(const JsonValue& v) {
  if (v.kind != JsonValue::Number || v.text.empty()) return std::nullopt;
  uint64_t n = 0;
  for (char c : v.text) {
    if (c < '0' || c > '9') return std::nullopt;  // '-', '.', 'e': not a non-negative integer literal
    const uint64_t d = uint64_t(c - '0');
    if (n > (std::numeric_limits<uint64_t>::max() - d) / 10) return std::nullopt;
    n = n * 10 + d;
  }
  return n;
}

inline std::optional<int64_t> jsonInt64(const JsonValue& v) {
  if (v.kind != JsonValue::Number || v.text.empty()) return std::nullopt;
  const bool neg = v.text[0] == '-';
  JsonValue mag = v;
  if (neg) mag.text.erase(0, 1);
  auto u = jsonUint64(mag);
  if (!u) return std::nullopt;
  const uint64_t limit = uint64_t(std::numeric_limits<int64_t>::max()) + (neg ? 1 : 0);
  if (*u > limit) return std::nullopt;
  return neg ? int64_t(0 - *u) : int64_t(*u);
}

// `s` as a JSON string literal, quotes included: '"', '\\' and control characters escaped, and
// bytes that are not valid UTF-8 replaced by U+FFFD, so that the text is valid JSON whatever `s`
// holds (a file name, a message quoting a source line).
inline std::string jsonQuote(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      default: break;
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
      ++i;
      continue;
    }
    const size_t n = utf8Length(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out + "\"";
}

// How writeJson lays text out. Compact: no whitespace ("{\"a\":[1,2]}"); spaced: one line with
// ", " and ": " ("{\"a\": [1, 2]}"); indent >= 0: one member or item per line, indented that many
// spaces per level, arrays of plain values kept on one line; the values below lineDepth levels
// (1: the items of a top-level array) are written as if not indented.
struct JsonStyle {
  int indent = -1;
  bool spaced = false;
  bool sortKeys = false;  // members in key order instead of the order they were added
  int lineDepth = std::numeric_limits<int>::max();
};

inline void writeJson(std::string& out, const JsonValue& v, const JsonStyle& style = {}, int depth = 0) {
  const bool lines = style.indent >= 0 && depth < style.lineDepth;
  const char* itemSep = lines || style.spaced ? ", " : ",";
  auto newline = [&](int d) {
    if (!lines) return;
    out += '\n';
    out.append(size_t(style.indent * d), ' ');
  };
  switch (v.kind) {
    case JsonValue::Null: out += "null"; return;
    case JsonValue::Bool: out += v.b ? "true" : "false"; return;
    case JsonValue::Number: out += v.text.empty() ? "0" : v.text; return;
    case JsonValue::String: out += jsonQuote(v.text); return;
    case JsonValue::Array: {
      out += '[';
      const bool flat = !lines || std::all_of(v.items.begin(), v.items.end(), [](const JsonValue& x) {
                          return x.kind != JsonValue::Array && x.kind != JsonValue::Object;
                        });
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out += flat ? itemSep : ",";
        if (!flat) newline(depth + 1);
        writeJson(out, v.items[i], style, depth + 1);
      }
      if (!flat && !v.items.empty()) newline(depth);
      out += ']';
      return;
    }
    case JsonValue::Object: {
      std::vector<const JsonMember*> ms;
      for (const JsonMember& m : v.members) ms.push_back(&m);
      if (style.sortKeys)
        std::sort(ms.begin(), ms.end(), [](const JsonMember* a, const JsonMember* b) { return a->first < b->first; });
      out += '{';
      for (size_t i = 0; i < ms.size(); ++i) {
        if (i) out += lines ? "," : itemSep;
        newline(depth + 1);
        out += jsonQuote(ms[i]->first);
        out += lines || style.spaced ? ": " : ":";
        writeJson(out, ms[i]->second, style, depth + 1);
      }
      if (!ms.empty()) newline(depth);
      out += '}';
      return;
    }
  }
}

inline std::string jsonText(const JsonValue& v, const JsonStyle& style = {}) {
  std::string out;
  writeJson(out, v, style);
  return out;
}

// Building values.
inline JsonValue jsonNull() { return {}; }
inline JsonValue jsonBool(bool b) {
  JsonValue v;
  v.kind = JsonValue::Bool;
  v.b = b;
  return v;
}
// A number from its literal text ("128256", "0.5"), which must be a valid JSON number.
inline JsonValue jsonNumberText(std::string literal) {
  JsonValue v;
  v.kind = JsonValue::Number;
  v.text = std::move(literal);
  return v;
}
inline JsonValue jsonInt(int64_t i) { return jsonNumberText(std::to_string(i)); }
inline JsonValue jsonString(std::string s) {
  JsonValue v;
  v.kind = JsonValue::String;
  v.text = std::move(s);
  return v;
}
inline JsonValue jsonArray(std::vector<JsonValue> items = {}) {
  JsonValue v;
  v.kind = JsonValue::Array;
  v.items = std::move(items);
  return v;
}
inline JsonValue jsonObject(std::vector<JsonMember> members = {}) {
  JsonValue v;
  v.kind = JsonValue::Object;
  v.members = std::move(members);
  return v;
}

}  // namespace mk::abi
