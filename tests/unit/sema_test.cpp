// mk::checkProgram: names, constants, configs, shapes, layouts, task grids, imports, the stdlib, and
// that every shipped .mk file checks cleanly.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "frontend/sema.h"
#include "support/diagnostics.h"

namespace fs = std::filesystem;
using mk::DiagKind;

namespace {

// The repository root, from where this file sits: <root>/tests/unit/sema_test.cpp.
fs::path repoRoot() {
  fs::path here(__FILE__);
#ifdef MK_SOURCE_DIR
  if (!here.is_absolute()) return fs::path(MK_SOURCE_DIR);
#endif
  return here.parent_path().parent_path().parent_path();
}

// A scratch folder under the system temp dir, removed when the test ends.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("mk_sema_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  // Writes `text` to `rel` (folders created) and returns its full path.
  std::string write(const std::string& rel, const std::string& text) const {
    fs::path p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  fs::path path_;
};

struct Checked {
  mk::SourceManager sources;
  mk::DiagnosticEngine diags{sources};
  mk::FileId root = 0;
  std::unique_ptr<mk::Program> program;

  // Checks in-memory `text` as the root file `path`.
  Checked(const std::string& text, mk::CheckOptions options = {}, const std::string& path = "test.mk") {
    root = sources.add(path, text);
    program = mk::checkProgram(sources, diags, root, options);
  }
  // Checks a file on disk.
  static std::unique_ptr<Checked> load(const std::string& path, mk::CheckOptions options = {}) {
    auto c = std::unique_ptr<Checked>(new Checked());
    auto id = c->sources.load(path);
    REQUIRE_MESSAGE(id.has_value(), "cannot read " << path);
    c->root = *id;
    c->program = mk::checkProgram(c->sources, c->diags, c->root, options);
    return c;
  }

  const std::vector<mk::Diagnostic>& all() const { return diags.diagnostics(); }
  std::vector<DiagKind> kinds() const {
    std::vector<DiagKind> out;
    for (const auto& d : all()) out.push_back(d.kind);
    return out;
  }
  std::vector<std::string> messages() const {
    std::vector<std::string> out;
    for (const auto& d : all()) out.push_back(d.message);
    return out;
  }
  // Every diagnostic as text, for failure messages.
  std::string rendered() const {
    std::string out;
    for (const auto& d : all()) out += mk::renderText(sources, d);
    return out;
  }
  // The source text under a range.
  std::string at(mk::SourceRange r) const {
    REQUIRE(r.valid());
    const std::string& t = sources.file(r.file).text();
    REQUIRE(r.end <= t.size());
    return t.substr(r.begin, r.end - r.begin);
  }
  // The only diagnostic, which must be of `kind`.
  const mk::Diagnostic& only(DiagKind kind) const {
    INFO(rendered());
    REQUIRE(all().size() == 1);
    REQUIRE(all()[0].kind == kind);
    return all()[0];
  }
  std::vector<std::string> noteMessages(const mk::Diagnostic& d) const {
    std::vector<std::string> out;
    for (const auto& n : d.notes) out.push_back(n.message);
    return out;
  }

 private:
  Checked() = default;
};

int64_t intValue(const mk::Program& p, const std::string& field) {
  auto it = p.configValues.find(field);
  REQUIRE_MESSAGE(it != p.configValues.end(), "no config field " << field);
  REQUIRE(it->second.kind == mk::TyKind::Int);
  REQUIRE(it->second.intValue);
  REQUIRE(it->second.intValue->isConstant());
  return it->second.intValue->value();
}

std::vector<fs::path> mkFiles(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".mk") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// ---- Names ---------------------------------------------------------------------------------------

TEST_CASE("sema: unknown name with a suggestion") {
  Checked c("const hidden = 64;\nconst x = hiden + 1;\n");
  const auto& d = c.only(DiagKind::UnknownName);
  CHECK(d.message == "unknown name 'hiden'; did you mean 'hidden'?");
  CHECK(c.at(d.range) == "hiden");
  CHECK(d.severity == mk::Severity::Error);
}

TEST_CASE("sema: unknown name far from every other name gets no suggestion") {
  Checked c("const hidden = 64;\nconst x = zzzzzz;\n");
  CHECK(c.only(DiagKind::UnknownName).message == "unknown name 'zzzzzz'");
}

TEST_CASE("sema: redefinition points at the previous definition") {
  Checked c("const A = 1;\nconst A = 2;\n");
  const auto& d = c.only(DiagKind::Redefinition);
  CHECK(d.message == "'A' is already defined");
  CHECK(c.sources.file(c.root).lineCol(d.range.begin).line == 2);
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].message == "previous definition is here");
  CHECK(c.sources.file(c.root).lineCol(d.notes[0].range.begin).line == 1);
}

TEST_CASE("sema: top-level names are visible regardless of order") {
  Checked c("const B = A * 2;\nconst A = 3;\nstatic_assert(B == 6, \"B\");\n");
  CHECK(c.rendered() == "");
}

// ---- Constants -----------------------------------------------------------------------------------

