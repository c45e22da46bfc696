// The diagnostics engine every phase reports through.
//
// A diagnostic is declared where it is emitted, with its argument types:
//   MK_DIAGNOSTIC(UnknownName, Error, "unknown name '{0}'", std::string);
//   diags.emit(range, UnknownName, name).note(declRange, DeclaredHere);
// Its kind must be listed once in diagnostic_kinds.def, which gives it a stable code.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "support/source.h"

namespace mk {

enum class DiagKind : uint16_t {
#define MK_DIAG_KIND(Name, Code) Name,
#include "support/diagnostic_kinds.def"
#undef MK_DIAG_KIND
};

// The stable code of a kind, e.g. "E0201"; notes have none.
std::string_view diagCode(DiagKind kind);
std::string_view diagName(DiagKind kind);

enum class Severity : uint8_t { Error, Warning, Note };

template <typename... Args>
struct DiagnosticDef {
  DiagKind kind;
  Severity severity;
  const char* format;
};

#define MK_DIAGNOSTIC(Name, Sev, Format, ...)                                           \
  static constexpr ::mk::DiagnosticDef<__VA_ARGS__> Name {                              \
    ::mk::DiagKind::Name, ::mk::Severity::Sev, Format                                   \
  }

struct DiagnosticNote {
  SourceRange range;
  std::string message;
};

struct Diagnostic {
  DiagKind kind;
  Severity severity;
  SourceRange range;  // may be invalid for diagnostics about no particular place
  std::string message;
  std::vector<DiagnosticNote> notes;
};

class DiagnosticEngine;

// Collects notes for one diagnostic and hands it to the engine when it goes out of scope.
class DiagnosticBuilder {
 public:
  DiagnosticBuilder(DiagnosticEngine* engine, Diagnostic diag)
      : engine_(engine), diag_(std::move(diag)) {}
  DiagnosticBuilder(DiagnosticBuilder&& other) noexcept
      : engine_(other.engine_), diag_(std::move(other.diag_)) {
    other.engine_ = nullptr;
  }
  DiagnosticBuilder(const DiagnosticBuilder&) = delete;
  DiagnosticBuilder& operator=(const DiagnosticBuilder&) = delete;
  ~DiagnosticBuilder();

  template <typename... Args>
  DiagnosticBuilder& note(SourceRange range, const DiagnosticDef<Args...>& def,
                          const std::type_identity_t<Args>&... args) {
    if (engine_ && range.valid())
      diag_.notes.push_back({range, fmt::format(fmt::runtime(def.format), args...)});
    return *this;
  }

 private:
  DiagnosticEngine* engine_;
  Diagnostic diag_;
};

class DiagnosticEngine {
 public:
  explicit DiagnosticEngine(const SourceManager& sources) : sources_(sources) {}

  template <typename... Args>
  DiagnosticBuilder emit(SourceRange range, const DiagnosticDef<Args...>& def,
                         const std::type_identity_t<Args>&... args) {
    return DiagnosticBuilder(
        this, Diagnostic{def.kind, def.severity, range, fmt::format(fmt::runtime(def.format), args...), {}});
  }

  // Stop collecting errors past this many (0 = no limit); a final note says so.
  void setErrorLimit(unsigned limit) { errorLimit_ = limit; }
  // While suppressed (e.g. re-checking something already reported), diagnostics are dropped.
  void setSuppressed(bool suppressed) { suppressed_ = suppressed; }
  bool suppressed() const { return suppressed_; }

  unsigned errorCount() const { return errorCount_; }
  bool hasErrors() const { return errorCount_ > 0; }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  const SourceManager& sources() const { return sources_; }
  void clear();

  // Records a diagnostic; one identical to an earlier one (kind, place and message) is dropped.
  void report(Diagnostic diag);

 private:
  const SourceManager& sources_;
  std::vector<Diagnostic> diags_;
  unsigned errorCount_ = 0;
  unsigned errorLimit_ = 0;
  bool limitReached_ = false;
  bool suppressed_ = false;
};

// `file:line:col: error: message [E0201]`, the source line, a caret underline, then the notes.
std::string renderText(const SourceManager& sources, const Diagnostic& diag, bool color = false);
// A JSON array with one object per diagnostic (file, line, column, end, severity, code, message,
// notes), for tools.
std::string renderJson(const SourceManager& sources, const std::vector<Diagnostic>& diags);

}  // namespace mk
