// The mkdsl driver: a thin command-line client of the compiler libraries.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "frontend/format.h"
#include "frontend/parse.h"
#include "frontend/sema.h"

#ifndef MKDSL_VERSION
#define MKDSL_VERSION "0.0.0"
#endif

namespace {

constexpr const char* kUsage = R"(mkdsl: compile .mk model descriptions into one GPU megakernel

Usage:
  mkdsl check [options] FILE...     parse and check programs; report every error found
  mkdsl fmt [--check] FILE...       rewrite files in the canonical format
  mkdsl --help                      this text
  mkdsl --version                   the compiler's version

Options for check:
  -I DIR                            also look for imported modules in DIR (repeatable)
  --config NAME                     check with this config only (default: every config in the file)
  --stdlib DIR                      where `import std.*` looks (default: the installed stdlib)
  --diagnostics-format=text|json    how errors are printed (json: one array on stdout)
  --max-errors N                    stop after N errors (default 20; 0: no limit)
  --color=auto|always|never         colour in text diagnostics (default auto)

Options for fmt:
  --check                           change nothing; exit 1 and name the files that are not formatted
  --stdout                          print the formatted text instead of rewriting the file

Exit status: 0 on success, 1 when the input has errors or the command line is wrong.
)";

struct Args {
  std::vector<std::string> files;
  mk::CheckOptions check;
  bool json = false;
  unsigned maxErrors = 20;
  enum class Color { Auto, Always, Never } color = Color::Auto;
  bool fmtCheck = false;
  bool fmtStdout = false;
};

int usageError(const std::string& msg) {
  std::fprintf(stderr, "mkdsl: error: %s\n(run `mkdsl --help` for usage)\n", msg.c_str());
  return 1;
}

// Parses the options after the subcommand. Returns an error message, or nullopt when fine.
std::optional<std::string> parseArgs(const std::string& cmd, int argc, char** argv, int first, Args& a) {
  auto value = [&](int& i, const std::string& flag, std::string& out) -> bool {
    std::string arg = argv[i];
    if (arg.size() > flag.size() && arg.compare(0, flag.size() + 1, flag + "=") == 0) {
      out = arg.substr(flag.size() + 1);
      return true;
    }
    if (i + 1 >= argc) return false;
    out = argv[++i];
    return true;
  };
  auto is = [](const std::string& arg, const std::string& flag) {
    return arg == flag || arg.rfind(flag + "=", 0) == 0;
  };
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    std::string v;
    if (arg == "--" ) {
      for (++i; i < argc; ++i) a.files.push_back(argv[i]);
      break;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      if (cmd == "check" && (arg == "-I" || (arg.rfind("-I", 0) == 0 && arg.size() > 2))) {
        if (arg.size() > 2) a.check.includeDirs.push_back(arg.substr(2));
        else if (i + 1 < argc) a.check.includeDirs.push_back(argv[++i]);
        else return "-I needs a directory";
      } else if (cmd == "check" && is(arg, "--config")) {
        if (!value(i, "--config", v) || v.empty()) return "--config needs a config name";
        a.check.configName = v;
      } else if (cmd == "check" && is(arg, "--stdlib")) {
        if (!value(i, "--stdlib", v) || v.empty()) return "--stdlib needs a directory";
        a.check.stdlibDir = v;
      } else if (cmd == "check" && is(arg, "--diagnostics-format")) {
        if (!value(i, "--diagnostics-format", v) || (v != "text" && v != "json"))
          return "--diagnostics-format must be text or json";
        a.json = v == "json";
      } else if (cmd == "check" && is(arg, "--max-errors")) {
        if (!value(i, "--max-errors", v) || v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
          return "--max-errors needs a number";
        a.maxErrors = static_cast<unsigned>(std::stoul(v));
      } else if (cmd == "check" && is(arg, "--color")) {
        if (!value(i, "--color", v) || (v != "auto" && v != "always" && v != "never"))
          return "--color must be auto, always or never";
        a.color = v == "always" ? Args::Color::Always : v == "never" ? Args::Color::Never : Args::Color::Auto;
      } else if (cmd == "fmt" && arg == "--check") {
        a.fmtCheck = true;
      } else if (cmd == "fmt" && arg == "--stdout") {
        a.fmtStdout = true;
      } else {
        return "unknown option '" + arg + "' for `mkdsl " + cmd + "`";
      }
      continue;
    }
    a.files.push_back(arg);
  }
  if (a.files.empty()) return "`mkdsl " + cmd + "` needs at least one file";
  return std::nullopt;
}

