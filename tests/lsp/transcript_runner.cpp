// lsp_transcript_runner: replays recorded LSP sessions (tests/lsp/*.transcript) against the
// language server and compares what it answers with what the transcript expects.
//
//   lsp_transcript_runner --dir tests/lsp --root REPO [--update] [NAME.transcript...]
//   lsp_transcript_runner --dir tests/lsp --root REPO --stdio MKDSL [NAME.transcript...]
//
// A transcript is a list of messages, each a JSON text after a marker at the start of a line
// (it may continue on the following lines):
//   --> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {...}}    the client sends
//   <-- {"jsonrpc": "2.0", "id": 1, "result": {...}}                           the server answers
// Lines starting with `#` are comments; blank lines separate nothing. Every `<--` message the
// server sends after a `-->` must follow that `-->` in the transcript, in order; the JSON is
// compared exactly, after writing both sides with their object keys sorted. A `-->` text that is
// not JSON is sent as it is (for the error cases).
//
// Substitutions in client messages: `${root}` is the repository (`file://${root}/x` its file URI),
// `${text:PATH}` the contents of PATH (relative to the transcript's folder) as a JSON string.
// In server messages the repository's URI and path are written back as `file://${root}` and
// `${root}`, so transcripts do not depend on the checkout.
//
// Directives, in comments: `# ARGS: -I DIR` passes include folders (relative to the transcript's
// folder), `# EXIT: N` expects the server to have exited with N after the last message.
//
// The server runs in-process (lsp::Server, diagnostics published as each edit arrives). --update
// rewrites every `<--` block from what the server sent (review the diff before committing).
// --stdio runs `MKDSL lsp` instead, over real pipes with Content-Length framing: each message is
// written and, where the transcript expects answers to it, the runner waits for them; only the
// answers (messages with an id) are compared, since a real server publishes diagnostics when it
// is idle, serverInfo.version is left out, and the exit code is checked.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "lsp/document.h"
#include "lsp/json.h"
#include "lsp/server.h"
#include "lsp/transport.h"

namespace fs = std::filesystem;
using mk::lsp::Json;

