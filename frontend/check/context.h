// The checker's shared context: the state of one check of a program and the declarations of
// every part of it, one file per concern in this folder (modules, names, config, types,
// expressions, builtins, calls, op bodies, fn bodies, elaboration, the index). frontend/sema.h is
// the public interface.
//
// One Checker walks the program in one of four modes (Mode below); the semantic index, when asked
// for, records the generic pass. One diagnostic per problem: a sub-expression that already failed
// has the Error type, which silences everything built on it.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "frontend/check/diagnostics.h"
#include "frontend/sema.h"

namespace mk::check {

using ast::Expr;
using ast::Stmt;
using ast::Decl;
using ast::IntLit;
using ast::FloatLit;
using ast::BoolLit;
using ast::NameExpr;
using ast::CallExpr;
using ast::CallArg;
using ast::TupleExpr;
using ast::IndexExpr;
using ast::Slice;
using ast::FieldExpr;
using ast::LoadExpr;
using ast::CastExpr;
using ast::UnaryExpr;
using ast::BinaryExpr;
using ast::BinaryOp;
using ast::UnaryOp;
using ast::ExprKind;
using ast::StmtKind;
using ast::DeclKind;
using ast::TypeRef;
using ast::Annotation;
using ast::Block;
using ast::LetStmt;
using ast::VarStmt;
using ast::ConstStmt;
using ast::AssignStmt;
using ast::AssignOp;
using ast::StoreStmt;
using ast::ForStmt;
using ast::IfStmt;
using ast::ReturnStmt;
using ast::SyncStmt;
using ast::AssertStmt;
using ast::ExprStmt;
using ast::ImportDecl;
using ast::ConstDecl;
using ast::ConfigDecl;
using ast::ConfigField;
using ast::WeightDecl;
using ast::StateDecl;
using ast::GroupDecl;
using ast::GenericParam;
using ast::Param;
using ast::Result;
using ast::TaskDim;
using ast::OpDecl;
using ast::FnDecl;
using ast::StepDecl;
using ast::AssertDecl;
using ast::Ident;
using ast::as;

// "; did you mean 'x'?" for the candidate closest to `name`, or "" when none is close.
std::string suggest(const std::string& name, const std::vector<std::string>& candidates);
std::string plural(size_t n);  // "s" unless n is 1
// The builtins' names, each once, in the order of support/builtins.def.
const std::vector<std::string>& builtinNames();

// Compile-time values as generic arguments.
bool concreteValue(const Ty& t);   // a known int, float or bool
std::string valueStr(const Ty& t);  // its value, or its type when unknown
std::string genericKind(const GenericParam& g);  // "int" when untyped
bool genericAccepts(const GenericParam& g, const Ty& v);
Ty genericValue(const GenericParam& g, const Ty& v);  // an int given for a float becomes a float

// A name bound inside a body or signature.
struct Local {
  enum Kind { Let, Var, Const, Param, Generic, TaskVar, LoopVar } kind;
  Ty ty;
  SourceRange range;
};

struct Scope {
  std::map<std::string, Local> names;
};

// What kind of body is being checked decides which statements and expressions are allowed.
enum class BodyKind { TopLevel, Op, Fn, Step, Config };

struct Callable {
  const OpDecl* op = nullptr;
  const FnDecl* fn = nullptr;
  const Decl* decl() const { return op ? static_cast<const Decl*>(op) : fn; }
  const std::vector<GenericParam>& generics() const { return op ? op->generics : fn->generics; }
  const std::vector<Param>& params() const { return op ? op->params : fn->params; }
  const std::vector<Result>& results() const { return op ? op->results : fn->results; }
};

// How the checker is walking the program. Each walk sees the same rules; what differs is what the
// values are, where the diagnostics go and what is recorded.
enum class Mode {
  // The generic pass: every declaration once, generic parameters symbolic. The only pass the
  // semantic index records.
  Check,
  // A generic op or fn re-checked at concrete generic values (from a call), so rules that need
  // numbers can be decided; its diagnostics are reported with a note naming the call.
  Instantiate,
  // elaborateSteps' walk of the step with every value concrete: fns inlined, loops unrolled, the
  // branch of each `if` that its condition selects, each op call handed to the GraphSink.
  Elaborate,
  // During elaboration, an op's body re-checked at one set of generic values, every type recorded
  // in its OpInstance for lowering.
  RecordInstance,
};

class Checker {
 public:
  Checker(SourceManager& sources, DiagnosticEngine& diags, const CheckOptions& options, Program& program);

  void run(FileId rootFile);
  // Graph mode (see elaborateSteps): the walk of the step with every value concrete.
  void elaborate(const StepDecl& step, GraphSink& sink);

