// The server's state and handlers, shared by server.cpp (lifecycle, dispatch, document sync,
// diagnostics) and features.cpp (the language features). Not part of the library's interface.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lsp/analysis.h"
#include "lsp/document.h"
#include "lsp/json.h"
#include "lsp/server.h"

namespace mk::lsp {

// JSON-RPC and LSP error codes.
namespace errc {
constexpr int ParseError = -32700;
constexpr int InvalidRequest = -32600;
constexpr int MethodNotFound = -32601;
constexpr int InvalidParams = -32602;
constexpr int InternalError = -32603;
constexpr int ServerNotInitialized = -32002;
constexpr int RequestFailed = -32803;
constexpr int ContentModified = -32801;
constexpr int RequestCancelled = -32800;
}  // namespace errc

// Thrown by a handler to answer its request with an error.
struct RpcError {
  int code;
  std::string message;
};

struct OpenDoc {
  Document doc;
  std::string path;    // the file's path, or the URI itself when it is not a file:// URI
  uint64_t stamp = 0;  // new with every edit, so analyses know what they read
};

struct CachedAnalysis {
  std::unique_ptr<Analysis> analysis;
  uint64_t stamp = 0;      // the document's stamp it was made from
  uint64_t diskEpoch = 0;  // the files on disk it read may have changed since didSave etc.
  std::map<std::string, uint64_t> deps;  // each module it loaded -> that open document's stamp (0: disk)
};

// One op or fn of the stdlib, for completion of names not imported yet.
struct StdlibEntry {
  std::string module;     // std.linear
  std::string name;
  bool isOp = true;
  std::string signature;  // op matvec<...>(...) -> y: bf16[N]
  std::string doc;
};

struct Server::Impl {
  explicit Impl(ServerOptions o);

  ServerOptions options;
  AnalysisOptions analysisOptions;
  enum class State { Uninitialized, Running, ShutDown } state = State::Uninitialized;
  bool exited = false;
  bool shutdownReceived = false;

  // Negotiated at initialize.
  Encoding enc = Encoding::Utf16;
  bool hierarchicalSymbols = false;
  bool markdownHover = true;
  bool prepareRename = false;

  std::map<std::string, OpenDoc> docs;          // by URI
  std::map<std::string, std::string> uriByPath;  // open documents' paths -> their URIs
  std::map<std::string, CachedAnalysis> cache;   // by URI
  std::set<std::string> dirty;                   // URIs whose diagnostics are due
  uint64_t nextStamp = 1;
  uint64_t diskEpoch = 0;
  size_t analysesRun = 0;
  std::optional<std::vector<StdlibEntry>> stdlib;  // read on first use
  std::vector<std::string> pendingClears;          // empty diagnostics for closed documents
  std::vector<std::unique_ptr<Analysis>> retired;  // replaced analyses, freed when idle

  using Request = Json (Impl::*)(const Json& params);
  using Notification = void (Impl::*)(const Json& params);
  std::map<std::string, Request, std::less<>> requests;
  std::map<std::string, Notification, std::less<>> notifications;

  // ---- dispatch and lifecycle (server.cpp)
  std::vector<std::string> handle(std::string_view body, const Lookahead* ahead);
  std::vector<std::string> flushDiagnostics();
  Json initialize(const Json& params);
  Json shutdown(const Json& params);
  void initialized(const Json& params);
  void exit(const Json& params);

  // ---- documents (server.cpp)
  void didOpen(const Json& params);
  void didChange(const Json& params);
  void didClose(const Json& params);
  void didSave(const Json& params);
  void didChangeWatchedFiles(const Json& params);
  void markChanged(const std::string& path);
  OpenDoc& requireDoc(const Json& params);
  Position requirePosition(const Json& params, const OpenDoc& doc);
  const Analysis& analysisFor(const OpenDoc& doc);
  // A positional request's document, its analysis, its `position` and that position's byte
  // offset (the position is checked before any analysis runs).
  struct At {
    OpenDoc& doc;
    const Analysis& a;
    Position pos;
    uint32_t offset;
  };
  At requireAt(const Json& params);
  Json publishDiagnostics(const OpenDoc& doc);

  // ---- conversions (server.cpp)
  Json position(Position p) const;
  Json range(const Analysis& a, SourceRange r) const;
  Json location(const Analysis& a, SourceRange r) const;
  std::string uriOf(const Analysis& a, FileId file) const;
  bool inStdlib(const std::string& path) const;

  // ---- navigation (navigation.cpp)
  // Every place the name at `offset` of the document stands for (uses, and declarations when
  // asked), across the open documents and what they import; sorted by URI and position.
  struct Occurrence {
    std::string uri;
    std::string path;
    SourceRange range;  // in `analysis`
    bool declaration = false;
    const Analysis* analysis = nullptr;
  };
  std::vector<Occurrence> occurrences(const OpenDoc& doc, uint32_t offset, bool declarations);

  // ---- features (features.cpp, navigation.cpp)
  Json hover(const Json& params);
  Json definition(const Json& params);
  Json references(const Json& params);
  Json documentSymbol(const Json& params);
  Json formatting(const Json& params);
  Json completion(const Json& params);
  Json signatureHelp(const Json& params);
  Json semanticTokens(const Json& params);
  Json prepareRenameRequest(const Json& params);
  Json rename(const Json& params);
  const std::vector<StdlibEntry>& stdlibEntries();
};

// The semantic token legend, in the order of the type and modifier indices.
const std::vector<std::string>& semanticTokenTypes();
const std::vector<std::string>& semanticTokenModifiers();

}  // namespace mk::lsp
