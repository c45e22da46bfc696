// The semantic index (CheckOptions::buildIndex): every module-level declaration, and the types
// learnt for them once checking is done.
#include "frontend/check/context.h"

namespace mk::check {

void Checker::indexGlobals(Module* m) {
  auto add = [&](const Decl* d, SymbolKind kind, const Decl* owner) {
    if (d->name.name.empty()) return;
    Symbol sym;
    sym.kind = kind;
    sym.name = d->name.name;
    sym.nameRange = d->name.range;
    sym.range = d->range;
    sym.decl = d;
    sym.owner = owner;
    sym.doc = d->doc;
    index_->declare(std::move(sym));
  };
  for (const auto& d : m->ast->decls) {
    switch (d->kind) {
      case DeclKind::Const: add(d.get(), SymbolKind::Const, nullptr); break;
      case DeclKind::Weight: add(d.get(), SymbolKind::Weight, nullptr); break;
      case DeclKind::State: add(d.get(), SymbolKind::State, nullptr); break;
      case DeclKind::Op: add(d.get(), SymbolKind::Op, nullptr); break;
      case DeclKind::Fn: add(d.get(), SymbolKind::Fn, nullptr); break;
      case DeclKind::Step: add(d.get(), SymbolKind::Step, nullptr); break;
      case DeclKind::Group: {
        add(d.get(), SymbolKind::Group, nullptr);
        for (const auto& mem : as<GroupDecl>(d.get())->members)
          add(mem.get(), as<WeightDecl>(mem.get()) ? SymbolKind::Weight : SymbolKind::State, d.get());
        break;
      }
      case DeclKind::Config: {
        add(d.get(), SymbolKind::Config, nullptr);
        for (const auto& f : as<ConfigDecl>(d.get())->fields) {
          if (f.name.name.empty()) continue;
          Symbol sym;
          sym.kind = SymbolKind::ConfigField;
          sym.name = f.name.name;
          sym.nameRange = f.name.range;
          sym.range = f.range;
          sym.owner = d.get();
          sym.doc = f.doc;
          index_->declare(std::move(sym));
        }
        break;
      }
      case DeclKind::Import:
      case DeclKind::Assert: break;
    }
  }
}

void Checker::finishIndex() {
  if (!index_) return;
  for (Symbol& sym : index_->symbols) {
    if (sym.ty || !sym.decl) continue;
    if (auto it = declTy_.find(sym.decl); it != declTy_.end()) {
      sym.ty = it->second;
    } else if (sym.owner && sym.owner->kind == DeclKind::Group) {
      auto g = groupMembers_.find(as<GroupDecl>(sym.owner));
      if (g == groupMembers_.end()) continue;
      if (auto mem = g->second.find(sym.name); mem != g->second.end() && mem->second.second == sym.decl)
        sym.ty = mem->second.first;
    }
  }
  index_->finish();
}


}  // namespace mk::check
