// The backends (backend/): what they decide for small programs (the loader warp and its ring, the
// launch shape; on AMDGPU the ring-less kernel, scoped atomics and barriers) and what they refuse,
// through the compiler library.
#include <doctest/doctest.h>

#include <cstdint>
#include <regex>
#include <string>

#include "compiler/compile.h"

using namespace mk;

namespace {

CompileOptions options(const std::string& arch = "sm_90a") {
  CompileOptions o;
  o.check.stdlibDir = MK_STDLIB_DIR;
  o.sms = 4;
  o.arch = arch;
  return o;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A weight matvec (streamed through the ring) after a row lookup (a weight load that depends on
// the token, so it cannot be streamed).
const char* kMatvec = R"(import std.linear;

op row<V, D>(table: bf16[V, D], token: i32) -> y: bf16[D]
    tasks t in 1 {
    store y[0 : +D] = load table[token, 0 : +D];
}

weight table: bf16[64, 256] = "table";
weight w: bf16[128, 256] tiled(16, 128) = "w";

step s(token: i32) -> (y: bf16[128]) {
    let x = row(table, token);
    return matvec(w, x);
}
)";

const char* kEmbedOnly = R"(import std.embed;

weight table: bf16[64, 256] = "table";

step s(token: i32) -> (y: f32[256]) {
    return embed(table, token);
}
)";

// One task whose f32 tile local has n elements: 4 n bytes of shared memory for its tiles.
std::string wideProgram(int n) {
  return R"(op wide<N>() -> y: f32[N]
    tasks t in 1 {
    var acc: f32[N];
    store y[0 : +N] = acc;
}

step s() -> (y: f32[)" + std::to_string(n) + R"(]) {
    return wide(N = )" + std::to_string(n) + R"();
}
)";
}

}  // namespace

// The K loop of a streamed matvec is lowered as one unit (backend/tile/matvec.cpp, fusedRowdotLoop): sums in
// registers, no block barrier per chunk; each warp frees its ring slot itself, after a
// `bar.warp.sync` that only that lowering emits. Each chunk is one whole tile of the
// tiled(16, C) layout: one bulk copy of 16 x C x 2 bytes.
TEST_CASE("backend: a streamed matvec loop frees ring slots per warp and copies whole tiles") {
  auto withChunk = [](const std::string& chunk) {
    std::string src = kMatvec;
    const std::string from = "tiled(16, 128)";
    src.replace(src.find(from), from.size(), "tiled(16, " + chunk + ")");
    return src;
  };
  for (const std::string chunk : {"128", "32"}) {
    std::string diags;
    auto out = compileSource("matvec.mk", withChunk(chunk), options(), &diags);
    REQUIRE_MESSAGE(out, diags);
    const int64_t tile = 16 * std::stoll(chunk) * 2;
    CHECK(out->artifact.launch().ringSlotBytes == tile);
    CHECK(count(out->artifact.assembly, "bar.warp.sync") >= 1);
    CHECK(out->artifact.llvmIR.find("cp.async.bulk") != std::string::npos);
    CHECK(out->artifact.llvmIR.find("i32 " + std::to_string(tile) + ", i64") != std::string::npos);
  }
}

TEST_CASE("backend: streamed weights get a loader warp and a ring of bulk copies on sm_90a") {
  std::string diags;
  auto out = compileSource("matvec.mk", kMatvec, options(), &diags);
  REQUIRE_MESSAGE(out, diags);
  const backend::LaunchInfo& L = out->artifact.launch();
  CHECK(L.loaderWarp);
  // The loader warp comes on top of the target's 512 threads, which all compute.
  CHECK(L.block == 512 + 32);
  CHECK(L.computeThreads == 512);
  CHECK(L.grid == 4);
  // A matvec task's tile: 16 rows of a 128-column chunk of bf16.
  CHECK(L.ringSlotBytes == 16 * 128 * 2);
  CHECK(L.ringSlots >= 2);
  CHECK(L.ringSlots <= 32);
  CHECK(L.dynamicSmemBytes <= out->kernel().target.smemPerBlock);
  CHECK(L.dynamicSmemBytes >= L.ringSlots * L.ringSlotBytes);
  CHECK(L.syncCounters == int64_t(out->kernel().counters.size()));
  const std::string& ptx = out->artifact.assembly;
  CHECK(count(ptx, ".entry") == 1);
  CHECK(ptx.find("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes") != std::string::npos);
  CHECK(ptx.find("mbarrier.arrive.expect_tx") != std::string::npos);
  CHECK(ptx.find("mbarrier.try_wait.parity") != std::string::npos);
  CHECK(ptx.find("fence.mbarrier_init") != std::string::npos);
  CHECK(ptx.find(".maxntid 544") != std::string::npos);
  // 17 warps: the scheduler with five of them holds 16K registers, 96 a thread.
  CHECK(ptx.find(".maxnreg 96") != std::string::npos);
}

