#include "compiler/amdgpu.h"

#include <sstream>

#include "compiler/tool.h"

namespace mk::amdgpu {

std::optional<std::string> findLld(std::string* why) {
  return tool::find("MKDSL_LLD", {"ld.lld-19", "ld.lld"}, {"/usr/bin/ld.lld-19", "/usr/lib/llvm-19/bin/ld.lld"},
                    "install lld-19, or set $MKDSL_LLD to its path", why);
}

LinkResult link(const std::string& lldPath, const std::string& object) {
  LinkResult r;
  tool::TempDir dir;
  if (!dir.create("mkdsl-lld", r.error)) return r;
  std::string input = dir.file("kernel.o"), output = dir.file("kernel.hsaco");
  if (!tool::writeFile(input, object)) {
    r.error = "cannot write " + input;
    return r;
  }
  std::string log;
  if (!tool::run({lldPath, "-shared", "--no-undefined", input, "-o", output}, log, r.error)) return r;
  auto linked = tool::readFile(output);
  if (!linked) {
    r.error = lldPath + " succeeded but wrote no code object\n" + log;
    return r;
  }
  r.codeObject = std::move(*linked);
  r.ok = true;
  return r;
}

std::vector<KernelResources> parseResources(const std::string& assembly) {
  // The metadata LLVM prints between `.amdgpu_metadata` and `.end_amdgpu_metadata`:
  //   amdhsa.kernels:
  //     - .agpr_count:     0
  //       .args: ...                     (deeper lines: the kernel's arguments)
  //       .name:           mk_step
  //       .sgpr_count:     60
  // Each kernel starts with `  - `; its own keys sit at four spaces.
  std::vector<KernelResources> kernels;
  size_t begin = assembly.find(".amdgpu_metadata");
  if (begin == std::string::npos) return kernels;
  size_t end = assembly.find(".end_amdgpu_metadata", begin);
  std::istringstream in(assembly.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
  std::string line;
  bool inKernels = false;
  while (std::getline(in, line)) {
    if (line.rfind("amdhsa.kernels:", 0) == 0) {
      inKernels = true;
      continue;
    }
    if (!line.empty() && line[0] != ' ') inKernels = false;
    if (!inKernels) continue;
    std::string entry;
    if (line.rfind("  - ", 0) == 0) {
      kernels.emplace_back();
      entry = line.substr(4);
    } else if (line.rfind("    ", 0) == 0 && line.size() > 4 && line[4] == '.') {
      entry = line.substr(4);
    } else {
      continue;
    }
    if (kernels.empty()) continue;
    size_t colon = entry.find(':');
    if (colon == std::string::npos) continue;
    std::string key = entry.substr(0, colon), value = entry.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    KernelResources& k = kernels.back();
    auto number = [&]() -> int64_t {
      return !value.empty() && value.find_first_not_of("0123456789") == std::string::npos && value.size() < 16
                 ? std::stoll(value)
                 : 0;
    };
    if (key == ".name") k.name = value;
    else if (key == ".vgpr_count") k.vgprs = int(number());
    else if (key == ".agpr_count") k.agprs = int(number());
    else if (key == ".sgpr_count") k.sgprs = int(number());
    else if (key == ".vgpr_spill_count") k.vgprSpills = int(number());
    else if (key == ".sgpr_spill_count") k.sgprSpills = int(number());
    else if (key == ".group_segment_fixed_size") k.groupSegmentBytes = number();
    else if (key == ".private_segment_fixed_size") k.privateSegmentBytes = number();
    else if (key == ".wavefront_size") k.wavefrontSize = int(number());
    else if (key == ".max_flat_workgroup_size") k.maxFlatWorkgroupSize = int(number());
  }
  return kernels;
}

std::string summary(const KernelResources& k) {
  return k.name + ": " + std::to_string(k.vgprs) + " VGPRs, " + std::to_string(k.agprs) + " AGPRs, " +
         std::to_string(k.sgprs) + " SGPRs, " + std::to_string(k.groupSegmentBytes) + " bytes static LDS, " +
         std::to_string(k.privateSegmentBytes) + " bytes scratch, " + std::to_string(k.vgprSpills) + " VGPR and " +
         std::to_string(k.sgprSpills) + " SGPR spills";
}

}  // namespace mk::amdgpu
