// Source files and locations shared by every phase.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mk {

using FileId = uint32_t;
inline constexpr FileId kNoFile = ~FileId{0};

// A half-open byte range [begin, end) in one file.
struct SourceRange {
  FileId file = kNoFile;
  uint32_t begin = 0;
  uint32_t end = 0;

  bool valid() const { return file != kNoFile; }
  static SourceRange cover(SourceRange a, SourceRange b) {
    if (!a.valid()) return b;
    if (!b.valid() || a.file != b.file) return a;
    return {a.file, std::min(a.begin, b.begin), std::max(a.end, b.end)};
  }
};

struct LineCol {
  uint32_t line = 1;  // 1-based
  uint32_t col = 1;   // 1-based, in bytes
};

class SourceFile {
 public:
  SourceFile(std::string path, std::string text);
  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  LineCol lineCol(uint32_t offset) const;
  // The text of a 1-based line, without its line terminator.
  std::string_view line(uint32_t line) const;
  uint32_t lineCount() const { return static_cast<uint32_t>(lineStarts_.size()); }
  uint32_t offsetOf(LineCol lc) const;

 private:
  std::string path_;
  std::string text_;
  std::vector<uint32_t> lineStarts_;
};

// Owns every file a compilation reads, so ranges stay valid for the whole run.
class SourceManager {
 public:
  FileId add(std::string path, std::string text);
  // Reads a file from disk; nullopt when it cannot be read.
  std::optional<FileId> load(const std::string& path);
  const SourceFile& file(FileId id) const { return *files_.at(id); }
  std::optional<FileId> find(const std::string& path) const;
  size_t size() const { return files_.size(); }

 private:
  std::vector<std::unique_ptr<SourceFile>> files_;
};

}  // namespace mk
