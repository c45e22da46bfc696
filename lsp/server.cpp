// The server: JSON-RPC dispatch, the lifecycle, document synchronisation and diagnostics.
#include "lsp/server.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <filesystem>

#include "lsp/server_impl.h"
#include "lsp/transport.h"

namespace mk::lsp {

namespace fs = std::filesystem;

namespace {

std::string absolute(const std::string& dir) {
  if (dir.empty()) return dir;
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  return (ec ? fs::path(dir) : p).lexically_normal().string();
}

Json errorObject(int code, const std::string& message) {
  Json e = jobj();
  set(e, "code", jint(code));
  set(e, "message", jstr(message));
  return e;
}

std::string response(const Json& id, Json result) {
  Json r = jobj();
  set(r, "jsonrpc", jstr("2.0"));
  set(r, "id", id);
  set(r, "result", std::move(result));
  return dump(r);
}

std::string errorResponse(const Json& id, int code, const std::string& message) {
  Json r = jobj();
  set(r, "jsonrpc", jstr("2.0"));
  set(r, "id", id);
  set(r, "error", errorObject(code, message));
  return dump(r);
}

std::string notification(const std::string& method, Json params) {
  Json n = jobj();
  set(n, "jsonrpc", jstr("2.0"));
  set(n, "method", jstr(method));
  set(n, "params", std::move(params));
  return dump(n);
}

// Requests about one document, which a later edit of it makes stale.
bool isDocumentRequest(std::string_view method) {
  return method.rfind("textDocument/", 0) == 0;
}

}  // namespace

// ---- Construction ---------------------------------------------------------------------------

Server::Impl::Impl(ServerOptions o) : options(std::move(o)) {
  for (const auto& d : options.includeDirs) analysisOptions.includeDirs.push_back(absolute(d));
  analysisOptions.stdlibDir = absolute(options.stdlibDir.empty() ? defaultStdlibDir() : options.stdlibDir);
  analysisOptions.maxErrors = options.maxErrors;
  requests = {
      {"initialize", &Impl::initialize},
      {"shutdown", &Impl::shutdown},
      {"textDocument/hover", &Impl::hover},
      {"textDocument/definition", &Impl::definition},
      {"textDocument/references", &Impl::references},
      {"textDocument/documentSymbol", &Impl::documentSymbol},
      {"textDocument/formatting", &Impl::formatting},
      {"textDocument/completion", &Impl::completion},
      {"textDocument/signatureHelp", &Impl::signatureHelp},
      {"textDocument/semanticTokens/full", &Impl::semanticTokens},
      {"textDocument/prepareRename", &Impl::prepareRenameRequest},
      {"textDocument/rename", &Impl::rename},
  };
  notifications = {
      {"initialized", &Impl::initialized},
      {"exit", &Impl::exit},
      {"textDocument/didOpen", &Impl::didOpen},
      {"textDocument/didChange", &Impl::didChange},
      {"textDocument/didClose", &Impl::didClose},
      {"textDocument/didSave", &Impl::didSave},
      {"workspace/didChangeWatchedFiles", &Impl::didChangeWatchedFiles},
  };
}

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Server::~Server() = default;

std::vector<std::string> Server::handle(std::string_view body, const Lookahead* ahead) {
  return impl_->handle(body, ahead);
}
std::vector<std::string> Server::idle() { return impl_->flushDiagnostics(); }
bool Server::exited() const { return impl_->exited; }
int Server::exitCode() const { return impl_->shutdownReceived ? 0 : 1; }
size_t Server::analysesRun() const { return impl_->analysesRun; }

std::string Server::framingError(const std::string& why) {
  return errorResponse(jnull(), errc::ParseError, "malformed message header: " + why);
}

// ---- Dispatch -------------------------------------------------------------------------------

std::vector<std::string> Server::Impl::handle(std::string_view body, const Lookahead* ahead) {
  std::vector<std::string> out;
  if (exited) return out;
  Json msg;
  try {
    msg = abi::parseJson(body);
  } catch (const abi::JsonError& e) {
    out.push_back(errorResponse(jnull(), errc::ParseError,
                                "invalid JSON at byte " + std::to_string(e.offset()) + ": " + e.what()));
    return out;
  }
  if (msg.kind != Json::Object) {
    out.push_back(errorResponse(jnull(), errc::InvalidRequest, "a message must be a JSON object, found " +
                                                                   std::string(abi::jsonKindName(msg.kind))));
    return out;
  }
  const Json* idp = msg.get("id");
  bool hasId = idp != nullptr;
  bool goodId = idp && (idp->kind == Json::String || (idp->kind == Json::Number && abi::jsonInt64(*idp)));
  Json id = goodId ? *idp : jnull();
  const Json* methodp = msg.get("method");
  if (!methodp && hasId && (msg.get("result") || msg.get("error"))) return out;  // a response: we send no requests
  // Without an id the message is a notification, and a notification is never answered, not even
  // a malformed one: it is dropped.
  auto version = asString(msg.get("jsonrpc"));
  if (!hasId && (!version || *version != "2.0" || !asString(methodp))) return out;
  if (!version || *version != "2.0") {
    out.push_back(errorResponse(id, errc::InvalidRequest, "the message lacks \"jsonrpc\": \"2.0\""));
    return out;
  }
  if (hasId && !goodId) {
    out.push_back(errorResponse(jnull(), errc::InvalidRequest, "the id must be an integer or a string"));
    return out;
  }
  auto method = asString(methodp);
  if (!method) {
    out.push_back(errorResponse(id, errc::InvalidRequest,
                                methodp ? "the method must be a string" : "the message has no method"));
    return out;
  }
  const Json* params = msg.get("params");
  static const Json kEmpty = jobj();
  if (params && params->kind != Json::Object && params->kind != Json::Array) {
    if (hasId) out.push_back(errorResponse(id, errc::InvalidParams, "params must be an object or an array"));
    return out;
  }
  if (!params || params->kind != Json::Object) params = &kEmpty;

  if (!hasId) {  // a notification: never answered
    if (state == State::Uninitialized && *method != "exit") return out;
    auto it = notifications.find(*method);
    if (it == notifications.end()) return out;
    if (state == State::ShutDown && *method != "exit") return out;
    try {
      (this->*(it->second))(*params);
    } catch (const RpcError&) {
      // Malformed notification parameters: nothing to answer.
    } catch (const std::exception&) {
    }
    if (!options.deferDiagnostics) {
      auto diags = flushDiagnostics();
      out.insert(out.end(), diags.begin(), diags.end());
    }
    return out;
  }

  if (state == State::Uninitialized && *method != "initialize") {
    out.push_back(errorResponse(id, errc::ServerNotInitialized, "the server has not been initialized"));
    return out;
  }
  if (state != State::Uninitialized && *method == "initialize") {
    out.push_back(errorResponse(id, errc::InvalidRequest, "initialize was already received"));
    return out;
  }
  if (state == State::ShutDown) {
    out.push_back(errorResponse(id, errc::InvalidRequest, "the server is shutting down"));
    return out;
  }
  auto it = requests.find(*method);
  if (it == requests.end()) {
    out.push_back(errorResponse(id, errc::MethodNotFound, "unknown method '" + *method + "'"));
    return out;
  }
  if (ahead) {
    if (ahead->cancelledIds.count(dump(id))) {
      out.push_back(errorResponse(id, errc::RequestCancelled, "the request was cancelled"));
      return out;
    }
    auto uri = asString(at(params, {"textDocument", "uri"}));
    if (isDocumentRequest(*method) && uri && ahead->changedUris.count(*uri)) {
      out.push_back(errorResponse(id, errc::ContentModified, "the document changed before the answer was ready"));
      return out;
    }
  }
  struct Retire {
    Impl& impl;
    ~Retire() {
      if (!impl.options.deferDiagnostics) impl.retired.clear();
    }
  } retire{*this};
  try {
    out.push_back(response(id, (this->*(it->second))(*params)));
  } catch (const RpcError& e) {
    out.push_back(errorResponse(id, e.code, e.message));
  } catch (const std::exception& e) {
    out.push_back(errorResponse(id, errc::InternalError, std::string("internal error: ") + e.what()));
  }
  return out;
}

// ---- Lifecycle ------------------------------------------------------------------------------

Json Server::Impl::initialize(const Json& params) {
  const Json* caps = params.get("capabilities");
  if (const Json* encs = at(caps, {"general", "positionEncodings"}); encs && encs->kind == Json::Array)
    for (const Json& e : encs->items)
      if (asString(&e) == std::optional<std::string>("utf-8")) enc = Encoding::Utf8;
  hierarchicalSymbols = asBool(at(caps, {"textDocument", "documentSymbol", "hierarchicalDocumentSymbolSupport"})).value_or(false);
  prepareRename = asBool(at(caps, {"textDocument", "rename", "prepareSupport"})).value_or(false);
  if (const Json* formats = at(caps, {"textDocument", "hover", "contentFormat"}); formats && formats->kind == Json::Array) {
    markdownHover = false;
    for (const Json& f : formats->items)
      if (asString(&f) == std::optional<std::string>("markdown")) markdownHover = true;
  }
  // initializationOptions: {"stdlib": DIR, "includeDirs": [DIR, ...]} (relative to the root).
  std::string rootPath;
  if (auto rootUri = asString(params.get("rootUri")))
    if (auto p = uriToPath(*rootUri)) rootPath = *p;
  auto resolve = [&](const std::string& dir) {
    fs::path p(dir);
    if (p.is_relative() && !rootPath.empty()) p = fs::path(rootPath) / p;
    return absolute(p.string());
  };
  if (const Json* init = params.get("initializationOptions"); init && init->kind == Json::Object) {
    if (auto dir = asString(init->get("stdlib")); dir && !dir->empty()) analysisOptions.stdlibDir = resolve(*dir);
    if (const Json* dirs = init->get("includeDirs"); dirs && dirs->kind == Json::Array)
      for (const Json& d : dirs->items)
        if (auto dir = asString(&d); dir && !dir->empty()) analysisOptions.includeDirs.push_back(resolve(*dir));
  }
  state = State::Running;

  Json sync = jobj();
  set(sync, "openClose", jbool(true));
  set(sync, "change", jint(2));  // incremental
  Json save = jobj();
  set(save, "includeText", jbool(false));
  set(sync, "save", save);

  Json completion = jobj();
  set(completion, "triggerCharacters", jarr({jstr("."), jstr("@")}));
  set(completion, "resolveProvider", jbool(false));
  Json signature = jobj();
  set(signature, "triggerCharacters", jarr({jstr("("), jstr(",")}));
  set(signature, "retriggerCharacters", jarr({jstr(",")}));
  Json legend = jobj();
  Json types = jarr(), modifiers = jarr();
  for (const auto& t : semanticTokenTypes()) push(types, jstr(t));
  for (const auto& m : semanticTokenModifiers()) push(modifiers, jstr(m));
  set(legend, "tokenTypes", types);
  set(legend, "tokenModifiers", modifiers);
  Json tokens = jobj();
  set(tokens, "legend", legend);
  set(tokens, "full", jbool(true));
  set(tokens, "range", jbool(false));
  Json renameProvider = jbool(true);
  if (prepareRename) {
    renameProvider = jobj();
    set(renameProvider, "prepareProvider", jbool(true));
  }

  // Every feature with a registered handler, and nothing else.
  auto has = [&](const char* method) { return requests.count(method) > 0; };
  Json capabilities = jobj();
  set(capabilities, "positionEncoding", jstr(encodingName(enc)));
  set(capabilities, "textDocumentSync", sync);
  if (has("textDocument/hover")) set(capabilities, "hoverProvider", jbool(true));
  if (has("textDocument/definition")) set(capabilities, "definitionProvider", jbool(true));
  if (has("textDocument/references")) set(capabilities, "referencesProvider", jbool(true));
  if (has("textDocument/completion")) set(capabilities, "completionProvider", completion);
  if (has("textDocument/signatureHelp")) set(capabilities, "signatureHelpProvider", signature);
  if (has("textDocument/documentSymbol")) set(capabilities, "documentSymbolProvider", jbool(true));
  if (has("textDocument/semanticTokens/full")) set(capabilities, "semanticTokensProvider", tokens);
  if (has("textDocument/formatting")) set(capabilities, "documentFormattingProvider", jbool(true));
  if (has("textDocument/rename")) set(capabilities, "renameProvider", renameProvider);

  Json info = jobj();
  set(info, "name", jstr("mkdsl"));
  if (!options.version.empty()) set(info, "version", jstr(options.version));
  Json result = jobj();
  set(result, "capabilities", capabilities);
  set(result, "serverInfo", info);
  return result;
}

void Server::Impl::initialized(const Json&) {
  // Read the stdlib's declarations now (completion lists them), which also warms the parser's
  // caches before the first document arrives.
  stdlibEntries();
}

Json Server::Impl::shutdown(const Json&) {
  state = State::ShutDown;
  shutdownReceived = true;
  return jnull();
}

void Server::Impl::exit(const Json&) { exited = true; }

// ---- Documents ------------------------------------------------------------------------------

namespace {
std::string requireUri(const Json& params) {
  auto uri = asString(at(&params, {"textDocument", "uri"}));
  if (!uri || uri->empty()) throw RpcError{errc::InvalidParams, "missing textDocument.uri"};
  return *uri;
}

std::optional<Position> parsePosition(const Json* p) {
  auto line = asInt(at(p, {"line"}));
  auto character = asInt(at(p, {"character"}));
  if (!line || !character || *line < 0 || *character < 0 || *line > UINT32_MAX || *character > UINT32_MAX)
    return std::nullopt;
  return Position{static_cast<uint32_t>(*line), static_cast<uint32_t>(*character)};
}
}  // namespace

void Server::Impl::markChanged(const std::string& path) {
  // The document itself and every open document whose last check read it.
  for (auto& [uri, doc] : docs) {
    if (doc.path == path) dirty.insert(uri);
    auto c = cache.find(uri);
    if (c != cache.end() && c->second.deps.count(path)) dirty.insert(uri);
  }
}

void Server::Impl::didOpen(const Json& params) {
  std::string uri = requireUri(params);
  auto text = asString(at(&params, {"textDocument", "text"}));
  if (!text) throw RpcError{errc::InvalidParams, "missing textDocument.text"};
  int64_t version = asInt(at(&params, {"textDocument", "version"})).value_or(0);
  std::string path = uriToPath(uri).value_or(uri);
  if (auto old = docs.find(uri); old != docs.end()) uriByPath.erase(old->second.path);
  docs.erase(uri);
  docs.emplace(uri, OpenDoc{Document(uri, std::move(*text), version), path, nextStamp++});
  uriByPath[path] = uri;
  markChanged(path);
}

void Server::Impl::didChange(const Json& params) {
  std::string uri = requireUri(params);
  auto it = docs.find(uri);
  if (it == docs.end()) throw RpcError{errc::InvalidParams, "didChange of a document that is not open: " + uri};
  OpenDoc& d = it->second;
  const Json* changes = params.get("contentChanges");
  if (!changes || changes->kind != Json::Array) throw RpcError{errc::InvalidParams, "missing contentChanges"};
  for (const Json& c : changes->items) {
    auto text = asString(c.get("text"));
    if (!text) continue;
    const Json* r = c.get("range");
    if (!r) {
      d.doc.replace(std::move(*text));
      continue;
    }
    auto start = parsePosition(r->get("start"));
    auto end = parsePosition(r->get("end"));
    if (!start || !end) continue;  // a malformed entry: skip it rather than guess
    d.doc.edit(*start, *end, *text, enc);
  }
  if (auto v = asInt(at(&params, {"textDocument", "version"}))) d.doc.setVersion(*v);
  d.stamp = nextStamp++;
  markChanged(d.path);
}

void Server::Impl::didClose(const Json& params) {
  std::string uri = requireUri(params);
  auto it = docs.find(uri);
  if (it == docs.end()) return;
  std::string path = it->second.path;
  uriByPath.erase(path);
  docs.erase(it);
  cache.erase(uri);
  dirty.erase(uri);
  markChanged(path);  // documents that imported it now read the file on disk
  // Clear what was published for it.
  Json p = jobj();
  set(p, "uri", jstr(uri));
  set(p, "diagnostics", jarr());
  pendingClears.push_back(notification("textDocument/publishDiagnostics", p));
}

void Server::Impl::didSave(const Json&) {
  ++diskEpoch;
  for (const auto& [uri, _] : docs) dirty.insert(uri);
}

void Server::Impl::didChangeWatchedFiles(const Json&) {
  ++diskEpoch;
  for (const auto& [uri, _] : docs) dirty.insert(uri);
}

OpenDoc& Server::Impl::requireDoc(const Json& params) {
  std::string uri = requireUri(params);
  auto it = docs.find(uri);
  if (it == docs.end()) throw RpcError{errc::InvalidParams, "the document is not open: " + uri};
  return it->second;
}

Position Server::Impl::requirePosition(const Json& params, const OpenDoc& doc) {
  auto p = parsePosition(params.get("position"));
  if (!p) throw RpcError{errc::InvalidParams, "missing or malformed position"};
  if (p->line >= doc.doc.lines().lineCount())
    throw RpcError{errc::InvalidParams, "position " + std::to_string(p->line) + ":" + std::to_string(p->character) +
                                            " is past the end of the document (" +
                                            std::to_string(doc.doc.lines().lineCount()) + " lines)"};
  return *p;  // a character past the end of its line means the line's end
}

Server::Impl::At Server::Impl::requireAt(const Json& params) {
  OpenDoc& doc = requireDoc(params);
  const Position pos = requirePosition(params, doc);
  const uint32_t offset = doc.doc.offset(pos, enc);
  return {doc, analysisFor(doc), pos, offset};
}

const Analysis& Server::Impl::analysisFor(const OpenDoc& doc) {
  CachedAnalysis& c = cache[doc.doc.uri()];
  auto stampOf = [&](const std::string& path) -> uint64_t {
    auto u = uriByPath.find(path);
    if (u == uriByPath.end()) return 0;
    return docs.at(u->second).stamp;
  };
  bool fresh = c.analysis && c.stamp == doc.stamp && c.diskEpoch == diskEpoch &&
               std::all_of(c.deps.begin(), c.deps.end(), [&](const auto& d) { return stampOf(d.first) == d.second; });
  if (fresh) return *c.analysis;
  std::vector<std::pair<std::string, const std::string*>> open;
  for (const auto& [uri, d] : docs)
    if (uri != doc.doc.uri()) open.push_back({d.path, &d.doc.text()});
  // The analysis it replaces is freed later, when the server is idle: a large document's tree
  // takes milliseconds to free, and the request waiting for this analysis should not.
  if (c.analysis) retired.push_back(std::move(c.analysis));
  c.analysis = std::make_unique<Analysis>(doc.path, doc.doc.text(), open, analysisOptions);
  ++analysesRun;
  c.stamp = doc.stamp;
  c.diskEpoch = diskEpoch;
  c.deps.clear();
  for (const std::string& p : c.analysis->dependencies()) c.deps[p] = stampOf(p);
  return *c.analysis;
}

// ---- Diagnostics ----------------------------------------------------------------------------

Json Server::Impl::publishDiagnostics(const OpenDoc& doc) {
  const Analysis& a = analysisFor(doc);
  const Module* root = a.rootModule();
  // The import of the document that (directly or not) loaded each module, for errors elsewhere.
  std::map<FileId, const ast::ImportDecl*> via;
  if (root && root->ast) {
    for (const auto& d : root->ast->decls) {
      auto* imp = ast::as<ast::ImportDecl>(d.get());
      if (!imp) continue;
      auto target = a.index().imports.find(SemanticIndex::key(imp->range));
      if (target == a.index().imports.end()) continue;
      std::vector<const Module*> stack{a.module(target->second)};
      while (!stack.empty()) {
        const Module* m = stack.back();
        stack.pop_back();
        if (!m || !m->ast || via.count(m->ast->file)) continue;
        via[m->ast->file] = imp;
        for (const Module* sub : m->imports) stack.push_back(sub);
      }
    }
  }
  Json list = jarr();
  for (const Diagnostic& d : a.diags.diagnostics()) {
    Json item = jobj();
    std::string message = d.message;
    Json related = jarr();
    SourceRange where = d.range;
    if (!d.range.valid()) {
      where = SourceRange{a.root, 0, 0};
    } else if (d.range.file != a.root) {
      // An error in an imported module: shown on the import that brought it in, pointing there.
      auto v = via.find(d.range.file);
      const SourceFile& f = a.sources.file(d.range.file);
      LineCol lc = f.lineCol(d.range.begin);
      const Module* m = a.module(d.range.file);
      message = "in module '" + (m ? m->name : f.path()) + "' (" + fs::path(f.path()).filename().string() + ":" +
                std::to_string(lc.line) + ":" + std::to_string(lc.col) + "): " + message;
      Json info = jobj();
      set(info, "location", location(a, d.range));
      set(info, "message", jstr(d.message));
      push(related, info);
      where = v != via.end() ? v->second->range : SourceRange{a.root, 0, 0};
    }
    for (const DiagnosticNote& n : d.notes) {
      if (!n.range.valid()) continue;
      Json info = jobj();
      set(info, "location", location(a, n.range));
      set(info, "message", jstr(n.message));
      push(related, info);
    }
    set(item, "range", range(a, where));
    set(item, "severity", jint(d.severity == Severity::Error ? 1 : d.severity == Severity::Warning ? 2 : 3));
    if (!diagCode(d.kind).empty()) set(item, "code", jstr(std::string(diagCode(d.kind))));
    set(item, "source", jstr("mkdsl"));
    set(item, "message", jstr(message));
    if (!related.items.empty()) set(item, "relatedInformation", related);
    push(list, item);
  }
  Json p = jobj();
  set(p, "uri", jstr(doc.doc.uri()));
  set(p, "version", jint(doc.doc.version()));
  set(p, "diagnostics", list);
  return p;
}

std::vector<std::string> Server::Impl::flushDiagnostics() {
  retired.clear();
  std::vector<std::string> out = std::move(pendingClears);
  pendingClears.clear();
  std::set<std::string> due = std::move(dirty);
  dirty.clear();
  for (const std::string& uri : due) {
    auto it = docs.find(uri);
    if (it == docs.end()) continue;
    try {
      out.push_back(notification("textDocument/publishDiagnostics", publishDiagnostics(it->second)));
    } catch (const std::exception&) {
      // A check that failed internally publishes nothing rather than taking the server down.
    }
  }
  return out;
}

// ---- Conversions ----------------------------------------------------------------------------

Json Server::Impl::position(Position p) const {
  Json j = jobj();
  set(j, "line", jint(p.line));
  set(j, "character", jint(p.character));
  return j;
}

Json Server::Impl::range(const Analysis& a, SourceRange r) const {
  Json j = jobj();
  if (!r.valid()) {
    set(j, "start", position({}));
    set(j, "end", position({}));
    return j;
  }
  const LineIndex& lines = a.lines(r.file);
  std::string_view text = a.text(r.file);
  set(j, "start", position(lines.position(text, r.begin, enc)));
  set(j, "end", position(lines.position(text, std::max(r.begin, r.end), enc)));
  return j;
}

Json Server::Impl::location(const Analysis& a, SourceRange r) const {
  Json j = jobj();
  set(j, "uri", jstr(uriOf(a, r.valid() ? r.file : a.root)));
  set(j, "range", range(a, r));
  return j;
}

std::string Server::Impl::uriOf(const Analysis& a, FileId file) const {
  const std::string& path = a.path(file);
  if (auto it = uriByPath.find(path); it != uriByPath.end()) return it->second;
  if (!path.empty() && path[0] != '/') return path;  // not a file: the URI itself
  return pathToUri(path);
}

bool Server::Impl::inStdlib(const std::string& path) const {
  const std::string& dir = analysisOptions.stdlibDir;
  if (dir.empty()) return false;
  std::string prefix = dir.back() == '/' ? dir : dir + "/";
  return path.rfind(prefix, 0) == 0;
}

// ---- stdio ----------------------------------------------------------------------------------

namespace {
// What runServer needs to know of a message waiting in its queue.
struct Queued {
  std::string body;
  std::string method;
  std::string id;   // the JSON text of the id, for $/cancelRequest matching
  std::string uri;  // textDocument.uri
  std::string cancels;  // $/cancelRequest: the id it names
  bool framingError = false;
};

Queued summarize(std::string body) {
  Queued q;
  try {
    Json m = abi::parseJson(body);
    q.method = asString(m.get("method")).value_or("");
    if (const Json* id = m.get("id")) q.id = dump(*id);
    q.uri = asString(at(&m, {"params", "textDocument", "uri"})).value_or("");
    if (q.method == "$/cancelRequest")
      if (const Json* id = at(&m, {"params", "id"})) q.cancels = dump(*id);
  } catch (const std::exception&) {
  }
  q.body = std::move(body);
  return q;
}
}  // namespace

int runServer(std::istream& in, std::ostream& out, const ServerOptions& options) {
  ServerOptions o = options;
  o.deferDiagnostics = true;
  Server server(o);
  std::deque<Queued> queue;
  bool ended = false;
  constexpr size_t kMaxQueued = 1000;
  auto readOne = [&]() {
    ReadResult r = readMessage(in);
    if (r.status == ReadResult::End) {
      ended = true;
    } else if (r.status == ReadResult::BadHeader) {
      Queued q;
      q.framingError = true;
      q.body = r.error;
      queue.push_back(std::move(q));
    } else {
      queue.push_back(summarize(std::move(r.body)));
    }
  };
  auto send = [&](const std::vector<std::string>& messages) {
    for (const std::string& m : messages) writeMessage(out, m);
    return static_cast<bool>(out);
  };
  while (!server.exited()) {
    if (queue.empty()) {
      if (ended) break;
      // Nothing waiting: the moment to publish what the last edits changed.
      if (!send(server.idle())) break;
      readOne();
      continue;
    }
    // Read ahead what has already arrived, so cancellations and later edits are known.
    while (!ended && queue.size() < kMaxQueued && in.rdbuf()->in_avail() > 0) readOne();
    Queued q = std::move(queue.front());
    queue.pop_front();
    if (q.framingError) {
      if (!send({Server::framingError(q.body)})) break;
      continue;
    }
    Lookahead ahead;
    for (const Queued& later : queue) {
      if (!later.cancels.empty()) ahead.cancelledIds.insert(later.cancels);
      if (later.method == "textDocument/didChange" && !later.uri.empty()) ahead.changedUris.insert(later.uri);
    }
    if (!send(server.handle(q.body, &ahead))) break;
  }
  return server.exitCode();
}

}  // namespace mk::lsp