TEST_CASE("sema: constant evaluation") {
  Checked ok(
      "const A = 2 * 3 + 1;\n"
      "const B = A / 2 - A % 4;\n"  // 3 - 3
      "const F: float = 2;\n"
      "const G = F * 1.5 + 1;\n"
      "const H = !(A < 7) || A >= 7 && true;\n"
      "const I = -A;\n"
      "static_assert(A == 7, \"A\");\n"
      "static_assert(B == 0, \"B\");\n"
      "static_assert(G == 4.0, \"G\");\n"
      "static_assert(H, \"H\");\n"
      "static_assert(I == 0 - 7);\n"
      "static_assert(-7 / 2 == -3, \"truncating division\");\n"
      "static_assert(inf > 1e300);\n");
  CHECK(ok.rendered() == "");

  Checked bad(
      "const hidden = 64;\n"
      "static_assert(hidden == 65, \"hidden must be 65\");\n"
      "static_assert(hidden);\n"
      "static_assert(false);\n");
  CHECK(bad.kinds() == std::vector<DiagKind>{DiagKind::StaticAssertFailed, DiagKind::StaticAssertNotBool,
                                             DiagKind::StaticAssertFailed});
  CHECK(bad.messages() == std::vector<std::string>{"static assertion failed: hidden must be 65",
                                                   "static_assert needs a compile-time bool, found compile-time int",
                                                   "static assertion failed"});
}

TEST_CASE("sema: division by zero, overflow and declared const types") {
  Checked c(
      "const Z = 1 / 0;\n"
      "const M = 5 % (3 - 3);\n"
      "const O = 9223372036854775807 + 1;\n"
      "const P = 4611686018427387904 * 2;\n"
      "const F: int = 1.5;\n"
      "const T: bool = 1;\n");
  CHECK(c.kinds() == std::vector<DiagKind>{DiagKind::DivisionByZero, DiagKind::DivisionByZero, DiagKind::IntOverflow,
                                           DiagKind::IntOverflow, DiagKind::ConstTypeMismatch,
                                           DiagKind::ConstTypeMismatch});
  CHECK(c.messages()[0] == "division by zero in a compile-time expression");
  CHECK(c.at(c.all()[0].range) == "1 / 0");
  CHECK(c.messages()[2] == "integer overflow in a compile-time expression");
  CHECK(c.messages()[4] == "constant 'F' is declared int but its value is compile-time float");
  CHECK(c.at(c.all()[4].range) == "1.5");
  CHECK(c.messages()[5] == "constant 'T' is declared bool but its value is compile-time int");
}

TEST_CASE("sema: constant cycles") {
  SUBCASE("two constants") {
    Checked c("const A = B + 1;\nconst B = A;\n");
    const auto& d = c.only(DiagKind::ConstCycle);
    CHECK(d.message == "constant 'A' depends on itself: A -> B -> A");
    CHECK(c.at(d.range) == "A");
    CHECK(c.sources.file(c.root).lineCol(d.range.begin).line == 2);  // the use closing the cycle
    CHECK(c.noteMessages(d) == std::vector<std::string>{"'A' is declared here"});
  }
  SUBCASE("itself") {
    Checked c("const S = S * 2;\n");
    CHECK(c.only(DiagKind::ConstCycle).message == "constant 'S' depends on itself: S -> S");
  }
  SUBCASE("a group bound declared after its use is no cycle") {
    Checked c("const L = 2;\ngroup layer[l in 0 .. N] { state s: f32[4]; }\nconst N = L;\n");
    CHECK(c.rendered() == "");
  }
}

// ---- Config --------------------------------------------------------------------------------------

namespace {
const char* kConfigs =
    "config small { dim = 64; layers = 2; half = dim / 2; theta = 10000.0; }\n"
    "config big : small { dim = 4096; }\n"
    "const D = dim * 2;\n";
}

TEST_CASE("sema: the first config is the default") {
  Checked c(kConfigs);
  CHECK(c.rendered() == "");
  REQUIRE(c.program->config);
  CHECK(c.program->config->name.name == "small");
  CHECK(intValue(*c.program, "dim") == 64);
  CHECK(intValue(*c.program, "layers") == 2);
  CHECK(intValue(*c.program, "half") == 32);  // fields may use earlier fields
  auto theta = c.program->configValues.at("theta");
  CHECK(theta.kind == mk::TyKind::Float);
  CHECK(theta.floatValue == std::optional<double>(10000.0));
  CHECK(c.program->configValues.size() == 4);
}

TEST_CASE("sema: --config picks a derived config, which overrides its base") {
  mk::CheckOptions opts;
  opts.configName = "big";
  Checked c(kConfigs, opts);
  CHECK(c.rendered() == "");
  REQUIRE(c.program->config);
  CHECK(c.program->config->name.name == "big");
  CHECK(intValue(*c.program, "dim") == 4096);
  CHECK(intValue(*c.program, "layers") == 2);  // inherited
  CHECK(c.program->configValues.size() == 4);
}

TEST_CASE("sema: derived-config fields computed from overridden fields") {
  mk::CheckOptions opts;
  opts.configName = "big";
  Checked c(
      "config small { dim = 64; half = dim / 2; }\n"
      "config big : small { dim = 4096; half = dim / 2; }\n"
      "static_assert(half == 2048, \"half\");\n",
      opts);
  CHECK(c.rendered() == "");
  CHECK(intValue(*c.program, "half") == 2048);
}

