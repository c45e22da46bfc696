// mk::formatSource: the canonical layout, comment and token preservation, idempotence.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/format.h"
#include "frontend/parse.h"

namespace {

// The code and comment tokens of `text` (line comments without trailing blanks).
std::vector<std::string> significantTokens(std::string_view text) {
  std::vector<std::string> out;
  for (const mk::Token& t : mk::lex(text)) {
    if (t.kind == mk::TokenKind::Newline || t.kind == mk::TokenKind::Space) continue;
    std::string s(t.text);
    if (t.kind == mk::TokenKind::LineComment || t.kind == mk::TokenKind::DocComment)
      while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
    out.push_back(s);
  }
  return out;
}

// Formats `in`, checks the result is stable and keeps every token, and returns it.
std::string formatChecked(std::string_view in) {
  std::string out = mk::formatSource(in);
  CHECK(mk::formatSource(out) == out);
  CHECK(significantTokens(out) == significantTokens(in));
  return out;
}

}  // namespace

TEST_CASE("format: top-level declarations") {
  const char* in =
      "import   std.nn ;\n"
      "import a.b;\n"
      "const  EPS : float=1e-5;\n"
      "config small{dim=64;layers=2;}\n"
      "config big:small{ dim = 4096 ; }\n"
      "weight  w : bf16[N,K] tiled(16,K)=\"model.w\";\n"
      "weight  qkv:bf16[3*N,K]=[\"q\",\"k\",\"v\",];\n"
      "state cache:bf16[L,S,D];\n"
      "group layer[ l in 0..L ]{weight g:bf16[D]=\"l.{l}.g\";state kc:bf16[S,D];}\n"
      "static_assert( D%64==0 , \"D must be a multiple of 64\" ) ;\n";
  CHECK(formatChecked(in) ==
        "import std.nn;\n"
        "import a.b;\n"
        "const EPS: float = 1e-5;\n"
        "config small {\n"
        "    dim = 64;\n"
        "    layers = 2;\n"
        "}\n"
        "config big : small {\n"
        "    dim = 4096;\n"
        "}\n"
        "weight w: bf16[N, K] tiled(16, K) = \"model.w\";\n"
        "weight qkv: bf16[3 * N, K] = [\"q\", \"k\", \"v\",];\n"
        "state cache: bf16[L, S, D];\n"
        "group layer[l in 0 .. L] {\n"
        "    weight g: bf16[D] = \"l.{l}.g\";\n"
        "    state kc: bf16[S, D];\n"
        "}\n"
        "static_assert(D % 64 == 0, \"D must be a multiple of 64\");\n");
}

TEST_CASE("format: op header, generics, tasks clause and slices") {
  const char* in =
      "@cluster( 2 ) op matvec < N , K , R=16 , eps:float=1e-5 > ( w:bf16[N,K] tiled(R,K) ,"
      " x:bf16[K] , cache : inout bf16[S,D] )->y:bf16[N] tasks t in N/R,s in 2{\n"
      "var acc:f32[R]=0;\n"
      "let a=load w[t*R:+R,0:+K];\n"
      "store y[t*16:+16]=(acc*a) as bf16;\n"
      "}\n";
  CHECK(formatChecked(in) ==
        "@cluster(2)\n"
        "op matvec<N, K, R = 16, eps: float = 1e-5>(w: bf16[N, K] tiled(R, K), x: bf16[K], "
        "cache: inout bf16[S, D]) -> y: bf16[N]\n"
        "    tasks t in N / R, s in 2 {\n"
        "    var acc: f32[R] = 0;\n"
        "    let a = load w[t * R : +R, 0 : +K];\n"
        "    store y[t * 16 : +16] = (acc * a) as bf16;\n"
        "}\n");

  // The spec's layout (results and tasks on their own lines, `{` alone) becomes the canonical one;
  // a break before `->` is kept.
  const char* spec =
      "op matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K])\n"
      "  -> y: bf16[N]\n"
      "  tasks t in N / R\n"
      "{\n"
      "  var acc: f32[R] = 0;\n"
      "}\n";
  CHECK(formatChecked(spec) ==
        "op matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K])\n"
        "    -> y: bf16[N]\n"
        "    tasks t in N / R {\n"
        "    var acc: f32[R] = 0;\n"
        "}\n");
  const char* joined =
      "op matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K]) -> y: bf16[N] tasks t in N / R {\n"
      "var acc: f32[R] = 0;\n"
      "}\n";
  CHECK(formatChecked(joined) ==
        "op matvec<N, K, R = 16>(w: bf16[N, K] tiled(R, K), x: bf16[K]) -> y: bf16[N]\n"
        "    tasks t in N / R {\n"
        "    var acc: f32[R] = 0;\n"
        "}\n");
}