namespace {

// How long a silent `mkdsl lsp` is waited for (an answer, or its exit) before the transcript fails:
// a hang guard, far past any answer's time on a loaded machine under sanitizers; not a speed limit.
constexpr int kHangSeconds = 120;

struct Message {
  bool client = false;  // --> (else <--)
  std::string text;     // the JSON text, lines joined with '\n'
  size_t firstLine = 0; // 0-based line in the file
  size_t lineCount = 0;
};

// The file as a sequence of items: messages, and the other lines (comments, blanks) verbatim.
struct Item {
  std::optional<Message> message;
  std::string line;  // when not a message
};

struct Transcript {
  std::vector<Item> items;
  std::vector<std::string> includeDirs;
  std::optional<int> exitCode;
  std::vector<std::string> problems;
};

bool startsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

std::optional<std::string> readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Transcript parse(const std::string& text, const fs::path& dir) {
  Transcript t;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  for (size_t i = 0; i < lines.size();) {
    const std::string& l = lines[i];
    if (startsWith(l, "-->") || startsWith(l, "<--")) {
      Message m;
      m.client = startsWith(l, "-->");
      m.firstLine = i;
      m.text = l.substr(3);
      size_t j = i + 1;
      while (j < lines.size() && !lines[j].empty() && !startsWith(lines[j], "-->") && !startsWith(lines[j], "<--") &&
             !startsWith(lines[j], "#"))
        m.text += "\n" + lines[j++];
      m.lineCount = j - i;
      size_t b = m.text.find_first_not_of(" \t\n");
      m.text = b == std::string::npos ? "" : m.text.substr(b);
      t.items.push_back({m, ""});
      i = j;
      continue;
    }
    if (startsWith(l, "# ARGS:")) {
      std::istringstream words(l.substr(7));
      std::vector<std::string> args;
      for (std::string w; words >> w;) args.push_back(w);
      for (size_t k = 0; k < args.size(); ++k) {
        if (args[k] == "-I" && k + 1 < args.size()) t.includeDirs.push_back((dir / args[++k]).lexically_normal().string());
        else t.problems.push_back("unknown ARGS word '" + args[k] + "'");
      }
    }
    if (startsWith(l, "# EXIT:")) t.exitCode = std::atoi(l.substr(7).c_str());
    t.items.push_back({std::nullopt, l});
    ++i;
  }
  return t;
}

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// A client message with its substitutions made; an error message when a ${text:} file is missing.
std::string substitute(const std::string& text, const std::string& root, const fs::path& dir, std::string& error) {
  std::string s = replaceAll(text, "file://${root}", mk::lsp::pathToUri(root));
  s = replaceAll(s, "${root}", root);
  for (size_t at = s.find("${text:"); at != std::string::npos; at = s.find("${text:", at)) {
    size_t close = s.find('}', at);
    if (close == std::string::npos) break;
    std::string rel = s.substr(at + 7, close - at - 7);
    auto content = readFile(dir / rel);
    if (!content) {
      error = "cannot read " + (dir / rel).string();
      content = "";
    }
    std::string quoted = mk::lsp::dump(mk::lsp::jstr(*content));
    s.replace(at, close + 1 - at, quoted);
    at += quoted.size();
  }
  return s;
}

// A server message in the transcript's terms: the checkout's URI and path as ${root}.
std::string normalise(const std::string& body, const std::string& root) {
  std::string s = replaceAll(body, mk::lsp::pathToUri(root), "file://${root}");
  return replaceAll(s, root, "${root}");
}

// The comparison form: keys sorted, compact. Text that is not JSON compares as it is.
std::string canonical(const std::string& text) {
  try {
    return mk::lsp::dump(mk::abi::parseJson(text), true);
  } catch (const std::exception&) {
    return text;
  }
}

// `mkdsl lsp` announces its version in serverInfo; the in-process server (and so the transcript)
// has none.
std::string withoutVersion(const std::string& text) {
  try {
    Json j = mk::abi::parseJson(text);
    Json* result = nullptr;
    for (auto& m : j.members)
      if (m.first == "result") result = &m.second;
    if (!result) return text;
    for (auto& m : result->members)
      if (m.first == "serverInfo") {
        auto& ms = m.second.members;
        ms.erase(std::remove_if(ms.begin(), ms.end(), [](const mk::abi::JsonMember& x) { return x.first == "version"; }),
                 ms.end());
      }
    return mk::lsp::dump(j);
  } catch (const std::exception&) {
    return text;
  }
}

bool isResponse(const std::string& text) {
  try {
    Json j = mk::abi::parseJson(text);
    return j.kind == Json::Object && j.get("id") && !j.get("method");
  } catch (const std::exception&) {
    return false;
  }
}

struct Tally {
  int passed = 0;
  int failed = 0;
};

// ---- the server as a child process (--stdio) ---------------------------------------------------

class Child {
 public:
  bool start(const std::vector<std::string>& argv, const std::string& cwd) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return false;
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      int devnull = open("/dev/null", O_WRONLY);
      if (devnull >= 0) dup2(devnull, 2);
      close(in[0]), close(in[1]), close(out[0]), close(out[1]);
      if (chdir(cwd.c_str()) != 0) _exit(127);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
    return true;
  }
  ~Child() {
    closeInput();
    if (from_ >= 0) close(from_);
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool send(const std::string& body) {
    std::string data = mk::lsp::frame(body);
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = write(to_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  void closeInput() {
    if (to_ >= 0) close(to_);
    to_ = -1;
  }
  // The next framed message, or nullopt after `seconds` or at the end of the output.
  std::optional<std::string> receive(int seconds) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    for (;;) {
      if (auto m = takeMessage()) return m;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0 || from_ < 0) return std::nullopt;
      pollfd p{from_, POLLIN, 0};
      int n = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (n <= 0) continue;
      char buf[65536];
      ssize_t got = read(from_, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        close(from_);
        from_ = -1;
        return takeMessage();
      }
      buffer_.append(buf, static_cast<size_t>(got));
    }
  }
  // The exit status, waiting up to `seconds`; nullopt when it had to be killed.
  std::optional<int> wait(int seconds) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? std::optional<int>(WEXITSTATUS(status)) : std::nullopt;
      }
      usleep(10000);
    }
    return std::nullopt;
  }

 private:
  std::optional<std::string> takeMessage() {
    std::istringstream in(buffer_);
    size_t end = buffer_.find("\r\n\r\n");
    if (end == std::string::npos) return std::nullopt;
    auto r = mk::lsp::readMessage(in);
    if (r.status != mk::lsp::ReadResult::Message) return std::nullopt;
    buffer_.erase(0, static_cast<size_t>(in.tellg()));
    return r.body;
  }
  pid_t pid_ = -1;
  bool reaped_ = false;
  int to_ = -1, from_ = -1;
  std::string buffer_;
};