TEST_CASE("sema: a static assertion decided by the selected config") {
  const char* text =
      "config small { dim = 64; }\n"
      "config odd : small { dim = 63; }\n"
      "static_assert(dim % 2 == 0, \"dim must be even\");\n";
  CHECK(Checked(text).rendered() == "");
  mk::CheckOptions opts;
  opts.configName = "odd";
  Checked c(text, opts);
  CHECK(c.only(DiagKind::StaticAssertFailed).message == "static assertion failed: dim must be even");
}

TEST_CASE("sema: allConfigs checks every config and names the one that fails") {
  const char* text =
      "config small { dim = 64; }\n"
      "config odd : small { dim = 63; }\n"
      "static_assert(dim % 2 == 0, \"dim must be even\");\n";
  mk::CheckOptions opts;
  opts.allConfigs = true;
  Checked c(text, opts);
  const auto& d = c.only(DiagKind::StaticAssertFailed);
  CHECK(c.noteMessages(d) == std::vector<std::string>{"with config 'odd'"});
  REQUIRE(c.program->config);
  CHECK(c.program->config->name.name == "small");  // the program is the default config's
}

TEST_CASE("sema: unknown --config") {
  mk::CheckOptions opts;
  opts.configName = "bigg";
  Checked c(kConfigs, opts);
  const auto& d = c.only(DiagKind::NoSuchConfigOption);
  CHECK(d.message == "--config bigg: the program has no config of that name; did you mean 'big'?");
  CHECK_FALSE(d.range.valid());
  CHECK(c.program->config == nullptr);
  CHECK(c.program->configValues.empty());

  opts.configName = "huge";
  Checked none(kConfigs, opts);
  CHECK(none.only(DiagKind::NoSuchConfigOption).message ==
        "--config huge: the program has no config of that name; it has small, big");
  Checked noConfigs("const A = 1;\n", opts);
  CHECK(noConfigs.only(DiagKind::NoSuchConfigOption).message ==
        "--config huge: the program has no config of that name (it declares none)");
}

TEST_CASE("sema: config errors") {
  SUBCASE("a derived config may only override") {
    Checked c("config small { dim = 64; }\nconfig big : small { dims = 4; }\n");
    const auto& d = c.only(DiagKind::ConfigNewField);
    CHECK(d.message == "config 'big' sets 'dims', which its base 'small' does not have; did you mean 'dim'?");
    CHECK(c.at(d.range) == "dims");
  }
  SUBCASE("unknown base") {
    Checked c("config small { dim = 64; }\nconfig big : smal { dim = 4; }\n");
    CHECK(c.only(DiagKind::UnknownConfig).message == "unknown config 'smal'; did you mean 'small'?");
  }
  SUBCASE("base cycle") {
    Checked c("config a : b { x = 1; }\nconfig b : a { x = 2; }\n");
    REQUIRE_FALSE(c.all().empty());
    CHECK(c.kinds()[0] == DiagKind::ConfigBaseCycle);
    CHECK(c.messages()[0].find("derives from itself") != std::string::npos);
  }
  SUBCASE("a field set twice") {
    Checked c("config small { dim = 64; dim = 32; }\n");
    const auto& d = c.only(DiagKind::DuplicateField);
    CHECK(d.message == "config field 'dim' is set twice");
    CHECK(c.noteMessages(d) == std::vector<std::string>{"previous definition is here"});
  }
  SUBCASE("a field named like a declaration") {
    Checked c("config small { dim = 64; D = 1; }\nconst D = 2;\n");
    const auto& d = c.only(DiagKind::ConfigFieldClash);
    CHECK(d.message == "config field 'D' has the name of a declaration");
    CHECK(c.noteMessages(d) == std::vector<std::string>{"previous definition is here"});
  }
  SUBCASE("fields see earlier fields only") {
    Checked c("config small { a = b; b = 1; }\n");
    const auto& d = c.only(DiagKind::UnknownName);
    CHECK(d.message.rfind("unknown name 'b'", 0) == 0);
  }
  SUBCASE("config fields are not in imported modules' scope") {
    TempDir tmp;
    tmp.write("lib.mk", "const K = dim;\n");
    Checked c("import lib;\nconfig small { dim = 64; }\n", {}, (tmp.path() / "main.mk").string());
    CHECK(c.only(DiagKind::UnknownName).message == "unknown name 'dim'");
  }
}

// Config fields see earlier fields only: no hint offers a top-level name they cannot see, and a
// field set later says so.
TEST_CASE("sema: config field suggestions only offer earlier fields") {
  Checked c("const D = 2;\nconfig small { a = b; b = 1; }\n");
  CHECK(c.only(DiagKind::UnknownName).message ==
        "unknown name 'b'; it is set later in this config, and a field sees only the fields before it");
  Checked d("const D = 2;\nconfig small { a = E; }\n");
  CHECK(d.only(DiagKind::UnknownName).message == "unknown name 'E'");
}

// ---- Shapes --------------------------------------------------------------------------------------

namespace {
const char* kScale =
    "op scale<N>(x: f32[N], y: f32[N]) -> z: f32[N]\n"
    "  tasks t in 1\n"
    "{\n"
    "  store z[0 : +N] = (load x[0 : +N]) * (load y[0 : +N]);\n"
    "}\n"
    "weight a: f32[8] = \"a\";\n"
    "weight b: f32[16] = \"b\";\n";
}