TEST_CASE("format: statements and operators") {
  const char* in =
      "op f(x: bf16[K]) -> y: bf16[K] tasks t in 1 {\n"
      "for k in 0..K by 64{acc+=x[k:+64]*-2;acc-=1;acc*=-scale;acc/=2;}\n"
      "if a<b&&!c||d>=e{x=-x;}else if a!=b{}else{x=a-b%c;}\n"
      "let v = -(a + b) - -c;\n"
      "let ok = select(i <= 3, x, -inf);\n"
      "let r = (q[0:+half]) as f32 ;\n"
      "}\n";
  CHECK(formatChecked(in) ==
        "op f(x: bf16[K]) -> y: bf16[K]\n"
        "    tasks t in 1 {\n"
        "    for k in 0 .. K by 64 {\n"
        "        acc += x[k : +64] * -2;\n"
        "        acc -= 1;\n"
        "        acc *= -scale;\n"
        "        acc /= 2;\n"
        "    }\n"
        "    if a < b && !c || d >= e {\n"
        "        x = -x;\n"
        "    } else if a != b {} else {\n"
        "        x = a - b % c;\n"
        "    }\n"
        "    let v = -(a + b) - -c;\n"
        "    let ok = select(i <= 3, x, -inf);\n"
        "    let r = (q[0 : +half]) as f32;\n"
        "}\n");
}

TEST_CASE("format: fns, the step and annotations") {
  const char* in =
      "fn block<D>(w:layer,x:bf16[D],pos:i32)->(a:bf16[D],b:i32){\n"
      "let (h,i)=attn(w.q,x,eps=1e-5);\n"
      "@after(h) let y=mlp(h);\n"
      "@after(y, h)\n"
      "norm(y);\n"
      "sync grid;\n"
      "if D>64{return (y,i);}\n"
      "return (h,i);\n"
      "}\n"
      "step decode(token:i32,pos:i32)->(logits:f32[V],next:i32){\n"
      "for l in 0..layers{x=block(layer[l],x,pos);}\n"
      "return (logits,next);\n"
      "}\n"
      "fn noop() { }\n";
  CHECK(formatChecked(in) ==
        "fn block<D>(w: layer, x: bf16[D], pos: i32) -> (a: bf16[D], b: i32) {\n"
        "    let (h, i) = attn(w.q, x, eps = 1e-5);\n"
        "    @after(h) let y = mlp(h);\n"
        "    @after(y, h)\n"
        "    norm(y);\n"
        "    sync grid;\n"
        "    if D > 64 {\n"
        "        return (y, i);\n"
        "    }\n"
        "    return (h, i);\n"
        "}\n"
        "step decode(token: i32, pos: i32) -> (logits: f32[V], next: i32) {\n"
        "    for l in 0 .. layers {\n"
        "        x = block(layer[l], x, pos);\n"
        "    }\n"
        "    return (logits, next);\n"
        "}\n"
        "fn noop() {}\n");
}

TEST_CASE("format: comments are kept in place") {
  const char* in =
      "// file header\n"
      "/// Doc for A.\n"
      "const A = 1;   // trailing   \n"
      "const B = /* inline */ 2;\n"
      "/* block\n"
      "   spanning lines */\n"
      "fn f() -> i32 { // after brace\n"
      "    // leading\n"
      "  let x = 1; /* after */\n"
      "        let y = 2; /* before */ let z = 3;\n"
      "  if x { // then\n"
      "  } // after if\n"
      "  else { }\n"
      "  let w = f(a, // first\n"
      "            b);\n"
      "  // before close\n"
      "}\n";
  CHECK(formatChecked(in) ==
        "// file header\n"
        "/// Doc for A.\n"
        "const A = 1; // trailing\n"
        "const B = /* inline */ 2;\n"
        "/* block\n"
        "   spanning lines */\n"
        "fn f() -> i32 { // after brace\n"
        "    // leading\n"
        "    let x = 1; /* after */\n"
        "    let y = 2; /* before */\n"
        "    let z = 3;\n"
        "    if x { // then\n"
        "    } // after if\n"
        "    else {}\n"
        "    let w = f(a, // first\n"
        "        b);\n"
        "    // before close\n"
        "}\n");

  // A multi-line block comment keeps its inner lines byte for byte.
  const char* block = "fn f() {\n/* one\n      two\n  three */\n}\n";
  CHECK(formatChecked(block) == "fn f() {\n    /* one\n      two\n  three */\n}\n");

  // A line comment inside a statement ends the line; the rest continues one level deeper.
  CHECK(formatChecked("const A = 1 + // one\n2;\n") == "const A = 1 + // one\n    2;\n");
}

