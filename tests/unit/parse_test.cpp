// mk::parseFile (the AST it builds, doc comments, precedence, error recovery, lexical errors,
// nesting limits) and mk::lex (tokens, kinds, offsets, lossless).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/parse.h"
#include "support/diagnostics.h"

namespace ast = mk::ast;

namespace {

struct Parsed {
  mk::SourceManager sources;
  mk::DiagnosticEngine diags{sources};
  mk::FileId file = 0;
  std::unique_ptr<ast::Module> mod;

  explicit Parsed(std::string text) {
    file = sources.add("test.mk", std::move(text));
    mod = mk::parseFile(file, sources, diags);
  }
  const std::string& text() const { return sources.file(file).text(); }
  std::string at(mk::SourceRange r) const {
    REQUIRE(r.valid());
    REQUIRE(r.file == file);
    REQUIRE(r.begin <= r.end);
    REQUIRE(r.end <= text().size());
    return text().substr(r.begin, r.end - r.begin);
  }
  std::vector<mk::DiagKind> kinds() const {
    std::vector<mk::DiagKind> out;
    for (const auto& d : diags.diagnostics()) out.push_back(d.kind);
    return out;
  }
  std::vector<std::string> messages() const {
    std::vector<std::string> out;
    for (const auto& d : diags.diagnostics()) out.push_back(d.message);
    return out;
  }
  const ast::Decl* decl(const std::string& name) const {
    for (const auto& d : mod->decls)
      if (d->name.name == name) return d.get();
    return nullptr;
  }
  // The value of `const NAME = ...;`.
  const ast::Expr* constValue(const std::string& name) const {
    auto* c = ast::as<ast::ConstDecl>(decl(name));
    REQUIRE(c != nullptr);
    return c->value.get();
  }
};

std::string nameOf(const ast::Expr* e) {
  auto* n = ast::as<ast::NameExpr>(e);
  return n ? n->name : "<not a name>";
}

int64_t intOf(const ast::Expr* e) {
  auto* n = ast::as<ast::IntLit>(e);
  REQUIRE(n != nullptr);
  return n->value;
}

}  // namespace

