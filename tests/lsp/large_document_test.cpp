// The language server on a large document: a generated valid program of 5,000 lines is opened and
// hovered (the hover checks it first), edited and hovered again (re-checked), and hovered once
// more unchanged (the analysis reused). Behaviour only: how long each hover takes is a benchmark
// figure (bench/lsp/hover_latency.cpp, recorded in docs/lsp.md), not a test limit.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/lsp/large_document.h"

using namespace mk::lsp;
using namespace mk::lsp::testing;

namespace {

// The hover answers once, with the op's signature.
void checkHover(LargeDocumentSession& s) {
  const std::vector<std::string> answer = s.hover();
  REQUIRE(answer.size() == 1);
  const Json j = mk::abi::parseJson(answer[0]);
  REQUIRE(j.get("result"));
  CHECK(j.get("result")->get("contents")->get("value")->text.find(kHoverSignature) != std::string::npos);
}

}  // namespace

TEST_CASE("lsp large document: 5,000 lines hovered after open, after edits and unchanged") {
  const std::string text = generatedProgram(5000);
  REQUIRE(std::count(text.begin(), text.end(), '\n') >= 5000);
  REQUIRE(hoverLineOf(text) != UINT32_MAX);
  LargeDocumentSession s(MK_STDLIB_DIR);
  s.open(text);
  CHECK(s.server().analysesRun() == 0);  // deferred: nothing checked it yet
  checkHover(s);
  CHECK(s.server().analysesRun() == 1);  // the hover checked it
  const std::vector<std::string> published = s.server().idle();
  REQUIRE(published.size() == 1);
  CHECK(mk::abi::parseJson(published[0]).get("params")->get("diagnostics")->items.empty());  // valid program
  CHECK(s.server().analysesRun() == 1);  // the diagnostics came from the hover's analysis
  for (int round = 0; round < 3; ++round) {
    s.edit();
    const size_t before = s.server().analysesRun();
    checkHover(s);
    CHECK(s.server().analysesRun() == before + 1);  // an edit: re-checked before answering
    s.server().idle();
  }
  const size_t before = s.server().analysesRun();
  checkHover(s);
  CHECK(s.server().analysesRun() == before);  // unchanged: the analysis is reused
}