 private:
  struct GlobalSym {
    const Decl* decl = nullptr;
    Module* mod = nullptr;
  };
  struct Ctx {
    Module* mod = nullptr;
    BodyKind kind = BodyKind::TopLevel;
    const Decl* decl = nullptr;
    std::vector<Scope> scopes;
    int nesting = 0;  // loops and ifs around the current statement
    // A fn's or step's declared results, for return.
    std::vector<Ty> results;
    std::string what;  // "fn 'block'", for messages
    // Op bodies: which results were stored.
    std::set<std::string> stored;
    // Graph mode: the value of the fn's or step's `return`.
    Ty returned;
    // Fns: what the expression being checked must be a compile-time value for, so runtime
    // arithmetic there is reported as that (e.g. "constant 'n'"), not as misplaced arithmetic.
    const DiagnosticDef<std::string>* constNeeded = nullptr;
    std::string constWhat;
  };

  // --- the walk (checker.cpp)
  void runChecks(FileId rootFile);
  void checkBlock(const Block& b, Ctx& ctx);
  void checkStmt(const Stmt* s, Ctx& ctx);

  // --- modules (modules.cpp)
  Module* addModule(FileId file, std::string name, bool root);
  void loadImports(Module* m, std::vector<Module*>& stack);
  std::optional<std::string> findModule(const ImportDecl& imp, const Module& from, std::string& looked) const;
  void collectGlobals(Module* m);
  std::optional<GlobalSym> findGlobal(Module* m, const std::string& name, SourceRange use, bool report);

  // --- names (names.cpp)
  Ty nameValue(const std::string& name, SourceRange range, Ctx& ctx);
  Ty globalValue(const GlobalSym& sym, SourceRange use, Ctx& ctx);
  std::vector<std::string> namesInScope(const Ctx& ctx) const;
  Local* findLocal(Ctx& ctx, const std::string& name);
  // `declRange` is the whole declaration, `scope` where the name is visible (default: the block
  // being checked, else the body's declaration), `kind` what the index calls it (default: from
  // the local's kind).
  void declareLocal(Ctx& ctx, const Ident& name, Local local, SourceRange declRange = {}, SourceRange scope = {},
                    std::optional<SymbolKind> kind = std::nullopt);

  // --- config and constants (config.cpp)
  void checkConfigs(Module* root);
  Ty evalConst(const Expr* e, Ctx& ctx, const std::string& what);
  std::optional<int64_t> constInt(const Expr* e, Ctx& ctx, const std::string& what);
  void checkStaticAssert(const Expr* cond, const std::optional<std::string>& msg, SourceRange range, Ctx& ctx);

  // --- types, layouts and storage (types.cpp)
  Ty resolveType(const TypeRef& t, Ctx& ctx, const std::string& what, const std::string& name, bool allowLayout);
  std::optional<Layout> resolveLayout(const ast::Layout& l, const Shape& shape, Ctx& ctx);
  void checkLayoutFits(const Layout& lay, const Shape& shape);
  Ty storageType(const Decl* d, const TypeRef& t, Storage storage, Ctx& ctx);
  void checkWeightSources(const WeightDecl& w, const Ty& ty, const GroupDecl* group);
  Ty groupType(const GroupDecl* g, Module* m);

  // --- expressions (expressions.cpp)
  Ty checkExpr(const Expr* e, Ctx& ctx);
  Ty checkExprImpl(const Expr* e, Ctx& ctx);
  Ty checkBinary(const BinaryExpr* b, Ctx& ctx);
  Ty combine(const std::string& opName, BinaryOp op, const Ty& a, const Ty& b, SourceRange range,
             const Expr* ea, const Expr* eb);
  Ty foldConst(BinaryOp op, const Ty& a, const Ty& b, SourceRange range);
  enum class Access { Value, Load, Store };
  Ty checkIndex(const IndexExpr* ix, Ctx& ctx, Access access);
  Shape checkRegion(const IndexExpr* ix, const Ty& base, const std::string& name, Ctx& ctx);
  bool sameShape(const Shape& a, const Shape& b) const;
  void shapeNotes(DiagnosticBuilder& b, const Shape& s);
  bool runtimeValue(const Ty& t) const { return t.kind == TyKind::Scalar || t.kind == TyKind::Tile; }
  bool requireValue(const Ty& t, const Expr* e, const std::string& what);

  // --- builtins (builtins.cpp)
  Ty checkBuiltin(const CallExpr* call, Ctx& ctx);

  // --- calls (calls.cpp)
  Ty checkCall(const CallExpr* call, Ctx& ctx);
  void instantiate(const Callable& c, Module* m, const std::map<std::string, Ty>& bindings, SourceRange callRange);
  void checkCallCycles();

  // --- signatures (signatures.cpp)
  void bindGenerics(const std::vector<GenericParam>& gs, Ctx& ctx, const std::map<std::string, Ty>* bindings);
  void bindParams(const std::vector<Param>& ps, Ctx& ctx, bool isOp);

  // --- op bodies (op_bodies.cpp)
  void checkOp(const OpDecl* op, Module* m, const std::map<std::string, Ty>* bindings);
  void checkTaskGrid(const OpDecl* op, Ctx& ctx, bool concrete);
  void checkOpStmt(const Stmt* s, Ctx& ctx);
  bool assignable(const Ty& target, const Ty& value) const;