TEST_CASE("parse: every kind of top-level declaration") {
  Parsed p(
      "import std.nn;\n"
      "const A: int = 1;\n"
      "config small { dim = 64; layers = 2; }\n"
      "config big : small { dim = 128; }\n"
      "weight w: bf16[4, 8] tiled(2, 8) = \"model.w\";\n"
      "weight qkv: bf16[12] = [\"q\", \"k\", \"v\",];\n"
      "state cache: f32[2, 3];\n"
      "group layer[l in 0 .. 2] { weight g: bf16[4] = \"g.{l}\"; state kc: f32[4]; }\n"
      "@cluster(2)\n"
      "op o<N, R = 16, eps: float>(x: f32[N], c: inout f32[N]) -> (y: f32[N], z: i32) tasks t in N / R, u in 2 { }\n"
      "fn f<D>(x: bf16[D]) -> (a: bf16[D], b: i32) { return (x, 1); }\n"
      "step decode(token: i32, pos: i32) -> (logits: f32[8], next: i32) { return (a, b); }\n"
      "static_assert(A == 1, \"one \\\"is\\\" one\\n\\t\\\\\");\n");
  CHECK(p.messages().empty());
  REQUIRE(p.mod->decls.size() == 12);
  CHECK(p.mod->file == p.file);
  std::vector<ast::DeclKind> kinds;
  std::vector<std::string> names;
  for (const auto& d : p.mod->decls) {
    kinds.push_back(d->kind);
    names.push_back(d->name.name);
  }
  using K = ast::DeclKind;
  CHECK(kinds == std::vector<K>{K::Import, K::Const, K::Config, K::Config, K::Weight, K::Weight, K::State, K::Group,
                                K::Op, K::Fn, K::Step, K::Assert});
  CHECK(names == std::vector<std::string>{"", "A", "small", "big", "w", "qkv", "cache", "layer", "o", "f", "decode", ""});

  auto* imp = ast::as<ast::ImportDecl>(p.mod->decls[0].get());
  REQUIRE(imp);
  REQUIRE(imp->path.size() == 2);
  CHECK(imp->path[0].name == "std");
  CHECK(imp->path[1].name == "nn");
  CHECK(imp->dotted() == "std.nn");
  CHECK(p.at(imp->range) == "import std.nn;");

  auto* a = ast::as<ast::ConstDecl>(p.mod->decls[1].get());
  REQUIRE(a);
  REQUIRE(a->type);
  CHECK(a->type->name.name == "int");
  CHECK(intOf(a->value.get()) == 1);

  auto* big = ast::as<ast::ConfigDecl>(p.mod->decls[3].get());
  REQUIRE(big);
  REQUIRE(big->base);
  CHECK(big->base->name == "small");
  CHECK(p.at(big->base->range) == "small");
  auto* small = ast::as<ast::ConfigDecl>(p.mod->decls[2].get());
  REQUIRE(small->fields.size() == 2);
  CHECK(small->fields[1].name.name == "layers");
  CHECK(intOf(small->fields[1].value.get()) == 2);
  CHECK(p.at(small->fields[1].range) == "layers = 2;");
  CHECK_FALSE(small->base);

  auto* w = ast::as<ast::WeightDecl>(p.mod->decls[4].get());
  REQUIRE(w);
  CHECK(w->type.name.name == "bf16");
  CHECK(w->type.hasShape);
  REQUIRE(w->type.dims.size() == 2);
  CHECK(intOf(w->type.dims[1].get()) == 8);
  REQUIRE(w->type.layout);
  CHECK(w->type.layout->name.name == "tiled");
  CHECK(w->type.layout->args.size() == 2);
  CHECK(p.at(w->type.layout->range) == "tiled(2, 8)");
  CHECK(p.at(w->type.range) == "bf16[4, 8] tiled(2, 8)");
  CHECK_FALSE(w->sourceList);
  REQUIRE(w->sources.size() == 1);
  CHECK(w->sources[0].name == "model.w");
  CHECK(p.at(w->sources[0].range) == "\"model.w\"");

  auto* qkv = ast::as<ast::WeightDecl>(p.mod->decls[5].get());
  CHECK(qkv->sourceList);
  REQUIRE(qkv->sources.size() == 3);
  CHECK(qkv->sources[2].name == "v");

  auto* st = ast::as<ast::StateDecl>(p.mod->decls[6].get());
  REQUIRE(st);
  CHECK(st->type.dims.size() == 2);
  CHECK_FALSE(st->type.layout);

  auto* g = ast::as<ast::GroupDecl>(p.mod->decls[7].get());
  REQUIRE(g);
  CHECK(g->var.name == "l");
  CHECK(intOf(g->lo.get()) == 0);
  CHECK(intOf(g->hi.get()) == 2);
  REQUIRE(g->members.size() == 2);
  CHECK(g->members[0]->kind == K::Weight);
  CHECK(g->members[0]->name.name == "g");
  CHECK(g->members[1]->kind == K::State);
  CHECK(g->members[1]->name.name == "kc");

  auto* op = ast::as<ast::OpDecl>(p.mod->decls[8].get());
  REQUIRE(op);
  REQUIRE(op->annotations.size() == 1);
  CHECK(op->annotations[0].name.name == "cluster");
  CHECK(p.at(op->annotations[0].range) == "@cluster(2)");
  CHECK(p.at(op->range).rfind("@cluster(2)\nop o<", 0) == 0);  // the annotation is part of the op
  REQUIRE(op->generics.size() == 3);
  CHECK(op->generics[0].name.name == "N");
  CHECK_FALSE(op->generics[0].type);
  CHECK_FALSE(op->generics[0].defaultValue);
  CHECK(intOf(op->generics[1].defaultValue.get()) == 16);
  REQUIRE(op->generics[2].type);
  CHECK(op->generics[2].type->name == "float");
  REQUIRE(op->params.size() == 2);
  CHECK_FALSE(op->params[0].inout);
  CHECK(op->params[1].inout);
  CHECK(p.at(op->params[1].range) == "c: inout f32[N]");
  REQUIRE(op->results.size() == 2);
  REQUIRE(op->results[1].name);
  CHECK(op->results[1].name->name == "z");
  CHECK(op->results[1].type.name.name == "i32");
  CHECK_FALSE(op->results[1].type.hasShape);
  REQUIRE(op->tasks.size() == 2);
  CHECK(op->tasks[0].var.name == "t");
  CHECK(p.at(op->tasks[0].extent->range) == "N / R");
  CHECK(op->tasks[1].var.name == "u");
  CHECK(op->body.stmts.empty());

  auto* fn = ast::as<ast::FnDecl>(p.mod->decls[9].get());
  REQUIRE(fn);
  CHECK(fn->tupleResult);
  REQUIRE(fn->results.size() == 2);
  CHECK(fn->results[0].name->name == "a");
  REQUIRE(fn->body.stmts.size() == 1);
  auto* ret = ast::as<ast::ReturnStmt>(fn->body.stmts[0].get());
  REQUIRE(ret);
  auto* tup = ast::as<ast::TupleExpr>(ret->value.get());
  REQUIRE(tup);
  CHECK(tup->elems.size() == 2);

  auto* step = ast::as<ast::StepDecl>(p.mod->decls[10].get());
  REQUIRE(step);
  CHECK(step->params.size() == 2);
  CHECK(step->results.size() == 2);
  CHECK(step->tupleResult);

  auto* as = ast::as<ast::AssertDecl>(p.mod->decls[11].get());
  REQUIRE(as);
  REQUIRE(as->message);
  CHECK(*as->message == "one \"is\" one\n\t\\");  // escapes decoded
  auto* eq = ast::as<ast::BinaryExpr>(as->cond.get());
  REQUIRE(eq);
  CHECK(eq->op == ast::BinaryOp::Eq);
}

TEST_CASE("parse: fn results without names, and no results") {
  Parsed p(
      "fn a(x: bf16[4]) -> bf16[4] { return x; }\n"
      "fn b(x: bf16[4]) { sync grid; }\n"
      "fn c() -> (bf16[4]) { return x; }\n");
  CHECK(p.messages().empty());
  auto* a = ast::as<ast::FnDecl>(p.decl("a"));
  REQUIRE(a);
  CHECK_FALSE(a->tupleResult);
  REQUIRE(a->results.size() == 1);
  CHECK_FALSE(a->results[0].name);
  CHECK(p.at(a->results[0].range) == "bf16[4]");
  auto* b = ast::as<ast::FnDecl>(p.decl("b"));
  CHECK(b->results.empty());
  REQUIRE(b->body.stmts.size() == 1);
  auto* sy = ast::as<ast::SyncStmt>(b->body.stmts[0].get());
  REQUIRE(sy);
  CHECK(sy->scope.name == "grid");
  auto* c = ast::as<ast::FnDecl>(p.decl("c"));
  CHECK(c->params.empty());
  CHECK(c->tupleResult);
  REQUIRE(c->results.size() == 1);
}

