// Open documents: their text, versions and incremental edits, and the conversion between byte
// offsets and LSP positions in the negotiated encoding (UTF-16 code units by default, UTF-8 bytes
// or UTF-32 code points when the client offers them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mk::lsp {

enum class Encoding { Utf8, Utf16, Utf32 };
const char* encodingName(Encoding e);  // "utf-8", "utf-16", "utf-32"

struct Position {
  uint32_t line = 0;
  uint32_t character = 0;
  bool operator==(const Position&) const = default;
};

// The start of every line of a text, lines ending at "\n", "\r\n" or "\r" as LSP counts them.
class LineIndex {
 public:
  LineIndex() = default;
  explicit LineIndex(std::string_view text);

  size_t lineCount() const { return starts_.size(); }
  // The position of byte `offset` (clamped to the text). An offset inside a multi-byte character
  // counts as the character's start.
  Position position(std::string_view text, uint32_t offset, Encoding enc) const;
  // The byte offset of `pos`: a line past the end is the end of the text, a character past the
  // end of its line is the line's end (LSP's rule), and one inside a character (half of a UTF-16
  // surrogate pair) is that character's start.
  uint32_t offset(std::string_view text, Position pos, Encoding enc) const;
  // Whether `pos` is inside the text (line exists, character at most the line's length).
  bool contains(std::string_view text, Position pos, Encoding enc) const;
  // The byte range of line `line` without its terminator.
  std::pair<uint32_t, uint32_t> lineBytes(std::string_view text, uint32_t line) const;

 private:
  std::vector<uint32_t> starts_{0};
};

// How many units of `enc` the text takes (invalid UTF-8 bytes count one unit each).
uint32_t unitLength(std::string_view text, Encoding enc);

class Document {
 public:
  Document(std::string uri, std::string text, int64_t version);

  const std::string& uri() const { return uri_; }
  const std::string& text() const { return text_; }
  const LineIndex& lines() const { return lines_; }
  int64_t version() const { return version_; }
  void setVersion(int64_t v) { version_ = v; }
  // Replaces the text between two positions (an incremental didChange entry).
  void edit(Position start, Position end, std::string_view replacement, Encoding enc);
  // Replaces the whole text.
  void replace(std::string text);

  Position position(uint32_t offset, Encoding enc) const { return lines_.position(text_, offset, enc); }
  uint32_t offset(Position p, Encoding enc) const { return lines_.offset(text_, p, enc); }

 private:
  std::string uri_;
  std::string text_;
  LineIndex lines_;
  int64_t version_ = 0;
};

// file:// URIs and paths. A URI that is not file:// has no path.
std::optional<std::string> uriToPath(std::string_view uri);
std::string pathToUri(std::string_view path);

}  // namespace mk::lsp