TEST_CASE("sema: shapes are inferred at a call") {
  Checked ok(std::string(kScale) +
             "step s(tok: i32) -> (out: f32[8]) {\n"
             "  let r = scale(a, a);\n"
             "  return r;\n"
             "}\n");
  CHECK(ok.rendered() == "");
  REQUIRE(ok.program->steps.size() == 1);
  CHECK(ok.program->steps[0]->name.name == "s");

  // The result is f32[8], so returning it as f32[16] is wrong.
  Checked wrongResult(std::string(kScale) +
                      "step s(tok: i32) -> (out: f32[16]) {\n"
                      "  let r = scale(a, a);\n"
                      "  return r;\n"
                      "}\n");
  const auto& d = wrongResult.only(DiagKind::ReturnType);
  CHECK(d.message == "result 1 of 's' must be f32[16], found f32[8]");
  CHECK(wrongResult.noteMessages(d) == std::vector<std::string>{"the result type is declared here"});
}

TEST_CASE("sema: an argument disagreeing with an inferred dim") {
  Checked c(std::string(kScale) +
            "step s(tok: i32) -> (out: f32[8]) {\n"
            "  let r = scale(a, b);\n"
            "  return r;\n"
            "}\n");
  const auto& d = c.only(DiagKind::ArgShapeMismatch);
  CHECK(d.message == "shape mismatch for argument 'y' of 'scale': expected [8], found [16]");
  CHECK(c.at(d.range) == "b");
  CHECK(c.noteMessages(d) == std::vector<std::string>{"parameter 'y' is declared here",
                                                      "'N' = 8 was inferred from this argument",
                                                      "shape [16] comes from here"});
  REQUIRE(d.notes.size() == 3);
  CHECK(c.at(d.notes[0].range) == "y: f32[N]");
  CHECK(c.at(d.notes[1].range) == "a");
  CHECK(c.at(d.notes[2].range) == "16");
}

TEST_CASE("sema: symbolic shapes inside an op") {
  SUBCASE("different symbols do not match") {
    Checked c(
        "op bad<N, M>(x: f32[N], y: f32[M]) -> z: f32[N]\n"
        "  tasks t in 1\n"
        "{\n"
        "  store z[0 : +N] = (load x[0 : +N]) + (load y[0 : +M]);\n"
        "}\n");
    const auto& d = c.only(DiagKind::ShapeMismatch);
    CHECK(d.message == "shape mismatch in '+': f32[N] and f32[M]");
    CHECK(c.at(d.range) == "+");
    CHECK(c.noteMessages(d) == std::vector<std::string>{"shape [N] comes from here", "shape [M] comes from here"});
  }
  SUBCASE("equal polynomials match however they are written") {
    Checked c(
        "op same<N>(x: f32[2 * N], y: f32[N + N]) -> z: f32[N * 2]\n"
        "  tasks t in 1\n"
        "{\n"
        "  store z[0 : +2 * N] = (load x[0 : +N * 2]) + (load y[0 : +(N + N)]);\n"
        "}\n");
    CHECK(c.rendered() == "");
  }
  SUBCASE("dtypes must agree") {
    Checked c(
        "op o(x: f32[4]) -> y: f32[4] tasks t in 1 {\n"
        "  store y[0 : +4] = (load x[0 : +4]) + ((load x[0 : +4]) as bf16);\n"
        "}\n");
    CHECK(c.only(DiagKind::DTypeMismatch).message ==
          "dtype mismatch in '+': f32[4] and bf16[4]; convert one side with `as`");
  }
  SUBCASE("a store of the wrong shape") {
    Checked c(
        "op o<N>(x: f32[N]) -> y: f32[N] tasks t in 1 {\n"
        "  store y[0 : +N] = load x[0 : +1];\n"
        "}\n");
    CHECK(c.only(DiagKind::StoreShape).message == "storing a value of shape [1] into region [N] of 'y'");
  }
}

TEST_CASE("sema: unknown type with a suggestion") {
  Checked c("weight u: bf61[4] = \"u\";\n");
  CHECK(c.only(DiagKind::UnknownType).message ==
        "unknown type 'bf61'; expected a dtype (bf16, f16, f32, i32, bool); did you mean 'bf16'?");
}

// ---- Layouts -------------------------------------------------------------------------------------

namespace {
const char* kMatvec =
    "op mv<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K]) -> y: bf16[N]\n"
    "  tasks t in N / R\n"
    "{\n"
    "  store y[t * R : +R] = rowdot(load w[t * R : +R, 0 : +K], load x[0 : +K]) as bf16;\n"
    "}\n"
    "weight wr: bf16[64, 32] = \"wr\";\n"
    "weight wt: bf16[64, 32] tiled(8, 32) = \"wt\";\n"
    "weight x: bf16[32] = \"x\";\n";
}