TEST_CASE("parse: identifier ranges are byte offsets, also after multi-byte UTF-8") {
  Parsed p(
      "// héllo wörld → ✓ 😀\n"
      "/* ünïcode\n in a block */ const abc = xyz;\n"
      "weight w: bf16[4] = \"naïve→\"; const after = 1;\n");
  CHECK(p.messages().empty());
  auto* c = ast::as<ast::ConstDecl>(p.decl("abc"));
  REQUIRE(c);
  CHECK(c->name.range.begin == p.text().find("abc"));
  CHECK(p.at(c->name.range) == "abc");
  CHECK(p.at(c->value->range) == "xyz");
  CHECK(p.at(c->range) == "const abc = xyz;");
  auto* w = ast::as<ast::WeightDecl>(p.decl("w"));
  REQUIRE(w);
  CHECK(w->sources[0].name == "naïve→");
  CHECK(p.at(w->sources[0].range) == "\"naïve→\"");
  auto* after = p.decl("after");
  REQUIRE(after);
  CHECK(p.at(after->name.range) == "after");
  CHECK(after->name.range.begin == p.text().find("after"));
}

TEST_CASE("parse: doc comments") {
  Parsed p(
      "/// line one\n"
      "///line two\n"
      "const A = 1;\n"
      "\n"
      "/// cut off by the blank line\n"
      "\n"
      "const B = 2;\n"
      "/// cut off by a plain comment\n"
      "// plain\n"
      "const C = 3;\n"
      "// plain\n"
      "/// after a plain comment\n"
      "const D = 4;\n"
      "/// the config\n"
      "config c {\n"
      "  /// the field\n"
      "  x = 1;\n"
      "  y = 2;\n"
      "}\n"
      "group layer[l in 0 .. 1] {\n"
      "  /// the member\n"
      "  weight g: bf16[4] = \"g.{l}\";\n"
      "}\n"
      "  /// indented\n"
      "  /// doc\n"
      "op o() -> y: f32[1] tasks t in 1 { }\n");
  CHECK(p.messages().empty());
  CHECK(p.decl("A")->doc == "line one\nline two");
  CHECK(p.decl("B")->doc == "");
  CHECK(p.decl("C")->doc == "");
  CHECK(p.decl("D")->doc == "after a plain comment");
  auto* c = ast::as<ast::ConfigDecl>(p.decl("c"));
  REQUIRE(c);
  CHECK(c->doc == "the config");
  REQUIRE(c->fields.size() == 2);
  CHECK(c->fields[0].doc == "the field");
  CHECK(c->fields[1].doc == "");
  auto* g = ast::as<ast::GroupDecl>(p.decl("layer"));
  REQUIRE(g);
  CHECK(g->doc == "");
  CHECK(g->members[0]->doc == "the member");
  CHECK(p.decl("o")->doc == "indented\ndoc");
}

// Regression: a `///` comment at the end of a declaration's line becomes the doc comment of the next
// declaration (spec: doc comments attach to the declaration right below them).
TEST_CASE("parse: a trailing doc comment does not document the next line") {
  Parsed p("const E = 5; /// about E\nconst F = 6;\n");
  CHECK(p.decl("F")->doc == "");
}

TEST_CASE("parse: operator precedence and associativity") {
  Parsed p(
      "const A = a + b * c;\n"
      "const B = a - b - c;\n"
      "const C = a || b && c;\n"
      "const D = a < b == c > d;\n"
      "const E = (a + b) * c;\n"
      "const F = -a * b;\n"
      "const G = !a && b;\n"
      "const H = a * b % c / d;\n");
  CHECK(p.messages().empty());
  {
    auto* add = ast::as<ast::BinaryExpr>(p.constValue("A"));
    REQUIRE(add);
    CHECK(add->op == ast::BinaryOp::Add);
    CHECK(nameOf(add->lhs.get()) == "a");
    auto* mul = ast::as<ast::BinaryExpr>(add->rhs.get());
    REQUIRE(mul);
    CHECK(mul->op == ast::BinaryOp::Mul);
    CHECK(nameOf(mul->lhs.get()) == "b");
    CHECK(nameOf(mul->rhs.get()) == "c");
    CHECK(p.at(add->range) == "a + b * c");
    CHECK(p.at(add->opRange) == "+");
    CHECK(p.at(mul->range) == "b * c");
  }
  {
    auto* outer = ast::as<ast::BinaryExpr>(p.constValue("B"));
    REQUIRE(outer);
    CHECK(outer->op == ast::BinaryOp::Sub);
    CHECK(nameOf(outer->rhs.get()) == "c");
    auto* inner = ast::as<ast::BinaryExpr>(outer->lhs.get());
    REQUIRE(inner);
    CHECK(p.at(inner->range) == "a - b");
  }
  {
    auto* o = ast::as<ast::BinaryExpr>(p.constValue("C"));
    REQUIRE(o);
    CHECK(o->op == ast::BinaryOp::Or);
    auto* a = ast::as<ast::BinaryExpr>(o->rhs.get());
    REQUIRE(a);
    CHECK(a->op == ast::BinaryOp::And);
  }
  {
    auto* eq = ast::as<ast::BinaryExpr>(p.constValue("D"));
    REQUIRE(eq);
    CHECK(eq->op == ast::BinaryOp::Eq);
    CHECK(ast::as<ast::BinaryExpr>(eq->lhs.get())->op == ast::BinaryOp::Lt);
    CHECK(ast::as<ast::BinaryExpr>(eq->rhs.get())->op == ast::BinaryOp::Gt);
  }
  {
    // Parentheses leave no node of their own.
    auto* mul = ast::as<ast::BinaryExpr>(p.constValue("E"));
    REQUIRE(mul);
    CHECK(mul->op == ast::BinaryOp::Mul);
    auto* add = ast::as<ast::BinaryExpr>(mul->lhs.get());
    REQUIRE(add);
    CHECK(add->op == ast::BinaryOp::Add);
    CHECK(p.at(mul->range) == "(a + b) * c");
  }
  {
    // Unary minus binds tighter than '*'.
    auto* mul = ast::as<ast::BinaryExpr>(p.constValue("F"));
    REQUIRE(mul);
    CHECK(mul->op == ast::BinaryOp::Mul);
    auto* neg = ast::as<ast::UnaryExpr>(mul->lhs.get());
    REQUIRE(neg);
    CHECK(neg->op == ast::UnaryOp::Neg);
    CHECK(p.at(neg->opRange) == "-");
  }
  {
    auto* andE = ast::as<ast::BinaryExpr>(p.constValue("G"));
    REQUIRE(andE);
    CHECK(andE->op == ast::BinaryOp::And);
    auto* notE = ast::as<ast::UnaryExpr>(andE->lhs.get());
    REQUIRE(notE);
    CHECK(notE->op == ast::UnaryOp::Not);
  }
  {
    // * % / are one level, left to right: ((a * b) % c) / d.
    auto* div = ast::as<ast::BinaryExpr>(p.constValue("H"));
    REQUIRE(div);
    CHECK(div->op == ast::BinaryOp::Div);
    auto* mod = ast::as<ast::BinaryExpr>(div->lhs.get());
    REQUIRE(mod);
    CHECK(mod->op == ast::BinaryOp::Mod);
    CHECK(ast::as<ast::BinaryExpr>(mod->lhs.get())->op == ast::BinaryOp::Mul);
  }
}

