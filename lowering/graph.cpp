#include "lowering/graph.h"

#include <fmt/format.h>

#include <list>
#include <map>
#include <stdexcept>

#include "ir/builtins.h"

namespace mk::lowering {

namespace {

using ast::as;

ir::Layout lowerLayout(const Layout& l) {
  ir::Layout out;
  out.kind = static_cast<ir::Layout::Kind>(l.kind);
  for (const Poly& a : l.args) out.args.push_back(a.value());
  return out;
}

ir::Shape lowerShape(const Ty& t) {
  ir::Shape s;
  if (t.kind == TyKind::Tile || t.kind == TyKind::Tensor)
    for (const Dim& d : t.shape) s.push_back(d.value.value());
  return s;
}

// The dtype a compile-time constant takes in the tile IR.
DType constDType(const Ty& t) {
  return t.kind == TyKind::Float ? DType::F32 : t.kind == TyKind::Bool ? DType::Bool : DType::I32;
}

// Translates one op body at one set of generic values into the tile IR, using the types the
// checker recorded for exactly that instance.
class TileLowering {
 public:
  explicit TileLowering(const OpInstance& inst) : inst_(inst), op_(*inst.op) {}

  std::shared_ptr<ir::TileFunc> run() {
    auto f = std::make_shared<ir::TileFunc>();
    func_ = f.get();
    f->name = inst_.key;
    f->opName = op_.name.name;
    f->range = op_.range;
    scopes_.emplace_back();
    for (const auto& [n, v] : inst_.bindings) scopes_.back()[n] = Binding{Binding::Const, 0, v};
    for (const auto& p : op_.params) addParam(p.name.name, typeOf(&p), ir::Param::Tensor, p.inout);
    for (const auto& r : op_.results) addParam(r.name ? r.name->name : "", typeOf(&r), ir::Param::Result, false);
    for (size_t d = 0; d < op_.tasks.size(); ++d) {
      const Ty& e = typeOf(op_.tasks[d].extent.get());
      f->taskGrid.push_back(e.intValue->value());
      f->taskVars.push_back(op_.tasks[d].var.name);
      scopes_.back()[op_.tasks[d].var.name] = Binding{Binding::Task, static_cast<int>(d), {}};
    }
    f->body = block(op_.body);
    return f;
  }

 private:
  struct Binding {
    enum Kind { Slot, Task, Param, Const } kind;
    int index = 0;
    Ty value;  // Const
  };

  const Ty& typeOf(const void* node) const {
    auto it = inst_.types.find(node);
    if (it == inst_.types.end()) throw std::logic_error("lowering: no type recorded for a node of " + inst_.key);
    return it->second;
  }

  void addParam(const std::string& name, const Ty& t, ir::Param::Kind kind, bool inout) {
    ir::Param p;
    p.name = name;
    p.dtype = t.dtype;
    p.shape = lowerShape(t);
    p.kind = t.kind == TyKind::Scalar ? ir::Param::Scalar : kind;
    p.inout = inout;
    scopes_.back()[name] = Binding{Binding::Param, static_cast<int>(func_->params.size()), {}};
    func_->params.push_back(std::move(p));
  }

  const Binding& lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto f = it->find(name); f != it->end()) return f->second;
    throw std::logic_error("lowering: unbound name '" + name + "' in " + inst_.key);
  }

  int newSlot(const std::string& name, DType dt, ir::Shape shape) {
    func_->locals.push_back({name, dt, std::move(shape)});
    int slot = static_cast<int>(func_->locals.size() - 1);
    scopes_.back()[name] = Binding{Binding::Slot, slot, {}};
    return slot;
  }

  ir::ExprPtr make(ir::ExprKind kind, const Ty& t, SourceRange r) {
    auto e = std::make_unique<ir::Expr>();
    e->kind = kind;
    e->dtype = t.isCompileTime() ? constDType(t) : t.dtype;
    e->shape = lowerShape(t);
    e->range = r;
    return e;
  }

  ir::ExprPtr constant(const Ty& t, SourceRange r) {
    auto e = make(ir::ExprKind::Const, t, r);
    e->value = t.kind == TyKind::Float ? *t.floatValue : t.kind == TyKind::Bool ? (*t.boolValue ? 1.0 : 0.0)
                                                                               : static_cast<double>(t.intValue->value());
    return e;
  }

