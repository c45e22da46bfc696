#include "support/source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mk {

SourceFile::SourceFile(std::string path, std::string text)
    : path_(std::move(path)), text_(std::move(text)) {
  lineStarts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') lineStarts_.push_back(i + 1);
}

LineCol SourceFile::lineCol(uint32_t offset) const {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text_.size()));
  auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - lineStarts_.begin());
  return {line, offset - lineStarts_[line - 1] + 1};
}

std::string_view SourceFile::line(uint32_t line) const {
  if (line == 0 || line > lineStarts_.size()) return {};
  uint32_t begin = lineStarts_[line - 1];
  uint32_t end = line < lineStarts_.size() ? lineStarts_[line] : static_cast<uint32_t>(text_.size());
  std::string_view s(text_.data() + begin, end - begin);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

uint32_t SourceFile::offsetOf(LineCol lc) const {
  if (lc.line == 0) return 0;
  if (lc.line > lineStarts_.size()) return static_cast<uint32_t>(text_.size());
  uint32_t begin = lineStarts_[lc.line - 1];
  uint32_t len = static_cast<uint32_t>(line(lc.line).size());
  return begin + std::min(lc.col > 0 ? lc.col - 1 : 0, len);
}

FileId SourceManager::add(std::string path, std::string text) {
  files_.push_back(std::make_unique<SourceFile>(std::move(path), std::move(text)));
  return static_cast<FileId>(files_.size() - 1);
}

std::optional<FileId> SourceManager::load(const std::string& path) {
  if (auto id = find(path)) return id;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return add(path, ss.str());
}

std::optional<FileId> SourceManager::find(const std::string& path) const {
  for (size_t i = 0; i < files_.size(); ++i)
    if (files_[i]->path() == path) return static_cast<FileId>(i);
  return std::nullopt;
}

}  // namespace mk