TEST_CASE("backend: sm_80 fills the ring with 16-byte cp.async completing on the mbarrier") {
  std::string diags;
  auto out = compileSource("matvec.mk", kMatvec, options("sm_80"), &diags);
  REQUIRE_MESSAGE(out, diags);
  const std::string& ptx = out->artifact.assembly;
  CHECK(out->artifact.launch().loaderWarp);
  CHECK(ptx.find(".target sm_80") != std::string::npos);
  CHECK(ptx.find("cp.async.cg.shared.global") != std::string::npos);
  CHECK(ptx.find("cp.async.mbarrier.arrive.noinc.shared.b64") != std::string::npos);
  CHECK(ptx.find("mbarrier.test_wait.parity") != std::string::npos);
  CHECK(ptx.find("cp.async.bulk") == std::string::npos);
  CHECK(ptx.find("fence.mbarrier_init") == std::string::npos);
}

TEST_CASE("backend: without a streamable weight there is no loader warp") {
  std::string diags;
  auto out = compileSource("embed.mk", kEmbedOnly, options(), &diags);
  REQUIRE_MESSAGE(out, diags);
  const backend::LaunchInfo& L = out->artifact.launch();
  CHECK_FALSE(L.loaderWarp);
  CHECK(L.block == 512);
  CHECK(L.ringSlots == 0);
  CHECK(out->artifact.assembly.find("mbarrier") == std::string::npos);
}

// A ring of fewer than two slots is not worth a loader warp: the kernel is rebuilt without it,
// and the loads that would have streamed read global memory directly (no ring wait is left).
TEST_CASE("backend: when the ring does not fit, the weights are loaded directly") {
  CompileOptions o = options();
  o.smem = 9000;  // the tiles fit, but not two 4 KiB slots after them
  std::string diags;
  auto out = compileSource("matvec.mk", kMatvec, o, &diags);
  REQUIRE_MESSAGE(out, diags);
  const backend::LaunchInfo& L = out->artifact.launch();
  CHECK_FALSE(L.loaderWarp);
  CHECK(L.ringSlots == 0);
  CHECK(L.computeThreads == 512);
  CHECK(L.dynamicSmemBytes <= 9000);
  CHECK(out->artifact.assembly.find("mbarrier") == std::string::npos);
  CHECK(out->artifact.assembly.find("cp.async") == std::string::npos);
  CHECK(out->artifact.assembly.find("ld.global.v4.u32") != std::string::npos);
}

TEST_CASE("backend: waits are acquire loads bounded by the timer, and signals are release adds after a barrier") {
  std::string diags;
  auto out = compileSource("matvec.mk", kMatvec, options(), &diags);
  REQUIRE_MESSAGE(out, diags);
  const std::string& ptx = out->artifact.assembly;
  CHECK(ptx.find("ld.acquire.gpu.global.u32") != std::string::npos);
  CHECK(ptx.find("red.release.gpu.global.add.u32") != std::string::npos);
  CHECK(ptx.find("%globaltimer") != std::string::npos);
  CHECK(ptx.find("atom.relaxed.gpu.global.cas.b32") != std::string::npos);
  CHECK(ptx.find("bar.sync 1, 512") != std::string::npos);  // the 512 compute threads, not the loader warp
  // The kernel's eight parameters, in the documented order.
  const std::string& ir = out->artifact.llvmIR;
  size_t define = ir.find("define void @mk_step(");
  REQUIRE(define != std::string::npos);
  std::string signature = ir.substr(define, ir.find('{', define) - define);
  size_t at = 0;
  for (const char* p : {"%weights", "%state", "%activations", "%sync", "%error", "%inputs", "i32 %epoch", "i64 %timeout"}) {
    size_t next = signature.find(p, at);
    CHECK_MESSAGE(next != std::string::npos, p);
    at = next == std::string::npos ? at : next;
  }
}

TEST_CASE("backend: an unknown architecture is an error naming the known ones") {
  ir::Megakernel empty;
  empty.target = *ir::findTarget("h200");
  SourceManager sm;
  DiagnosticEngine diags(sm);
  backend::Options o;
  o.arch = "sm_75";
  CHECK_FALSE(backend::generate({empty}, o, diags));
  REQUIRE(diags.diagnostics().size() == 1);
  CHECK(renderText(sm, diags.diagnostics()[0], false)
            .find("unknown code architecture 'sm_75'; known: sm_90a, sm_90, sm_80, gfx942, gfx90a") != std::string::npos);
}