TEST_CASE("parse: load, cast, unary, index and field") {
  Parsed p(
      "const A = load w[0 : +4] as f32;\n"
      "const B = -x as f32;\n"
      "const C = load w[t * R : +R, k];\n"
      "const D = layer[l].qkv;\n"
      "const E = (x as bf16) as f32;\n"
      "const F = q[0 : +half];\n");
  CHECK(p.messages().empty());
  {
    auto* cast = ast::as<ast::CastExpr>(p.constValue("A"));
    REQUIRE(cast);
    CHECK(cast->dtype.name == "f32");
    CHECK(p.at(cast->dtype.range) == "f32");
    auto* load = ast::as<ast::LoadExpr>(cast->value.get());
    REQUIRE(load);
    CHECK(p.at(load->range) == "load w[0 : +4]");
    auto* ix = ast::as<ast::IndexExpr>(load->source.get());
    REQUIRE(ix);
    CHECK(nameOf(ix->base.get()) == "w");
    REQUIRE(ix->slices.size() == 1);
    CHECK(intOf(ix->slices[0].start.get()) == 0);
    REQUIRE(ix->slices[0].length);
    CHECK(intOf(ix->slices[0].length.get()) == 4);
    CHECK(p.at(ix->slices[0].range) == "0 : +4");
  }
  {
    auto* neg = ast::as<ast::UnaryExpr>(p.constValue("B"));
    REQUIRE(neg);
    CHECK(neg->op == ast::UnaryOp::Neg);
    auto* cast = ast::as<ast::CastExpr>(neg->operand.get());
    REQUIRE(cast);
    CHECK(nameOf(cast->value.get()) == "x");
  }
  {
    auto* load = ast::as<ast::LoadExpr>(p.constValue("C"));
    REQUIRE(load);
    auto* ix = ast::as<ast::IndexExpr>(load->source.get());
    REQUIRE(ix);
    REQUIRE(ix->slices.size() == 2);
    CHECK(p.at(ix->slices[0].start->range) == "t * R");
    CHECK(nameOf(ix->slices[0].length.get()) == "R");
    CHECK(nameOf(ix->slices[1].start.get()) == "k");
    CHECK_FALSE(ix->slices[1].length);  // a single index
  }
  {
    auto* f = ast::as<ast::FieldExpr>(p.constValue("D"));
    REQUIRE(f);
    CHECK(f->field.name == "qkv");
    auto* ix = ast::as<ast::IndexExpr>(f->base.get());
    REQUIRE(ix);
    CHECK(nameOf(ix->base.get()) == "layer");
    CHECK(nameOf(ix->slices[0].start.get()) == "l");
    CHECK(p.at(f->range) == "layer[l].qkv");
  }
  {
    auto* outer = ast::as<ast::CastExpr>(p.constValue("E"));
    REQUIRE(outer);
    CHECK(outer->dtype.name == "f32");
    auto* inner = ast::as<ast::CastExpr>(outer->value.get());
    REQUIRE(inner);
    CHECK(inner->dtype.name == "bf16");
  }
  {
    auto* ix = ast::as<ast::IndexExpr>(p.constValue("F"));
    REQUIRE(ix);
    CHECK(nameOf(ix->slices[0].length.get()) == "half");
  }
}

