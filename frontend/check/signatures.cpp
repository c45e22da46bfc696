// Generic parameters and parameters, bound in the scope of an op's or fn's body.
#include "frontend/check/context.h"

namespace mk::check {

void Checker::bindGenerics(const std::vector<GenericParam>& gs, Ctx& ctx, const std::map<std::string, Ty>* bindings) {
  for (const auto& g : gs) {
    std::string k = genericKind(g);
    if (k != "int" && k != "float" && k != "bool") {
      diags_->emit(g.type->range, GenericType, g.name.name, k);
      k = "int";
    }
    if (g.defaultValue && !bindings) {
      Ty d = checkExpr(g.defaultValue.get(), ctx);
      if (!d.isError() && !genericAccepts(g, d))
        diags_->emit(g.defaultValue->range, GenericArgType, g.name.name, ctx.decl->name.name, "a compile-time " + k, tyStr(d));
    }
    Ty v;
    if (bindings && bindings->count(g.name.name)) v = bindings->at(g.name.name);
    else if (k == "int") v = Ty::intConst(Poly::symbol(g.name.name));
    else if (k == "float") v = Ty::floatConst(std::nullopt);
    else v = Ty::boolConst(std::nullopt);
    declareLocal(ctx, g.name, Local{Local::Generic, v, {}}, g.range);
  }
}

void Checker::bindParams(const std::vector<Param>& ps, Ctx& ctx, bool isOp) {
  for (const auto& p : ps) {
    Ty t = resolveType(p.type, ctx, "parameter", p.name.name, true);
    if (t.kind == TyKind::GroupElem && isOp) {
      diags_->emit(p.type.range, ParamType, "op parameter", p.name.name, tyStr(t) + " (ops take tensors and scalars)");
      t = Ty::error();
    }
    if (t.kind == TyKind::Tensor) {
      if (t.shape.empty()) {
        if (p.inout) diags_->emit(p.range, InoutScalar, p.name.name);
        t = Ty::scalar(t.dtype);
      } else {
        t.storage = Storage::OpParam;
        t.writable = p.inout;
        t.name = p.name.name;
        t.declRange = p.name.range;
      }
    } else if (p.inout && !t.isError()) {
      diags_->emit(p.range, InoutScalar, p.name.name);
    }
    recordType(&p, t);
    declareLocal(ctx, p.name, Local{Local::Param, t, {}}, p.range);
  }
}

}  // namespace mk::check
