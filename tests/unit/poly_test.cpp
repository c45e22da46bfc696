// mk::Poly (symbolic shape arithmetic), the dtype helpers, Layout::str() and shapeStr().
#include <doctest/doctest.h>

#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "frontend/types.h"

using mk::Poly;

namespace {

Poly C(int64_t v) { return Poly::constant(v); }
Poly S(const std::string& n) { return Poly::symbol(n); }

// The arithmetic helpers return nullopt on overflow; in these tests that would be a failure.
Poly add(const Poly& a, const Poly& b) {
  auto r = Poly::add(a, b);
  REQUIRE(r.has_value());
  return *r;
}
Poly sub(const Poly& a, const Poly& b) {
  auto r = Poly::sub(a, b);
  REQUIRE(r.has_value());
  return *r;
}
Poly mul(const Poly& a, const Poly& b) {
  auto r = Poly::mul(a, b);
  REQUIRE(r.has_value());
  return *r;
}
Poly div(const Poly& a, const Poly& b) {
  auto r = Poly::div(a, b);
  REQUIRE(r.has_value());
  return *r;
}
Poly mod(const Poly& a, const Poly& b) {
  auto r = Poly::mod(a, b);
  REQUIRE(r.has_value());
  return *r;
}

}  // namespace

TEST_CASE("poly: constants") {
  CHECK(C(0).isConstant());
  CHECK(C(0).value() == 0);
  CHECK(C(0).str() == "0");
  CHECK(Poly().isConstant());
  CHECK(Poly() == C(0));  // the zero polynomial has no terms, however it was made
  CHECK(C(42).isConstant());
  CHECK(C(42).value() == 42);
  CHECK(C(42).str() == "42");
  CHECK(C(-7).value() == -7);
  CHECK(C(-7).str() == "-7");
  CHECK(C(INT64_MAX).str() == "9223372036854775807");
  CHECK(C(INT64_MIN).str() == "-9223372036854775808");
  CHECK(C(3) != C(4));
  CHECK(C(3) == C(3));
}

TEST_CASE("poly: symbols") {
  Poly n = S("N");
  CHECK_FALSE(n.isConstant());
  CHECK(n.str() == "N");
  CHECK(n == S("N"));
  CHECK(n != S("K"));
  CHECK(n != C(1));
  // A symbol minus itself is the constant 0.
  Poly z = sub(n, n);
  CHECK(z.isConstant());
  CHECK(z == C(0));
  CHECK(z.str() == "0");
}

TEST_CASE("poly: add/sub normal forms") {
  Poly n = S("N"), k = S("K");
  // 2 * N + K == K + N * 2, however it was built.
  Poly a = add(mul(C(2), n), k);
  Poly b = add(k, mul(n, C(2)));
  CHECK(a == b);
  CHECK_FALSE(a < b);
  CHECK_FALSE(b < a);
  CHECK(a.str() == "K + 2 * N");  // same degree: symbol order
  CHECK(add(n, n) == mul(C(2), n));
  CHECK(add(add(n, C(1)), C(-1)) == n);
  CHECK(add(n, C(1)).str() == "N + 1");
  CHECK(sub(n, C(1)).str() == "N - 1");
  CHECK(sub(C(1), n).str() == "-N + 1");
  CHECK(sub(C(0), mul(C(3), n)).str() == "-3 * N");
  CHECK(sub(add(n, k), n) == k);
  // Constant folding.
  CHECK(add(C(2), C(3)) == C(5));
  CHECK(sub(C(2), C(3)) == C(-1));
}

TEST_CASE("poly: mul normal forms and str of higher degrees") {
  Poly n = S("N"), k = S("K");
  CHECK(mul(n, k) == mul(k, n));
  CHECK(mul(n, k).str() == "K * N");
  CHECK(mul(n, n).str() == "N * N");
  // (N + 1)^2 = N*N + 2*N + 1, highest degree first, constant last.
  Poly sq = mul(add(n, C(1)), add(n, C(1)));
  CHECK(sq.str() == "N * N + 2 * N + 1");
  CHECK(sq == add(add(mul(n, n), mul(C(2), n)), C(1)));
  // (N + 1)(N - 1) = N*N - 1: the N terms cancel and disappear.
  CHECK(mul(add(n, C(1)), sub(n, C(1))).str() == "N * N - 1");
  CHECK(mul(n, C(0)) == C(0));
  CHECK(mul(C(6), C(7)) == C(42));
  // Distributes: 3 * (N + K) == 3 * N + 3 * K.
  CHECK(mul(C(3), add(n, k)) == add(mul(C(3), n), mul(C(3), k)));
}