TEST_CASE("parse: literals") {
  Parsed p(
      "const A = 128_256;\n"
      "const B = 1e-5;\n"
      "const C = 500000.0;\n"
      "const D = true;\n"
      "const E = false;\n"
      "const F = 9223372036854775807;\n"
      "const G = 2.5E+3;\n");
  CHECK(p.messages().empty());
  CHECK(intOf(p.constValue("A")) == 128256);
  auto* b = ast::as<ast::FloatLit>(p.constValue("B"));
  REQUIRE(b);
  CHECK(b->value == doctest::Approx(1e-5));
  CHECK(ast::as<ast::FloatLit>(p.constValue("C"))->value == 500000.0);
  CHECK(ast::as<ast::BoolLit>(p.constValue("D"))->value);
  CHECK_FALSE(ast::as<ast::BoolLit>(p.constValue("E"))->value);
  CHECK(intOf(p.constValue("F")) == INT64_MAX);
  CHECK(ast::as<ast::FloatLit>(p.constValue("G"))->value == 2500.0);
}

TEST_CASE("parse: literal errors") {
  Parsed p(
      "const A = 9223372036854775808;\n"
      "const B = 1e999;\n"
      "const C = \"a\\qb\";\n"
      "weight w: bf16[4] = \"x\\q\";\n");
  // Syntax errors come first (reported while parsing), then literal errors (while building the AST).
  REQUIRE(p.diags.diagnostics().size() == 4);
  const auto& d = p.diags.diagnostics();
  CHECK(d[0].kind == mk::DiagKind::SyntaxError);
  CHECK(d[0].message == "expected an expression, found string \"a\\qb\"");  // strings are not values
  CHECK(d[1].kind == mk::DiagKind::IntegerTooLarge);
  CHECK(d[1].message == "integer literal '9223372036854775808' does not fit in 64 bits");
  CHECK(p.at(d[1].range) == "9223372036854775808");
  CHECK(d[2].kind == mk::DiagKind::FloatOutOfRange);
  CHECK(d[2].message == "float literal '1e999' is out of range");
  CHECK(d[3].kind == mk::DiagKind::BadEscape);
  CHECK(d[3].message == "unknown escape sequence '\\q' in string; the escapes are \\\", \\\\, \\n and \\t");
  CHECK(p.at(d[3].range) == "\\q");
  CHECK(d[3].range.begin == p.text().find("\\q\";\n"));
}

TEST_CASE("parse: calls with named arguments") {
  Parsed p("const A = f(x, y[0], R = 16, eps = 1e-5);\nconst B = g();\n");
  CHECK(p.messages().empty());
  auto* call = ast::as<ast::CallExpr>(p.constValue("A"));
  REQUIRE(call);
  CHECK(call->callee.name == "f");
  CHECK(p.at(call->callee.range) == "f");
  REQUIRE(call->args.size() == 4);
  CHECK_FALSE(call->args[0].name);
  CHECK(nameOf(call->args[0].value.get()) == "x");
  CHECK_FALSE(call->args[1].name);
  CHECK(ast::as<ast::IndexExpr>(call->args[1].value.get()));
  REQUIRE(call->args[2].name);
  CHECK(call->args[2].name->name == "R");
  CHECK(p.at(call->args[2].name->range) == "R");
  CHECK(intOf(call->args[2].value.get()) == 16);
  REQUIRE(call->args[3].name);
  CHECK(call->args[3].name->name == "eps");
  CHECK(ast::as<ast::FloatLit>(call->args[3].value.get()));
  auto* g = ast::as<ast::CallExpr>(p.constValue("B"));
  REQUIRE(g);
  CHECK(g->args.empty());
}

