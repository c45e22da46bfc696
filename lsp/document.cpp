#include "lsp/document.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "abi/utf8.h"

namespace mk::lsp {

const char* encodingName(Encoding e) {
  switch (e) {
    case Encoding::Utf8: return "utf-8";
    case Encoding::Utf16: return "utf-16";
    case Encoding::Utf32: return "utf-32";
  }
  return "utf-16";
}

namespace {
// The bytes and the units of `enc` of the character at text[i].
std::pair<uint32_t, uint32_t> charAt(std::string_view text, size_t i, Encoding enc) {
  auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return {1, 1};
  size_t n = utf8Length(text, i);
  if (n == 0) return {1, 1};
  uint32_t units = enc == Encoding::Utf8 ? static_cast<uint32_t>(n) : enc == Encoding::Utf16 && n == 4 ? 2 : 1;
  return {static_cast<uint32_t>(n), units};
}
}  // namespace

uint32_t unitLength(std::string_view text, Encoding enc) {
  if (enc == Encoding::Utf8) return static_cast<uint32_t>(text.size());
  uint32_t units = 0;
  for (size_t i = 0; i < text.size();) {
    auto [bytes, u] = charAt(text, i, enc);
    i += bytes;
    units += u;
  }
  return units;
}

LineIndex::LineIndex(std::string_view text) {
  for (uint32_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      starts_.push_back(i + 1);
    } else if (text[i] == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
      starts_.push_back(i + 1);
    }
  }
}

std::pair<uint32_t, uint32_t> LineIndex::lineBytes(std::string_view text, uint32_t line) const {
  if (line >= starts_.size()) return {static_cast<uint32_t>(text.size()), static_cast<uint32_t>(text.size())};
  uint32_t begin = starts_[line];
  uint32_t end = line + 1 < starts_.size() ? starts_[line + 1] : static_cast<uint32_t>(text.size());
  if (end > begin && text[end - 1] == '\n') --end;
  if (end > begin && text[end - 1] == '\r') --end;
  return {begin, end};
}

Position LineIndex::position(std::string_view text, uint32_t offset, Encoding enc) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text.size()));
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - starts_.begin()) - 1;
  auto [begin, end] = lineBytes(text, line);
  offset = std::min(offset, end);  // inside a "\r\n": the end of the line
  uint32_t units = 0;
  for (uint32_t i = begin; i < offset;) {
    auto [bytes, u] = charAt(text, i, enc);
    if (i + bytes > offset) break;  // inside a character: its start
    i += bytes;
    units += u;
  }
  return {line, units};
}

uint32_t LineIndex::offset(std::string_view text, Position pos, Encoding enc) const {
  if (pos.line >= starts_.size()) return static_cast<uint32_t>(text.size());
  auto [begin, end] = lineBytes(text, pos.line);
  uint32_t units = 0;
  uint32_t i = begin;
  while (i < end && units < pos.character) {
    auto [bytes, u] = charAt(text, i, enc);
    if (units + u > pos.character) break;  // inside a character: its start
    i += bytes;
    units += u;
  }
  return i;
}

bool LineIndex::contains(std::string_view text, Position pos, Encoding enc) const {
  if (pos.line >= starts_.size()) return false;
  auto [begin, end] = lineBytes(text, pos.line);
  return pos.character <= unitLength(text.substr(begin, end - begin), enc);
}

Document::Document(std::string uri, std::string text, int64_t version)
    : uri_(std::move(uri)), text_(std::move(text)), lines_(text_), version_(version) {}

void Document::edit(Position start, Position end, std::string_view replacement, Encoding enc) {
  uint32_t b = offset(start, enc);
  uint32_t e = offset(end, enc);
  if (e < b) std::swap(b, e);
  text_.replace(b, e - b, replacement);
  lines_ = LineIndex(text_);
}

void Document::replace(std::string text) {
  text_ = std::move(text);
  lines_ = LineIndex(text_);
}

namespace {
int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<std::string> uriToPath(std::string_view uri) {
  constexpr std::string_view kScheme = "file://";
  if (uri.size() < kScheme.size() || !std::equal(kScheme.begin(), kScheme.end(), uri.begin(),
                                                 [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); }))
    return std::nullopt;
  std::string_view rest = uri.substr(kScheme.size());
  // An authority (file://localhost/x) is dropped; other hosts are not local files.
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view host = rest.substr(0, slash);
  if (!host.empty() && host != "localhost") return std::nullopt;
  rest = rest.substr(slash);
  std::string path;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && hexValue(rest[i + 1]) >= 0 && hexValue(rest[i + 2]) >= 0) {
      path += static_cast<char>(hexValue(rest[i + 1]) * 16 + hexValue(rest[i + 2]));
      i += 2;
    } else if (rest[i] == '?' || rest[i] == '#') {
      break;
    } else {
      path += rest[i];
    }
  }
  if (path.find('\0') != std::string::npos) return std::nullopt;
  return std::filesystem::path(path).lexically_normal().string();
}

std::string pathToUri(std::string_view path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string uri = "file://";
  for (char ch : path) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      uri += ch;
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri;
}

}  // namespace mk::lsp