TEST_CASE("poly: exact division") {
  Poly n = S("N"), k = S("K");
  CHECK(div(C(7), C(2)) == C(3));    // constants truncate
  CHECK(div(C(-7), C(2)) == C(-3));  // toward zero
  CHECK(div(C(7), C(-2)) == C(-3));
  CHECK(div(mul(C(4), n), C(2)) == mul(C(2), n));
  CHECK(div(add(mul(C(4), n), C(2)), C(2)).str() == "2 * N + 1");
  CHECK(div(mul(C(2), n), C(-2)) == sub(C(0), n));
  CHECK(div(n, C(1)) == n);
  CHECK(div(n, n) == C(1));
  CHECK(div(mul(n, k), mul(k, n)) == C(1));
}

TEST_CASE("poly: inexact division becomes an opaque symbol") {
  Poly n = S("N"), k = S("K");
  Poly q = div(n, C(3));
  CHECK_FALSE(q.isConstant());
  CHECK(q.str() == "(N / 3)");
  CHECK(q == div(n, C(3)));  // the same quotient is the same symbol
  CHECK(q != div(n, C(4)));
  CHECK(div(n, k).str() == "(N / K)");
  CHECK(div(mul(C(2), n), C(4)).str() == "(2 * N / 4)");
  // The opaque symbol takes part in arithmetic like any other.
  CHECK(mul(C(2), q).str() == "2 * (N / 3)");
  CHECK(sub(add(q, C(1)), q) == C(1));
}

TEST_CASE("poly: remainder") {
  Poly n = S("N"), k = S("K");
  CHECK(mod(C(7), C(3)) == C(1));
  CHECK(mod(C(-7), C(3)) == C(-1));  // truncating, like C++
  CHECK(mod(C(7), C(-1)) == C(0));
  CHECK(mod(C(INT64_MIN), C(-1)) == C(0));
  CHECK(mod(mul(C(4), n), C(2)) == C(0));
  CHECK(mod(add(mul(C(6), n), C(3)), C(3)) == C(0));
  CHECK(mod(n, n) == C(0));
  CHECK(mod(n, C(16)).str() == "(N % 16)");
  CHECK(mod(n, k).str() == "(N % K)");
}

TEST_CASE("poly: division by zero is refused") {
  CHECK_FALSE(Poly::div(C(1), C(0)).has_value());
  CHECK_FALSE(Poly::div(S("N"), C(0)).has_value());
  CHECK_FALSE(Poly::mod(C(1), C(0)).has_value());
  CHECK_FALSE(Poly::mod(S("N"), C(0)).has_value());
}

TEST_CASE("poly: overflow gives nullopt") {
  Poly n = S("N");
  CHECK_FALSE(Poly::add(C(INT64_MAX), C(1)).has_value());
  CHECK_FALSE(Poly::add(C(INT64_MIN), C(-1)).has_value());
  CHECK_FALSE(Poly::sub(C(INT64_MIN), C(1)).has_value());
  CHECK_FALSE(Poly::sub(C(0), C(INT64_MIN)).has_value());
  CHECK_FALSE(Poly::mul(C(INT64_MAX), C(2)).has_value());
  CHECK_FALSE(Poly::mul(C(int64_t{1} << 32), C(int64_t{1} << 31)).has_value());
  CHECK_FALSE(Poly::div(C(INT64_MIN), C(-1)).has_value());
  // In symbolic coefficients too.
  Poly big = mul(C(INT64_MAX), n);
  CHECK_FALSE(Poly::add(big, n).has_value());
  CHECK_FALSE(Poly::mul(big, C(2)).has_value());
  CHECK_FALSE(Poly::mul(add(n, C(INT64_MAX)), add(n, C(2))).has_value());
  // The edges themselves fit.
  CHECK(Poly::add(C(INT64_MAX - 1), C(1)) == std::optional<Poly>(C(INT64_MAX)));
  CHECK(Poly::sub(C(-1), C(INT64_MAX)) == std::optional<Poly>(C(INT64_MIN)));
  CHECK(Poly::mul(C(int64_t{1} << 31), C(int64_t{1} << 31)) == std::optional<Poly>(C(int64_t{1} << 62)));
}

