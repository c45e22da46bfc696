// The compiler library (compiler/compile.h): source text to PTX and metadata in-process, the GPU
// a --target implies, and the errors it reports before doing any work (unknown GPU, unknown
// architecture, a GPU that cannot run the architecture's code).
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
  CHECK(out->kernel().target.sms == 4);
  CHECK(out->kernel().target.arch == "sm_90a");
  CHECK(out->artifact.launch().arch == "sm_90a");
  CHECK(out->artifact.assembly.find(out->artifact.launch().entry) != std::string::npos);
  CHECK(out->metadataJson == backend::metadataJson(out->steps, out->artifact.launches));
  CHECK(out->metadataJson.find("\"program\": \"llama_tiny.mk\"") != std::string::npos);
}

TEST_CASE("compileSource: --target replaces the GPU's architecture") {
  CompileOptions o = tinyOptions();
  o.gpu = "a100";
  auto a100 = compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o);
  REQUIRE(a100);
  CHECK(a100->artifact.launch().arch == "sm_80");
  o.arch = "sm_90";
  auto sm90 = compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o);
  REQUIRE(sm90);
  CHECK(sm90->kernel().target.name == "a100");
  CHECK(sm90->kernel().target.arch == "sm_90");
  CHECK(sm90->artifact.launch().arch == "sm_90");
}

TEST_CASE("compileSource: an AMDGPU --target implies its GPU, and --gpu must run its code") {
  CompileOptions o = tinyOptions();
  o.sms.reset();
  o.arch = "gfx942";
  auto mi300 = compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o);
  REQUIRE(mi300);
  CHECK(mi300->kernel().target.name == "mi300x");
  CHECK(mi300->artifact.launch().grid == 304);
  CHECK(mi300->metadataJson.find("\"target\": \"mi300x\",\n  \"arch\": \"gfx942\"") != std::string::npos);
  o.arch = "gfx90a";
  auto mi250 = compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o);
  REQUIRE(mi250);
  CHECK(mi250->kernel().target.name == "mi250x");
  CHECK(mi250->artifact.launch().grid == 110);  // one GCD
  // NVPTX architectures keep the h200 default.
  o.arch = "sm_80";
  std::string why;
  auto nv = resolveTarget(o, why);
  REQUIRE(nv);
  CHECK(nv->name == "h200");
  CHECK(nv->arch == "sm_80");
  // --gpu mi300x alone builds for its gfx942.
  o.arch.clear();
  o.gpu = "mi300x";
  REQUIRE(resolveTarget(o, why));
  CHECK(resolveTarget(o, why)->arch == "gfx942");

  std::string diags;
  SUBCASE("an NVIDIA GPU for AMDGPU code") {
    o.gpu = "h200";
    o.arch = "gfx942";
    CHECK_FALSE(compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o, &diags));
    CHECK(diags == "mkdsl: error: GPU 'h200' (sm_90a) cannot run gfx942 code; gfx942 code runs on mi300x [E0909]\n");
  }
  SUBCASE("an AMD GPU of another ISA") {
    o.gpu = "mi250x";
    o.arch = "gfx942";
    CHECK_FALSE(compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o, &diags));
    CHECK(diags.find("GPU 'mi250x' (gfx90a) cannot run gfx942 code; gfx942 code runs on mi300x") != std::string::npos);
  }
  SUBCASE("an AMD GPU for PTX") {
    o.gpu = "mi300x";
    o.arch = "sm_90a";
    CHECK_FALSE(resolveTarget(o, why));
    CHECK(why == "GPU 'mi300x' (gfx942) cannot run sm_90a code; sm_90a code runs on h200, h100, a100");
  }
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
    CHECK(diags == "mkdsl: error: unknown GPU 'v100'; known: h200, h100, a100, mi300x, mi250x [E0905]\n");
  }
  SUBCASE("an unknown architecture") {
    CompileOptions o = tinyOptions();
    o.arch = "sm_75";
    CHECK_FALSE(compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o, &diags));
    CHECK(diags.find("unknown target architecture 'sm_75'; known: sm_90a, sm_90, sm_80, gfx942, gfx90a") !=
          std::string::npos);
  }
  CHECK(archError("sm_90a") == std::nullopt);
  CHECK(archError("gfx942") == std::nullopt);
  CHECK(archError("gfx1100"));
}