TEST_CASE("sema: layout mismatch at a call") {
  SUBCASE("row-major weight for a tiled parameter") {
    Checked c(std::string(kMatvec) + "step s(tok: i32) -> (o: bf16[64]) { let a = mv(wr, x); return a; }\n");
    const auto& d = c.only(DiagKind::ArgLayoutMismatch);
    CHECK(d.message == "layout mismatch for argument 'w' of 'mv': expected tiled(16, 32), found row_major");
    CHECK(c.at(d.range) == "wr");
    CHECK(c.noteMessages(d) ==
          std::vector<std::string>{"parameter 'w' is declared here", "the layout of 'wr' is declared here"});
  }
  SUBCASE("R inferred from the argument's layout") {
    Checked c(std::string(kMatvec) + "step s(tok: i32) -> (o: bf16[64]) { let a = mv(wt, x); return a; }\n");
    CHECK(c.rendered() == "");
  }
  SUBCASE("R given by name disagrees with the layout") {
    Checked c(std::string(kMatvec) + "step s(tok: i32) -> (o: bf16[64]) { let a = mv(wt, x, R = 16); return a; }\n");
    const auto& d = c.only(DiagKind::ArgLayoutMismatch);
    CHECK(d.message == "layout mismatch for argument 'w' of 'mv': expected tiled(16, 32), found tiled(8, 32)");
    REQUIRE(d.notes.size() == 2);
    CHECK(c.at(d.notes[1].range) == "tiled(8, 32)");
  }
}

TEST_CASE("sema: layout rules on declarations") {
  Checked c(
      "weight a: bf16[40, 32] tiled(16, 32) = \"a\";\n"
      "weight b: bf16[40] tiled(8, 8) = \"b\";\n"
      "weight c: bf16[4, 32] padded(16) = \"c\";\n"
      "weight d: bf16[4, 32] swizzle(48) = \"d\";\n"
      "weight e: bf16[4, 32] tiles(4, 32) = \"e\";\n"
      "weight f: bf16[64, 32] interleave(8) = \"f\";\n");
  CHECK(c.kinds() == std::vector<DiagKind>{DiagKind::LayoutNotDividing, DiagKind::LayoutRank, DiagKind::PaddedTooSmall,
                                           DiagKind::SwizzleBytes, DiagKind::UnknownLayout,
                                           DiagKind::InterleaveSources});
  CHECK(c.messages()[0] == "layout tiled(16, 32) does not fit shape [40, 32]: 40 is not a multiple of 16");
  CHECK(c.messages()[1] == "layout 'tiled' needs a tensor of rank 2, found rank 1");
  CHECK(c.messages()[2] == "padded(16) is narrower than the rows it pads (32 elements)");
  CHECK(c.messages()[3] == "swizzle(48): the swizzle width must be 32, 64 or 128 bytes");
  CHECK(c.messages()[4].rfind("unknown layout 'tiles'; expected row_major", 0) == 0);
  CHECK(c.messages()[4].find("did you mean 'tiled'?") != std::string::npos);
  CHECK(c.messages()[5] == "weight 'f' has layout interleave(8) but 1 source; interleave needs at least 2");
}

// ---- Ops and task grids --------------------------------------------------------------------------

namespace {
const char* kSplit =
    "op split<N>(x: f32[N]) -> y: f32[N]\n"
    "  tasks t in N / 16\n"
    "{\n"
    "  store y[t * 16 : +16] = load x[t * 16 : +16];\n"
    "}\n"
    "weight a: f32[40] = \"a\";\n"
    "weight b: f32[32] = \"b\";\n";
}

TEST_CASE("sema: an inexact task grid is reported for the instantiation, with the call") {
  Checked c(std::string(kSplit) +
            "step s(tok: i32) -> (o1: f32[32], o2: f32[40]) {\n"
            "  let q = split(b);\n"
            "  let p = split(a);\n"
            "  return (q, p);\n"
            "}\n");
  const auto& d = c.only(DiagKind::TaskGridInexact);
  CHECK(d.message == "task grid N / 16 = 40 / 16 is not exact: 40 is not a multiple of 16");
  CHECK(c.at(d.range) == "N / 16");
  CHECK(c.noteMessages(d) == std::vector<std::string>{"in 'split' with N = 40, called from here"});
  REQUIRE(d.notes.size() == 1);
  CHECK(c.at(d.notes[0].range) == "split(a)");
}

TEST_CASE("sema: exact instantiations of the same op are clean") {
  Checked c(std::string(kSplit) +
            "weight c: f32[64] = \"c\";\n"
            "step s(tok: i32) -> (o1: f32[32], o2: f32[64]) {\n"
            "  let q = split(b);\n"
            "  let p = split(c);\n"
            "  return (q, p);\n"
            "}\n");
  CHECK(c.rendered() == "");
}

TEST_CASE("sema: a concrete inexact task grid is reported without a call") {
  Checked c("op o(x: f32[40]) -> y: f32[40] tasks t in 40 / 16 { store y[0 : +40] = load x[0 : +40]; }\n");
  const auto& d = c.only(DiagKind::TaskGridInexact);
  CHECK(d.message == "task grid 40 / 16 = 40 / 16 is not exact: 40 is not a multiple of 16");
  CHECK(d.notes.empty());
}

TEST_CASE("sema: static_assert in a generic op is checked per instantiation") {
  Checked c(
      "op o<N>(x: f32[N]) -> y: f32[N] tasks t in 1 {\n"
      "  static_assert(N % 4 == 0, \"N must be a multiple of 4\");\n"
      "  store y[0 : +N] = load x[0 : +N];\n"
      "}\n"
      "weight a: f32[6] = \"a\";\n"
      "step s(tok: i32) -> (r: f32[6]) { let q = o(a); return q; }\n");
  const auto& d = c.only(DiagKind::StaticAssertFailed);
  CHECK(d.message == "static assertion failed: N must be a multiple of 4");
  CHECK(c.noteMessages(d) == std::vector<std::string>{"in 'o' with N = 6, called from here"});
}

