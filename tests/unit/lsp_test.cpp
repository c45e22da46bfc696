// The language server's pieces: Content-Length framing, positions in UTF-8/UTF-16/UTF-32,
// incremental edits, URIs, the JSON writer, and the server loop over streams (read-ahead,
// cancellation, the exit code). The protocol itself is covered by tests/lsp/*.transcript.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lsp/document.h"
#include "lsp/json.h"
#include "lsp/server.h"
#include "lsp/transport.h"

using namespace mk::lsp;

namespace {

// The bodies of every framed message in `s`.
std::vector<std::string> unframe(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (;;) {
    ReadResult r = readMessage(in);
    if (r.status != ReadResult::Message) break;
    out.push_back(r.body);
  }
  return out;
}

std::string request(int id, const std::string& method, const std::string& params = "{}") {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":)" + params + "}";
}
std::string notify(const std::string& method, const std::string& params = "{}") {
  return R"({"jsonrpc":"2.0","method":")" + method + R"(","params":)" + params + "}";
}

Json parse(const std::string& s) { return mk::abi::parseJson(s); }

}  // namespace

TEST_CASE("lsp framing: Content-Length messages, header variants, broken headers, the end") {
  std::string input = frame(R"({"a":1})");
  input += "content-length:   3\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\n[1]";  // LF only, any case
  input += "\r\n\r\n" + frame("{}");                                                            // stray blank lines
  input += "Content-Type: x\r\n\r\n";                                                            // no length
  input += "Content-Length: 12x\r\n\r\n";                                                        // not a number
  input += frame("\"é\"");                                                                       // bytes, not characters
  input += "Content-Length: 10\r\n\r\n{\"a\"";                                                   // truncated
  std::istringstream in(input);
  ReadResult r = readMessage(in);
  CHECK(r.status == ReadResult::Message);
  CHECK(r.body == R"({"a":1})");
  r = readMessage(in);
  CHECK(r.status == ReadResult::Message);
  CHECK(r.body == "[1]");
  r = readMessage(in);
  CHECK(r.status == ReadResult::Message);
  CHECK(r.body == "{}");
  r = readMessage(in);
  CHECK(r.status == ReadResult::BadHeader);
  CHECK(r.error == "the header has no Content-Length");
  r = readMessage(in);
  CHECK(r.status == ReadResult::BadHeader);
  CHECK(r.error.find("not a number") != std::string::npos);
  r = readMessage(in);
  CHECK(r.status == ReadResult::Message);
  CHECK(r.body == "\"é\"");
  r = readMessage(in);
  CHECK(r.status == ReadResult::End);
  CHECK(readMessage(in).status == ReadResult::End);

  std::istringstream huge("Content-Length: 99999999999\r\n\r\n");
  r = readMessage(huge);
  CHECK(r.status == ReadResult::BadHeader);
  CHECK(frame("xyz") == "Content-Length: 3\r\n\r\nxyz");
}

TEST_CASE("lsp positions: UTF-16, UTF-8 and UTF-32 columns, line ends, clamping") {
  // é is 2 bytes (1 UTF-16 unit), 𝔾 4 bytes (2 units, a surrogate pair), then "x".
  std::string text = "ab\r\né𝔾x\rlast\n";
  LineIndex lines(text);
  REQUIRE(lines.lineCount() == 4);  // "ab", "é𝔾x", "last", ""
  uint32_t x = static_cast<uint32_t>(text.find('x'));
  CHECK(lines.position(text, x, Encoding::Utf16) == Position{1, 3});
  CHECK(lines.position(text, x, Encoding::Utf8) == Position{1, 6});
  CHECK(lines.position(text, x, Encoding::Utf32) == Position{1, 2});
  CHECK(lines.offset(text, {1, 3}, Encoding::Utf16) == x);
  CHECK(lines.offset(text, {1, 6}, Encoding::Utf8) == x);
  CHECK(lines.offset(text, {1, 2}, Encoding::Utf32) == x);
  // Inside the surrogate pair, or inside a multi-byte sequence: the character's start.
  uint32_t g = static_cast<uint32_t>(text.find("𝔾"));
  CHECK(lines.offset(text, {1, 2}, Encoding::Utf16) == g);
  CHECK(lines.offset(text, {1, 4}, Encoding::Utf8) == g);
  CHECK(lines.position(text, g + 1, Encoding::Utf16) == Position{1, 1});
  // Past the end of a line: its end (before "\r\n"); past the last line: the end of the text.
  CHECK(lines.offset(text, {0, 99}, Encoding::Utf16) == 2);
  CHECK(lines.offset(text, {9, 0}, Encoding::Utf16) == text.size());
  CHECK(lines.position(text, 3, Encoding::Utf16) == Position{0, 2});  // between \r and \n
  CHECK(lines.position(text, 999, Encoding::Utf16) == Position{3, 0});
  CHECK(lines.contains(text, {2, 4}, Encoding::Utf16));
  CHECK_FALSE(lines.contains(text, {2, 5}, Encoding::Utf16));
  CHECK_FALSE(lines.contains(text, {4, 0}, Encoding::Utf16));
  CHECK(unitLength("é𝔾", Encoding::Utf16) == 3);
  CHECK(unitLength("é𝔾", Encoding::Utf8) == 6);
  CHECK(unitLength("é𝔾", Encoding::Utf32) == 2);
  CHECK(unitLength("\xff", Encoding::Utf16) == 1);  // an invalid byte counts as one unit
}

