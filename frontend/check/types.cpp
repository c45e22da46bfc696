// Written types: dtypes, shapes, layouts, weight and state storage, groups.
#include "frontend/check/context.h"

namespace mk::check {

const std::vector<std::string> kLayouts = {"row_major", "col_major", "tiled", "interleave", "padded", "swizzle"};
const std::vector<std::string> kDTypes = {"bf16", "f16", "f32", "i32", "bool"};

// `what` names the kind of thing being declared ("weight", "parameter", ...), `name` the thing.
Ty Checker::resolveType(const TypeRef& t, Ctx& ctx, const std::string& what, const std::string& name, bool allowLayout) {
  if (t.name.name.empty()) return Ty::error();
  auto dt = parseDType(t.name.name);
  if (!dt) {
    // A group's name stands for one element of the group.
    if (auto sym = findGlobal(ctx.mod, t.name.name, t.name.range, false); sym && sym->decl) {
      if (auto* g = as<GroupDecl>(sym->decl)) {
        recordUse(t.name.range, g->name.range, nullptr);
        if (t.hasShape || t.layout) diags_->emit(t.range, ParamType, what, name, "a shaped group");
        Ty ty = groupType(g, sym->mod);
        if (ty.isError()) return ty;
        ty.kind = TyKind::GroupElem;
        return ty;
      }
    }
    std::vector<std::string> cands = kDTypes;
    diags_->emit(t.name.range, UnknownType, t.name.name, suggest(t.name.name, cands));
    return Ty::error();
  }
  Shape shape;
  bool bad = false;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    Ty d = checkExpr(t.dims[i].get(), ctx);
    if (d.isError()) {
      bad = true;
      continue;
    }
    if (d.kind != TyKind::Int) {
      diags_->emit(t.dims[i]->range, BadDim, static_cast<unsigned>(i), name, tyStr(d));
      bad = true;
      continue;
    }
    if (d.intValue && d.intValue->isConstant() && d.intValue->value() <= 0) {
      diags_->emit(t.dims[i]->range, BadDim, static_cast<unsigned>(i), name, d.intValue->str());
      bad = true;
      continue;
    }
    shape.push_back({d.intValue ? *d.intValue : Poly::symbol("?"), t.dims[i]->range});
  }
  if (bad) return Ty::error();
  Ty ty;
  ty.kind = TyKind::Tensor;
  ty.dtype = *dt;
  ty.shape = std::move(shape);
  ty.name = name;
  ty.declRange = t.range;
  ty.layout.origin = t.range;
  if (t.layout) {
    if (!allowLayout) {
      diags_->emit(t.layout->range, LayoutOnTile);
      return Ty::error();
    }
    if (ty.shape.empty()) {
      diags_->emit(t.layout->range, LayoutOnScalar);
      return Ty::error();
    }
    auto lay = resolveLayout(*t.layout, ty.shape, ctx);
    if (!lay) return Ty::error();
    ty.layout = *lay;
  }
  return ty;
}