// Regression: Poly::sub refuses any subtrahend with an INT64_MIN coefficient (it negates first), even when
// the difference fits: -1 - INT64_MIN == INT64_MAX.
TEST_CASE("poly: sub of INT64_MIN whose result fits") {
  CHECK(Poly::sub(C(-1), C(INT64_MIN)) == std::optional<Poly>(C(INT64_MAX)));
  CHECK(Poly::sub(C(INT64_MIN), C(INT64_MIN)) == std::optional<Poly>(C(0)));
}

// Regression: dividing (or taking the remainder of) a symbolic polynomial with an INT64_MIN coefficient by
// -1 evaluates INT64_MIN % -1 / INT64_MIN / -1, which traps (SIGFPE) instead of returning nullopt.
TEST_CASE("poly: symbolic INT64_MIN coefficient divided by -1") {
  Poly p = mul(C(INT64_MIN), S("N"));
  CHECK_FALSE(Poly::div(p, C(-1)).has_value());
  CHECK(Poly::mod(p, C(-1)) == std::optional<Poly>(C(0)));
}

TEST_CASE("poly: substitute") {
  Poly n = S("N"), k = S("K");
  Poly p = add(mul(C(2), mul(n, k)), add(n, C(3)));  // 2*K*N + N + 3
  std::map<std::string, Poly> env = {{"N", C(4)}, {"K", C(5)}};
  auto r = p.substitute(env);
  REQUIRE(r);
  CHECK(*r == C(2 * 4 * 5 + 4 + 3));
  // Symbols missing from env stay.
  auto partial = p.substitute({{"N", C(4)}});
  REQUIRE(partial);
  CHECK(*partial == add(mul(C(8), k), C(7)));
  CHECK(partial->str() == "8 * K + 7");
  // A symbol can be replaced by another polynomial.
  auto renamed = n.substitute({{"N", add(k, C(1))}});
  REQUIRE(renamed);
  CHECK(*renamed == add(k, C(1)));
  // Empty env: unchanged.
  CHECK(p.substitute({}) == std::optional<Poly>(p));
  // Overflow while substituting.
  CHECK_FALSE(mul(n, n).substitute({{"N", C(int64_t{1} << 40)}}).has_value());
  CHECK_FALSE(add(n, C(INT64_MAX)).substitute({{"N", C(1)}}).has_value());
}

TEST_CASE("dtype helpers") {
  using mk::DType;
  CHECK(std::string(mk::dtypeName(DType::BF16)) == "bf16");
  CHECK(std::string(mk::dtypeName(DType::F16)) == "f16");
  CHECK(std::string(mk::dtypeName(DType::F32)) == "f32");
  CHECK(std::string(mk::dtypeName(DType::I32)) == "i32");
  CHECK(std::string(mk::dtypeName(DType::Bool)) == "bool");
  for (DType t : {DType::BF16, DType::F16, DType::F32, DType::I32, DType::Bool})
    CHECK(mk::parseDType(mk::dtypeName(t)) == std::optional<DType>(t));
  CHECK_FALSE(mk::parseDType("f64").has_value());
  CHECK_FALSE(mk::parseDType("BF16").has_value());
  CHECK_FALSE(mk::parseDType("").has_value());
  CHECK_FALSE(mk::parseDType("int").has_value());
  CHECK(mk::isFloat(DType::BF16));
  CHECK(mk::isFloat(DType::F16));
  CHECK(mk::isFloat(DType::F32));
  CHECK_FALSE(mk::isFloat(DType::I32));
  CHECK_FALSE(mk::isFloat(DType::Bool));
  CHECK(mk::dtypeBytes(DType::BF16) == 2);
  CHECK(mk::dtypeBytes(DType::F16) == 2);
  CHECK(mk::dtypeBytes(DType::F32) == 4);
  CHECK(mk::dtypeBytes(DType::I32) == 4);
  CHECK(mk::dtypeBytes(DType::Bool) == 1);
}