TEST_CASE("parse: statements") {
  Parsed p(
      "fn f(x: bf16[4]) -> (a: bf16[4], b: i32) {\n"
      "  let (a, b) = g(x);\n"
      "  let y: bf16[4] = h(x);\n"
      "  var z: bf16[4] = h(x);\n"
      "  z = h(z);\n"
      "  const K = 2;\n"
      "  @after(z) @after(y) w(z);\n"
      "  @after(y) let q = h(y);\n"
      "  for l in 0 .. 4 by 2 { sync grid; }\n"
      "  if a { } else if b { z = h(z); } else { }\n"
      "  static_assert(K == 2);\n"
      "  return (a, b);\n"
      "}\n"
      "op o(x: f32[4]) -> y: f32[4] tasks t in 1 {\n"
      "  var acc: f32[4];\n"
      "  acc += load x[0 : +4];\n"
      "  acc -= 1; acc *= 2; acc /= 3;\n"
      "  store y[0 : +4] = acc;\n"
      "}\n");
  CHECK(p.messages().empty());
  auto* f = ast::as<ast::FnDecl>(p.decl("f"));
  REQUIRE(f);
  const auto& s = f->body.stmts;
  REQUIRE(s.size() == 11);
  using SK = ast::StmtKind;
  std::vector<SK> kinds;
  for (const auto& st : s) kinds.push_back(st->kind);
  CHECK(kinds == std::vector<SK>{SK::Let, SK::Let, SK::Var, SK::Assign, SK::Const, SK::Expr, SK::Let, SK::For, SK::If,
                                 SK::Assert, SK::Return});

  auto* tuple = ast::as<ast::LetStmt>(s[0].get());
  CHECK(tuple->tuplePattern);
  REQUIRE(tuple->names.size() == 2);
  CHECK(tuple->names[0].name == "a");
  CHECK(tuple->names[1].name == "b");
  CHECK(p.at(tuple->names[1].range) == "b");
  CHECK(p.at(tuple->range) == "let (a, b) = g(x);");

  auto* typed = ast::as<ast::LetStmt>(s[1].get());
  CHECK_FALSE(typed->tuplePattern);
  REQUIRE(typed->type);
  CHECK(typed->type->name.name == "bf16");

  auto* var = ast::as<ast::VarStmt>(s[2].get());
  CHECK(var->name.name == "z");
  CHECK(var->init);

  auto* assign = ast::as<ast::AssignStmt>(s[3].get());
  CHECK(assign->op == ast::AssignOp::Set);
  CHECK(nameOf(assign->target.get()) == "z");
  CHECK(p.at(assign->opRange) == "=");

  auto* call = ast::as<ast::ExprStmt>(s[5].get());
  REQUIRE(call->annotations.size() == 2);
  CHECK(call->annotations[0].name.name == "after");
  CHECK(nameOf(call->annotations[1].args[0].get()) == "y");
  CHECK(ast::as<ast::CallExpr>(call->expr.get()));

  auto* after = ast::as<ast::LetStmt>(s[6].get());
  REQUIRE(after->annotations.size() == 1);
  CHECK(p.at(after->annotations[0].range) == "@after(y)");

  auto* loop = ast::as<ast::ForStmt>(s[7].get());
  CHECK(loop->var.name == "l");
  CHECK(intOf(loop->lo.get()) == 0);
  CHECK(intOf(loop->hi.get()) == 4);
  REQUIRE(loop->step);
  CHECK(intOf(loop->step.get()) == 2);
  CHECK(loop->body.stmts.size() == 1);

  // else-if chains: the else block holds one if statement.
  auto* iff = ast::as<ast::IfStmt>(s[8].get());
  CHECK(nameOf(iff->cond.get()) == "a");
  CHECK(iff->then.stmts.empty());
  REQUIRE(iff->otherwise);
  REQUIRE(iff->otherwise->stmts.size() == 1);
  auto* elif = ast::as<ast::IfStmt>(iff->otherwise->stmts[0].get());
  REQUIRE(elif);
  CHECK(nameOf(elif->cond.get()) == "b");
  CHECK(elif->then.stmts.size() == 1);
  REQUIRE(elif->otherwise);
  CHECK(elif->otherwise->stmts.empty());

  auto* sa = ast::as<ast::AssertStmt>(s[9].get());
  CHECK_FALSE(sa->message);

  auto* op = ast::as<ast::OpDecl>(p.decl("o"));
  REQUIRE(op);
  REQUIRE(op->body.stmts.size() == 6);
  CHECK(ast::as<ast::VarStmt>(op->body.stmts[0].get())->init == nullptr);
  CHECK(ast::as<ast::AssignStmt>(op->body.stmts[1].get())->op == ast::AssignOp::Add);
  CHECK(ast::as<ast::AssignStmt>(op->body.stmts[2].get())->op == ast::AssignOp::Sub);
  CHECK(ast::as<ast::AssignStmt>(op->body.stmts[3].get())->op == ast::AssignOp::Mul);
  CHECK(ast::as<ast::AssignStmt>(op->body.stmts[4].get())->op == ast::AssignOp::Div);
  auto* store = ast::as<ast::StoreStmt>(op->body.stmts[5].get());
  REQUIRE(store);
  CHECK(ast::as<ast::IndexExpr>(store->target.get()));
  CHECK(nameOf(store->value.get()) == "acc");
}

TEST_CASE("parse: error recovery keeps the valid declarations") {
  Parsed p(
      "const a = 1\n"
      "const b = 2;\n"
      "const c = ;\n"
      "const d = 4;\n");
  CHECK(p.kinds() == std::vector<mk::DiagKind>{mk::DiagKind::SyntaxError, mk::DiagKind::SyntaxError});
  CHECK(p.messages() == std::vector<std::string>{"expected ';', found 'const'", "expected an expression, found ';'"});
  const auto& d = p.diags.diagnostics();
  CHECK(p.sources.file(p.file).lineCol(d[0].range.begin).line == 2);
  CHECK(p.at(d[0].range) == "const");
  CHECK(p.at(d[1].range) == ";");
  CHECK(d[1].range.begin == p.text().find(";\nconst d"));
  REQUIRE(p.decl("b"));
  REQUIRE(p.decl("d"));
  CHECK(intOf(p.constValue("b")) == 2);
  CHECK(intOf(p.constValue("d")) == 4);
}

TEST_CASE("parse: syntax error inside a body, and at end of file") {
  Parsed p(
      "op o(x: f32[4]) -> y: f32[4] tasks t in 1 {\n"
      "  let a = ;\n"
      "}\n"
      "const after = 1;\n"
      "fn f() {\n");
  REQUIRE(p.diags.diagnostics().size() == 2);
  CHECK(p.kinds() == std::vector<mk::DiagKind>{mk::DiagKind::SyntaxError, mk::DiagKind::SyntaxError});
  CHECK(p.diags.diagnostics()[1].message.find("found end of file") != std::string::npos);
  CHECK(p.diags.diagnostics()[1].range.begin == p.text().size());
  CHECK(p.decl("after"));
  CHECK(p.decl("o"));
}

