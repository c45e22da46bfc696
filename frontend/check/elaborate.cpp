// Graph mode (elaborateSteps): the step walked with every value concrete, fns inlined, each op call
// handed to the GraphSink with its instance.
#include "frontend/check/context.h"

namespace mk::check {

Ty Checker::graphStorage(const Decl* d, Ty ty, std::optional<int64_t> groupIndex) {
  auto key = std::make_pair(d, groupIndex.value_or(-1));
  auto it = storageIds_.find(key);
  if (it == storageIds_.end()) it = storageIds_.emplace(key, sink_->storageTensor(*d, ty, groupIndex)).first;
  ty.tensorId = it->second;
  return ty;
}

const OpInstance& Checker::opInstance(const OpDecl* op, Module* m, const std::map<std::string, Ty>& bindings) {
  std::string desc;
  for (const auto& [n, v] : bindings) desc += (desc.empty() ? "" : ", ") + n + "=" + valueStr(v);
  // Keyed by the declaration: two modules may each have an op of the same name.
  auto& slot = opInstances_[fmt::format("{}|{}", static_cast<const void*>(op), desc)];
  if (slot) return *slot;
  slot = std::make_unique<OpInstance>();
  slot->op = op;
  slot->bindings = bindings;
  slot->key = op->name.name + "<" + desc + ">";
  // Re-check the body at these values, recording every type; it is known to be clean.
  std::map<const void*, Ty>* outerRecord = record_;
  Mode outerMode = mode_;
  record_ = &slot->types;
  mode_ = Mode::RecordInstance;
  checkOp(op, m, &bindings);
  mode_ = outerMode;
  record_ = outerRecord;
  return *slot;
}

Ty Checker::inlineFn(const FnDecl* fn, Module* m, const std::map<std::string, Ty>& bindings, const std::vector<Ty>& args) {
  Ctx ctx;
  ctx.mod = m;
  ctx.kind = BodyKind::Fn;
  ctx.decl = fn;
  ctx.scopes.emplace_back();
  bindGenerics(fn->generics, ctx, &bindings);
  // Parameters stand for the caller's tensors themselves, so the body's calls use them.
  for (size_t i = 0; i < fn->params.size() && i < args.size(); ++i)
    declareLocal(ctx, fn->params[i].name, Local{Local::Param, args[i], {}});
  for (const auto& r : fn->results) ctx.results.push_back(resolveType(r.type, ctx, "result", fn->name.name, true));
  callStack_.push_back(fn);
  checkBlock(fn->body, ctx);
  callStack_.pop_back();
  return ctx.returned;
}

void Checker::elaborate(const StepDecl& step, GraphSink& sink) {
  // The walk starts afresh: nothing pending from the check or an earlier step, no tensor of
  // another sink's, and the whole unroll budget.
  pendingSync_ = false;
  pendingAfter_.clear();
  storageIds_.clear();
  unrollBudget_ = kUnrollBudget;
  sink_ = &sink;
  mode_ = Mode::Elaborate;
  checkStep(&step, program_.root());
  mode_ = Mode::Check;
  sink_ = nullptr;
}

}  // namespace mk::check