  // --- fn and step bodies (fn_bodies.cpp)
  void checkFn(const FnDecl* fn, Module* m, const std::map<std::string, Ty>* bindings);
  void checkStep(const StepDecl* step, Module* m);
  void checkFnStmt(const Stmt* s, Ctx& ctx);
  void checkAnnotations(const std::vector<Annotation>& anns, const Expr* value, Ctx& ctx);
  // Reports duplicate, misplaced and unknown annotations, and calls `check` for each one named
  // `here` (the annotation this declaration or statement takes: op bodies pass "cluster").
  void forEachAnnotation(const std::vector<Annotation>& anns, const std::string& here,
                         const std::function<void(const Annotation&)>& check);

  // --- elaboration (elaborate.cpp)
  bool elaborating() const { return mode_ == Mode::Elaborate; }
  Ty graphStorage(const Decl* d, Ty ty, std::optional<int64_t> groupIndex);
  const OpInstance& opInstance(const OpDecl* op, Module* m, const std::map<std::string, Ty>& bindings);
  Ty inlineFn(const FnDecl* fn, Module* m, const std::map<std::string, Ty>& bindings, const std::vector<Ty>& args);
  // Mode::RecordInstance: the type of an AST node, for the instance being recorded.
  void recordType(const void* node, const Ty& ty) {
    if (record_) (*record_)[node] = ty;
  }

  // --- the index (index_recording.cpp; CheckOptions::buildIndex)
  void indexGlobals(Module* m);
  void finishIndex();
  // Only the generic pass is recorded, not the concrete re-checks of instantiations, the graph
  // walk, or the re-checks done with diagnostics suppressed. Module-level declarations are
  // evaluated once, wherever they are first needed, and mean the same everywhere: their first
  // evaluation is always recorded (forceRecord_).
  bool recording() const {
    if (!index_ || elaborating()) return false;
    return forceRecord_ > 0 || (mode_ != Mode::Instantiate && !diags_->suppressed());
  }
  void recordUse(SourceRange use, SourceRange declName, const Ty* ty) {
    if (recording()) index_->use(use, declName, ty);
  }

  SourceManager& sources_;
  DiagnosticEngine* diags_;
  const CheckOptions& options_;
  Program& program_;
  Mode mode_ = Mode::Check;

  // Modules, names and constants.
  std::map<Module*, std::map<std::string, GlobalSym>> globals_;
  std::map<const Decl*, Module*> declModule_;
  std::map<const Decl*, Ty> declTy_;
  std::vector<const Decl*> visiting_;  // constants being evaluated, outermost first
  std::set<const Module*> parseErrors_;
  std::map<const GroupDecl*, std::map<std::string, std::pair<Ty, const Decl*>>> groupMembers_;
  std::map<std::string, std::pair<Ty, SourceRange>> configFields_;  // the selected config
  const std::vector<const ConfigField*>* configOrder_ = nullptr;  // the config being evaluated
  std::map<const GroupDecl*, std::pair<std::optional<int64_t>, std::optional<int64_t>>> groupRange_;

  // Calls and instantiations.
  std::map<const Decl*, bool> genericClean_;
  std::set<std::string> instantiated_;
  std::vector<const Decl*> callStack_;
  std::set<std::tuple<DiagKind, FileId, uint32_t, uint32_t>> reportedInInstances_;
  // Unrolled loop iterations left for the whole program, so nested loops cannot run away.
  static constexpr int64_t kUnrollBudget = 1 << 20;
  int64_t unrollBudget_ = kUnrollBudget;
  // Which fns and ops each fn or step calls, and where: recursion through several fns is found
  // on this graph once every body has been seen.
  std::map<const Decl*, std::vector<std::pair<const Decl*, SourceRange>>> calls_;
  std::vector<const Decl*> callers_;  // the keys of calls_ in the order first seen, for stable output

  // The index.
  SemanticIndex* index_ = nullptr;
  int forceRecord_ = 0;
  SourceRange block_;  // the innermost block being checked
  // Checking an op's or fn's body: a block of its own and, for the generic pass (the one the
  // index records, even when an instantiation asked for it first), outside any instantiation;
  // both restored when the body is done.
  struct BodyScope {
    Checker& c;
    Mode savedMode;
    SourceRange savedBlock;
    BodyScope(Checker& checker, bool generic) : c(checker), savedMode(checker.mode_), savedBlock(checker.block_) {
      if (generic && c.mode_ == Mode::Instantiate) c.mode_ = Mode::Check;
      c.block_ = {};
    }
    ~BodyScope() { c.mode_ = savedMode, c.block_ = savedBlock; }
  };

  // Elaboration.
  GraphSink* sink_ = nullptr;                    // Mode::Elaborate
  std::map<const void*, Ty>* record_ = nullptr;  // Mode::RecordInstance: where checkExpr records types
  std::map<std::string, std::unique_ptr<OpInstance>> opInstances_;
  std::map<std::pair<const Decl*, int64_t>, int> storageIds_;
  std::vector<int> pendingAfter_;
  bool pendingSync_ = false;
};

}  // namespace mk::check