TEST_CASE("parse: lexical errors") {
  SUBCASE("invalid character") {
    Parsed p("const a = 1 $ 2;\n");
    REQUIRE(p.kinds() == std::vector<mk::DiagKind>{mk::DiagKind::InvalidCharacter});
    CHECK(p.messages()[0] == "invalid character '$'");
    CHECK(p.diags.diagnostics()[0].range.begin == 12);
    CHECK(p.diags.diagnostics()[0].range.end == 13);
  }
  SUBCASE("a non-ASCII character outside comments and strings") {
    Parsed p("const é = 1;\n");
    REQUIRE_FALSE(p.diags.diagnostics().empty());
    CHECK(p.diags.diagnostics()[0].kind == mk::DiagKind::InvalidCharacter);
    CHECK(p.messages()[0] == "invalid character 'é'");
    CHECK(p.at(p.diags.diagnostics()[0].range) == "é");
  }
  SUBCASE("unterminated string") {
    Parsed p("weight w: bf16[4] = \"abc\nconst b = 2;\n");
    REQUIRE_FALSE(p.diags.diagnostics().empty());
    const auto& d = p.diags.diagnostics()[0];
    CHECK(d.kind == mk::DiagKind::UnterminatedString);
    CHECK(d.message == "unterminated string literal: a string must end with '\"' on the same line");
    CHECK(p.at(d.range) == "\"abc");
    CHECK(p.decl("b"));  // the string ends at its line; the next line still parses
  }
  SUBCASE("unterminated block comment") {
    Parsed p("const a = 1;\n/* no end\nconst b = 2;\n");
    REQUIRE(p.kinds() == std::vector<mk::DiagKind>{mk::DiagKind::UnterminatedComment});
    CHECK(p.messages()[0] == "unterminated block comment: '/*' has no matching '*/'");
    CHECK(p.at(p.diags.diagnostics()[0].range) == "/*");
    CHECK(p.decl("a"));
    CHECK_FALSE(p.decl("b"));
  }
  SUBCASE("invalid UTF-8 is reported with its byte offset") {
    Parsed p("const a = 1; // caf\xe9\nconst b = \xff 2;\n");
    REQUIRE(p.diags.diagnostics().size() >= 2);
    const auto& d = p.diags.diagnostics();
    CHECK(d[0].kind == mk::DiagKind::InvalidUtf8);
    CHECK(d[0].message == "invalid UTF-8 byte 0xE9; .mk files are UTF-8");
    CHECK(d[0].range.begin == 19);
    CHECK(d[0].range.end == 20);
    CHECK(d[1].kind == mk::DiagKind::InvalidUtf8);
    CHECK(d[1].message == "invalid UTF-8 byte 0xFF; .mk files are UTF-8");
    CHECK(d[1].range.begin == p.text().find('\xff'));
    CHECK(p.decl("a"));
  }
  SUBCASE("overlong forms and surrogates are invalid UTF-8") {
    Parsed p("// \xc0\x80 \xed\xa0\x80\nconst a = 1;\n");
    CHECK(p.kinds() == std::vector<mk::DiagKind>(5, mk::DiagKind::InvalidUtf8));
    REQUIRE(p.diags.diagnostics().size() == 5);
    CHECK(p.diags.diagnostics()[0].range.begin == 3);
    CHECK(p.diags.diagnostics()[1].range.begin == 4);
    CHECK(p.diags.diagnostics()[2].range.begin == 6);
    CHECK(p.decl("a"));
    // Offsets after the bad bytes still map to the right bytes.
    CHECK(p.at(p.decl("a")->name.range) == "a");
  }
}

TEST_CASE("parse: deep nesting is rejected with a diagnostic") {
  SUBCASE("brackets") {
    std::string text = "const a = " + std::string(100000, '(') + "1" + std::string(100000, ')') + ";\n";
    Parsed p(text);
    REQUIRE(p.kinds() == std::vector<mk::DiagKind>{mk::DiagKind::NestingTooDeep});
    const auto& d = p.diags.diagnostics()[0];
    CHECK(d.message == "brackets nested deeper than 200 levels");
    CHECK(d.range.begin == 10 + 200);  // the 201st bracket
    REQUIRE(d.notes.size() == 1);
    CHECK(d.notes[0].message == "the outermost of them opens here");
    CHECK(d.notes[0].range.begin == 10);
    CHECK(p.mod->decls.empty());
  }
  SUBCASE("mixed brackets") {
    std::string open, close;
    for (int i = 0; i < 300; ++i) open += "([{"[i % 3], close = ")]}"[i % 3] + close;
    Parsed p("const a = " + open + close + ";\n");
    REQUIRE(p.kinds() == std::vector<mk::DiagKind>{mk::DiagKind::NestingTooDeep});
  }
  SUBCASE("prefix operators") {
    Parsed p("const a = " + std::string(100000, '-') + "1;\n");
    REQUIRE(p.kinds() == std::vector<mk::DiagKind>{mk::DiagKind::ChainTooLong});
    CHECK(p.messages()[0] == "more than 800 operators in one expression; split it with let or const");
    CHECK(p.diags.diagnostics()[0].range.begin == 10 + 800);  // the 801st operator
    CHECK(p.mod->decls.empty());
  }
  SUBCASE("a long chain of '+'") {
    std::string text = "const a = 1";
    for (int i = 0; i < 100000; ++i) text += " + 1";
    Parsed p(text + ";\n");
    REQUIRE(p.kinds() == std::vector<mk::DiagKind>{mk::DiagKind::ChainTooLong});
  }
  SUBCASE("just under the limits parses") {
    std::string text = "const a = " + std::string(200, '(') + std::string(799, '-') + "1" + std::string(200, ')') + ";\n";
    Parsed p(text);
    CHECK(p.messages().empty());
    CHECK(p.decl("a"));
  }
  SUBCASE("the limits count per statement") {
    std::string text;
    for (int i = 0; i < 20; ++i) text += "const a" + std::to_string(i) + " = " + std::string(150, '(') + "1" + std::string(150, ')') + ";\n";
    Parsed p(text);
    CHECK(p.messages().empty());
    CHECK(p.mod->decls.size() == 20);
  }
}

