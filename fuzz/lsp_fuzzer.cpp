// libFuzzer entry for the language server: the input is a session in the transcript format of
// tests/lsp (lines starting with `-->` are client messages; `${root}` and `${text:PATH}` are
// expanded as the transcript runner does, PATH relative to tests/lsp), so the transcripts are the
// seed corpus and their mutations are new sessions. Each message goes through lsp::Server::handle,
// then the whole session once more, framed, through runServer (read-ahead, cancellation). An input
// without `-->` lines is fed to runServer as raw bytes, to fuzz the framing.
//
// Besides crashes, sanitizer reports, hangs and runaway memory, these are bugs: an answer that is
// not a JSON-RPC 2.0 object; an answer to a notification; a request answered other than exactly
// once, with its id; anything sent after `exit`. Built only with -DMK_FUZZ=ON (clang);
// scripts/test.sh runs it:
//
//   build-fuzz/fuzz/mk_fuzz_lsp -dict=fuzz/lsp.dict CORPUS_DIR tests/lsp/*.transcript
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "lsp/document.h"
#include "lsp/json.h"
#include "lsp/server.h"
#include "lsp/transport.h"

namespace {

using mk::lsp::Json;

const std::string kRoot = MK_SOURCE_DIR;

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// The contents of tests/lsp/PATH as a JSON string, read once.
const std::string& fileText(const std::string& rel) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(rel);
  if (it != cache.end()) return it->second;
  std::string text;
  if (rel.find("..") == std::string::npos) {
    std::ifstream in(kRoot + "/tests/lsp/" + rel, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  return cache[rel] = mk::lsp::dump(mk::lsp::jstr(text));
}

std::vector<std::string> clientMessages(const std::string& input) {
  std::vector<std::string> out;
  std::istringstream in(input);
  std::string line;
  bool inMessage = false;
  while (std::getline(in, line)) {
    if (line.rfind("-->", 0) == 0) {
      out.push_back(line.substr(3));
      inMessage = true;
    } else if (line.rfind("<--", 0) == 0 || line.rfind("#", 0) == 0 || line.empty()) {
      inMessage = false;
    } else if (inMessage) {
      out.back() += "\n" + line;
    }
  }
  for (std::string& m : out) {
    m = replaceAll(m, "file://${root}", mk::lsp::pathToUri(kRoot));
    m = replaceAll(m, "${root}", kRoot);
    for (size_t at = m.find("${text:"); at != std::string::npos; at = m.find("${text:", at)) {
      size_t close = m.find('}', at);
      if (close == std::string::npos) break;
      const std::string& t = fileText(m.substr(at + 7, close - at - 7));
      m.replace(at, close + 1 - at, t);
      at += t.size();
    }
  }
  return out;
}

mk::lsp::ServerOptions options() {
  mk::lsp::ServerOptions o;
  o.stdlibDir = kRoot + "/stdlib";
  o.includeDirs = {kRoot + "/tests/lsp/inputs/modules"};
  return o;
}

// Every answer must be a JSON-RPC 2.0 object.
Json checkedJson(const std::string& text) {
  Json j;
  try {
    j = mk::abi::parseJson(text);
  } catch (const std::exception&) {
    __builtin_trap();
  }
  if (j.kind != Json::Object) __builtin_trap();
  const Json* v = j.get("jsonrpc");
  if (!v || v->kind != Json::String || v->text != "2.0") __builtin_trap();
  return j;
}

void runSession(const std::vector<std::string>& messages) {
  mk::lsp::Server server(options());
  for (const std::string& m : messages) {
    bool exited = server.exited();
    std::vector<std::string> out = server.handle(m);
    if (exited && !out.empty()) __builtin_trap();  // nothing after exit
    std::vector<Json> answers;
    for (const std::string& o : out) {
      Json j = checkedJson(o);
      if (j.get("id")) answers.push_back(std::move(j));
    }
    if (exited) continue;
    // What the message was: not JSON (one ParseError), a notification (no answer), a request
    // with a valid id (one answer, with that id), or something else (at most one answer).
    Json in;
    try {
      in = mk::abi::parseJson(m);
    } catch (const std::exception&) {
      if (answers.size() != 1) __builtin_trap();
      continue;
    }
    if (in.kind == Json::Object && !in.get("id")) {
      if (!answers.empty()) __builtin_trap();
      continue;
    }
    const Json* id = in.kind == Json::Object ? in.get("id") : nullptr;
    bool request = id && in.get("method") && (id->kind == Json::String || (id->kind == Json::Number && mk::abi::jsonInt64(*id)));
    if (request) {
      if (answers.size() != 1 || mk::lsp::dump(*answers[0].get("id")) != mk::lsp::dump(*id)) __builtin_trap();
    } else if (answers.size() > 1) {
      __builtin_trap();
    }
  }
}

void runStream(const std::string& bytes) {
  std::istringstream in(bytes);
  std::ostringstream out;
  mk::lsp::runServer(in, out, options());
  std::istringstream back(out.str());
  for (;;) {
    mk::lsp::ReadResult r = mk::lsp::readMessage(back);
    if (r.status == mk::lsp::ReadResult::End) break;
    if (r.status != mk::lsp::ReadResult::Message) __builtin_trap();  // the server's own framing
    checkedJson(r.body);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> messages = clientMessages(input);
  if (messages.empty()) {
    runStream(input);
    return 0;
  }
  runSession(messages);
  std::string framed;
  for (const std::string& m : messages) framed += mk::lsp::frame(m);
  runStream(framed);
  return 0;
}