  std::vector<ir::RegionDim> region(const std::vector<ast::Slice>& slices) {
    std::vector<ir::RegionDim> out;
    for (const auto& sl : slices) {
      ir::RegionDim d;
      d.start = expr(sl.start.get());
      d.length = sl.length ? typeOf(sl.length.get()).intValue->value() : 0;
      out.push_back(std::move(d));
    }
    return out;
  }

  ir::ExprPtr expr(const ast::Expr* e) {
    const Ty& t = typeOf(e);
    bool known = (t.kind == TyKind::Int && t.intValue && t.intValue->isConstant()) ||
                 (t.kind == TyKind::Float && t.floatValue) || (t.kind == TyKind::Bool && t.boolValue);
    if (known) return constant(t, e->range);
    switch (e->kind) {
      case ast::ExprKind::Name: {
        const Binding& b = lookup(as<ast::NameExpr>(e)->name);
        ir::ExprKind k = b.kind == Binding::Slot ? ir::ExprKind::Local : b.kind == Binding::Task ? ir::ExprKind::TaskIndex
                                                                                                 : ir::ExprKind::Scalar;
        if (b.kind == Binding::Const) return constant(b.value, e->range);
        auto out = make(k, t, e->range);
        out->index = b.index;
        return out;
      }
      case ast::ExprKind::Load: {
        auto* l = as<ast::LoadExpr>(e);
        auto out = make(ir::ExprKind::Load, t, e->range);
        if (auto* ix = as<ast::IndexExpr>(l->source.get())) {
          out->index = lookup(as<ast::NameExpr>(ix->base.get())->name).index;
          out->region = region(ix->slices);
        } else {
          out->index = lookup(as<ast::NameExpr>(l->source.get())->name).index;
        }
        return out;
      }
      case ast::ExprKind::Index: {
        auto* ix = as<ast::IndexExpr>(e);
        auto out = make(ir::ExprKind::Slice, t, e->range);
        out->operands.push_back(expr(ix->base.get()));
        out->region = region(ix->slices);
        return out;
      }
      case ast::ExprKind::Cast: {
        auto out = make(ir::ExprKind::Cast, t, e->range);
        out->operands.push_back(expr(as<ast::CastExpr>(e)->value.get()));
        return out;
      }
      case ast::ExprKind::Unary: {
        auto* u = as<ast::UnaryExpr>(e);
        auto out = make(ir::ExprKind::Unary, t, e->range);
        out->unary = u->op == ast::UnaryOp::Neg ? ir::UnaryOp::Neg : ir::UnaryOp::Not;
        out->operands.push_back(expr(u->operand.get()));
        return out;
      }
      case ast::ExprKind::Binary: {
        auto* b = as<ast::BinaryExpr>(e);
        auto out = make(ir::ExprKind::Binary, t, e->range);
        static const ir::BinaryOp map[] = {ir::BinaryOp::Mul, ir::BinaryOp::Div, ir::BinaryOp::Mod, ir::BinaryOp::Add,
                                           ir::BinaryOp::Sub, ir::BinaryOp::Lt,  ir::BinaryOp::Le,  ir::BinaryOp::Gt,
                                           ir::BinaryOp::Ge,  ir::BinaryOp::Eq,  ir::BinaryOp::Ne,  ir::BinaryOp::And,
                                           ir::BinaryOp::Or};
        out->binary = map[static_cast<int>(b->op)];
        out->operands.push_back(expr(b->lhs.get()));
        out->operands.push_back(expr(b->rhs.get()));
        return out;
      }
      case ast::ExprKind::Call: return call(as<ast::CallExpr>(e), t);
      default: break;
    }
    throw std::logic_error("lowering: unexpected expression in " + inst_.key);
  }

  ir::ExprPtr call(const ast::CallExpr* c, const Ty& t) {
    const ir::BuiltinIr* b = ir::findBuiltinIr(c->callee.name, c->args.size());
    if (!b) throw std::logic_error("lowering: unknown builtin '" + c->callee.name + "'");
    auto out = make(b->kind, t, c->range);
    if (b->kind == ir::ExprKind::Iota) return out;  // its length is its shape
    out->unary = b->unary;
    out->binary = b->binary;
    out->reduce = b->reduce;
    // repeat_rows/repeat_cols: the count is the shape's, like iota's length.
    const bool repeat = b->kind == ir::ExprKind::RepeatRows || b->kind == ir::ExprKind::RepeatCols;
    for (size_t i = 0; i < (repeat ? 1 : c->args.size()); ++i) out->operands.push_back(expr(c->args[i].value.get()));
    return out;
  }