TEST_CASE("sema: op body rules") {
  Checked c(
      "weight w: f32[4] = \"w\";\n"
      "op o(x: f32[4]) -> y: f32[4] tasks t in 1 {\n"
      "  let q = load w[0 : +4];\n"
      "  store x[0 : +4] = load x[0 : +4];\n"
      "  let r = load y[0 : +4];\n"
      "  store y[0 : +4] = load x[0 : +8];\n"
      "}\n"
      "op p(x: f32[4]) -> y: f32[4] tasks t in 1 { }\n");
  CHECK(c.kinds() == std::vector<DiagKind>{DiagKind::GlobalInOp, DiagKind::StoreNotWritable, DiagKind::LoadFromResult,
                                           DiagKind::SliceOutOfBounds, DiagKind::StoreShape,
                                           DiagKind::ResultNeverStored});
  CHECK(c.messages()[0] == "op bodies only see their parameters; pass weight 'w' as an argument");
  CHECK(c.messages()[1] == "cannot store to 'x': parameters are read-only; mark it inout to write it");
  CHECK(c.messages()[2] == "cannot load from op result 'y': results are write-only inside their op");
  CHECK(c.messages()[3] == "region [0 : +8] is out of bounds for dimension 0 of 'x' (size 4)");
  CHECK(c.messages()[4] == "storing a value of shape [8] into region [4] of 'y'");
  CHECK(c.messages()[5] == "op result 'y' is never stored");
  CHECK(c.at(c.all()[5].range) == "y");
}

// ---- Fns and the step ----------------------------------------------------------------------------

TEST_CASE("sema: the step") {
  SUBCASE("several, in program order") {
    Checked c(std::string(kScale) +
              "step s1(t: i32) -> (o: f32[8]) { let r = scale(a, a); return r; }\n"
              "step s2(t: i32) -> (o: f32[8]) { let r = scale(a, a); return r; }\n");
    CHECK(c.rendered() == "");
    REQUIRE(c.program->steps.size() == 2);
    CHECK(c.program->steps[0]->name.name == "s1");
    CHECK(c.program->steps[1]->name.name == "s2");
  }
  SUBCASE("distinct names") {
    Checked c(std::string(kScale) +
              "step s1(t: i32) -> (o: f32[8]) { let r = scale(a, a); return r; }\n"
              "step s1(t: i32) -> (o: f32[8]) { let r = scale(a, a); return r; }\n");
    CHECK(c.only(DiagKind::Redefinition).message == "'s1' is already defined");
    REQUIRE(c.program->steps.size() == 1);
  }
  SUBCASE("must return") {
    Checked c(std::string(kScale) + "step s(t: i32) -> (o: f32[8]) { let r = scale(a, a); }\n");
    CHECK(c.only(DiagKind::MissingReturn).message == "'s' must end with `return`");
  }
  SUBCASE("none") {
    Checked c("const A = 1;\n");
    CHECK(c.rendered() == "");
    CHECK(c.program->steps.empty());
    CHECK(c.program->config == nullptr);
  }
}

TEST_CASE("sema: calls") {
  SUBCASE("argument count") {
    Checked c(std::string(kScale) + "step s(t: i32) -> (o: f32[8]) { let r = scale(a); return r; }\n");
    const auto& d = c.only(DiagKind::ArgCount);
    CHECK(d.message == "'scale' takes 2 arguments, found 1");
    CHECK(c.noteMessages(d) == std::vector<std::string>{"'scale' is declared here"});
  }
  SUBCASE("unknown generic argument") {
    Checked c(std::string(kScale) + "step s(t: i32) -> (o: f32[8]) { let r = scale(a, a, M = 8); return r; }\n");
    CHECK(c.only(DiagKind::UnknownGenericArg).message == "'scale' has no generic parameter 'M'; did you mean 'N'?");
  }
  SUBCASE("cannot infer") {
    Checked c(
        "op o<N, K>(x: f32[N]) -> y: f32[N] tasks t in K { store y[0 : +N] = load x[0 : +N]; }\n"
        "weight a: f32[8] = \"a\";\n"
        "step s(t: i32) -> (r: f32[8]) { let q = o(a); return q; }\n");
    CHECK(c.only(DiagKind::CannotInfer).message == "cannot infer 'K' for 'o'; pass it by name: o(..., K = ...)");
  }
}

// ---- Imports -------------------------------------------------------------------------------------