TEST_CASE("backend: a tile area larger than a block's shared memory is an error at the op") {
  std::string diags;
  auto out = compileSource("wide.mk", wideProgram(60000), options(), &diags);
  CHECK_FALSE(out);
  CHECK_MESSAGE(diags.find("wide.mk:1:1: error: 'wide<N=60000>' needs 241552 bytes of shared memory for its tiles; "
                           "a block of target 'h200' has 232448 [E0962]") != std::string::npos,
                diags);
}

// AMDGPU (gfx942, gfx90a): the same kernel without the ring, native scoped atomics and barriers.
namespace {
// ELF header fields of a 64-bit little-endian object.
unsigned u16(const std::string& elf, size_t at) { return uint8_t(elf[at]) | unsigned(uint8_t(elf[at + 1])) << 8; }
unsigned u32(const std::string& elf, size_t at) { return u16(elf, at) | u16(elf, at + 2) << 16; }
constexpr unsigned kEmAmdgpu = 224;
constexpr unsigned kMachMask = 0xff;  // EF_AMDGPU_MACH
constexpr unsigned kMachGfx90a = 0x3f, kMachGfx942 = 0x4c;
}  // namespace

// No mbarriers or async copies: the whole block computes, and the weight tiles the NVPTX
// targets stream through the ring are read from global memory, 16 bytes per load.
TEST_CASE("backend: AMDGPU: kernels run without the loader warp and read weights with 16-byte global loads") {
  for (const std::string arch : {"gfx942", "gfx90a"}) {
    std::string diags;
    auto out = compileSource("matvec.mk", kMatvec, options(arch), &diags);
    REQUIRE_MESSAGE(out, diags);
    const backend::LaunchInfo& L = out->artifact.launch();
    CHECK(L.arch == arch);
    CHECK_FALSE(L.loaderWarp);
    CHECK(L.block == 512);
    CHECK(L.computeThreads == 512);
    CHECK(L.ringSlots == 0);
    CHECK(L.ringSlotBytes == 0);
    CHECK(L.dynamicSmemBytes <= 64 * 1024);
    const std::string& ir = out->artifact.llvmIR;
    CHECK(ir.find("target triple = \"amdgcn-amd-amdhsa\"") != std::string::npos);
    CHECK(ir.find("load <4 x i32>, ptr addrspace(1)") != std::string::npos);
    const std::string& s = out->artifact.assembly;
    CHECK(s.find("global_load_dwordx4") != std::string::npos);
    CHECK(s.find(".amdgcn_target \"amdgcn-amd-amdhsa--" + arch + "\"") != std::string::npos);
    CHECK(count(s, ".amdhsa_kernel ") == 1);
    CHECK(s.find(".amdhsa_kernel mk_step") != std::string::npos);
    CHECK(ir.find("mbarrier") == std::string::npos);
    // The relocatable object the code object is linked from, for this ISA.
    const std::string& o = out->artifact.object;
    REQUIRE(o.size() > 64);
    CHECK(o.compare(0, 4, "\x7f" "ELF") == 0);
    CHECK(u16(o, 16) == 1);  // ET_REL
    CHECK(u16(o, 18) == kEmAmdgpu);
    CHECK((u32(o, 48) & kMachMask) == (arch == "gfx942" ? kMachGfx942 : kMachGfx90a));
  }
  // NVPTX emits no object: ptxas or the driver assembles the PTX.
  auto ptx = compileSource("matvec.mk", kMatvec, options("sm_90a"));
  REQUIRE(ptx);
  CHECK(ptx->artifact.object.empty());
}

