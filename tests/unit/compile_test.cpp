// The compiler library (compiler/compile.h): source text to PTX and metadata in-process, and the
// errors it reports before doing any work (unknown GPU, an architecture without a backend).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "compiler/compile.h"
#include "tiny_llama.h"

using namespace mk;

namespace {

CompileOptions tinyOptions() {
  CompileOptions o;
  o.check.stdlibDir = MK_STDLIB_DIR;
  o.sms = 4;
  return o;
}

}  // namespace

TEST_CASE("compileSource: the tiny Llama to PTX and metadata") {
  std::string diags;
  auto out = compileSource("llama_tiny.mk", testing::tinyLlamaSource(), tinyOptions(), &diags);
  REQUIRE_MESSAGE(out, diags);
  CHECK(diags.empty());
  CHECK(out->kernel.target.sms == 4);
  CHECK(out->kernel.target.arch == "sm_90a");
  CHECK(out->artifact.launch.arch == "sm_90a");
  CHECK(out->artifact.assembly.find(out->artifact.launch.entry) != std::string::npos);
  CHECK(out->metadataJson == backend::metadataJson(out->kernel, out->artifact.launch));
  CHECK(out->metadataJson.find("\"program\": \"llama_tiny.mk\"") != std::string::npos);
}

TEST_CASE("compileSource: --target replaces the GPU's architecture") {
  CompileOptions o = tinyOptions();
  o.gpu = "a100";
  auto a100 = compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o);
  REQUIRE(a100);
  CHECK(a100->artifact.launch.arch == "sm_80");
  o.arch = "sm_90";
  auto sm90 = compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o);
  REQUIRE(sm90);
  CHECK(sm90->kernel.target.name == "a100");
  CHECK(sm90->kernel.target.arch == "sm_90");
  CHECK(sm90->artifact.launch.arch == "sm_90");
}

TEST_CASE("compileSource: errors") {
  std::string diags;
  SUBCASE("in the program") {
    CHECK_FALSE(compileSource("bad.mk", "const a = b;\n", tinyOptions(), &diags));
    CHECK(diags.find("bad.mk:1:11: error: unknown name 'b'") != std::string::npos);
  }
  SUBCASE("an unknown GPU") {
    CompileOptions o = tinyOptions();
    o.gpu = "v100";
    CHECK_FALSE(compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o, &diags));
    CHECK(diags == "mkdsl: error: unknown GPU 'v100'; known: h200, h100, a100, mi300x [E0905]\n");
  }
  SUBCASE("the AMDGPU backend does not exist yet") {
    CompileOptions o = tinyOptions();
    o.gpu = "mi300x";
    CHECK_FALSE(compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o, &diags));
    CHECK(diags.find("target architecture 'gfx942' needs the AMDGPU backend") != std::string::npos);
    CHECK(diags.find("[E0906]") != std::string::npos);
    // Scheduling needs no backend: the MI300X schedule still builds.
    SourceManager sm;
    DiagnosticEngine engine(sm);
    CHECK(scheduleProgram(sm, engine, sm.add("llama_tiny.mk", testing::tinyLlamaSource()), o));
  }
  SUBCASE("an unknown architecture") {
    CompileOptions o = tinyOptions();
    o.arch = "sm_75";
    CHECK_FALSE(compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o, &diags));
    CHECK(diags.find("unknown target architecture 'sm_75'; known: sm_90a, sm_90, sm_80") != std::string::npos);
  }
  CHECK(archError("sm_90a") == std::nullopt);
}
