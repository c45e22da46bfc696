// The ptxas wrapper (compiler/ptxas.h): the `-v` report parser on real ptxas output, and, where
// ptxas is installed, assembling a small kernel, a broken one, and the search for ptxas.
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "compiler/ptxas.h"
#include "scoped_env.h"

using namespace mk;

namespace {

// Recorded with CUDA 13.0's `ptxas -arch=sm_90a -v --maxrregcount 32` on the PTX that
// `nvcc -ptx -arch=sm_90a` made of: a kernel `pressure` keeping 64 floats live across a loop
// (spills under the register cap), a kernel `with_smem` with a 1 KiB __shared__ tile calling
// a __noinline__ device function `helper(float*, int)` that keeps a local float[32].
const char* kSampleSm90a = R"(ptxas info    : Overriding maximum register limit 256 for 'pressure' with  32 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for 'with_smem' with  32 of maxrregcount option
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'pressure' for 'sm_90a'
ptxas info    : Function properties for pressure
    624 bytes stack frame, 376 bytes spill stores, 516 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 624 bytes cumulative stack size
ptxas info    : Compile time = 26.089 ms
ptxas info    : Compiling entry function 'with_smem' for 'sm_90a'
ptxas info    : Function properties for with_smem
    128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 128 bytes cumulative stack size, 1024 bytes smem
ptxas info    : Compile time = 14.985 ms
ptxas info    : Function properties for _Z6helperPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)";

// Recorded with CUDA 13.0's `ptxas -arch=sm_80 -v` on kTinyPtx below (sm_80 also reports cmem).
const char* kSampleSm80 = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'reverse' for 'sm_80'
ptxas info    : Function properties for reverse
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem, 368 bytes cmem[0]
ptxas info    : Compile time = 2.641 ms
)";

// Reverses 256 floats through a 1 KiB shared tile.
const char* kTinyPtx = R"(.version 7.0
.target sm_80
.address_size 64

.visible .entry reverse(.param .u64 out, .param .u64 in)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<7>;
  .reg .f32 %f<3>;
  .shared .align 4 .b8 tile[1024];
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd4, %rd5;
  ld.global.f32 %f1, [%rd6];
  mov.u32 %r2, tile;
  shl.b32 %r3, %r1, 2;
  add.s32 %r4, %r2, %r3;
  st.shared.f32 [%r4], %f1;
  bar.sync 0;
  sub.s32 %r5, 1020, %r3;
  add.s32 %r5, %r2, %r5;
  ld.shared.f32 %f2, [%r5];
  add.s64 %rd6, %rd3, %rd5;
  st.global.f32 [%rd6], %f2;
  ret;
}
)";

}  // namespace

TEST_CASE("ptxas: parse the -v report") {
  auto fs = ptxas::parseVerbose(kSampleSm90a);
  REQUIRE(fs.size() == 3);
  CHECK(fs[0].name == "pressure");
  CHECK(fs[0].entry);
  CHECK(fs[0].registers == 32);
  CHECK(fs[0].sharedBytes == 0);
  CHECK(fs[0].stackFrameBytes == 624);
  CHECK(fs[0].spillStores == 376);
  CHECK(fs[0].spillLoads == 516);
  CHECK(fs[1].name == "with_smem");
  CHECK(fs[1].entry);
  CHECK(fs[1].registers == 32);
  CHECK(fs[1].sharedBytes == 1024);
  CHECK(fs[1].stackFrameBytes == 128);
  CHECK(fs[1].spillStores == 0);
  CHECK(fs[2].name == "_Z6helperPfi");
  CHECK_FALSE(fs[2].entry);
  CHECK(fs[2].registers == 0);
  CHECK(fs[2].stackFrameBytes == 0);
  CHECK(ptxas::summary(fs[0]) ==
        "pressure: 32 registers, 0 bytes shared, 376 bytes spill stores, 516 bytes spill loads, 624 bytes stack frame");
  CHECK(ptxas::summary(fs[2]) ==
        "_Z6helperPfi: 0 bytes shared, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack frame");

  auto tiny = ptxas::parseVerbose(kSampleSm80);
  REQUIRE(tiny.size() == 1);
  CHECK(tiny[0].name == "reverse");
  CHECK(tiny[0].registers == 12);
  CHECK(tiny[0].sharedBytes == 1024);

  CHECK(ptxas::parseVerbose("").empty());
  CHECK(ptxas::parseVerbose("ptxas fatal   : Unresolved extern function 'f'\n").empty());
}

TEST_CASE("ptxas: find honours $MKDSL_PTXAS") {
  testing::ScopedEnv env("MKDSL_PTXAS", "/nonexistent/ptxas");
  std::string why;
  CHECK_FALSE(ptxas::find(&why));
  CHECK(why.find("$MKDSL_PTXAS is '/nonexistent/ptxas'") != std::string::npos);
}

TEST_CASE("ptxas: assemble a kernel (when ptxas is installed)") {
  std::string why;
  auto path = ptxas::find(&why);
  if (!path) {
    MESSAGE("skipped: " << why);
    return;
  }
  auto r = ptxas::run(*path, kTinyPtx, {"sm_80", true, true});
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.cubin.compare(0, 4, "\x7f" "ELF") == 0);
  REQUIRE(r.functions.size() == 1);
  CHECK(r.functions[0].name == "reverse");
  CHECK(r.functions[0].entry);
  CHECK(r.functions[0].registers > 0);
  CHECK(r.functions[0].sharedBytes == 1024);

  // Without -v and the cubin: nothing parsed or kept.
  auto quiet = ptxas::run(*path, kTinyPtx, {"sm_80", false, false});
  CHECK(quiet.ok);
  CHECK(quiet.cubin.empty());
  CHECK(quiet.functions.empty());

  std::string broken = kTinyPtx;
  broken.replace(broken.find("st.shared.f32"), 13, "st.sharedd.f32");
  auto bad = ptxas::run(*path, broken, {"sm_80", false, true});
  CHECK_FALSE(bad.ok);
  CHECK(bad.error.find("exited with status") != std::string::npos);
  CHECK(bad.error.find(".sharedd") != std::string::npos);

  auto missing = ptxas::run("/nonexistent/ptxas", kTinyPtx, {"sm_80", false, false});
  CHECK_FALSE(missing.ok);
  CHECK(missing.error.find("cannot run /nonexistent/ptxas") != std::string::npos);
}