TEST_CASE("Layout::str and layoutKindName") {
  mk::Layout l;
  CHECK(l.str() == "row_major");
  l.kind = mk::Layout::ColMajor;
  CHECK(l.str() == "col_major");
  l.kind = mk::Layout::Tiled;
  l.args = {C(16), S("K")};
  CHECK(l.str() == "tiled(16, K)");
  l.kind = mk::Layout::Interleave;
  l.args = {C(8)};
  CHECK(l.str() == "interleave(8)");
  l.kind = mk::Layout::Padded;
  l.args = {add(S("K"), C(8))};
  CHECK(l.str() == "padded(K + 8)");
  l.kind = mk::Layout::Swizzle;
  l.args = {C(128)};
  CHECK(l.str() == "swizzle(128)");
  CHECK(std::string(mk::layoutKindName(mk::Layout::RowMajor)) == "row_major");
  CHECK(std::string(mk::layoutKindName(mk::Layout::Tiled)) == "tiled");
  CHECK(std::string(mk::layoutKindName(mk::Layout::Interleave)) == "interleave");
  // Equality compares kind and arguments, not where it was written.
  mk::Layout a, b;
  a.kind = b.kind = mk::Layout::Tiled;
  a.args = b.args = {C(16), C(64)};
  a.written = true;
  a.origin = {0, 1, 2};
  CHECK(a == b);
  b.args = {C(8), C(64)};
  CHECK_FALSE(a == b);
}

TEST_CASE("shapeStr and tyStr") {
  CHECK(mk::shapeStr({}) == "[]");
  mk::Shape s = {{C(2048), {}}, {S("N"), {}}};
  CHECK(mk::shapeStr(s) == "[2048, N]");
  mk::Shape t = {{mul(C(2), S("K")), {}}};
  CHECK(mk::shapeStr(t) == "[2 * K]");

  CHECK(mk::tyStr(mk::Ty::error()) == "<error>");
  CHECK(mk::tyStr(mk::Ty::intConst(C(3))) == "compile-time int");
  CHECK(mk::tyStr(mk::Ty::floatConst(1.0)) == "compile-time float");
  CHECK(mk::tyStr(mk::Ty::boolConst(true)) == "compile-time bool");
  CHECK(mk::tyStr(mk::Ty::scalar(mk::DType::I32)) == "i32");
  CHECK(mk::tyStr(mk::Ty::tile(mk::DType::F32, s)) == "f32[2048, N]");
  // A tile of no dims is a scalar.
  CHECK(mk::Ty::tile(mk::DType::F32, {}).kind == mk::TyKind::Scalar);
  mk::Ty tensor;
  tensor.kind = mk::TyKind::Tensor;
  tensor.dtype = mk::DType::BF16;
  tensor.shape = {{C(2048), {}}, {C(64), {}}};
  CHECK(mk::tyStr(tensor) == "bf16[2048, 64]");
  tensor.layout.kind = mk::Layout::Tiled;
  tensor.layout.args = {C(16), C(64)};
  CHECK(mk::tyStr(tensor) == "bf16[2048, 64] tiled(16, 64)");
  CHECK(std::string(mk::storageName(mk::Storage::OpResult)) == "op result");
  CHECK(std::string(mk::storageName(mk::Storage::StepInput)) == "step input");
}

// Regression: the opaque symbol of an inexact quotient or remainder does not bracket a compound operand, so
// (N + 1) / 2 prints as "(N + 1 / 2)", which reads as N + (1 / 2) in shapes and messages.
TEST_CASE("poly: opaque quotient of a sum brackets the sum") {
  Poly n1 = add(S("N"), C(1));
  CHECK(div(n1, C(2)).str() == "((N + 1) / 2)");
  CHECK(mod(n1, S("K")).str() == "((N + 1) % K)");
}