// ---- running one transcript --------------------------------------------------------------------

void printMismatch(size_t line, const std::string& expected, const std::string& actual) {
  std::cout << "  at line " << line + 1 << ":\n    expected: " << (expected.empty() ? "(nothing)" : expected)
            << "\n    actual:   " << (actual.empty() ? "(nothing)" : actual) << "\n";
}

bool runInProcess(const fs::path& file, Transcript& t, const std::string& root, bool update, std::string& rewritten) {
  mk::lsp::ServerOptions options;
  options.stdlibDir = root + "/stdlib";
  options.includeDirs = t.includeDirs;
  mk::lsp::Server server(options);
  fs::path dir = file.parent_path();
  bool ok = true;
  int shown = 0;
  // Expected answers per client message: the <-- messages up to the next -->.
  std::vector<std::vector<const Message*>> answers;
  for (const Item& it : t.items)
    if (it.message && it.message->client) answers.emplace_back();
    else if (it.message && !answers.empty()) answers.back().push_back(&*it.message);
  size_t k = 0;
  for (const Item& it : t.items) {
    if (!it.message) {
      rewritten += it.line + "\n";
      continue;
    }
    const Message& m = *it.message;
    if (!m.client) {
      if (k == 0) {
        std::cout << "  line " << m.firstLine + 1 << ": a <-- before any -->\n";
        ok = false;
      }
      continue;  // compared with its --> below; rewritten from the actual output
    }
    rewritten += "--> " + m.text + "\n";
    std::string error;
    std::string body = substitute(m.text, root, dir, error);
    if (!error.empty()) {
      std::cout << "  line " << m.firstLine + 1 << ": " << error << "\n";
      ok = false;
    }
    std::vector<std::string> out = server.handle(body);
    const std::vector<const Message*>& want = answers[k++];
    for (size_t i = 0; i < std::max(out.size(), want.size()); ++i) {
      std::string actual = i < out.size() ? normalise(out[i], root) : "";
      if (i < out.size()) rewritten += "<-- " + actual + "\n";
      if (update) continue;
      std::string exp = i < want.size() ? want[i]->text : "";
      if (canonical(exp) != canonical(actual)) {
        if (shown++ < 5) printMismatch(i < want.size() ? want[i]->firstLine : m.firstLine, exp, actual);
        ok = false;
      }
    }
  }
  if (t.exitCode && !update) {
    if (!server.exited()) {
      std::cout << "  expected the server to exit with " << *t.exitCode << "; it is still running\n";
      ok = false;
    } else if (server.exitCode() != *t.exitCode) {
      std::cout << "  expected exit code " << *t.exitCode << ", got " << server.exitCode() << "\n";
      ok = false;
    }
  }
  return ok;
}