std::optional<Layout> Checker::resolveLayout(const ast::Layout& l, const Shape& shape, Ctx& ctx) {
  static const std::map<std::string, std::pair<Layout::Kind, unsigned>> kinds = {
      {"row_major", {Layout::RowMajor, 0}}, {"col_major", {Layout::ColMajor, 0}}, {"tiled", {Layout::Tiled, 2}},
      {"interleave", {Layout::Interleave, 1}}, {"padded", {Layout::Padded, 1}}, {"swizzle", {Layout::Swizzle, 1}}};
  auto it = kinds.find(l.name.name);
  if (it == kinds.end()) {
    if (!l.name.name.empty()) diags_->emit(l.name.range, UnknownLayout, l.name.name, suggest(l.name.name, kLayouts));
    return std::nullopt;
  }
  auto [kind, arity] = it->second;
  const std::string& ln = l.name.name;
  if (l.args.size() != arity) {
    static const char* kArity[] = {"no arguments", "1 argument", "2 arguments"};
    diags_->emit(l.range, LayoutArity, ln, kArity[arity], static_cast<unsigned>(l.args.size()));
    return std::nullopt;
  }
  unsigned rank = kind == Layout::RowMajor || kind == Layout::Interleave ? 0 : 2;
  if (rank && shape.size() != rank) {
    diags_->emit(l.range, LayoutRank, ln, rank, static_cast<unsigned>(shape.size()));
    return std::nullopt;
  }
  Layout lay;
  lay.kind = kind;
  lay.origin = l.range;
  lay.written = true;
  for (size_t i = 0; i < l.args.size(); ++i) {
    Ty a = checkExpr(l.args[i].get(), ctx);
    if (a.isError()) return std::nullopt;
    if (a.kind != TyKind::Int || (a.intValue && a.intValue->isConstant() && a.intValue->value() <= 0)) {
      diags_->emit(l.args[i]->range, LayoutArg, static_cast<unsigned>(i + 1), ln,
                   a.kind == TyKind::Int ? a.intValue->str() : tyStr(a));
      return std::nullopt;
    }
    lay.args.push_back(a.intValue ? *a.intValue : Poly::symbol("?"));
  }
  if (kind == Layout::Swizzle && lay.args[0].isConstant()) {
    int64_t b = lay.args[0].value();
    if (b != 32 && b != 64 && b != 128) {
      diags_->emit(l.args[0]->range, SwizzleBytes, lay.args[0].str());
      return std::nullopt;
    }
  }
  checkLayoutFits(lay, shape);
  return lay;
}

// Divisibility and size rules of a layout against a shape, where both are known.
void Checker::checkLayoutFits(const Layout& lay, const Shape& shape) {
  auto notMultiple = [&](size_t dim, const Poly& by) {
    if (dim >= shape.size() || !shape[dim].value.isConstant() || !by.isConstant() || by.value() <= 0) return false;
    return shape[dim].value.value() % by.value() != 0;
  };
  if (lay.kind == Layout::Tiled) {
    for (size_t d = 0; d < 2; ++d)
      if (notMultiple(d, lay.args[d])) {
        diags_->emit(lay.origin, LayoutNotDividing, lay.str(), shapeStr(shape), shape[d].value.str(), lay.args[d].str())
            .note(shape[d].origin, ShapeFrom, shapeStr(shape));
        return;
      }
  } else if (lay.kind == Layout::Interleave) {
    if (notMultiple(0, lay.args[0]))
      diags_->emit(lay.origin, LayoutNotDividing, lay.str(), shapeStr(shape), shape[0].value.str(), lay.args[0].str())
          .note(shape[0].origin, ShapeFrom, shapeStr(shape));
  } else if (lay.kind == Layout::Padded) {
    if (shape[1].value.isConstant() && lay.args[0].isConstant() && lay.args[0].value() < shape[1].value.value())
      diags_->emit(lay.origin, PaddedTooSmall, lay.args[0].str(), shape[1].value.str());
  }
}

Ty Checker::storageType(const Decl* d, const TypeRef& t, Storage storage, Ctx& ctx) {
  const char* what = storageName(storage);
  Ty ty = resolveType(t, ctx, what, d->name.name, true);
  if (ty.isError()) return ty;
  if (ty.kind != TyKind::Tensor) {
    diags_->emit(t.range, ParamType, what, d->name.name, tyStr(ty));
    return Ty::error();
  }
  if (ty.shape.empty()) {
    diags_->emit(t.range, TypeNeedsShape, what, d->name.name, dtypeName(ty.dtype));
    return Ty::error();
  }
  for (size_t i = 0; i < ty.shape.size(); ++i)
    if (!ty.shape[i].value.isConstant()) {
      diags_->emit(ty.shape[i].origin, BadDim, static_cast<unsigned>(i), d->name.name, ty.shape[i].value.str());
      return Ty::error();
    }
  if (ty.dtype == DType::Bool) {
    diags_->emit(t.name.range, StorageDType, what, d->name.name, "bool");
    return Ty::error();
  }
  ty.storage = storage;
  ty.writable = storage == Storage::State;
  ty.name = d->name.name;
  ty.declRange = d->name.range;
  return ty;
}