// Regression: the chain-length guard counts only - ! load + * / as . tokens, so a long chain of another
// binary operator (% < <= > >= == != && ||) is not rejected. 5000 `%` parse without a diagnostic and
// then overflow the stack in the checker's recursion (mkdsl check segfaults); around 300000 the parser's
// AST builder itself overflows.
TEST_CASE("parse: a long chain of '%' or '<' is rejected") {
  for (const char* op : {" % ", " < ", " == ", " && ", " || "}) {
    std::string text = "const a = 1";
    for (int i = 0; i < 5000; ++i) text += op + std::string("1");
    Parsed p(text + ";\n");
    CHECK(p.kinds() == std::vector<mk::DiagKind>{mk::DiagKind::ChainTooLong});
  }
}

TEST_CASE("lex: kinds and offsets") {
  std::string text = "const x_1 = 1_000 + 2.5e3; // c\r\n/// d\n/* b */\t\"s\\\"\" ->..@ $ 0..K";
  std::vector<mk::Token> toks = mk::lex(text);
  using TK = mk::TokenKind;
  std::vector<std::pair<TK, std::string>> got;
  for (const auto& t : toks) got.push_back({t.kind, std::string(t.text)});
  std::vector<std::pair<TK, std::string>> want = {
      {TK::Keyword, "const"}, {TK::Space, " "}, {TK::Ident, "x_1"}, {TK::Space, " "}, {TK::Punct, "="},
      {TK::Space, " "}, {TK::Int, "1_000"}, {TK::Space, " "}, {TK::Punct, "+"}, {TK::Space, " "},
      {TK::Float, "2.5e3"}, {TK::Punct, ";"}, {TK::Space, " "}, {TK::LineComment, "// c"}, {TK::Newline, "\r\n"},
      {TK::DocComment, "/// d"}, {TK::Newline, "\n"}, {TK::BlockComment, "/* b */"}, {TK::Space, "\t"},
      {TK::String, "\"s\\\"\""}, {TK::Space, " "}, {TK::Punct, "->"}, {TK::Punct, ".."}, {TK::Punct, "@"},
      {TK::Space, " "}, {TK::Error, "$"}, {TK::Space, " "}, {TK::Int, "0"}, {TK::Punct, ".."}, {TK::Ident, "K"}};
  CHECK(got == want);
  // Offsets are contiguous byte ranges of the input.
  uint32_t at = 0;
  for (const auto& t : toks) {
    CHECK(t.begin == at);
    CHECK(t.end == t.begin + t.text.size());
    CHECK(t.text == std::string_view(text).substr(t.begin, t.end - t.begin));
    at = t.end;
  }
  CHECK(at == text.size());
}

TEST_CASE("lex: keywords, dtype and builtin names") {
  std::vector<std::string> keywords = {"import", "const", "config", "weight", "state", "group", "op", "fn", "step",
                                       "tasks", "in", "inout", "let", "var", "store", "load", "for", "by", "if",
                                       "else", "return", "sync", "as", "static_assert", "true", "false"};
  for (const auto& k : keywords) {
    auto toks = mk::lex(k);
    REQUIRE(toks.size() == 1);
    CHECK_MESSAGE(toks[0].kind == mk::TokenKind::Keyword, k);
  }
  // Not keywords: dtypes, layouts, builtins, and keywords with more letters.
  for (const char* id : {"bf16", "f32", "i32", "bool", "tiled", "row_major", "exp", "max", "inf", "constant", "ifx", "_"}) {
    auto toks = mk::lex(id);
    REQUIRE(toks.size() == 1);
    CHECK_MESSAGE(toks[0].kind == mk::TokenKind::Ident, id);
  }
}

TEST_CASE("lex: error tokens and lossless round trip") {
  std::vector<std::string> inputs = {
      "",
      "const a = 1;",
      "weight w: bf16[4] = \"unterminated\nconst b = 2;\n",
      "const a = 1; /* never closed\n  still comment",
      "// caf\xe9 \xff\xfe\nconst \xc3 = 1;\r\n",
      "// héllo → ✓ 😀\nop o<N>(x: f32[N]) -> y: f32[N] tasks t in N / 16 { store y[0 : +N] = load x[0 : +N]; }\n",
      "\t\f  \r\n\n#%^&|~`?'\\",
  };
  for (const auto& in : inputs) {
    std::string joined;
    uint32_t at = 0;
    for (const auto& t : mk::lex(in)) {
      CHECK(t.begin == at);
      at = t.end;
      joined += t.text;
    }
    CHECK(joined == in);
  }
  auto toks = mk::lex("\"abc\n/* x");
  REQUIRE(toks.size() == 3);
  CHECK(toks[0].kind == mk::TokenKind::Error);
  CHECK(toks[0].text == "\"abc");
  CHECK(toks[1].kind == mk::TokenKind::Newline);
  CHECK(toks[2].kind == mk::TokenKind::Error);
  CHECK(toks[2].text == "/* x");
  // A multi-byte character outside a string is one error token covering all of its bytes.
  auto utf = mk::lex("a é b");
  REQUIRE(utf.size() == 5);
  CHECK(utf[2].kind == mk::TokenKind::Error);
  CHECK(utf[2].text == "é");
  CHECK(utf[4].begin == 5);
}