TEST_CASE("format: blank lines") {
  const char* in =
      "\n\n\n// header\n\n\n\n"
      "const A = 1;\n\n\n"
      "const B = 2;\n"
      "const C = 3;\n\n"
      "fn f() {\n\n\n"
      "  let x = 1;\n\n\n\n"
      "  // about y\n\n"
      "  let y = 2;\n\n"
      "}\n\n\n\n";
  CHECK(formatChecked(in) ==
        "// header\n"
        "\n"
        "const A = 1;\n"
        "\n"
        "const B = 2;\n"
        "const C = 3;\n"
        "\n"
        "fn f() {\n"
        "    let x = 1;\n"
        "\n"
        "    // about y\n"
        "\n"
        "    let y = 2;\n"
        "}\n");
  // No blank line inside a statement, nor between an annotation and what it annotates.
  CHECK(formatChecked("fn f() {\n  let y = g(a,\n\n\n    b);\n  @after(y)\n\n  h(y);\n}\n") ==
        "fn f() {\n    let y = g(a,\n        b);\n    @after(y)\n    h(y);\n}\n");
}

TEST_CASE("format: line breaks inside brackets are kept, others joined") {
  const char* in =
      "fn f(a: i32,\n"
      "       b: i32)\n"
      "  -> i32\n"
      "{\n"
      "  let y = g(a,\n"
      "      h(b,\n"
      "        c),\n"
      "      d\n"
      "  );\n"
      "  let z = a +\n"
      "     b;\n"
      "  let w =\n"
      "        long_call(a);\n"
      "  return y;\n"
      "}\n"
      "weight qkv: bf16[N, K] = [\n"
      "  \"q\",\n"
      "  \"k\",\n"
      "];\n";
  CHECK(formatChecked(in) ==
        "fn f(a: i32,\n"
        "    b: i32)\n"
        "    -> i32 {\n"
        "    let y = g(a,\n"
        "        h(b,\n"
        "            c),\n"
        "        d\n"
        "    );\n"
        "    let z = a + b;\n"
        "    let w =\n"
        "        long_call(a);\n"
        "    return y;\n"
        "}\n"
        "weight qkv: bf16[N, K] = [\n"
        "    \"q\",\n"
        "    \"k\",\n"
        "];\n");

  // Broken generic brackets of a long op signature.
  const char* generic =
      "op f<N, K,\n"
      "  R = 16>(\n"
      "  w: bf16[N, K], x: bf16[K]) -> y: bf16[N] tasks t in N / R {\n"
      "}\n";
  CHECK(formatChecked(generic) ==
        "op f<N, K,\n"
        "    R = 16>(\n"
        "    w: bf16[N, K], x: bf16[K]) -> y: bf16[N]\n"
        "    tasks t in N / R {}\n");
}

TEST_CASE("format: line endings, trailing blanks, end of file") {
  CHECK(formatChecked("const A = 1;\r\nconst B = 2;   \r\n\r\n\r\nconst C = 3;") ==
        "const A = 1;\nconst B = 2;\n\nconst C = 3;\n");
  CHECK(formatChecked("const A = 1;\n\n\n\n") == "const A = 1;\n");
  CHECK(formatChecked("") == "");
  CHECK(formatChecked("\n  \n\t\n") == "");
  CHECK(formatChecked("// only a comment") == "// only a comment\n");
}

TEST_CASE("format: text that does not lex comes back unchanged") {
  for (const char* bad : {"const a = 1 $ 2;\n", "const s = \"unterminated;\n  x\n",
                          "/* never closed\nconst a = 1;\n", "const  a = \xff 1;\n"}) {
    CAPTURE(bad);
    CHECK(mk::formatSource(bad) == bad);
  }
}

TEST_CASE("format: idempotent and token-preserving on unusual spacing") {
  const char* inputs[] = {
      "op f<N>(x: bf16[N]) -> y: bf16[N] tasks t in N {store y[t]=-load x[t];}",
      "fn g() { let a = f( /* c */ x ,y ) ; if a { } else { /* nothing */ } }",
      "const A = ( 1 +\n 2 ) * - 3 ;// c\nconst B = ! true ;",
      "op h(x: bf16[N]) -> y: bf16[N]\n// why\ntasks t in N\n// brace\n{\n}\n",
      "fn k() {\n  let (a,b) = f(\n    x, // one\n    // two\n    y\n  ) ;\n}\n",
  };
  for (const char* in : inputs) {
    CAPTURE(in);
    std::string once = formatChecked(in);
    CHECK(formatChecked(once) == once);
  }
}

#ifdef MK_SOURCE_DIR
TEST_CASE("format: shipped .mk files format stably and keep their tokens") {
  namespace fs = std::filesystem;
  for (const char* dir : {"stdlib", "examples"}) {
    fs::path root = fs::path(MK_SOURCE_DIR) / dir;
    if (!fs::is_directory(root)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (entry.path().extension() != ".mk") continue;
      CAPTURE(entry.path().string());
      std::ifstream file(entry.path(), std::ios::binary);
      std::stringstream text;
      text << file.rdbuf();
      std::string once = mk::formatSource(text.str());
      CHECK(mk::formatSource(once) == once);
      CHECK(significantTokens(once) == significantTokens(text.str()));
    }
  }
}
#endif
