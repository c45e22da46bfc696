// The driver: every module's declarations in order, then the checks that need the whole program.
#include "frontend/check/context.h"

namespace mk::check {

Checker::Checker(SourceManager& sources, DiagnosticEngine& diags, const CheckOptions& options, Program& program)
    : sources_(sources), diags_(&diags), options_(options), program_(program) {
  if (options.buildIndex) {
    if (!program.index) program.index = std::make_unique<SemanticIndex>();
    index_ = program.index.get();
  }
}

void Checker::run(FileId rootFile) {
  runChecks(rootFile);
  finishIndex();
}

void Checker::runChecks(FileId rootFile) {
  Module* root = addModule(rootFile, sources_.file(rootFile).path(), true);
  std::vector<Module*> stack;
  loadImports(root, stack);
  for (auto& m : program_.modules) collectGlobals(m.get());
  checkConfigs(root);
  // Without the config the user asked for, every use of a config field would be one more error.
  if (options_.configName && !program_.config) return;
  for (auto& mp : program_.modules) {
    Module* m = mp.get();
    for (const auto& d : m->ast->decls) {
      const Decl* decl = d.get();
      switch (decl->kind) {
        case DeclKind::Const:
        case DeclKind::Weight:
        case DeclKind::State:
        case DeclKind::Group: {
          if (decl->name.name.empty()) break;
          Ctx force;
          force.mod = m;
          force.kind = BodyKind::Fn;
          globalValue(GlobalSym{decl, m}, decl->name.range, force);
          break;
        }
        case DeclKind::Assert: {
          Ctx top;
          top.mod = m;
          auto* a = as<AssertDecl>(decl);
          checkStaticAssert(a->cond.get(), a->message, a->range, top);
          break;
        }
        case DeclKind::Op: checkOp(as<OpDecl>(decl), m, nullptr); break;
        case DeclKind::Fn: checkFn(as<FnDecl>(decl), m, nullptr); break;
        case DeclKind::Step:
          if (!m->isRoot) break;
          // A second step of a name is reported as any name defined twice; it is no entry.
          if (std::any_of(program_.steps.begin(), program_.steps.end(),
                          [&](const StepDecl* s) { return s->name.name == decl->name.name; }))
            break;
          program_.steps.push_back(as<StepDecl>(decl));
          checkStep(program_.steps.back(), m);
          break;
        case DeclKind::Import:
        case DeclKind::Config: break;
      }
    }
  }
  checkCallCycles();
}


void Checker::checkBlock(const Block& b, Ctx& ctx) {
  ctx.scopes.emplace_back();
  SourceRange outer = block_;
  block_ = b.range;
  for (const auto& s : b.stmts) checkStmt(s.get(), ctx);
  block_ = outer;
  ctx.scopes.pop_back();
}

void Checker::checkStmt(const Stmt* s, Ctx& ctx) {
  if (!s) return;
  if (ctx.kind == BodyKind::Op) {
    checkOpStmt(s, ctx);
    return;
  }
  // @after applies to the calls of its own statement only.
  std::vector<int> outer = std::move(pendingAfter_);
  pendingAfter_ = outer;
  checkFnStmt(s, ctx);
  pendingAfter_ = std::move(outer);
}

}  // namespace mk::check
