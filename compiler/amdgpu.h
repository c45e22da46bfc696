// AMDGPU code objects: the backend's ELF object (backend::Artifact::object) linked into a
// loadable code object (.hsaco) with ld.lld, as clang does for HIP, and the kernel's resource
// usage from the code object metadata. Optional like ptxas: without ld.lld, mkdsl still emits
// AMDGCN assembly and LLVM IR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mk::amdgpu {

// Where ld.lld is: $MKDSL_LLD when set and non-empty (then only there), else ld.lld-19, then
// ld.lld on PATH, else /usr/bin/ld.lld-19 or /usr/lib/llvm-19/bin/ld.lld. nullopt when none is
// executable, with `why` (when given) saying where it looked.
std::optional<std::string> findLld(std::string* why = nullptr);

struct LinkResult {
  bool ok = false;
  std::string codeObject;  // the .hsaco bytes
  std::string error;       // when !ok: why, with ld.lld's output
};

// `ld.lld -shared --no-undefined` of `object` into a code object, through a private temporary
// folder (nothing is written elsewhere).
LinkResult link(const std::string& lldPath, const std::string& object);

// One kernel's resources, as the code object metadata (amdhsa.kernels) records them.
struct KernelResources {
  std::string name;
  int vgprs = 0, agprs = 0, sgprs = 0;
  int vgprSpills = 0, sgprSpills = 0;
  int64_t groupSegmentBytes = 0;    // static LDS; the dynamic LDS is given at launch
  int64_t privateSegmentBytes = 0;  // scratch per work-item: spills and stack
  int wavefrontSize = 0;
  int maxFlatWorkgroupSize = 0;
};

// The kernels of the `.amdgpu_metadata` block of AMDGCN assembly (the YAML form of the notes
// the code object carries), in order; empty when there is none.
std::vector<KernelResources> parseResources(const std::string& assembly);

// "mk_step: 104 VGPRs, 0 AGPRs, 60 SGPRs, 0 bytes static LDS, 0 bytes scratch, 0 VGPR and 0 SGPR spills"
std::string summary(const KernelResources& k);

}  // namespace mk::amdgpu