TEST_CASE("sema: import through -I") {
  TempDir tmp;
  tmp.write("inc/lib/util.mk",
            "const K = 3;\n"
            "op twice<N>(x: f32[N]) -> y: f32[N] tasks t in 1 { store y[0 : +N] = (load x[0 : +N]) * 2; }\n");
  std::string text =
      "import lib.util;\n"
      "const X = K * 2;\n"
      "static_assert(X == 6, \"six\");\n"
      "weight a: f32[4] = \"a\";\n"
      "step s(t: i32) -> (o: f32[4]) { let r = twice(a); return r; }\n";
  std::string rootPath = (tmp.path() / "root" / "main.mk").string();

  Checked missing(text, {}, rootPath);
  REQUIRE_FALSE(missing.all().empty());
  const auto& d = missing.all()[0];
  CHECK(d.kind == DiagKind::ModuleNotFound);
  CHECK(d.message == "cannot find module 'lib.util' (looked for " + (tmp.path() / "root/lib/util.mk").string() + ")");
  CHECK(missing.at(d.range) == "import lib.util;");

  mk::CheckOptions opts;
  opts.includeDirs = {(tmp.path() / "inc").string()};
  Checked found(text, opts, rootPath);
  CHECK(found.rendered() == "");
  REQUIRE(found.program->modules.size() == 2);
  CHECK(found.program->root()->isRoot);
  CHECK(found.program->root()->name == rootPath);
  CHECK(found.program->modules[1]->name == "lib.util");
  CHECK_FALSE(found.program->modules[1]->isRoot);
  REQUIRE(found.program->root()->imports.size() == 1);
  CHECK(found.program->root()->imports[0] == found.program->modules[1].get());
  CHECK(found.program->steps.size() == 1);
}

TEST_CASE("sema: import relative to the importing file, and the search order") {
  TempDir tmp;
  tmp.write("main/a.mk", "const K = 1;\n");
  tmp.write("inc/a.mk", "const K = 2;\n");
  mk::CheckOptions opts;
  opts.includeDirs = {(tmp.path() / "inc").string()};
  // The importing file's folder comes before -I.
  Checked c("import a;\nstatic_assert(K == 1, \"local folder first\");\n", opts, (tmp.path() / "main/root.mk").string());
  CHECK(c.rendered() == "");
}

TEST_CASE("sema: names from imports") {
  TempDir tmp;
  tmp.write("m1.mk", "const K = 1;\nconst L = 10;\n");
  tmp.write("m2.mk", "const K = 2;\n");
  std::string root = (tmp.path() / "root.mk").string();
  SUBCASE("two imports defining a name make a use ambiguous") {
    Checked c("import m1;\nimport m2;\nconst X = K;\n", {}, root);
    const auto& d = c.only(DiagKind::AmbiguousName);
    CHECK(d.message == "'K' is ambiguous: both 'm1' and 'm2' define it");
    CHECK(c.noteMessages(d) == std::vector<std::string>{"one definition is here", "one definition is here"});
    REQUIRE(d.notes.size() == 2);
    CHECK(c.sources.file(d.notes[0].range.file).path() == (tmp.path() / "m1.mk").string());
    CHECK(c.sources.file(d.notes[1].range.file).path() == (tmp.path() / "m2.mk").string());
  }
  SUBCASE("a local declaration wins") {
    Checked c("import m1;\nimport m2;\nconst K = 5;\nstatic_assert(K == 5 && L == 10, \"local\");\n", {}, root);
    CHECK(c.rendered() == "");
  }
  SUBCASE("imports must come first") {
    Checked c("const A = 1;\nimport m1;\n", {}, root);
    const auto& d = c.only(DiagKind::ImportNotFirst);
    CHECK(d.message == "imports must come before every other declaration");
    CHECK(c.noteMessages(d) == std::vector<std::string>{"the first declaration is here"});
  }
  SUBCASE("imported twice") {
    Checked c("import m1;\nimport m1;\n", {}, root);
    const auto& d = c.only(DiagKind::DuplicateImport);
    CHECK(d.severity == mk::Severity::Warning);
    CHECK(d.message == "module 'm1' is imported twice");
    CHECK(c.diags.errorCount() == 0);
  }
}

TEST_CASE("sema: imported modules may not declare a config or a step") {
  TempDir tmp;
  tmp.write("lib.mk",
            "config c { x = 1; }\n"
            "op o(x: f32[4]) -> y: f32[4] tasks t in 1 { store y[0 : +4] = load x[0 : +4]; }\n"
            "weight w: f32[4] = \"w\";\n"
            "step s(t: i32) -> (r: f32[4]) { let q = o(w); return q; }\n");
  Checked c("import lib;\n", {}, (tmp.path() / "root.mk").string());
  CHECK(c.kinds() == std::vector<DiagKind>{DiagKind::ImportedConfig, DiagKind::ImportedStep});
  CHECK(c.messages() == std::vector<std::string>{"imported module 'lib' declares a config; only the root file may",
                                                 "imported module 'lib' declares a step; only the root file may"});
  CHECK(c.program->steps.empty());
  CHECK(c.program->config == nullptr);
}

TEST_CASE("sema: import cycle") {
  TempDir tmp;
  std::string a = tmp.write("a.mk", "import b;\nconst A = 1;\n");
  std::string b = tmp.write("b.mk", "import a;\nconst B = 1;\n");
  auto c = Checked::load(a);
  const auto& d = c->only(DiagKind::ImportCycle);
  CHECK(d.message == "import cycle: " + a + " -> " + b + " -> " + a);
  CHECK(c->sources.file(d.range.file).path() == b);
  CHECK(c->at(d.range) == "import a;");
  CHECK(c->program->modules.size() == 2);
}

TEST_CASE("sema: a module imported along two paths is loaded once") {
  TempDir tmp;
  tmp.write("base.mk", "const K = 1;\n");
  tmp.write("left.mk", "import base;\nconst L = K + 1;\n");
  tmp.write("right.mk", "import base;\nconst R = K + 2;\n");
  Checked c("import left;\nimport right;\nstatic_assert(L + R == 5, \"diamond\");\n", {},
            (tmp.path() / "root.mk").string());
  CHECK(c.rendered() == "");
  CHECK(c.program->modules.size() == 4);
}