TEST_CASE("backend: AMDGPU: waits and signals are agent-scope atomics, and barriers are s_barrier between fences") {
  std::string diags;
  auto out = compileSource("matvec.mk", kMatvec, options("gfx942"), &diags);
  REQUIRE_MESSAGE(out, diags);
  const std::string& ir = out->artifact.llvmIR;
  CHECK(ir.find("define amdgpu_kernel void @mk_step(") != std::string::npos);
  CHECK(ir.find("\"amdgpu-flat-work-group-size\"=\"1,512\"") != std::string::npos);
  // 8 waves over a CU's 4 SIMDs.
  CHECK(ir.find("\"amdgpu-waves-per-eu\"=\"2,2\"") != std::string::npos);
  CHECK(std::regex_search(ir, std::regex(R"(load atomic i32, ptr addrspace\(1\) %\w+ syncscope\("agent"\) acquire)")));
  CHECK(ir.find("atomicrmw add ptr addrspace(1) %sync, i32 1 syncscope(\"agent\") release") != std::string::npos);
  CHECK(ir.find("cmpxchg ptr addrspace(1) %error, i32 0, i32 1 syncscope(\"agent\") monotonic monotonic") !=
        std::string::npos);
  CHECK(ir.find("fence syncscope(\"workgroup\") release\n  tail call void @llvm.amdgcn.s.barrier()\n"
                "  fence syncscope(\"workgroup\") acquire") != std::string::npos);
  // Before the signal every wave's stores complete at agent scope.
  CHECK(ir.find("fence syncscope(\"agent\") release\n  tail call void @llvm.amdgcn.s.barrier()") != std::string::npos);
  const std::string& s = out->artifact.assembly;
  CHECK(s.find("s_barrier") != std::string::npos);
  CHECK(s.find("buffer_inv sc1") != std::string::npos);  // the acquire
  CHECK(s.find("buffer_wbl2 sc1") != std::string::npos);  // the release
  CHECK(s.find("s_memrealtime") != std::string::npos);
  CHECK(s.find("s_sleep 1") != std::string::npos);
  // Butterflies within 32-lane halves: DPP for xor 1 and 2, ds_swizzle for 4..16.
  CHECK(s.find("quad_perm:[1,0,3,2]") != std::string::npos);
  CHECK(s.find("ds_swizzle_b32") != std::string::npos);
  CHECK(s.find("offset:swizzle(SWAP,4)") != std::string::npos);
}

TEST_CASE("backend: AMDGPU: more LDS than a workgroup has is an error, not a crash") {
  std::string diags;
  CHECK_FALSE(compileSource("wide.mk", wideProgram(20000), options("gfx942"), &diags));
  CHECK_MESSAGE(diags.find("wide.mk:1:1: error: 'wide<N=20000>' needs 81552 bytes of shared memory for its tiles; "
                           "a block of target 'mi300x' has 65536 [E0962]") != std::string::npos,
                diags);
  // A description claiming more than the hardware's 64 KiB.
  CompileOptions o = options("gfx90a");
  o.smem = 100000;
  CHECK_FALSE(compileSource("matvec.mk", kMatvec, o, &diags));
  CHECK_MESSAGE(diags.find("target 'mi250x' cannot run this kernel: 100000 bytes of shared memory per block; gfx90a has "
                           "at most 65536 [E0963]") != std::string::npos,
                diags);
}

// A product of T x 64 by 64 x 32, bf16: on the matrix instruction when T is a multiple of 16.
std::string mmaProgram(int T) {
  return "op up<T, D, E>(x: bf16[T, D], v: bf16[D, E]) -> h: f32[T, E]\n"
         "    tasks t in 1 {\n"
         "    store h[0 : +T, 0 : +E] = mma(load x[0 : +T, 0 : +D], load v[0 : +D, 0 : +E]);\n"
         "}\n"
         "weight x: bf16[" + std::to_string(T) + ", 64] = \"x\";\n"
         "weight v: bf16[64, 32] = \"v\";\n"
         "step decode(token: i32) -> (h: f32[" + std::to_string(T) + ", 32]) {\n"
         "    let h = up(x, v);\n"
         "    return (h);\n"
         "}\n";
}

TEST_CASE("backend: a bf16 mma that does not fit the matrix instruction still builds, with a warning at the product") {
  for (const char* arch : {"sm_90a", "gfx942"}) {
    CAPTURE(arch);
    std::string diags;
    auto out = compileSource("mma.mk", mmaProgram(12), options(arch), &diags);
    REQUIRE_MESSAGE(out, diags);
    const std::string block = std::string(arch) == "gfx942" ? "(gfx942's MFMA 16x16x16)" : "(sm_90a's mma.sync m16n8k16)";
    CHECK_MESSAGE(diags.find("mma.mk:3:31: warning: this mma of bf16 operands runs element by element, not on the matrix "
                             "instruction: M = 12 is not a multiple of 16 " + block + " [E0964]") != std::string::npos,
                  diags);
    CHECK(count(diags, "[E0964]") == 1);  // once per place
    // A shape that fits takes the instruction, without a word.
    diags.clear();
    out = compileSource("mma.mk", mmaProgram(16), options(arch), &diags);
    REQUIRE_MESSAGE(out, diags);
    CHECK_MESSAGE(diags.find("E0964") == std::string::npos, diags);
    CHECK(out->artifact.assembly.find(std::string(arch) == "gfx942" ? "v_mfma_f32_16x16x16" : "mma.sync.aligned") !=
          std::string::npos);
  }
}