  ir::Block block(const ast::Block& b) {
    scopes_.emplace_back();
    ir::Block out;
    for (const auto& s : b.stmts) {
      // An `if` on a compile-time condition leaves only its taken branch, in line: the backend
      // plans tiles and the loader's streamed loads for the code that runs, and a loop under a
      // kept `if` would not stream.
      if (const ast::Block* taken = nullptr; constantIf(s.get(), taken)) {
        if (taken)
          for (auto& st : block(*taken)) out.push_back(std::move(st));
        continue;
      }
      if (auto st = stmt(s.get())) out.push_back(std::move(st));
    }
    scopes_.pop_back();
    return out;
  }

  // Whether s is an `if` whose condition is known at compile time; `taken` is then the branch
  // that runs (null: none).
  bool constantIf(const ast::Stmt* s, const ast::Block*& taken) {
    if (s->kind != ast::StmtKind::If) return false;
    auto* i = as<ast::IfStmt>(s);
    const Ty& c = typeOf(i->cond.get());
    if (c.kind != TyKind::Bool || !c.boolValue) return false;
    taken = *c.boolValue ? &i->then : i->otherwise ? &*i->otherwise : nullptr;
    return true;
  }

  ir::StmtPtr newStmt(ir::StmtKind k, SourceRange r) {
    auto s = std::make_unique<ir::Stmt>();
    s->kind = k;
    s->range = r;
    return s;
  }

  ir::StmtPtr stmt(const ast::Stmt* s) {
    switch (s->kind) {
      case ast::StmtKind::Let: {
        auto* l = as<ast::LetStmt>(s);
        const Ty& t = typeOf(l);
        if (t.isCompileTime()) {  // a compile-time value needs no slot
          scopes_.back()[l->names[0].name] = Binding{Binding::Const, 0, t};
          return nullptr;
        }
        auto st = newStmt(ir::StmtKind::Let, s->range);
        st->value = expr(l->value.get());
        st->slot = newSlot(l->names[0].name, t.dtype, lowerShape(t));
        return st;
      }
      case ast::StmtKind::Var: {
        auto* v = as<ast::VarStmt>(s);
        const Ty& t = typeOf(v);
        auto st = newStmt(ir::StmtKind::Let, s->range);
        if (v->init) {
          st->value = expr(v->init.get());
        } else {
          st->value = constant(Ty::intConst(Poly::constant(0)), s->range);  // zero, broadcast to the var
        }
        st->slot = newSlot(v->name.name, t.dtype, lowerShape(t));
        return st;
      }
      case ast::StmtKind::Const: {
        auto* c = as<ast::ConstStmt>(s);
        scopes_.back()[c->name.name] = Binding{Binding::Const, 0, typeOf(c->value.get())};
        return nullptr;
      }
      case ast::StmtKind::Assign: {
        auto* a = as<ast::AssignStmt>(s);
        auto st = newStmt(ir::StmtKind::Assign, s->range);
        st->slot = lookup(as<ast::NameExpr>(a->target.get())->name).index;
        st->assign = static_cast<ir::AssignOp>(a->op);
        st->value = expr(a->value.get());
        return st;
      }
      case ast::StmtKind::Store: {
        auto* a = as<ast::StoreStmt>(s);
        auto st = newStmt(ir::StmtKind::Store, s->range);
        if (auto* ix = as<ast::IndexExpr>(a->target.get())) {
          st->tensor = lookup(as<ast::NameExpr>(ix->base.get())->name).index;
          st->region = region(ix->slices);
        } else {
          st->tensor = lookup(as<ast::NameExpr>(a->target.get())->name).index;
        }
        st->value = expr(a->value.get());
        return st;
      }
      case ast::StmtKind::For: {
        auto* f = as<ast::ForStmt>(s);
        auto st = newStmt(ir::StmtKind::For, s->range);
        st->lo = expr(f->lo.get());
        st->hi = expr(f->hi.get());
        st->step = f->step ? typeOf(f->step.get()).intValue->value() : 1;
        scopes_.emplace_back();
        st->slot = newSlot(f->var.name, DType::I32, {});
        st->body = block(f->body);
        scopes_.pop_back();
        return st;
      }
      case ast::StmtKind::If: {
        auto* i = as<ast::IfStmt>(s);
        auto st = newStmt(ir::StmtKind::If, s->range);
        st->value = expr(i->cond.get());
        st->body = block(i->then);
        if (i->otherwise) st->otherwise = block(*i->otherwise);
        return st;
      }
      default: return nullptr;  // static_assert and the like leave nothing behind
    }
  }