TEST_CASE("sema: stdlib imports") {
  SUBCASE("the default stdlib folder") {
    fs::path dir = mk::defaultStdlibDir();
    CHECK(fs::is_regular_file(dir / "linear.mk"));
    Checked c(
        "import std.linear;\n"
        "weight w: bf16[64, 512] tiled(16, 512) = \"w\";\n"
        "weight x: bf16[512] = \"x\";\n"
        "step s(t: i32) -> (y: bf16[64]) { let r = matvec(w, x); return r; }\n");
    CHECK(c.rendered() == "");
    REQUIRE(c.program->modules.size() == 2);
    CHECK(c.program->modules[1]->name == "std.linear");
    CHECK(fs::equivalent(c.sources.file(c.program->modules[1]->ast->file).path(), dir / "linear.mk"));
  }
  SUBCASE("a missing stdlib module") {
    Checked c("import std.nope;\n");
    const auto& d = c.only(DiagKind::ModuleNotFound);
    CHECK(d.message == "cannot find module 'std.nope' (looked for " +
                           (fs::path(mk::defaultStdlibDir()) / "nope.mk").lexically_normal().string() +
                           "); did you mean 'std.rope'?");
  }
  SUBCASE("CheckOptions::stdlibDir") {
    TempDir tmp;
    tmp.write("nn.mk", "const FROM_TEMP = 1;\n");
    mk::CheckOptions opts;
    opts.stdlibDir = tmp.path().string();
    Checked c("import std.nn;\nstatic_assert(FROM_TEMP == 1);\n", opts);
    CHECK(c.rendered() == "");
    Checked notThere("import std.linear;\n", opts);
    CHECK(notThere.only(DiagKind::ModuleNotFound).message ==
          "cannot find module 'std.linear' (looked for " + (tmp.path() / "linear.mk").string() + ")");
  }
}

// ---- Shipped files -------------------------------------------------------------------------------

TEST_CASE("sema: every stdlib file checks without diagnostics") {
  fs::path dir = repoRoot() / "stdlib";
  REQUIRE(fs::is_directory(dir));
  auto files = mkFiles(dir);
  CHECK(files.size() >= 8);
  for (const auto& f : files) {
    mk::CheckOptions opts;
    opts.stdlibDir = dir.string();
    auto c = Checked::load(f.string(), opts);
    INFO(f.string());
    CHECK(c->rendered() == "");
    CHECK(c->program->root()->isRoot);
  }
}

TEST_CASE("sema: every example checks without diagnostics, under every config, and has a step") {
  fs::path dir = repoRoot() / "examples";
  REQUIRE(fs::is_directory(dir));
  auto files = mkFiles(dir);
  CHECK(files.size() >= 2);
  for (const auto& f : files) {
    INFO(f.string());
    mk::CheckOptions opts;
    opts.stdlibDir = (repoRoot() / "stdlib").string();
    opts.allConfigs = true;
    auto c = Checked::load(f.string(), opts);
    CHECK(c->rendered() == "");
    // decode, prefill, prefill_logits, and in examples/llama.mk prefill_short before the last.
    REQUIRE(c->program->steps.size() >= 3);
    CHECK(c->program->steps[0]->name.name == "decode");
    CHECK(c->program->steps[1]->name.name == "prefill");
    CHECK(c->program->steps.back()->name.name == "prefill_logits");
    REQUIRE(c->program->config);
    CHECK(intValue(*c->program, "hidden") > 0);
    CHECK(c->program->modules.size() > 1);
  }
}

TEST_CASE("sema: examples/llama.mk under each of its configs") {
  fs::path file = repoRoot() / "examples" / "llama.mk";
  std::vector<std::string> configs;
  {
    auto c = Checked::load(file.string());
    for (const auto& d : c->program->root()->ast->decls)
      if (d->kind == mk::ast::DeclKind::Config) configs.push_back(d->name.name);
    REQUIRE(c->program->config);
    CHECK(c->program->config->name.name == configs.at(0));
  }
  CHECK(configs.size() >= 2);
  for (const auto& name : configs) {
    INFO(name);
    mk::CheckOptions opts;
    opts.configName = name;
    auto c = Checked::load(file.string(), opts);
    CHECK(c->rendered() == "");
    REQUIRE(c->program->config);
    CHECK(c->program->config->name.name == name);
    CHECK(c->program->steps.size() == 4);  // decode, prefill, prefill_short, prefill_logits
  }
}

// Regression (found by fuzzing): a one-name tuple pattern binds a single result instead of
// reading a tuple that is not there.
TEST_CASE("sema: let (a) = f() binds a single result") {
  Checked c(
      "op copy<N>(x: f32[N]) -> y: f32[N]\n  tasks t in 1\n{\n  store y[0 : +N] = load x[0 : +N];\n}\n"
      "fn f(x: f32[8]) -> f32[8] {\n  let (a) = copy(x);\n  return a;\n}\n"
      "fn g(x: f32[8]) -> f32[8] {\n  let (a, b) = copy(x);\n  return a;\n}\n");
  CHECK(c.kinds() == std::vector<DiagKind>{DiagKind::TupleCount});
}
