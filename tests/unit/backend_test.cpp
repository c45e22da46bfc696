// The NVPTX backend (backend/): what it decides for small programs (the loader warp and its ring,
// the launch shape) and what it refuses, through the compiler library.
#include <doctest/doctest.h>

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

}  // namespace

// The K loop of a streamed matvec is lowered as one unit (tile.cpp, fusedRowdotLoop): sums in
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
    CHECK(out->artifact.launch.ringSlotBytes == tile);
    CHECK(count(out->artifact.assembly, "bar.warp.sync") >= 1);
    CHECK(out->artifact.llvmIR.find("cp.async.bulk") != std::string::npos);
    CHECK(out->artifact.llvmIR.find("i32 " + std::to_string(tile) + ", i64") != std::string::npos);
  }
}

TEST_CASE("backend: streamed weights get a loader warp and a ring of bulk copies on sm_90a") {
  std::string diags;
  auto out = compileSource("matvec.mk", kMatvec, options(), &diags);
  REQUIRE_MESSAGE(out, diags);
  const backend::LaunchInfo& L = out->artifact.launch;
  CHECK(L.loaderWarp);
  // The loader warp is one of the target's 512 threads.
  CHECK(L.blockSize == 512);
  CHECK(L.computeThreads == 512 - 32);
  CHECK(L.gridSize == 4);
  // A matvec task's tile: 16 rows of a 128-column chunk of bf16.
  CHECK(L.ringSlotBytes == 16 * 128 * 2);
  CHECK(L.ringSlots >= 2);
  CHECK(L.ringSlots <= 32);
  CHECK(L.dynamicSmemBytes <= out->kernel.target.smemPerBlock);
  CHECK(L.dynamicSmemBytes >= L.ringSlots * L.ringSlotBytes);
  CHECK(L.syncCounters == int64_t(out->kernel.counters.size()));
  const std::string& ptx = out->artifact.assembly;
  CHECK(count(ptx, ".entry") == 1);
  CHECK(ptx.find("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes") != std::string::npos);
  CHECK(ptx.find("mbarrier.arrive.expect_tx") != std::string::npos);
  CHECK(ptx.find("mbarrier.try_wait.parity") != std::string::npos);
  CHECK(ptx.find("fence.mbarrier_init") != std::string::npos);
  CHECK(ptx.find(".maxntid 512") != std::string::npos);
}

TEST_CASE("backend: sm_80 fills the ring with 16-byte cp.async completing on the mbarrier") {
  std::string diags;
  auto out = compileSource("matvec.mk", kMatvec, options("sm_80"), &diags);
  REQUIRE_MESSAGE(out, diags);
  const std::string& ptx = out->artifact.assembly;
  CHECK(out->artifact.launch.loaderWarp);
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
  const backend::LaunchInfo& L = out->artifact.launch;
  CHECK_FALSE(L.loaderWarp);
  CHECK(L.blockSize == 512);
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
  const backend::LaunchInfo& L = out->artifact.launch;
  CHECK_FALSE(L.loaderWarp);
  CHECK(L.ringSlots == 0);
  CHECK(L.computeThreads == 512);
  CHECK(L.dynamicSmemBytes <= 9000);
  CHECK(out->artifact.assembly.find("mbarrier") == std::string::npos);
  CHECK(out->artifact.assembly.find("cp.async") == std::string::npos);
  CHECK(out->artifact.assembly.find("ld.global.v4.u32") != std::string::npos);
}

TEST_CASE("backend: waits are acquire loads bounded by the timer; signals are release adds after a barrier") {
  std::string diags;
  auto out = compileSource("matvec.mk", kMatvec, options(), &diags);
  REQUIRE_MESSAGE(out, diags);
  const std::string& ptx = out->artifact.assembly;
  CHECK(ptx.find("ld.acquire.gpu.global.u32") != std::string::npos);
  CHECK(ptx.find("red.release.gpu.global.add.u32") != std::string::npos);
  CHECK(ptx.find("%globaltimer") != std::string::npos);
  CHECK(ptx.find("atom.relaxed.gpu.global.cas.b32") != std::string::npos);
  CHECK(ptx.find("bar.sync 1, 480") != std::string::npos);
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
  CHECK_FALSE(backend::generate(empty, o, diags));
  REQUIRE(diags.diagnostics().size() == 1);
  CHECK(renderText(sm, diags.diagnostics()[0], false).find("unknown code architecture 'sm_75'; known: sm_90a, sm_90, sm_80") !=
        std::string::npos);
}

TEST_CASE("backend: a tile area larger than a block's shared memory is an error at the op") {
  const char* source = R"(op wide<N>() -> y: f32[N]
    tasks t in 1 {
    var acc: f32[N];
    store y[0 : +N] = acc;
}

step s() -> (y: f32[60000]) {
    return wide(N = 60000);
}
)";
  std::string diags;
  auto out = compileSource("wide.mk", source, options(), &diags);
  CHECK_FALSE(out);
  CHECK_MESSAGE(diags.find("wide.mk:1:1: error: 'wide<N=60000>' needs 241552 bytes of shared memory for its tiles; "
                           "a block of target 'h200' has 232448 [E0962]") != std::string::npos,
                diags);
}