bool runStdio(const fs::path& file, const Transcript& t, const std::string& root, const std::string& mkdsl) {
  std::vector<std::string> argv = {mkdsl, "lsp", "--stdlib", root + "/stdlib"};
  for (const auto& d : t.includeDirs) argv.insert(argv.end(), {"-I", d});
  Child child;
  if (!child.start(argv, file.parent_path().string())) {
    std::cout << "  cannot start " << mkdsl << "\n";
    return false;
  }
  bool ok = true;
  std::vector<std::vector<const Message*>> answers;
  for (const Item& it : t.items)
    if (it.message && it.message->client) answers.emplace_back();
    else if (it.message && !answers.empty() && isResponse(it.message->text)) answers.back().push_back(&*it.message);
  size_t k = 0;
  for (const Item& it : t.items) {
    if (!it.message || !it.message->client) continue;
    const Message& m = *it.message;
    std::string error;
    std::string body = substitute(m.text, root, file.parent_path(), error);
    if (!child.send(body)) {
      // The server may have exited (after `exit`); what it should have answered is checked below.
    }
    for (const Message* want : answers[k]) {
      std::optional<std::string> got;
      while ((got = child.receive(kHangSeconds)) && !isResponse(*got)) {
      }
      std::string actual = got ? withoutVersion(normalise(*got, root)) : "";
      if (canonical(want->text) != canonical(actual)) {
        printMismatch(want->firstLine, want->text, actual);
        ok = false;
      }
    }
    ++k;
  }
  child.closeInput();
  while (auto extra = child.receive(5))
    if (isResponse(*extra)) {
      std::cout << "  an answer the transcript does not expect: " << normalise(*extra, root) << "\n";
      ok = false;
    }
  std::optional<int> status = child.wait(kHangSeconds);
  if (!status) {
    std::cout << "  `mkdsl lsp` did not exit normally within " << kHangSeconds << " s of its input ending\n";
    ok = false;
  } else if (t.exitCode && *status != *t.exitCode) {
    std::cout << "  expected exit code " << *t.exitCode << ", got " << *status << "\n";
    ok = false;
  }
  return ok;
}

int usage() {
  std::cerr << "usage: lsp_transcript_runner --dir DIR --root REPO [--update | --stdio MKDSL] [FILES...]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);  // --stdio: writing to a server that has exited must not end the runner
  std::string dir, root, mkdsl;
  bool update = false;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--root" && i + 1 < argc) root = argv[++i];
    else if (a == "--stdio" && i + 1 < argc) mkdsl = argv[++i];
    else if (a == "--update") update = true;
    else if (!a.empty() && a[0] == '-') return usage();
    else names.push_back(a);
  }
  if (dir.empty() || root.empty() || (update && !mkdsl.empty())) return usage();
  std::error_code ec;
  root = fs::absolute(root, ec).lexically_normal().string();
  if (!root.empty() && root.back() == '/') root.pop_back();
  if (!mkdsl.empty()) mkdsl = fs::absolute(mkdsl, ec).string();
  std::vector<fs::path> files;
  if (names.empty()) {
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".transcript") files.push_back(e.path());
  } else {
    for (const auto& n : names) files.push_back(fs::path(n).has_parent_path() ? fs::path(n) : fs::path(dir) / n);
  }
  std::sort(files.begin(), files.end());
  Tally tally;
  for (const fs::path& f : files) {
    std::string name = f.filename().string();
    auto text = readFile(f);
    if (!text) {
      std::cout << "FAIL " << name << ": cannot read\n";
      ++tally.failed;
      continue;
    }
    fs::path abs = fs::absolute(f, ec);
    Transcript t = parse(*text, abs.parent_path());
    if (!t.problems.empty()) {
      std::cout << "FAIL " << name << ":\n";
      for (const auto& p : t.problems) std::cout << "  " << p << "\n";
      ++tally.failed;
      continue;
    }
    bool ok;
    if (!mkdsl.empty()) {
      ok = runStdio(abs, t, root, mkdsl);
    } else {
      std::string rewritten;
      ok = runInProcess(abs, t, root, update, rewritten);
      if (update) {
        if (rewritten != *text) {
          std::ofstream(f, std::ios::binary | std::ios::trunc) << rewritten;
          std::cout << "UPDATED " << name << "\n";
        } else {
          std::cout << "ok " << name << "\n";
        }
        ++tally.passed;
        continue;
      }
    }
    std::cout << (ok ? "ok " : "FAIL ") << name << (mkdsl.empty() ? "" : " (stdio)") << "\n";
    ++(ok ? tally.passed : tally.failed);
  }
  if (files.empty()) {
    std::cout << "FAIL: no .transcript files in " << dir << "\n";
    ++tally.failed;
  }
  std::cout << tally.passed << " passed, " << tally.failed << " failed\n";
  return tally.failed ? 1 : 0;
}
