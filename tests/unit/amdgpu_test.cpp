// AMDGPU code objects (compiler/amdgpu.h): the resource report from the code object metadata,
// the real kernel's resources, and linking with ld.lld where it is installed. The backend's
// AMDGPU decisions are in backend_test.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "compiler/amdgpu.h"
#include "compiler/compile.h"
#include "scoped_env.h"
#include "tiny_llama.h"

using namespace mk;

namespace {

std::optional<CompileOutput> tinyFor(const std::string& arch, std::string* diags) {
  CompileOptions o;
  o.check.stdlibDir = MK_STDLIB_DIR;
  o.arch = arch;
  return compileSource("llama_tiny.mk", testing::tinyLlamaSource(), o, diags);
}

}  // namespace

TEST_CASE("amdgpu: the resources of the code object metadata") {
  // The .amdgpu_metadata of LLVM 19's gfx942 assembly for a small kernel, arguments shortened.
  const char* sample = R"(	.section	".note.GNU-stack","",@progbits
	.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     4
    .args:
      - .address_space:  global
        .name:           weights
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 256
    .kernarg_segment_align: 8
    .kernarg_segment_size: 64
    .max_flat_workgroup_size: 512
    .name:           mk_step
    .private_segment_fixed_size: 16
    .sgpr_count:     60
    .sgpr_spill_count: 1
    .symbol:         mk_step.kd
    .uses_dynamic_stack: false
    .vgpr_count:     21
    .vgpr_spill_count: 2
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
)";
  auto ks = amdgpu::parseResources(sample);
  REQUIRE(ks.size() == 1);
  const amdgpu::KernelResources& k = ks[0];
  CHECK(k.name == "mk_step");  // not the argument's .name
  CHECK(k.vgprs == 21);
  CHECK(k.agprs == 4);
  CHECK(k.sgprs == 60);
  CHECK(k.vgprSpills == 2);
  CHECK(k.sgprSpills == 1);
  CHECK(k.groupSegmentBytes == 256);
  CHECK(k.privateSegmentBytes == 16);
  CHECK(k.wavefrontSize == 64);
  CHECK(k.maxFlatWorkgroupSize == 512);
  CHECK(amdgpu::summary(k) ==
        "mk_step: 21 VGPRs, 4 AGPRs, 60 SGPRs, 256 bytes static LDS, 16 bytes scratch, 2 VGPR and 1 SGPR spills");
  CHECK(amdgpu::parseResources("").empty());
  CHECK(amdgpu::parseResources("\t.text\n\ts_endpgm\n").empty());
}

TEST_CASE("amdgpu: the tiny Llama's resources: no scratch, registers for two waves per SIMD") {
  std::string diags;
  auto out = tinyFor("gfx90a", &diags);
  REQUIRE_MESSAGE(out, diags);
  auto ks = amdgpu::parseResources(out->artifact.assembly);
  // One kernel per step: decode, prefill, prefill_logits.
  REQUIRE(ks.size() == 3);
  std::vector<std::string> names;
  for (const auto& k : ks) {
    CAPTURE(k.name);
    names.push_back(k.name);
    CHECK(k.privateSegmentBytes == 0);
    CHECK(k.vgprSpills == 0);
    CHECK(k.sgprSpills == 0);
    CHECK(k.vgprs > 0);
    CHECK(k.vgprs + k.agprs <= 256);
    CHECK(k.wavefrontSize == 64);
    CHECK(k.maxFlatWorkgroupSize == 512);
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"mk_step", "mk_step_prefill", "mk_step_prefill_logits"});
}

TEST_CASE("amdgpu: findLld honours $MKDSL_LLD") {
  testing::ScopedEnv env("MKDSL_LLD", "/nonexistent/ld.lld");
  std::string why;
  CHECK_FALSE(amdgpu::findLld(&why));
  CHECK(why == "$MKDSL_LLD is '/nonexistent/ld.lld', which is not an executable file");
}

TEST_CASE("amdgpu: link a kernel into a code object (when ld.lld is installed)") {
  std::string why;
  auto lld = amdgpu::findLld(&why);
  if (!lld) {
    MESSAGE("skipped: " << why);
    return;
  }
  std::string diags;
  auto out = tinyFor("gfx942", &diags);
  REQUIRE_MESSAGE(out, diags);
  amdgpu::LinkResult r = amdgpu::link(*lld, out->artifact.object);
  REQUIRE_MESSAGE(r.ok, r.error);
  const std::string& co = r.codeObject;
  REQUIRE(co.size() > 64);
  CHECK(co.compare(0, 4, "\x7f" "ELF") == 0);
  CHECK(co[16] == 3);  // ET_DYN: a loadable code object
  CHECK(uint8_t(co[18]) == 224);  // EM_AMDGPU
  CHECK(uint8_t(co[48]) == 0x4c);  // EF_AMDGPU_MACH_AMDGCN_GFX942
  CHECK(co.find("mk_step.kd") != std::string::npos);  // the kernel descriptor's symbol
  CHECK(co.find("amdgcn-amd-amdhsa--gfx942") != std::string::npos);  // the metadata note

  amdgpu::LinkResult bad = amdgpu::link(*lld, "not an object");
  CHECK_FALSE(bad.ok);
  CHECK(bad.error.find("exited with status") != std::string::npos);
  amdgpu::LinkResult missing = amdgpu::link("/nonexistent/ld.lld", out->artifact.object);
  CHECK_FALSE(missing.ok);
  CHECK(missing.error.find("cannot run /nonexistent/ld.lld") != std::string::npos);
}
