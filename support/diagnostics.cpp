#include "support/diagnostics.h"

#include <algorithm>

#include "abi/json.h"
#include "abi/utf8.h"

namespace mk {

namespace {
struct KindInfo {
  std::string_view name;
  std::string_view code;
};
constexpr KindInfo kKinds[] = {
#define MK_DIAG_KIND(Name, Code) {#Name, Code},
#include "support/diagnostic_kinds.def"
#undef MK_DIAG_KIND
};

MK_DIAGNOSTIC(TooManyErrors, Error, "too many errors ({0}); stopping here (raise the limit with --max-errors)", unsigned);

std::string_view severityName(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

// Where a range starts, as `file:line:col`.
std::string location(const SourceManager& sources, SourceRange r) {
  const SourceFile& f = sources.file(r.file);
  LineCol lc = f.lineCol(r.begin);
  return fmt::format("{}:{}:{}", f.path(), lc.line, lc.col);
}

// `text` with every byte that is not part of valid UTF-8, and every control character but tab,
// shown as U+FFFD, so a snippet never sends raw garbage to a terminal or a golden file.
std::string printable(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    size_t n = utf8Length(text, i);
    if (n == 0 || (c < 0x20 && c != '\t') || c == 0x7f) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

// The source line of `r` and an underline: '^' under its first byte, '~' under the rest of it
// on that line. Tabs are kept in the underline so it lines up in any terminal.
void renderSnippet(std::string& out, const SourceManager& sources, SourceRange r) {
  const SourceFile& f = sources.file(r.file);
  LineCol lc = f.lineCol(r.begin);
  std::string_view text = f.line(lc.line);
  std::string gutter = fmt::format("{:>5} | ", lc.line);
  out += gutter;
  out += printable(text);
  out += '\n';
  std::string underline(gutter.size() - 2, ' ');
  underline += "| ";
  uint32_t col0 = lc.col - 1;
  // One column per character, not per byte, so the caret stays under multi-byte text.
  auto isLead = [&](uint32_t i) { return (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80; };
  for (uint32_t i = 0; i < col0 && i < text.size(); ++i)
    if (isLead(i)) underline += text[i] == '\t' ? '\t' : ' ';
  uint32_t lineEnd = static_cast<uint32_t>(text.size());
  uint32_t endCol = r.end > r.begin ? f.lineCol(r.end).line == lc.line ? f.lineCol(r.end).col - 1 : lineEnd
                                    : col0 + 1;
  underline += '^';
  for (uint32_t i = col0 + 1; i < std::max(endCol, col0 + 1); ++i)
    if (i >= text.size() || isLead(i)) underline += '~';
  out += underline;
  out += '\n';
}
}  // namespace

std::string_view diagCode(DiagKind kind) { return kKinds[static_cast<size_t>(kind)].code; }
std::string_view diagName(DiagKind kind) { return kKinds[static_cast<size_t>(kind)].name; }

DiagnosticBuilder::~DiagnosticBuilder() {
  if (engine_) engine_->report(std::move(diag_));
}

void DiagnosticEngine::clear() {
  diags_.clear();
  errorCount_ = 0;
  limitReached_ = false;
}

void DiagnosticEngine::report(Diagnostic diag) {
  if (suppressed_ || limitReached_) return;
  // The same problem reached again (an unrolled loop, another instantiation) is reported once.
  for (const Diagnostic& d : diags_)
    if (d.kind == diag.kind && d.range.file == diag.range.file && d.range.begin == diag.range.begin &&
        d.range.end == diag.range.end && d.message == diag.message)
      return;
  if (diag.severity == Severity::Error) {
    if (errorLimit_ && errorCount_ >= errorLimit_) {
      limitReached_ = true;
      diags_.push_back({TooManyErrors.kind, Severity::Error, {},
                        fmt::format(fmt::runtime(TooManyErrors.format), errorLimit_), {}});
      return;
    }
    ++errorCount_;
  }
  diags_.push_back(std::move(diag));
}

std::string renderText(const SourceManager& sources, const Diagnostic& diag, bool color) {
  std::string out;
  auto header = [&](SourceRange r, Severity sev, const std::string& msg, std::string_view code) {
    const char* bold = color ? "\033[1m" : "";
    const char* reset = color ? "\033[0m" : "";
    const char* sevColor = !color ? "" : sev == Severity::Error ? "\033[1;31m" : sev == Severity::Warning ? "\033[1;35m" : "\033[1;36m";
    if (r.valid()) out += fmt::format("{}{}: {}", bold, location(sources, r), reset);
    else out += fmt::format("{}mkdsl: {}", bold, reset);
    out += fmt::format("{}{}:{} {}{}{}", sevColor, severityName(sev), reset, bold, msg, reset);
    if (!code.empty()) out += fmt::format(" [{}]", code);
    out += '\n';
    if (r.valid()) renderSnippet(out, sources, r);
  };
  header(diag.range, diag.severity, diag.message, diagCode(diag.kind));
  for (const DiagnosticNote& n : diag.notes) header(n.range, Severity::Note, n.message, {});
  return out;
}

std::string renderJson(const SourceManager& sources, const std::vector<Diagnostic>& diags) {
  using abi::jsonInt, abi::jsonString;
  // An object holding the place of `r`: "file": null when it has none.
  auto placed = [&](SourceRange r) {
    abi::JsonValue o = abi::jsonObject();
    if (!r.valid()) {
      o.members.push_back({"file", abi::jsonNull()});
      return o;
    }
    const SourceFile& f = sources.file(r.file);
    LineCol b = f.lineCol(r.begin), e = f.lineCol(r.end);
    o.members.push_back({"file", jsonString(f.path())});
    o.members.push_back({"line", jsonInt(b.line)});
    o.members.push_back({"column", jsonInt(b.col)});
    o.members.push_back({"endLine", jsonInt(e.line)});
    o.members.push_back({"endColumn", jsonInt(e.col)});
    return o;
  };
  abi::JsonValue all = abi::jsonArray();
  for (const Diagnostic& d : diags) {
    abi::JsonValue o = placed(d.range);
    o.members.push_back({"severity", jsonString(std::string(severityName(d.severity)))});
    o.members.push_back({"code", jsonString(std::string(diagCode(d.kind)))});
    o.members.push_back({"message", jsonString(d.message)});
    abi::JsonValue notes = abi::jsonArray();
    for (const auto& n : d.notes) {
      abi::JsonValue no = placed(n.range);
      no.members.push_back({"message", jsonString(n.message)});
      notes.items.push_back(std::move(no));
    }
    o.members.push_back({"notes", std::move(notes)});
    all.items.push_back(std::move(o));
  }
  return abi::jsonText(all, {.indent = 2, .lineDepth = 1}) + "\n";  // one diagnostic a line
}

}  // namespace mk