TEST_CASE("lsp documents: incremental edits in sequence, insertions, deletions, full replacement") {
  Document d("file:///t.mk", "const a = 1;\nconst b = 2;\n", 1);
  d.edit({0, 10}, {0, 11}, "42", Encoding::Utf16);  // 1 -> 42
  CHECK(d.text() == "const a = 42;\nconst b = 2;\n");
  d.edit({1, 0}, {1, 0}, "// x\n", Encoding::Utf16);  // insert a line
  CHECK(d.text() == "const a = 42;\n// x\nconst b = 2;\n");
  d.edit({0, 13}, {2, 0}, "\n", Encoding::Utf16);  // delete across lines
  CHECK(d.text() == "const a = 42;\nconst b = 2;\n");
  d.edit({1, 6}, {1, 7}, "𝔾", Encoding::Utf16);
  CHECK(d.text() == "const a = 42;\nconst 𝔾 = 2;\n");
  d.edit({1, 8}, {1, 8}, "é", Encoding::Utf16);  // after the pair: two units
  CHECK(d.text() == "const a = 42;\nconst 𝔾é = 2;\n");
  d.edit({1, 6}, {1, 12}, "c", Encoding::Utf8);  // the same text in bytes: 𝔾 (4) + é (2)
  CHECK(d.text() == "const a = 42;\nconst c = 2;\n");
  d.edit({5, 0}, {7, 3}, "// end\n", Encoding::Utf16);  // past the end: appended
  CHECK(d.text() == "const a = 42;\nconst c = 2;\n// end\n");
  d.edit({1, 0}, {0, 0}, "", Encoding::Utf16);  // a reversed range still means the same span
  CHECK(d.text() == "const c = 2;\n// end\n");
  d.replace("x");
  CHECK(d.text() == "x");
  CHECK(d.lines().lineCount() == 1);
}

TEST_CASE("lsp URIs: file URIs to paths and back, percent escapes") {
  CHECK(uriToPath("file:///home/u/a%20b/m.mk") == std::optional<std::string>("/home/u/a b/m.mk"));
  CHECK(uriToPath("file://localhost/x/./y/../m.mk") == std::optional<std::string>("/x/m.mk"));
  CHECK(uriToPath("FILE:///m.mk") == std::optional<std::string>("/m.mk"));
  CHECK_FALSE(uriToPath("untitled:Untitled-1").has_value());
  CHECK_FALSE(uriToPath("file://server/share/m.mk").has_value());
  CHECK_FALSE(uriToPath("file:///a%00b").has_value());
  CHECK(pathToUri("/home/u/a b/é.mk") == "file:///home/u/a%20b/%C3%A9.mk");
  CHECK(uriToPath(pathToUri("/home/u/a b/é#1.mk")) == std::optional<std::string>("/home/u/a b/é#1.mk"));
}