MK_DIAGNOSTIC(CannotRead, Error, "cannot read '{0}': {1}", std::string, std::string);
MK_DIAGNOSTIC(CannotWrite, Error, "cannot write '{0}'", std::string);

std::string readError(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return std::strerror(errno);
  std::fclose(f);
  return "not a regular file";
}

void printDiagnostics(const mk::SourceManager& sm, const mk::DiagnosticEngine& diags, const Args& a) {
  if (a.json) {
    std::fputs(mk::renderJson(sm, diags.diagnostics()).c_str(), stdout);
    return;
  }
  bool color = a.color == Args::Color::Always || (a.color == Args::Color::Auto && isatty(STDERR_FILENO));
  for (const auto& d : diags.diagnostics()) std::fputs(mk::renderText(sm, d, color).c_str(), stderr);
}

int runCheck(const Args& a) {
  mk::SourceManager sm;
  mk::DiagnosticEngine diags(sm);
  diags.setErrorLimit(a.maxErrors);
  mk::CheckOptions options = a.check;
  options.allConfigs = true;
  for (const auto& path : a.files) {
    auto id = sm.load(path);
    if (!id) {
      diags.emit(mk::SourceRange{}, CannotRead, path, readError(path));
      continue;
    }
    mk::checkProgram(sm, diags, *id, options);
  }
  printDiagnostics(sm, diags, a);
  return diags.hasErrors() ? 1 : 0;
}

int runFmt(const Args& a) {
  mk::SourceManager sm;
  mk::DiagnosticEngine diags(sm);
  bool unformatted = false;
  for (const auto& path : a.files) {
    auto id = sm.load(path);
    if (!id) {
      diags.emit(mk::SourceRange{}, CannotRead, path, readError(path));
      continue;
    }
    unsigned before = diags.errorCount();
    mk::parseFile(*id, sm, diags);
    if (diags.errorCount() != before) continue;  // never reformat a file that does not parse
    const std::string& text = sm.file(*id).text();
    std::string formatted = mk::formatSource(text);
    if (a.fmtStdout) {
      std::fputs(formatted.c_str(), stdout);
    } else if (formatted != text) {
      if (a.fmtCheck) {
        std::printf("%s: not formatted\n", path.c_str());
        unformatted = true;
      } else {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << formatted;
        if (!out.flush()) diags.emit(mk::SourceRange{}, CannotWrite, path);
      }
    }
  }
  Args textArgs = a;
  textArgs.json = false;
  printDiagnostics(sm, diags, textArgs);
  return diags.hasErrors() || unformatted ? 1 : 0;
}

int mainImpl(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("mkdsl %s\n", MKDSL_VERSION);
    return 0;
  }
  if (cmd != "check" && cmd != "fmt") return usageError("unknown command '" + cmd + "'");
  Args a;
  if (auto err = parseArgs(cmd, argc, argv, 2, a)) return usageError(*err);
  return cmd == "check" ? runCheck(a) : runFmt(a);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return mainImpl(argc, argv);
  } catch (const std::exception& e) {
    // Reaching this is a compiler bug; say so plainly instead of aborting.
    std::fprintf(stderr, "mkdsl: internal error: %s\n", e.what());
    return 2;
  }
}
