#include "frontend/types.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "frontend/ast.h"

namespace mk {

namespace {
// An opaque symbol for a result the normal form does not keep (inexact division, or a product
// too large to expand). Long names are hashed so nested opaque symbols cannot grow without bound.
Poly opaque(const Poly& a, const char* op, const Poly& b) {
  // Operands that are sums keep their brackets: "((N + 1) / 2)".
  auto operand = [](const Poly& p) {
    std::string s = p.str();
    bool sum = s.find(" + ") != std::string::npos || s.find(" - ") != std::string::npos;
    return sum ? "(" + s + ")" : s;
  };
  std::string name = "(" + operand(a) + op + operand(b) + ")";
  if (name.size() > 160) name = fmt::format("(expr#{:016x})", std::hash<std::string>{}(name));
  return Poly::symbol(name);
}
constexpr size_t kMaxTerms = 64;
constexpr size_t kMaxDegree = 16;
}  // namespace

Poly Poly::constant(int64_t v) {
  Poly p;
  if (v != 0) p.terms_[{}] = v;
  return p;
}

Poly Poly::symbol(const std::string& name) {
  Poly p;
  p.terms_[{name}] = 1;
  return p;
}

bool Poly::isConstant() const { return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty()); }

int64_t Poly::value() const { return terms_.empty() ? 0 : terms_.begin()->second; }

std::string Poly::str() const {
  if (terms_.empty()) return "0";
  std::string out;
  // Print higher-degree terms first and the constant last: "2 * N + 1".
  std::vector<std::pair<Monomial, int64_t>> ts(terms_.begin(), terms_.end());
  std::stable_sort(ts.begin(), ts.end(), [](auto& a, auto& b) { return a.first.size() > b.first.size(); });
  for (size_t i = 0; i < ts.size(); ++i) {
    auto [mono, c] = ts[i];
    bool neg = c < 0;
    uint64_t mag = neg ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
    if (i == 0) out += neg ? "-" : "";
    else out += neg ? " - " : " + ";
    std::string m;
    for (const auto& s : mono) m += (m.empty() ? "" : " * ") + s;
    if (mono.empty()) out += std::to_string(mag);
    else if (mag == 1) out += m;
    else out += std::to_string(mag) + " * " + m;
  }
  return out;
}

std::optional<Poly> Poly::add(const Poly& a, const Poly& b) {
  Poly r = a;
  for (auto& [m, c] : b.terms_) {
    int64_t& slot = r.terms_[m];
    if (__builtin_add_overflow(slot, c, &slot)) return std::nullopt;
    if (slot == 0) r.terms_.erase(m);
  }
  return r;
}

std::optional<Poly> Poly::sub(const Poly& a, const Poly& b) {
  Poly r = a;
  for (auto& [m, c] : b.terms_) {
    int64_t& slot = r.terms_[m];
    if (__builtin_sub_overflow(slot, c, &slot)) return std::nullopt;
    if (slot == 0) r.terms_.erase(m);
  }
  return r;
}

std::optional<Poly> Poly::mul(const Poly& a, const Poly& b) {
  auto degree = [](const Poly& p) {
    size_t d = 0;
    for (auto& [m, c] : p.terms_) d = std::max(d, m.size());
    return d;
  };
  if (a.terms_.size() * b.terms_.size() > kMaxTerms || degree(a) + degree(b) > kMaxDegree) return opaque(a, " * ", b);
  Poly r;
  for (auto& [ma, ca] : a.terms_)
    for (auto& [mb, cb] : b.terms_) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      int64_t prod;
      if (__builtin_mul_overflow(ca, cb, &prod)) return std::nullopt;
      int64_t& slot = r.terms_[m];
      if (__builtin_add_overflow(slot, prod, &slot)) return std::nullopt;
      if (slot == 0) r.terms_.erase(m);
    }
  return r;
}

std::optional<Poly> Poly::div(const Poly& a, const Poly& b) {
  if (b.isConstant()) {
    int64_t d = b.value();
    if (d == 0) return std::nullopt;
    if (d == -1) return sub(Poly(), a);  // INT64_MIN / -1 overflows instead of trapping
    if (a.isConstant()) return constant(a.value() / d);
    bool exact = std::all_of(a.terms_.begin(), a.terms_.end(), [&](auto& t) { return t.second % d == 0; });
    if (exact) {
      Poly r;
      for (auto& [m, c] : a.terms_) r.terms_[m] = c / d;
      return r;
    }
  } else if (a == b) {
    return constant(1);
  }
  return opaque(a, " / ", b);
}

std::optional<Poly> Poly::mod(const Poly& a, const Poly& b) {
  if (b.isConstant()) {
    int64_t d = b.value();
    if (d == 0) return std::nullopt;
    if (d == -1) return constant(0);
    if (a.isConstant()) return constant(a.value() % d);
    bool exact = std::all_of(a.terms_.begin(), a.terms_.end(), [&](auto& t) { return t.second % d == 0; });
    if (exact) return constant(0);
  } else if (a == b) {
    return constant(0);
  }
  return opaque(a, " % ", b);
}

std::optional<Poly> Poly::substitute(const std::map<std::string, Poly>& env) const {
  Poly r;
  for (auto& [m, c] : terms_) {
    std::optional<Poly> term = constant(c);
    for (const auto& s : m) {
      auto it = env.find(s);
      Poly f = it != env.end() ? it->second : symbol(s);
      term = mul(*term, f);
      if (!term) return std::nullopt;
    }
    auto sum = add(r, *term);
    if (!sum) return std::nullopt;
    r = *sum;
  }
  return r;
}

std::string shapeStr(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + s[i].value.str();
  return out + "]";
}

std::string Layout::str() const {
  return abi::layoutSpelling(kind, args, [](const Poly& a) { return a.str(); });
}

const char* storageName(Storage s) {
  switch (s) {
    case Storage::Weight: return "weight";
    case Storage::State: return "state";
    case Storage::Activation: return "activation";
    case Storage::OpParam: return "parameter";
    case Storage::OpResult: return "op result";
    case Storage::StepInput: return "step input";
  }
  return "?";
}

std::string tyStr(const Ty& t) {
  switch (t.kind) {
    case TyKind::Error: return "<error>";
    case TyKind::Int: return "compile-time int";
    case TyKind::Float: return "compile-time float";
    case TyKind::Bool: return "compile-time bool";
    case TyKind::Scalar: return dtypeName(t.dtype);
    case TyKind::Tile: return std::string(dtypeName(t.dtype)) + shapeStr(t.shape);
    case TyKind::Tensor: {
      std::string s = std::string(dtypeName(t.dtype)) + (t.shape.empty() ? "" : shapeStr(t.shape));
      if (t.layout.kind != Layout::RowMajor) s += " " + t.layout.str();
      return s;
    }
    case TyKind::GroupArray: return "group '" + (t.group ? t.group->name.name : std::string()) + "'";
    case TyKind::GroupElem: return (t.group ? t.group->name.name : std::string()) + " element";
    case TyKind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < t.elems.size(); ++i) s += (i ? ", " : "") + tyStr(t.elems[i]);
      return s + ")";
    }
    case TyKind::Void: return "no value";
  }
  return "?";
}

}  // namespace mk