TEST_CASE("lsp JSON writer: compact, sorted, pretty, and readers of parameters") {
  Json o = jobj();
  set(o, "b", jint(-3));
  set(o, "a", jarr({jstr("x\n\"y\""), jbool(true), jnull()}));
  set(o, "b", jint(4));  // replaces
  CHECK(dump(o) == R"({"b":4,"a":["x\n\"y\"",true,null]})");
  CHECK(dump(o, true) == R"({"a":["x\n\"y\"",true,null],"b":4})");
  CHECK(dumpPretty(o) == "{\n  \"b\": 4,\n  \"a\": [\"x\\n\\\"y\\\"\", true, null]\n}");
  Json p = parse(R"({"textDocument":{"uri":"file:///x"},"position":{"line":3,"character":1.5}})");
  CHECK(asString(at(&p, {"textDocument", "uri"})) == std::optional<std::string>("file:///x"));
  CHECK(asInt(at(&p, {"position", "line"})) == std::optional<int64_t>(3));
  CHECK_FALSE(asInt(at(&p, {"position", "character"})).has_value());
  CHECK(at(&p, {"position", "line", "deeper"}) == nullptr);
  CHECK(at(&p, {"nothing"}) == nullptr);
}

TEST_CASE("lsp server loop: stdio framing, a broken header, read-ahead cancellation, exit code") {
  std::string input;
  input += frame(request(1, "initialize", R"({"capabilities":{}})"));
  input += frame(notify("initialized"));
  input += "Content-Type: nothing\r\n\r\n";  // no Content-Length: ParseError, then carry on
  input += frame(notify("textDocument/didOpen",
                        R"({"textDocument":{"uri":"file:///tmp/lsp-unit.mk","languageId":"mk","version":1,"text":"const a = b;\n"}})"));
  // Request 2 is cancelled by a message already waiting behind it.
  input += frame(request(2, "textDocument/documentSymbol", R"({"textDocument":{"uri":"file:///tmp/lsp-unit.mk"}})"));
  input += frame(notify("$/cancelRequest", R"({"id":2})"));
  // Request 3 is about a document that a waiting didChange edits.
  input += frame(request(3, "textDocument/documentSymbol", R"({"textDocument":{"uri":"file:///tmp/lsp-unit.mk"}})"));
  input += frame(notify("textDocument/didChange",
                        R"({"textDocument":{"uri":"file:///tmp/lsp-unit.mk","version":2},"contentChanges":[{"text":"const a = 1;\n"}]})"));
  input += frame(request(4, "shutdown"));
  input += frame(notify("exit"));
  input += frame(request(5, "shutdown"));  // after exit: never read
  std::istringstream in(input);
  std::ostringstream out;
  CHECK(runServer(in, out, {}) == 0);
  std::vector<std::string> got = unframe(out.str());
  std::vector<std::string> ids;
  for (const std::string& m : got) {
    Json j = parse(m);
    if (const Json* id = j.get("id")) ids.push_back(dump(*id));
  }
  // The stringstream is all "available", so the loop read everything ahead: 2 and 3 are never
  // worked on, and the diagnostics of the edit come when the input runs dry (here: never before
  // exit, so none at all).
  REQUIRE(ids == std::vector<std::string>{"1", "null", "2", "3", "4"});
  CHECK(parse(got[1]).get("error")->get("code")->text == "-32700");
  CHECK(parse(got[2]).get("error")->get("code")->text == "-32800");
  CHECK(parse(got[3]).get("error")->get("code")->text == "-32801");

  // Without shutdown, exit (or the end of the input) gives 1.
  std::istringstream noShutdown(frame(request(1, "initialize", R"({"capabilities":{}})")) + frame(notify("exit")));
  std::ostringstream ignored;
  CHECK(runServer(noShutdown, ignored, {}) == 1);
  std::istringstream ends(frame(request(1, "initialize", R"({"capabilities":{}})")));
  CHECK(runServer(ends, ignored, {}) == 1);
}

TEST_CASE("lsp server: diagnostics wait for idle() with deferDiagnostics, and analyses are cached") {
  ServerOptions options;
  options.deferDiagnostics = true;
  Server s(options);
  s.handle(request(1, "initialize", R"({"capabilities":{}})"));
  CHECK(s.handle(notify("textDocument/didOpen",
                        R"({"textDocument":{"uri":"file:///tmp/lsp-unit2.mk","languageId":"mk","version":1,"text":"const a = b;\n"}})"))
            .empty());
  for (int v = 2; v < 12; ++v)  // rapid edits: nothing checked yet
    CHECK(s.handle(notify("textDocument/didChange", R"({"textDocument":{"uri":"file:///tmp/lsp-unit2.mk","version":)" +
                                                        std::to_string(v) +
                                                        R"(},"contentChanges":[{"range":{"start":{"line":0,"character":10},"end":{"line":0,"character":11}},"text":"c"}]})"))
              .empty());
  CHECK(s.analysesRun() == 0);
  std::vector<std::string> published = s.idle();
  REQUIRE(published.size() == 1);
  Json p = parse(published[0]);
  CHECK(p.get("params")->get("version")->text == "11");
  CHECK(p.get("params")->get("diagnostics")->items.size() == 1);
  CHECK(s.analysesRun() == 1);
  CHECK(s.idle().empty());
  // Requests on the unchanged document reuse the analysis.
  for (int id = 2; id < 5; ++id)
    s.handle(request(id, "textDocument/documentSymbol", R"({"textDocument":{"uri":"file:///tmp/lsp-unit2.mk"}})"));
  CHECK(s.analysesRun() == 1);
}

TEST_CASE("lsp server: a message that is not UTF-8 is not JSON, so its id is never echoed altered") {
  Server s(ServerOptions{});
  // The id could not be sent back as it came: JSON output is UTF-8.
  std::vector<std::string> out = s.handle("{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\",\"method\":\"shutdown\"}");
  REQUIRE(out.size() == 1);
  CHECK(out[0] == R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"invalid JSON at byte 24: invalid UTF-8 in string"}})");
  out = s.handle("{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\xa9\",\"method\":\"shutdown\"}");
  REQUIRE(out.size() == 1);
  CHECK(parse(out[0]).get("id")->text == "\xc3\xa9");
}

TEST_CASE("lsp server: every position of the test inputs, every request: an answer, never an internal error") {
  ServerOptions options;
  options.stdlibDir = MK_STDLIB_DIR;
  options.includeDirs = {std::string(MK_SOURCE_DIR) + "/tests/lsp/inputs/modules"};
  Server s(options);
  s.handle(request(1, "initialize", R"({"capabilities":{"general":{"positionEncodings":["utf-8"]}}})"));
  int id = 2;
  for (const char* name : {"model.mk", "incomplete.mk", "broken.mk", "syntax.mk", "imports.mk", "unformatted.mk"}) {
    std::string path = std::string(MK_SOURCE_DIR) + "/tests/lsp/inputs/" + name;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    REQUIRE(!text.empty());
    std::string uri = pathToUri(path);
    s.handle(notify("textDocument/didOpen", R"({"textDocument":{"uri":")" + uri + R"(","languageId":"mk","version":1,"text":)" +
                                                dump(jstr(text)) + "}}"));
    LineIndex lines(text);
    for (uint32_t line = 0; line < lines.lineCount(); ++line) {
      auto [b, e] = lines.lineBytes(text, line);
      for (uint32_t col = 0; col <= e - b + 1; ++col) {
        std::string at = R"({"textDocument":{"uri":")" + uri + R"("},"position":{"line":)" + std::to_string(line) +
                         R"(,"character":)" + std::to_string(col) + "}";
        for (const char* method : {"textDocument/hover", "textDocument/definition", "textDocument/completion",
                                   "textDocument/signatureHelp", "textDocument/prepareRename"}) {
          std::vector<std::string> out = s.handle(request(id++, method, at + "}"));
          REQUIRE(out.size() == 1);
          Json j = parse(out[0]);
          if (const Json* err = j.get("error")) {
            INFO(method << " at " << name << ":" << line << ":" << col << ": " << out[0]);
            CHECK(err->get("code")->text != "-32603");
          }
        }
        std::vector<std::string> out =
            s.handle(request(id++, "textDocument/references", at + R"(,"context":{"includeDeclaration":true}})"));
        REQUIRE(out.size() == 1);
        CHECK(parse(out[0]).get("result"));
      }
    }
    for (const char* method : {"textDocument/semanticTokens/full", "textDocument/documentSymbol", "textDocument/formatting"}) {
      std::vector<std::string> out = s.handle(request(id++, method, R"({"textDocument":{"uri":")" + uri + R"("}})"));
      REQUIRE(out.size() == 1);
      CHECK(parse(out[0]).get("result"));
    }
  }
}
