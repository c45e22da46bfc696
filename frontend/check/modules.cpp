// Loading the root file and its imports, and each module's table of top-level names.
#include "frontend/check/context.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "frontend/parse.h"

namespace mk::check {

namespace fs = std::filesystem;

Module* Checker::addModule(FileId file, std::string name, bool root) {
  auto m = std::make_unique<Module>();
  m->name = std::move(name);
  m->isRoot = root;
  unsigned before = diags_->errorCount();
  m->ast = parseFile(file, sources_, *diags_);
  if (diags_->errorCount() != before) parseErrors_.insert(m.get());
  program_.modules.push_back(std::move(m));
  return program_.modules.back().get();
}

std::optional<std::string> Checker::findModule(const ImportDecl& imp, const Module& from, std::string& looked) const {
  std::vector<std::string> dirs;
  std::string rel;
  size_t first = 0;
  if (!imp.path.empty() && imp.path[0].name == "std") {
    dirs.push_back(options_.stdlibDir.empty() ? defaultStdlibDir() : options_.stdlibDir);
    first = 1;
  } else {
    dirs.push_back(fs::path(sources_.file(from.ast->file).path()).parent_path().string());
    for (const auto& d : options_.includeDirs) dirs.push_back(d);
  }
  for (size_t i = first; i < imp.path.size(); ++i) rel += (rel.empty() ? "" : "/") + imp.path[i].name;
  rel += ".mk";
  std::set<std::string> seen;
  std::vector<std::string> nearby;  // modules that do exist in the same folders, for a hint
  for (const auto& d : dirs) {
    fs::path p = (d.empty() ? fs::path(rel) : fs::path(d) / rel).lexically_normal();
    std::error_code ec;
    // A file the caller already holds counts too: a language server's open, unsaved documents.
    if (fs::is_regular_file(p, ec) || sources_.find(p.string())) return p.string();
    if (!seen.insert(p.string()).second) continue;
    looked += (looked.empty() ? "" : ", ") + p.string();
    for (fs::directory_iterator it(p.parent_path(), ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".mk") nearby.push_back(it->path().stem().string());
  }
  std::string last = imp.path.back().name;
  std::string hint = suggest(last, nearby);
  if (!hint.empty()) {
    std::string prefix = imp.dotted().substr(0, imp.dotted().size() - last.size());
    hint = "; did you mean '" + prefix + hint.substr(hint.find('\'') + 1);
  }
  looked += ")" + hint;
  return std::nullopt;
}

void Checker::loadImports(Module* m, std::vector<Module*>& stack) {
  stack.push_back(m);
  bool seenOther = false;
  const Decl* firstOther = nullptr;
  std::set<std::string> seen;
  for (const auto& d : m->ast->decls) {
    auto* imp = as<ImportDecl>(d.get());
    if (!imp) {
      if (!seenOther) firstOther = d.get();
      seenOther = true;
      continue;
    }
    if (imp->path.empty() || imp->path.back().name.empty()) continue;
    if (seenOther) diags_->emit(imp->range, ImportNotFirst).note(firstOther->range, FirstDeclHere);
    std::string dotted = imp->dotted();
    if (!seen.insert(dotted).second) {
      diags_->emit(imp->range, DuplicateImport, dotted);
      continue;
    }
    std::string looked;
    auto path = findModule(*imp, *m, looked);
    if (!path) {
      diags_->emit(imp->range, ModuleNotFound, dotted, looked);
      continue;
    }
    std::string canon = fs::weakly_canonical(*path).string();
    // Already on the import stack: a cycle.
    auto onStack = std::find_if(stack.begin(), stack.end(), [&](Module* s) {
      return fs::weakly_canonical(sources_.file(s->ast->file).path()).string() == canon;
    });
    if (onStack != stack.end()) {
      std::string chain;
      for (auto it = onStack; it != stack.end(); ++it) chain += sources_.file((*it)->ast->file).path() + " -> ";
      chain += *path;
      diags_->emit(imp->range, ImportCycle, chain);
      continue;
    }
    Module* target = nullptr;
    for (auto& other : program_.modules)
      if (fs::weakly_canonical(sources_.file(other->ast->file).path()).string() == canon) target = other.get();
    if (!target) {
      auto file = sources_.load(*path);
      if (!file) {
        diags_->emit(imp->range, ModuleNotFound, dotted, *path + ")");
        continue;
      }
      target = addModule(*file, dotted, false);
      target->importedAt = imp->range;
      loadImports(target, stack);
    }
    if (index_) index_->imports[SemanticIndex::key(imp->range)] = target->ast->file;
    m->imports.push_back(target);
  }
  stack.pop_back();
}


void Checker::collectGlobals(Module* m) {
  if (index_) indexGlobals(m);
  auto& table = globals_[m];
  auto add = [&](const Decl* d) {
    declModule_[d] = m;
    if (d->name.name.empty()) return;
    auto [it, inserted] = table.emplace(d->name.name, GlobalSym{d, m});
    if (!inserted) diags_->emit(d->name.range, Redefinition, d->name.name).note(it->second.decl->name.range, PreviousDefinition);
  };
  for (const auto& d : m->ast->decls) {
    if (as<ImportDecl>(d.get()) || as<AssertDecl>(d.get())) {
      declModule_[d.get()] = m;
      continue;
    }
    if (!m->isRoot && as<ConfigDecl>(d.get())) diags_->emit(d->name.range, ImportedConfig, m->name).note(m->importedAt, ImportedHere);
    if (!m->isRoot && as<StepDecl>(d.get())) diags_->emit(d->name.range, ImportedStep, m->name).note(m->importedAt, ImportedHere);
    add(d.get());
    if (auto* g = as<GroupDecl>(d.get()))
      for (const auto& mem : g->members) declModule_[mem.get()] = m;
  }
}

std::optional<Checker::GlobalSym> Checker::findGlobal(Module* m, const std::string& name, SourceRange use, bool report) {
  auto& own = globals_[m];
  if (auto it = own.find(name); it != own.end()) return it->second;
  std::optional<GlobalSym> found;
  for (Module* imp : m->imports) {
    auto& t = globals_[imp];
    auto it = t.find(name);
    if (it == t.end() || as<ConfigDecl>(it->second.decl) || as<StepDecl>(it->second.decl)) continue;
    if (found && found->decl != it->second.decl) {
      if (report)
        diags_->emit(use, AmbiguousName, name, found->mod->name, imp->name)
            .note(found->decl->name.range, CandidateHere)
            .note(it->second.decl->name.range, CandidateHere);
      return GlobalSym{};  // decl null: ambiguous, already reported
    }
    found = it->second;
  }
  return found;
}


}  // namespace mk::check