  const OpInstance& inst_;
  const ast::OpDecl& op_;
  ir::TileFunc* func_ = nullptr;
  std::vector<std::map<std::string, Binding>> scopes_;
};

class Builder : public GraphSink {
 public:
  Builder(ir::Graph& g, const SourceManager& sources) : g_(g), sources_(sources) {}

  int storageTensor(const ast::Decl& decl, const Ty& ty, std::optional<int64_t> groupIndex) override {
    ir::Tensor& t = add(ty.name.empty() ? decl.name.name : ty.name, ty);
    if (decl.name.range.valid()) {
      const SourceFile& f = sources_.file(decl.name.range.file);
      LineCol lc = f.lineCol(decl.name.range.begin);
      t.declaredAt = fmt::format("{}:{}:{}", f.path(), lc.line, lc.col);
    }
    t.kind = as<ast::WeightDecl>(&decl) ? ir::Tensor::Weight : ir::Tensor::State;
    if (auto* w = as<ast::WeightDecl>(&decl))
      for (const auto& src : w->sources) t.sources.push_back(substitute(src.name, groupIndex));
    return t.id;
  }

  int inputTensor(const ast::Param& param, const Ty& ty) override {
    ir::Tensor& t = add(param.name.name, ty);
    t.kind = ir::Tensor::Input;
    return t.id;
  }

  std::vector<int> opCall(const OpCall& c) override {
    ir::Node n;
    n.id = static_cast<int>(g_.nodes.size());
    n.func = tileFunc(*c.instance);
    n.after = c.after;
    n.gridSyncBefore = c.gridSync;
    n.call = c.call;
    for (const auto& a : c.instance->op->annotations)
      if (a.name.name == "cluster") n.cluster = static_cast<int>(c.instance->types.at(a.args[0].get()).intValue->value());
    for (const Ty& a : c.args) {
      ir::ScalarArg s;
      int tensor = -1;
      if (a.kind == TyKind::Tensor && !a.shape.empty()) {
        tensor = a.tensorId;
      } else if (a.kind == TyKind::Scalar) {
        s.kind = ir::ScalarArg::Input;
        s.index = a.inputIndex;
      } else if (a.kind == TyKind::Tensor) {
        s.kind = ir::ScalarArg::Tensor;
        s.index = a.tensorId;
      } else {
        s.kind = ir::ScalarArg::Const;
        s.value = a.kind == TyKind::Float ? *a.floatValue : a.kind == TyKind::Bool ? (*a.boolValue ? 1 : 0)
                                                                                 : static_cast<double>(a.intValue->value());
      }
      n.tensors.push_back(tensor);
      n.scalars.push_back(s);
    }
    std::vector<int> ids;
    const auto& results = c.instance->op->results;
    for (size_t i = 0; i < c.results.size(); ++i) {
      std::string name = fmt::format("{}.{}", i < results.size() && results[i].name ? results[i].name->name : "r", n.id);
      ir::Tensor& t = add(name, c.results[i]);
      ids.push_back(t.id);
      n.tensors.push_back(t.id);
      n.scalars.push_back({});
    }
    g_.nodes.push_back(std::move(n));
    return ids;
  }

  void stepInputs(const std::vector<std::pair<std::string, Ty>>& inputs) override {
    for (const auto& [name, t] : inputs) g_.inputs.push_back({name, t.dtype, t.tensorId});
  }

  void stepOutputs(const std::vector<std::pair<std::string, Ty>>& outputs) override {
    for (const auto& [name, t] : outputs) g_.outputs.push_back({name, t.tensorId});
  }

 private:
  ir::Tensor& add(const std::string& name, const Ty& ty) {
    ir::Tensor t;
    t.id = static_cast<int>(g_.tensors.size());
    t.name = name;
    t.dtype = ty.dtype;
    t.shape = lowerShape(ty);
    t.layout = lowerLayout(ty.layout);
    g_.tensors.push_back(std::move(t));
    return g_.tensors.back();
  }

