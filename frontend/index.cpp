#include "frontend/index.h"

#include <algorithm>

namespace mk {

const char* symbolKindName(SymbolKind kind) {
  switch (kind) {
    case SymbolKind::Const: return "const";
    case SymbolKind::Config: return "config";
    case SymbolKind::ConfigField: return "config field";
    case SymbolKind::Weight: return "weight";
    case SymbolKind::State: return "state";
    case SymbolKind::Group: return "group";
    case SymbolKind::Op: return "op";
    case SymbolKind::Fn: return "fn";
    case SymbolKind::Step: return "step";
    case SymbolKind::Generic: return "generic parameter";
    case SymbolKind::Param: return "parameter";
    case SymbolKind::Result: return "result";
    case SymbolKind::TaskVar: return "task index";
    case SymbolKind::LoopVar: return "loop variable";
    case SymbolKind::Let: return "let";
    case SymbolKind::Var: return "var";
    case SymbolKind::LocalConst: return "local const";
  }
  return "symbol";
}

bool isLocalSymbol(SymbolKind kind) {
  switch (kind) {
    case SymbolKind::Generic:
    case SymbolKind::Param:
    case SymbolKind::Result:
    case SymbolKind::TaskVar:
    case SymbolKind::LoopVar:
    case SymbolKind::Let:
    case SymbolKind::Var:
    case SymbolKind::LocalConst: return true;
    default: return false;
  }
}

size_t SemanticIndex::declare(Symbol symbol) {
  Key k = key(symbol.nameRange);
  if (auto it = byName_.find(k); it != byName_.end()) {
    Symbol& known = symbols[it->second];
    if (!known.ty && symbol.ty) known.ty = std::move(symbol.ty);
    return it->second;
  }
  symbols.push_back(std::move(symbol));
  byName_[k] = symbols.size() - 1;
  return symbols.size() - 1;
}

void SemanticIndex::use(SourceRange use, SourceRange declName, const Ty* ty) {
  if (!use.valid() || !declName.valid() || use.end <= use.begin) return;
  pending_.emplace(key(use), std::make_pair(declName, ty ? std::optional<Ty>(*ty) : std::nullopt));
}

void SemanticIndex::finish() {
  for (auto& [k, target] : pending_) {
    auto it = byName_.find(key(target.first));
    if (it == byName_.end()) continue;
    // A declaring name is not a use of itself.
    if (k == it->first) continue;
    uses.push_back({{std::get<0>(k), std::get<1>(k), std::get<2>(k)}, it->second, std::move(target.second)});
  }
  pending_.clear();
  // pending_ is ordered by (file, begin, end), so uses come out sorted.
}

std::optional<size_t> SemanticIndex::symbolAt(SourceRange nameRange) const {
  auto it = byName_.find(key(nameRange));
  if (it == byName_.end()) return std::nullopt;
  return it->second;
}

std::optional<SemanticIndex::Hit> SemanticIndex::at(FileId file, uint32_t offset) const {
  // Uses: the last one starting at or before the offset.
  auto covers = [&](SourceRange r) { return r.file == file && r.begin <= offset && offset <= r.end; };
  auto u = std::upper_bound(uses.begin(), uses.end(), std::make_pair(file, offset),
                            [](const std::pair<FileId, uint32_t>& p, const SymbolUse& s) {
                              return p.first < s.range.file || (p.first == s.range.file && p.second < s.range.begin);
                            });
  std::optional<Hit> best;
  // Two names can touch (`a` ending where nothing else starts); take the one starting at the
  // offset over the one ending there.
  for (int back = 0; back < 2 && u != uses.begin(); ++back) {
    --u;
    if (covers(u->range)) {
      if (!best || u->range.begin > best->range.begin) best = Hit{u->symbol, u->range, &*u};
    }
  }
  auto d = byName_.upper_bound({file, offset, UINT32_MAX});
  for (int back = 0; back < 2 && d != byName_.begin(); ++back) {
    --d;
    SourceRange r{std::get<0>(d->first), std::get<1>(d->first), std::get<2>(d->first)};
    if (covers(r) && (!best || r.begin > best->range.begin)) best = Hit{d->second, r, nullptr};
  }
  return best;
}

}  // namespace mk