void Checker::checkWeightSources(const WeightDecl& w, const Ty& ty, const GroupDecl* group) {
  for (const auto& src : w.sources) {
    const std::string& s = src.name;
    bool mentionsIndex = false;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '}') {
        diags_->emit(src.range, BadTemplate, "has a '}' without a matching '{'");
        return;
      }
      if (s[i] != '{') continue;
      size_t close = s.find('}', i);
      if (close == std::string::npos) {
        diags_->emit(src.range, BadTemplate, "has a '{' without a matching '}'");
        return;
      }
      std::string var = s.substr(i + 1, close - i - 1);
      if (!group || var != group->var.name) {
        diags_->emit(src.range, BadTemplate,
                     group ? fmt::format("uses {{{}}}; the group index is {{{}}}", var, group->var.name)
                           : fmt::format("uses {{{}}} outside a group", var));
        return;
      }
      mentionsIndex = true;
      i = close;
    }
    if (group && !mentionsIndex) {
      diags_->emit(src.range, TemplateNoIndex, s, group->var.name, group->name.name);
      return;
    }
  }
  size_t n = w.sources.size();
  if (ty.layout.kind == Layout::Interleave) {
    if (n < 2) {
      diags_->emit(w.type.layout ? w.type.layout->range : w.range, InterleaveSources, w.name.name, ty.layout.str(),
                   static_cast<unsigned>(n), plural(n));
      return;
    }
    int64_t rows = ty.shape[0].value.value();
    if (ty.layout.args[0].isConstant()) {
      int64_t r = ty.layout.args[0].value();
      if (rows % static_cast<int64_t>(n) != 0 || (rows / static_cast<int64_t>(n)) % r != 0)
        diags_->emit(w.type.range, InterleaveSplit, w.name.name, std::to_string(rows), static_cast<unsigned>(n), std::to_string(r));
    }
  }
}

Ty Checker::groupType(const GroupDecl* g, Module* m) {
  Ty ty;
  ty.kind = TyKind::GroupArray;
  ty.group = g;
  if (groupMembers_.count(g)) return ty;
  auto& members = groupMembers_[g];
  ++forceRecord_;
  struct Done {
    int& n;
    ~Done() { --n; }
  } done{forceRecord_};
  Ctx ctx;
  ctx.mod = m;
  ctx.kind = BodyKind::TopLevel;
  auto lo = constInt(g->lo.get(), ctx, "a group bound");
  auto hi = constInt(g->hi.get(), ctx, "a group bound");
  groupRange_[g] = {lo, hi};
  if (lo && hi && *lo >= *hi)
    diags_->emit(SourceRange::cover(g->lo->range, g->hi->range), GroupRange, g->name.name, std::to_string(*lo), std::to_string(*hi));
  for (const auto& mem : g->members) {
    Ty mt = Ty::error();
    if (auto* w = as<WeightDecl>(mem.get())) {
      mt = storageType(w, w->type, Storage::Weight, ctx);
      if (!mt.isError()) checkWeightSources(*w, mt, g);
    } else if (auto* s = as<StateDecl>(mem.get())) {
      mt = storageType(s, s->type, Storage::State, ctx);
    }
    if (mem->name.name.empty()) continue;
    if (auto it = members.find(mem->name.name); it != members.end()) {
      diags_->emit(mem->name.range, Redefinition, mem->name.name).note(it->second.second->name.range, PreviousDefinition);
      continue;
    }
    members[mem->name.name] = {mt, mem.get()};
  }
  return ty;
}


}  // namespace mk::check