  // The checker allowed only the group's index variable between braces.
  static std::string substitute(const std::string& tmpl, std::optional<int64_t> index) {
    std::string out;
    for (size_t i = 0; i < tmpl.size(); ++i) {
      size_t close = tmpl[i] == '{' ? tmpl.find('}', i) : std::string::npos;
      if (close == std::string::npos || !index) {
        out += tmpl[i];
        continue;
      }
      out += std::to_string(*index);
      i = close;
    }
    return out;
  }

  // One tile function per op instance (the checker makes each instance once).
  std::shared_ptr<const ir::TileFunc> tileFunc(const OpInstance& inst) {
    auto& slot = funcs_[&inst];
    if (!slot) slot = TileLowering(inst).run();
    return slot;
  }

  ir::Graph& g_;
  const SourceManager& sources_;
  std::map<const OpInstance*, std::shared_ptr<const ir::TileFunc>> funcs_;
};

// Gives every graph the same weights and state, first and in one order: the first step's in its
// order of use, then those only later steps use. A stable partition, so within each arena the
// order (and so every offset) of a single step's program is what its own order of use gives.
void shareStorage(std::vector<ir::Graph>& graphs) {
  auto isStorage = [](const ir::Tensor& t) { return t.kind == ir::Tensor::Weight || t.kind == ir::Tensor::State; };
  std::vector<ir::Tensor> shared;
  std::map<std::string, int> sharedId;  // storage names are unique in the program
  for (const ir::Graph& g : graphs)
    for (const ir::Tensor& t : g.tensors)
      if (isStorage(t) && sharedId.emplace(t.name, int(shared.size())).second) {
        shared.push_back(t);
        shared.back().id = int(shared.size()) - 1;
      }
  for (ir::Graph& g : graphs) {
    std::vector<ir::Tensor> tensors = shared;
    std::vector<int> newId(g.tensors.size());
    for (ir::Tensor& t : g.tensors) {
      if (isStorage(t)) {
        newId[size_t(t.id)] = sharedId.at(t.name);
        continue;
      }
      newId[size_t(t.id)] = int(tensors.size());
      t.id = int(tensors.size());
      tensors.push_back(std::move(t));
    }
    auto remap = [&](int& id) {
      if (id >= 0) id = newId.at(size_t(id));
    };
    for (ir::Node& n : g.nodes) {
      for (int& t : n.tensors) remap(t);
      for (int& t : n.after) remap(t);
      for (ir::ScalarArg& s : n.scalars)
        if (s.kind == ir::ScalarArg::Tensor) remap(s.index);
    }
    for (ir::StepInput& in : g.inputs) remap(in.tensor);
    for (auto& [name, t] : g.outputs) remap(t);
    g.tensors = std::move(tensors);
  }
}

}  // namespace

std::optional<std::vector<ir::Graph>> buildGraphs(SourceManager& sources, DiagnosticEngine& diags, FileId root,
                                                  const CheckOptions& options) {
  // One builder per step: a std::list keeps each where the checker was handed it.
  std::vector<ir::Graph> graphs;
  std::list<ir::Graph> built;
  std::list<Builder> builders;
  auto sinkFor = [&](const ast::StepDecl& step) -> GraphSink& {
    ir::Graph& g = built.emplace_back();
    g.program = sources.file(root).path();
    g.step = step.name.name;
    return builders.emplace_back(g, sources);
  };
  if (!elaborateSteps(sources, diags, root, options, sinkFor)) return std::nullopt;
  auto builder = builders.begin();
  for (ir::Graph& g : built) {
    g.config = builder->config;
    for (const auto& [name, t] : builder->configValues) {
      if (t.kind == TyKind::Int && t.intValue && t.intValue->isConstant()) g.configValues.push_back({name, std::to_string(t.intValue->value())});
      else if (t.kind == TyKind::Float && t.floatValue) g.configValues.push_back({name, fmt::format("{}", *t.floatValue)});
      else if (t.kind == TyKind::Bool && t.boolValue) g.configValues.push_back({name, *t.boolValue ? "true" : "false"});
    }
    ++builder;
    graphs.push_back(std::move(g));
  }
  shareStorage(graphs);
  return graphs;
}

}  // namespace mk::lowering
