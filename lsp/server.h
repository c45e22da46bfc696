// `mkdsl lsp`: a language server for .mk files (LSP 3.17 over stdio, JSON-RPC 2.0).
//
// The server is a thin layer over the frontend, one handler per LSP method: documents are parsed
// and checked by the same checker as `mkdsl check`, and hover, definition, references, rename,
// completion and semantic tokens read the checker's index of names and types (frontend/index.h).
// See docs/lsp.md for the capabilities and the transcript tests.
#pragma once

#include <istream>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace mk::lsp {

struct ServerOptions {
  std::vector<std::string> includeDirs;  // -I, searched after the importing file's folder
  std::string stdlibDir;                 // where `import std.*` looks; empty: the installed stdlib
  std::string version;                   // serverInfo.version; empty: not sent
  // Publish diagnostics only when idle() is called (runServer calls it when no input is waiting),
  // so rapid edits are checked once; otherwise every message that changes a document publishes
  // its diagnostics in the same handle() call.
  bool deferDiagnostics = false;
  unsigned maxErrors = 100;  // per document and check, as --max-errors
};

// Messages still waiting behind the one being handled, as runServer sees them: a request whose
// id a later $/cancelRequest names is answered with RequestCancelled, and one about a document a
// later didChange edits with ContentModified, without doing the work.
struct Lookahead {
  std::set<std::string> cancelledIds;  // ids as JSON text: `7`, `"abc"`
  std::set<std::string> changedUris;
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Handles one JSON-RPC message body and returns the bodies of the messages to send, in order:
  // the response to a request, diagnostics notifications. Never throws.
  std::vector<std::string> handle(std::string_view body, const Lookahead* ahead = nullptr);
  // With deferDiagnostics: the diagnostics of the documents changed since the last call.
  std::vector<std::string> idle();
  // The answer to a message whose framing was broken (a ParseError with a null id).
  static std::string framingError(const std::string& why);

  // After the `exit` notification: stop reading. The exit code is 0 when `shutdown` came first.
  bool exited() const;
  int exitCode() const;

  // How many times a document was parsed and checked (tests: cached analyses are not redone).
  size_t analysesRun() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Serves LSP over a pair of streams until `exit` or the end of the input. Returns the exit code:
// 0 after shutdown and exit, 1 otherwise.
int runServer(std::istream& in, std::ostream& out, const ServerOptions& options);

}  // namespace mk::lsp
