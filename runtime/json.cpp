#include "runtime/json.h"

#include <cstdio>
#include <limits>
#include <set>

namespace mk::runtime {

namespace {

class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}

  JsonValue parseDocument() {
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
    char c = s_[p_];
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
    size_t start = p_;
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
      char c = s_[p_++];
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
      unsigned char c = s_[p_++];
      if (c == '"') return out;
      if (c < 0x20) error("control character in string");
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
            unsigned lo = hex4();
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

}  // namespace

const JsonValue* JsonValue::get(std::string_view key) const {
  if (kind != Object) return nullptr;
  for (const JsonMember& m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

JsonValue parseJson(std::string_view text) { return JsonParser(text).parseDocument(); }

std::optional<uint64_t> jsonUint64(const JsonValue& v) {
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

std::optional<int64_t> jsonInt64(const JsonValue& v) {
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

std::string jsonQuoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

const char* jsonKindName(JsonValue::Kind k) {
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

}  // namespace mk::runtime
