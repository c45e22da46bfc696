// The checker: loads modules, resolves names, evaluates constants, and checks types, dtypes,
// shapes, layouts, task grids, sync annotations and the step. One diagnostic per problem: a
// sub-expression that already failed has the Error type, which silences everything built on it.
#include "frontend/sema.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>

#include "frontend/parse.h"

namespace mk {

namespace fs = std::filesystem;
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

// ---- Modules and names -------------------------------------------------------------------------
MK_DIAGNOSTIC(ModuleNotFound, Error, "cannot find module '{0}' (looked for {1}", std::string, std::string);
MK_DIAGNOSTIC(ImportCycle, Error, "import cycle: {0}", std::string);
MK_DIAGNOSTIC(ImportNotFirst, Error, "imports must come before every other declaration");
MK_DIAGNOSTIC(FirstDeclHere, Note, "the first declaration is here");
MK_DIAGNOSTIC(ImportedHere, Note, "imported here");
MK_DIAGNOSTIC(DuplicateImport, Warning, "module '{0}' is imported twice", std::string);
MK_DIAGNOSTIC(ImportedConfig, Error, "imported module '{0}' declares a config; only the root file may", std::string);
MK_DIAGNOSTIC(ImportedStep, Error, "imported module '{0}' declares a step; only the root file may", std::string);
MK_DIAGNOSTIC(Redefinition, Error, "'{0}' is already defined", std::string);
MK_DIAGNOSTIC(PreviousDefinition, Note, "previous definition is here");
MK_DIAGNOSTIC(UnknownName, Error, "unknown name '{0}'{1}", std::string, std::string);
MK_DIAGNOSTIC(AmbiguousName, Error, "'{0}' is ambiguous: both '{1}' and '{2}' define it", std::string, std::string, std::string);
MK_DIAGNOSTIC(CandidateHere, Note, "one definition is here");
MK_DIAGNOSTIC(DeclaredHere, Note, "'{0}' is declared here", std::string);
// ---- Constants and config ------------------------------------------------------------------------
MK_DIAGNOSTIC(ConstCycle, Error, "constant '{0}' depends on itself: {1}", std::string, std::string);
MK_DIAGNOSTIC(NotConstant, Error, "{0} must be a compile-time value; {1}", std::string, std::string);
MK_DIAGNOSTIC(ConstNeedsValue, Error, "{0}", std::string);
MK_DIAGNOSTIC(DivisionByZero, Error, "division by zero in a compile-time expression");
MK_DIAGNOSTIC(IntOverflow, Error, "integer overflow in a compile-time expression");
MK_DIAGNOSTIC(UnknownConfig, Error, "unknown config '{0}'{1}", std::string, std::string);
MK_DIAGNOSTIC(ConfigBaseCycle, Error, "config '{0}' derives from itself", std::string);
MK_DIAGNOSTIC(ConfigNewField, Error, "config '{0}' sets '{1}', which its base '{2}' does not have{3}", std::string, std::string, std::string, std::string);
MK_DIAGNOSTIC(DuplicateField, Error, "config field '{0}' is set twice", std::string);
MK_DIAGNOSTIC(ConfigFieldClash, Error, "config field '{0}' has the name of a declaration", std::string);
MK_DIAGNOSTIC(BadOverride, Error, "--set {0}={1}: the value must be an integer, a number, true or false", std::string, std::string);
MK_DIAGNOSTIC(OverrideKind, Error, "--set {0}: the field is a {1}; found a {2}", std::string, std::string, std::string);
MK_DIAGNOSTIC(NoSuchOverride, Error, "--set {0}: config '{1}' has no field of that name{2}", std::string, std::string, std::string);
MK_DIAGNOSTIC(NoSuchConfigOption, Error, "--config {0}: the program has no config of that name{1}", std::string, std::string);
MK_DIAGNOSTIC(StaticAssertFailed, Error, "static assertion failed{0}", std::string);
MK_DIAGNOSTIC(StaticAssertNotBool, Error, "static_assert needs a compile-time bool, found {0}", std::string);
MK_DIAGNOSTIC(ConstTypeMismatch, Error, "constant '{0}' is declared {1} but its value is {2}", std::string, std::string, std::string);
// ---- Types, dtypes and shapes --------------------------------------------------------------------
MK_DIAGNOSTIC(UnknownType, Error, "unknown type '{0}'; expected a dtype (bf16, f16, f32, i32, bool){1}", std::string, std::string);
MK_DIAGNOSTIC(BadDim, Error, "dimension {0} of '{1}' must be a positive compile-time integer, found {2}", unsigned, std::string, std::string);
MK_DIAGNOSTIC(TypeNeedsShape, Error, "{0} '{1}' needs a shape, e.g. {2}[N]", std::string, std::string, std::string);
MK_DIAGNOSTIC(DTypeMismatch, Error, "dtype mismatch in '{0}': {1} and {2}; convert one side with `as`", std::string, std::string, std::string);
MK_DIAGNOSTIC(ShapeMismatch, Error, "shape mismatch in '{0}': {1} and {2}", std::string, std::string, std::string);
MK_DIAGNOSTIC(ShapeFrom, Note, "shape {0} comes from here", std::string);
MK_DIAGNOSTIC(OperandType, Error, "'{0}' cannot take {1}", std::string, std::string);
MK_DIAGNOSTIC(FloatConstToInt, Error, "compile-time float {0} cannot be combined with {1}; only float dtypes take float constants", std::string, std::string);
MK_DIAGNOSTIC(ExpectedInt, Error, "{0} must be an integer, found {1}", std::string, std::string);
MK_DIAGNOSTIC(ExpectedBool, Error, "{0} must be a bool, found {1}", std::string, std::string);
MK_DIAGNOSTIC(CastTarget, Error, "cannot cast to '{0}': expected a dtype (bf16, f16, f32, i32, bool)", std::string);
MK_DIAGNOSTIC(CastNotValue, Error, "cannot cast {0}; cast values, e.g. `load t[...] as f32`", std::string);
MK_DIAGNOSTIC(AssignMismatch, Error, "cannot assign {0} to '{1}' of type {2}", std::string, std::string, std::string);
MK_DIAGNOSTIC(InitMismatch, Error, "'{0}' is declared {1} but initialised with {2}", std::string, std::string, std::string);
// ---- Layouts and storage -------------------------------------------------------------------------
MK_DIAGNOSTIC(UnknownLayout, Error, "unknown layout '{0}'; expected row_major, col_major, tiled(rows, cols), interleave(rows), padded(pitch) or swizzle(bytes){1}", std::string, std::string);
MK_DIAGNOSTIC(LayoutArity, Error, "layout '{0}' takes {1}, found {2}", std::string, std::string, unsigned);
MK_DIAGNOSTIC(LayoutRank, Error, "layout '{0}' needs a tensor of rank {1}, found rank {2}", std::string, unsigned, unsigned);
MK_DIAGNOSTIC(LayoutArg, Error, "argument {0} of layout '{1}' must be a positive compile-time integer, found {2}", unsigned, std::string, std::string);
MK_DIAGNOSTIC(LayoutNotDividing, Error, "layout {0} does not fit shape {1}: {2} is not a multiple of {3}", std::string, std::string, std::string, std::string);
MK_DIAGNOSTIC(PaddedTooSmall, Error, "padded({0}) is narrower than the rows it pads ({1} elements)", std::string, std::string);
MK_DIAGNOSTIC(SwizzleBytes, Error, "swizzle({0}): the swizzle width must be 32, 64 or 128 bytes", std::string);
MK_DIAGNOSTIC(LayoutOnScalar, Error, "a scalar has no layout");
MK_DIAGNOSTIC(LayoutOnTile, Error, "tile values have no layout; layouts describe tensors in memory");
MK_DIAGNOSTIC(InterleaveSources, Error, "weight '{0}' has layout {1} but {2} source{3}; interleave needs at least 2", std::string, std::string, unsigned, std::string);
MK_DIAGNOSTIC(InterleaveSplit, Error, "weight '{0}': {1} rows do not split into {2} sources of whole {3}-row blocks", std::string, std::string, unsigned, std::string);
MK_DIAGNOSTIC(BadTemplate, Error, "weight name template {0}", std::string);
MK_DIAGNOSTIC(TemplateNoIndex, Error, "weight name \"{0}\" does not mention {{{1}}}, so every '{2}' element would load the same tensor", std::string, std::string, std::string);
MK_DIAGNOSTIC(StorageDType, Error, "{0} '{1}' cannot have dtype {2}", std::string, std::string, std::string);
MK_DIAGNOSTIC(GroupRange, Error, "group '{0}' has an empty range {1} .. {2}", std::string, std::string, std::string);
MK_DIAGNOSTIC(GroupIndexRange, Error, "index {0} is out of range for group '{1}' ({2} .. {3})", std::string, std::string, std::string, std::string);
MK_DIAGNOSTIC(NoSuchMember, Error, "group '{0}' has no member '{1}'{2}", std::string, std::string, std::string);
MK_DIAGNOSTIC(NotIndexable, Error, "cannot index {0}", std::string);
MK_DIAGNOSTIC(NoFields, Error, "{0} has no fields", std::string);
// ---- Ops, regions and task grids -----------------------------------------------------------------
MK_DIAGNOSTIC(RegionRank, Error, "'{0}' has {1} dimension{2} but the region gives {3}", std::string, unsigned, std::string, unsigned);
MK_DIAGNOSTIC(SliceLengthNotConst, Error, "slice length must be a compile-time integer (tile shapes are static); {0}", std::string);
MK_DIAGNOSTIC(SliceLengthPositive, Error, "slice length must be positive, found {0}", std::string);
MK_DIAGNOSTIC(SliceOutOfBounds, Error, "region {0} is out of bounds for dimension {1} of '{2}' (size {3})", std::string, unsigned, std::string, std::string);
MK_DIAGNOSTIC(LoadNotTensor, Error, "load reads a region of a tensor parameter; {0}", std::string);
MK_DIAGNOSTIC(LoadFromResult, Error, "cannot load from op result '{0}': results are write-only inside their op", std::string);
MK_DIAGNOSTIC(LoadOutsideOp, Error, "load is only valid inside an op body");
MK_DIAGNOSTIC(StoreOutsideOp, Error, "store is only valid inside an op body");
MK_DIAGNOSTIC(StoreNotWritable, Error, "cannot store to '{0}': {1}", std::string, std::string);
MK_DIAGNOSTIC(StoreTarget, Error, "store needs a tensor region such as `y[t * 16 : +16]`");
MK_DIAGNOSTIC(StoreScalarRegion, Error, "'{0}' is a scalar; store it whole: `store {0} = ...;`", std::string);
MK_DIAGNOSTIC(StoreDType, Error, "storing {0} into {1} tensor '{2}'; convert with `as {1}`", std::string, std::string, std::string);
MK_DIAGNOSTIC(StoreShape, Error, "storing a value of shape {0} into region {1} of '{2}'", std::string, std::string, std::string);
MK_DIAGNOSTIC(TensorInArith, Error, "'{0}' is a tensor in memory; load a region of it first", std::string);
MK_DIAGNOSTIC(GlobalInOp, Error, "op bodies only see their parameters; pass {0} '{1}' as an argument", std::string, std::string);
MK_DIAGNOSTIC(CallInOp, Error, "ops cannot call '{0}'; compose ops in a fn", std::string);
MK_DIAGNOSTIC(UnknownBuiltin, Error, "unknown function '{0}'{1}", std::string, std::string);
MK_DIAGNOSTIC(BuiltinArity, Error, "'{0}' takes {1}, found {2}", std::string, std::string, unsigned);
MK_DIAGNOSTIC(BuiltinNamedArg, Error, "'{0}' takes no named arguments", std::string);
MK_DIAGNOSTIC(BuiltinOperand, Error, "'{0}' needs {1}, found {2}", std::string, std::string, std::string);
MK_DIAGNOSTIC(NotAssignable, Error, "cannot assign to '{0}': {1}", std::string, std::string);
MK_DIAGNOSTIC(TaskExtent, Error, "task grid extent of '{0}' must be a positive compile-time integer; {1}", std::string, std::string);
MK_DIAGNOSTIC(TaskGridRank, Error, "a task grid has at most 3 dimensions, found {0}", unsigned);
MK_DIAGNOSTIC(TaskGridInexact, Error, "task grid {0} = {1} is not exact: {2} is not a multiple of {3}", std::string, std::string, std::string, std::string);
MK_DIAGNOSTIC(ResultNeverStored, Error, "op result '{0}' is never stored", std::string);
MK_DIAGNOSTIC(LoopStep, Error, "loop step must be a positive compile-time integer; {0}", std::string);
MK_DIAGNOSTIC(LoopBound, Error, "loop bound must be an integer, found {0}", std::string);
MK_DIAGNOSTIC(StmtNotInOp, Error, "{0} is not allowed inside an op body", std::string);
MK_DIAGNOSTIC(StmtNotInFn, Error, "{0} is not allowed in a fn or step; it belongs in an op body", std::string);
MK_DIAGNOSTIC(InoutScalar, Error, "inout applies to tensors; '{0}' is a scalar", std::string);
MK_DIAGNOSTIC(GenericType, Error, "generic parameter '{0}' has type '{1}'; expected int, float or bool", std::string, std::string);
MK_DIAGNOSTIC(ParamType, Error, "{0} '{1}' cannot have type {2}", std::string, std::string, std::string);
// ---- Calls ---------------------------------------------------------------------------------------
MK_DIAGNOSTIC(ArgCount, Error, "'{0}' takes {1} argument{2}, found {3}", std::string, unsigned, std::string, unsigned);
MK_DIAGNOSTIC(UnknownGenericArg, Error, "'{0}' has no generic parameter '{1}'{2}", std::string, std::string, std::string);
MK_DIAGNOSTIC(DuplicateGenericArg, Error, "generic parameter '{0}' is given twice", std::string);
MK_DIAGNOSTIC(PositionalAfterNamed, Error, "positional argument after a named one");
MK_DIAGNOSTIC(GenericArgType, Error, "generic parameter '{0}' of '{1}' is {2}, found {3}", std::string, std::string, std::string, std::string);
MK_DIAGNOSTIC(CannotInfer, Error, "cannot infer '{0}' for '{1}'; pass it by name: {1}(..., {0} = ...)", std::string, std::string);
MK_DIAGNOSTIC(ArgMismatch, Error, "argument '{0}' of '{1}' must be {2}, found {3}", std::string, std::string, std::string, std::string);
MK_DIAGNOSTIC(ArgShapeMismatch, Error, "shape mismatch for argument '{0}' of '{1}': expected {2}, found {3}", std::string, std::string, std::string, std::string);
MK_DIAGNOSTIC(InferredFrom, Note, "'{0}' = {1} was inferred from this argument", std::string, std::string);
MK_DIAGNOSTIC(ArgLayoutMismatch, Error, "layout mismatch for argument '{0}' of '{1}': expected {2}, found {3}", std::string, std::string, std::string, std::string);
MK_DIAGNOSTIC(LayoutFrom, Note, "the layout of '{0}' is declared here", std::string);
MK_DIAGNOSTIC(InoutArg, Error, "inout parameter '{0}' of '{1}' needs state, found {2} '{3}'", std::string, std::string, std::string, std::string);
MK_DIAGNOSTIC(ParamDeclared, Note, "parameter '{0}' is declared here", std::string);
MK_DIAGNOSTIC(InstantiatedFrom, Note, "in '{0}' with {1}, called from here", std::string, std::string);
MK_DIAGNOSTIC(Recursion, Error, "'{0}' calls itself; the step must unroll to a finite graph", std::string);
MK_DIAGNOSTIC(NotCallable, Error, "'{0}' is {1}, not an op or fn", std::string, std::string);
MK_DIAGNOSTIC(TupleCount, Error, "'{0}' gives {1} result{2} but {3} name{4} bound", std::string, unsigned, std::string, unsigned, std::string);
MK_DIAGNOSTIC(VoidValue, Error, "'{0}' has no results to bind", std::string);
MK_DIAGNOSTIC(UnusedResults, Error, "the results of '{0}' are discarded; bind them with let", std::string);
MK_DIAGNOSTIC(ExprStmtNotCall, Error, "this expression does nothing; only calls can stand alone as statements");
MK_DIAGNOSTIC(TensorArith, Error, "'{0}' on {1}: runtime arithmetic is written inside ops; fns and the step compose op calls", std::string, std::string);
// ---- Sync ----------------------------------------------------------------------------------------
MK_DIAGNOSTIC(UnknownAnnotation, Error, "unknown annotation '@{0}'{1}", std::string, std::string);
MK_DIAGNOSTIC(AnnotationPlace, Error, "'@{0}' {1}", std::string, std::string);
MK_DIAGNOSTIC(DuplicateAnnotation, Error, "'@{0}' is given twice", std::string);
MK_DIAGNOSTIC(AfterNoArgs, Error, "'@after' needs at least one tensor to wait for");
MK_DIAGNOSTIC(AfterArg, Error, "'@after' waits for tensors written during the step; {0}", std::string);
MK_DIAGNOSTIC(ClusterArg, Error, "'@cluster' needs one compile-time integer: a power of two from 1 to 8; found {0}", std::string);
MK_DIAGNOSTIC(ClusterTasks, Error, "cluster size {0} does not divide the {1} tasks of '{2}'", std::string, std::string, std::string);
MK_DIAGNOSTIC(SyncScope, Error, "unknown sync scope '{0}'; write `sync grid;`", std::string);
// ---- Fns and the step ----------------------------------------------------------------------------
MK_DIAGNOSTIC(NoStep, Error, "the program has no `step`; a build needs one to know what the megakernel computes");
MK_DIAGNOSTIC(MultipleSteps, Error, "a program has exactly one step; '{0}' is a second one", std::string);
MK_DIAGNOSTIC(StepParam, Error, "step input '{0}' must be i32 or a tensor of i32 or f32, found {1}", std::string, std::string);
MK_DIAGNOSTIC(StepInout, Error, "step inputs cannot be inout; persistent data is declared as state");
MK_DIAGNOSTIC(StepResultName, Error, "step result {0} needs a name: `-> (name: type, ...)`", unsigned);
MK_DIAGNOSTIC(StepResultType, Error, "step result '{0}' must be a tensor or scalar, found {1}", std::string, std::string);
MK_DIAGNOSTIC(ReturnCount, Error, "'{0}' returns {1} value{2} but declares {3} result{4}", std::string, unsigned, std::string, unsigned, std::string);
MK_DIAGNOSTIC(ReturnType, Error, "result {0} of '{1}' must be {2}, found {3}", unsigned, std::string, std::string, std::string);
MK_DIAGNOSTIC(ResultDeclared, Note, "the result type is declared here");
MK_DIAGNOSTIC(MissingReturn, Error, "'{0}' must end with `return`", std::string);
MK_DIAGNOSTIC(ReturnInLoop, Error, "return cannot be inside a loop or if: layer loops are unrolled into one graph");
MK_DIAGNOSTIC(ReturnNoResults, Error, "'{0}' declares no results but returns a value", std::string);
MK_DIAGNOSTIC(ReturnWeight, Error, "result '{0}' returns {1} '{2}' directly; results must be computed by ops", std::string, std::string, std::string);
MK_DIAGNOSTIC(FnLoopNotConst, Error, "loops in fns and the step are unrolled at compile time; {0}", std::string);
MK_DIAGNOSTIC(FnIfNotConst, Error, "`if` in a fn or step needs a compile-time condition; {0}", std::string);
MK_DIAGNOSTIC(RebindType, Error, "cannot rebind '{0}' ({1}) to {2}", std::string, std::string, std::string);
MK_DIAGNOSTIC(UnrollLimit, Error, "loop unrolls to {0} iterations; the limit is {1}", std::string, std::string);
MK_DIAGNOSTIC(UnrollBudget, Error, "loops unroll to more than {0} iterations in all; the step would be too large", std::string);
MK_DIAGNOSTIC(CallCycle, Error, "recursive calls: {0}; the step must unroll to a finite graph", std::string);

namespace {

// Edit distance for "did you mean" hints.
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string suggest(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t bestD = name.size() <= 3 ? 1 : 2;
  for (const auto& c : candidates) {
    if (c.empty() || c == name) continue;
    size_t d = editDistance(name, c);
    if (d <= bestD && (best.empty() || d < bestD)) best = c, bestD = d;
  }
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

std::string plural(size_t n) { return n == 1 ? "" : "s"; }

const std::vector<std::string> kBuiltins = {
    "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "silu", "abs", "pow", "max", "min",
    "select", "sum", "mean", "argmax", "dot", "rowdot", "coldot", "iota", "concat"};
const std::vector<std::string> kLayouts = {"row_major", "col_major", "tiled", "interleave", "padded", "swizzle"};
const std::vector<std::string> kDTypes = {"bf16", "f16", "f32", "i32", "bool"};

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

}  // namespace

namespace {

class Checker {
 public:
  Checker(SourceManager& sources, DiagnosticEngine& diags, const CheckOptions& options, Program& program)
      : sources_(sources), diags_(&diags), options_(options), program_(program) {
    if (options.buildIndex) {
      if (!program.index) program.index = std::make_unique<SemanticIndex>();
      index_ = program.index.get();
    }
  }

  void run(FileId rootFile);

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

  // --- modules
  Module* addModule(FileId file, std::string name, bool root);
  void loadImports(Module* m, std::vector<Module*>& stack);
  std::optional<std::string> findModule(const ImportDecl& imp, const Module& from, std::string& looked) const;
  void collectGlobals(Module* m);

  // --- names
  std::optional<GlobalSym> findGlobal(Module* m, const std::string& name, SourceRange use, bool report);
  Ty nameValue(const std::string& name, SourceRange range, Ctx& ctx);
  Ty globalValue(const GlobalSym& sym, SourceRange use, Ctx& ctx);
  std::vector<std::string> namesInScope(const Ctx& ctx) const;
  Local* findLocal(Ctx& ctx, const std::string& name);
  // `declRange` is the whole declaration, `scope` where the name is visible (default: the block
  // being checked, else the body's declaration), `kind` what the index calls it (default: from
  // the local's kind).
  void declareLocal(Ctx& ctx, const Ident& name, Local local, SourceRange declRange = {}, SourceRange scope = {},
                    std::optional<SymbolKind> kind = std::nullopt);

  // --- config and constants
  void checkConfigs(Module* root);
  Ty evalConst(const Expr* e, Ctx& ctx, const std::string& what);
  std::optional<int64_t> constInt(const Expr* e, Ctx& ctx, const std::string& what);

  // --- types
  Ty resolveType(const TypeRef& t, Ctx& ctx, const std::string& what, const std::string& name, bool allowLayout);
  std::optional<Layout> resolveLayout(const ast::Layout& l, const Shape& shape, Ctx& ctx);
  void checkLayoutFits(const Layout& lay, const Shape& shape);
  Ty storageType(const Decl* d, const TypeRef& t, Storage storage, Ctx& ctx);
  void checkWeightSources(const WeightDecl& w, const Ty& ty, const GroupDecl* group);

  // --- expressions
  Ty checkExpr(const Expr* e, Ctx& ctx);
  Ty checkExprImpl(const Expr* e, Ctx& ctx);
  Ty checkBinary(const BinaryExpr* b, Ctx& ctx);
  Ty combine(const std::string& opName, BinaryOp op, const Ty& a, const Ty& b, SourceRange range,
             const Expr* ea, const Expr* eb);
  Ty foldConst(BinaryOp op, const Ty& a, const Ty& b, SourceRange range);
  enum class Access { Value, Load, Store };
  Ty checkIndex(const IndexExpr* ix, Ctx& ctx, Access access);
  Shape checkRegion(const IndexExpr* ix, const Ty& base, const std::string& name, Ctx& ctx);
  Ty checkBuiltin(const CallExpr* call, Ctx& ctx);
  Ty checkCall(const CallExpr* call, Ctx& ctx);
  bool sameShape(const Shape& a, const Shape& b) const;
  void shapeNotes(DiagnosticBuilder& b, const Shape& s);
  bool runtimeValue(const Ty& t) const { return t.kind == TyKind::Scalar || t.kind == TyKind::Tile; }
  bool requireValue(const Ty& t, const Expr* e, const std::string& what);

  // --- statements and bodies
  void checkBlock(const Block& b, Ctx& ctx);
  void checkStmt(const Stmt* s, Ctx& ctx);
  void checkOpStmt(const Stmt* s, Ctx& ctx);
  void checkFnStmt(const Stmt* s, Ctx& ctx);
  void checkStaticAssert(const Expr* cond, const std::optional<std::string>& msg, SourceRange range, Ctx& ctx);
  void checkAnnotations(const std::vector<Annotation>& anns, const Expr* value, Ctx& ctx);
  bool assignable(const Ty& target, const Ty& value) const;

  // --- ops, fns, the step
  void checkOp(const OpDecl* op, Module* m, const std::map<std::string, Ty>* bindings);
  void checkFn(const FnDecl* fn, Module* m, const std::map<std::string, Ty>* bindings);
  void checkStep(const StepDecl* step, Module* m);
  void bindGenerics(const std::vector<GenericParam>& gs, Ctx& ctx, const std::map<std::string, Ty>* bindings);
  void bindParams(const std::vector<Param>& ps, Ctx& ctx, bool isOp);
  void checkTaskGrid(const OpDecl* op, Ctx& ctx, bool concrete);
  void instantiate(const Callable& c, Module* m, const std::map<std::string, Ty>& bindings, SourceRange callRange);

  // --- storage
  Ty groupType(const GroupDecl* g, Module* m);

  SourceManager& sources_;
  DiagnosticEngine* diags_;
  const CheckOptions& options_;
  Program& program_;

  std::map<Module*, std::map<std::string, GlobalSym>> globals_;
  std::map<const Decl*, Module*> declModule_;
  std::map<const Decl*, Ty> declTy_;
  std::vector<const Decl*> visiting_;  // constants being evaluated, outermost first
  std::set<const Module*> parseErrors_;
  std::map<const GroupDecl*, std::map<std::string, std::pair<Ty, const Decl*>>> groupMembers_;
  std::map<std::string, std::pair<Ty, SourceRange>> configFields_;  // the selected config
  const std::vector<const ConfigField*>* configOrder_ = nullptr;  // the config being evaluated
  std::map<const GroupDecl*, std::pair<std::optional<int64_t>, std::optional<int64_t>>> groupRange_;
  std::map<const Decl*, bool> genericClean_;
  std::set<std::string> instantiated_;
  std::vector<const Decl*> callStack_;
  // Unrolled loop iterations left for the whole program, so nested loops cannot run away.
  static constexpr int64_t kUnrollBudget = 1 << 20;
  int64_t unrollBudget_ = kUnrollBudget;
  // Which fns and ops each fn or step calls, and where: recursion through several fns is found
  // on this graph once every body has been seen.
  std::map<const Decl*, std::vector<std::pair<const Decl*, SourceRange>>> calls_;
  std::vector<const Decl*> callers_;  // the keys of calls_ in the order first seen, for stable output
  void checkCallCycles();

  // --- the index (CheckOptions::buildIndex): only the generic pass is recorded, not the concrete
  // re-checks of instantiations, the graph walk, or the re-checks done with diagnostics suppressed.
  SemanticIndex* index_ = nullptr;
  int instantiating_ = 0;
  // Module-level declarations are evaluated once, wherever they are first needed, and mean the
  // same everywhere: their first evaluation is always recorded.
  int forceRecord_ = 0;
  SourceRange block_;  // the innermost block being checked
  // Checking an op's or fn's body: a block of its own and, for the generic pass (the one the
  // index records, even when an instantiation asked for it first), outside any instantiation;
  // both restored when the body is done.
  struct BodyScope {
    Checker& c;
    int savedInst;
    SourceRange savedBlock;
    BodyScope(Checker& checker, bool generic)
        : c(checker), savedInst(checker.instantiating_), savedBlock(checker.block_) {
      if (generic) c.instantiating_ = 0;
      c.block_ = {};
    }
    ~BodyScope() { c.instantiating_ = savedInst, c.block_ = savedBlock; }
  };
  bool recording() const {
    return index_ && !sink_ && (forceRecord_ > 0 || (instantiating_ == 0 && !diags_->suppressed()));
  }
  void recordUse(SourceRange use, SourceRange declName, const Ty* ty) {
    if (recording()) index_->use(use, declName, ty);
  }
  void indexGlobals(Module* m);
  void finishIndex();
  void runChecks(FileId rootFile);

 public:
  // Graph mode (see elaborateStep): the walk of the step with every value concrete.
  void elaborate(GraphSink& sink);

 private:
  GraphSink* sink_ = nullptr;
  std::map<const void*, Ty>* record_ = nullptr;  // where checkExpr records types, when set
  std::map<std::string, std::unique_ptr<OpInstance>> opInstances_;
  std::map<std::pair<const Decl*, int64_t>, int> storageIds_;
  std::vector<int> pendingAfter_;
  bool pendingSync_ = false;
  Ty graphStorage(const Decl* d, Ty ty, std::optional<int64_t> groupIndex);
  const OpInstance& opInstance(const OpDecl* op, Module* m, const std::map<std::string, Ty>& bindings);
  Ty inlineFn(const FnDecl* fn, Module* m, const std::map<std::string, Ty>& bindings, const std::vector<Ty>& args);
  std::set<std::tuple<DiagKind, FileId, uint32_t, uint32_t>> reportedInInstances_;
};

// ---- Modules -----------------------------------------------------------------------------------

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

// ---- Names -------------------------------------------------------------------------------------

Local* Checker::findLocal(Ctx& ctx, const std::string& name) {
  for (auto it = ctx.scopes.rbegin(); it != ctx.scopes.rend(); ++it) {
    auto f = it->names.find(name);
    if (f != it->names.end()) return &f->second;
  }
  return nullptr;
}

void Checker::declareLocal(Ctx& ctx, const Ident& name, Local local, SourceRange declRange, SourceRange scope,
                           std::optional<SymbolKind> kind) {
  if (name.name.empty()) return;
  if (ctx.scopes.empty()) ctx.scopes.emplace_back();
  // Shadowing within one body is an error: one name, one meaning per body.
  for (auto& s : ctx.scopes)
    if (auto f = s.names.find(name.name); f != s.names.end()) {
      diags_->emit(name.range, Redefinition, name.name).note(f->second.range, PreviousDefinition);
      return;
    }
  local.range = name.range;
  if (recording()) {
    static constexpr SymbolKind kKinds[] = {SymbolKind::Let,     SymbolKind::Var,     SymbolKind::LocalConst,
                                            SymbolKind::Param,   SymbolKind::Generic, SymbolKind::TaskVar,
                                            SymbolKind::LoopVar};
    Symbol sym;
    sym.kind = kind ? *kind : kKinds[local.kind];
    sym.name = name.name;
    sym.nameRange = name.range;
    sym.range = declRange.valid() ? declRange : name.range;
    sym.scope = scope.valid() ? scope : block_.valid() ? block_ : ctx.decl ? ctx.decl->range : SourceRange{};
    sym.owner = ctx.decl;
    sym.ty = local.ty;
    index_->declare(std::move(sym));
  }
  ctx.scopes.back().names[name.name] = std::move(local);
}

std::vector<std::string> Checker::namesInScope(const Ctx& ctx) const {
  std::vector<std::string> out;
  for (const auto& s : ctx.scopes)
    for (const auto& [n, _] : s.names) out.push_back(n);
  if (ctx.mod && ctx.kind != BodyKind::Config) {
    if (auto it = globals_.find(ctx.mod); it != globals_.end())
      for (const auto& [n, _] : it->second) out.push_back(n);
    for (Module* imp : ctx.mod->imports)
      if (auto it = globals_.find(imp); it != globals_.end())
        for (const auto& [n, _] : it->second) out.push_back(n);
    if (ctx.mod->isRoot)
      for (const auto& [n, _] : configFields_) out.push_back(n);
  }
  if (ctx.kind == BodyKind::Op) out.insert(out.end(), kBuiltins.begin(), kBuiltins.end());
  out.push_back("inf");
  return out;
}

Ty Checker::nameValue(const std::string& name, SourceRange range, Ctx& ctx) {
  if (name.empty()) return Ty::error();  // the parser already reported what was missing
  if (Local* l = findLocal(ctx, name)) {
    recordUse(range, l->range, &l->ty);
    return l->ty;
  }
  if (ctx.kind == BodyKind::Config) {
    // Config fields see earlier fields only; they are bound as locals.
    if (name == "inf") return Ty::floatConst(INFINITY);
    if (configOrder_) {
      auto later = std::find_if(configOrder_->begin(), configOrder_->end(), [&](const ConfigField* f) { return f->name.name == name; });
      if (later != configOrder_->end()) {
        diags_->emit(range, UnknownName, name, "; it is set later in this config, and a field sees only the fields before it")
            .note((*later)->name.range, DeclaredHere, name);
        return Ty::error();
      }
    }
    diags_->emit(range, UnknownName, name, suggest(name, namesInScope(ctx)));
    return Ty::error();
  }
  if (auto sym = findGlobal(ctx.mod, name, range, true)) {
    if (!sym->decl) return Ty::error();
    Ty t = globalValue(*sym, range, ctx);
    recordUse(range, sym->decl->name.range, &t);
    if (sink_ && t.kind == TyKind::Tensor && (as<WeightDecl>(sym->decl) || as<StateDecl>(sym->decl)))
      t = graphStorage(sym->decl, t, std::nullopt);
    return t;
  }
  if (ctx.mod && ctx.mod->isRoot)
    if (auto it = configFields_.find(name); it != configFields_.end()) {
      recordUse(range, it->second.second, &it->second.first);
      return it->second.first;
    }
  if (name == "inf") return Ty::floatConst(INFINITY);
  diags_->emit(range, UnknownName, name, suggest(name, namesInScope(ctx)));
  return Ty::error();
}

Ty Checker::globalValue(const GlobalSym& sym, SourceRange use, Ctx& ctx) {
  const Decl* d = sym.decl;
  if (as<OpDecl>(d) || as<FnDecl>(d) || as<StepDecl>(d) || as<ConfigDecl>(d)) {
    const char* what = as<OpDecl>(d) ? "an op" : as<FnDecl>(d) ? "a fn" : as<StepDecl>(d) ? "the step" : "a config";
    diags_->emit(use, NotConstant, fmt::format("'{}' used as a value", d->name.name), fmt::format("it is {}", what))
        .note(d->name.range, DeclaredHere, d->name.name);
    return Ty::error();
  }
  bool storage = as<WeightDecl>(d) || as<StateDecl>(d) || as<GroupDecl>(d);
  if (storage && ctx.kind == BodyKind::Op) {
    diags_->emit(use, GlobalInOp, as<WeightDecl>(d) ? "weight" : as<StateDecl>(d) ? "state" : "group", d->name.name);
    return Ty::error();
  }
  if (storage && (ctx.kind == BodyKind::TopLevel || ctx.kind == BodyKind::Config)) {
    diags_->emit(use, NotConstant, fmt::format("'{}'", d->name.name), "it is a tensor, not a constant");
    return Ty::error();
  }
  if (auto it = declTy_.find(d); it != declTy_.end()) return it->second;
  if (auto at = std::find(visiting_.begin(), visiting_.end(), d); at != visiting_.end()) {
    std::string chain;
    for (auto it = at; it != visiting_.end(); ++it) chain += (*it)->name.name + " -> ";
    diags_->emit(use, ConstCycle, d->name.name, chain + d->name.name).note(d->name.range, DeclaredHere, d->name.name);
    return declTy_[d] = Ty::error();
  }
  visiting_.push_back(d);
  ++forceRecord_;
  Ctx top;
  top.mod = sym.mod;
  top.kind = BodyKind::TopLevel;
  Ty ty = Ty::error();
  if (auto* c = as<ConstDecl>(d)) {
    ty = evalConst(c->value.get(), top, fmt::format("constant '{}'", c->name.name));
    if (c->type && !ty.isError()) {
      std::string tn = c->type->name.name;
      bool ok = (tn == "int" && ty.kind == TyKind::Int) || (tn == "float" && (ty.kind == TyKind::Float || ty.kind == TyKind::Int)) ||
                (tn == "bool" && ty.kind == TyKind::Bool);
      if (tn != "int" && tn != "float" && tn != "bool")
        diags_->emit(c->type->range, GenericType, c->name.name, tn);
      else if (!ok)
        diags_->emit(c->value->range, ConstTypeMismatch, c->name.name, tn, tyStr(ty));
      else if (tn == "float" && ty.kind == TyKind::Int && ty.intValue && ty.intValue->isConstant())
        ty = Ty::floatConst(static_cast<double>(ty.intValue->value()));
    }
  } else if (auto* w = as<WeightDecl>(d)) {
    ty = storageType(w, w->type, Storage::Weight, top);
    if (!ty.isError()) checkWeightSources(*w, ty, nullptr);
  } else if (auto* s = as<StateDecl>(d)) {
    ty = storageType(s, s->type, Storage::State, top);
  } else if (auto* g = as<GroupDecl>(d)) {
    ty = groupType(g, sym.mod);
  }
  --forceRecord_;
  visiting_.pop_back();
  declTy_[d] = ty;
  return ty;
}

// ---- Config and constants ----------------------------------------------------------------------

void Checker::checkConfigs(Module* root) {
  std::vector<const ConfigDecl*> configs;
  for (const auto& d : root->ast->decls)
    if (auto* c = as<ConfigDecl>(d.get())) configs.push_back(c);
  std::map<std::string, const ConfigDecl*> byName;
  for (auto* c : configs) byName.emplace(c->name.name, c);
  std::vector<std::string> names;
  for (auto* c : configs) names.push_back(c->name.name);

  // A config's fields in order, each with its winning definition: a derived config keeps its
  // base's order and formulas, with its own overrides in place, so `q_dim = heads * head_dim`
  // follows an overridden `heads`.
  std::map<const ConfigDecl*, std::vector<const ConfigField*>> order;
  std::set<const ConfigDecl*> active;
  std::function<bool(const ConfigDecl*)> build = [&](const ConfigDecl* c) -> bool {
    if (order.count(c)) return true;
    if (active.count(c)) {
      diags_->emit(c->name.range, ConfigBaseCycle, c->name.name);
      return false;
    }
    active.insert(c);
    std::vector<const ConfigField*> fields;
    const ConfigDecl* base = nullptr;
    if (c->base) {
      auto it = byName.find(c->base->name);
      if (it != byName.end()) recordUse(c->base->range, it->second->name.range, nullptr);
      if (it == byName.end()) {
        diags_->emit(c->base->range, UnknownConfig, c->base->name, suggest(c->base->name, names));
      } else if (build(it->second)) {
        base = it->second;
        fields = order[base];
      }
    }
    std::set<std::string> own;
    for (const auto& f : c->fields) {
      if (f.name.name.empty()) continue;
      if (!own.insert(f.name.name).second) {
        auto first = std::find_if(c->fields.begin(), c->fields.end(), [&](const ConfigField& o) { return o.name.name == f.name.name; });
        diags_->emit(f.name.range, DuplicateField, f.name.name).note(first->name.range, PreviousDefinition);
        continue;
      }
      auto slot = std::find_if(fields.begin(), fields.end(), [&](const ConfigField* o) { return o->name.name == f.name.name; });
      if (slot != fields.end()) {
        *slot = &f;
      } else if (base) {
        std::vector<std::string> baseNames;
        for (auto* bf : order[base]) baseNames.push_back(bf->name.name);
        diags_->emit(f.name.range, ConfigNewField, c->name.name, f.name.name, base->name.name, suggest(f.name.name, baseNames))
            .note(base->name.range, DeclaredHere, base->name.name);
      } else {
        fields.push_back(&f);
      }
    }
    active.erase(c);
    order[c] = std::move(fields);
    return true;
  };
  const ConfigDecl* selected = configs.empty() ? nullptr : configs.front();
  if (options_.configName) {
    auto it = byName.find(*options_.configName);
    if (it == byName.end()) {
      std::string hint = suggest(*options_.configName, names);
      if (names.empty()) hint = " (it declares none)";
      else if (hint.empty()) {
        hint = "; it has ";
        for (size_t i = 0; i < names.size(); ++i) hint += (i ? ", " : "") + names[i];
      }
      diags_->emit(SourceRange{}, NoSuchConfigOption, *options_.configName, hint);
      selected = nullptr;
    } else {
      selected = it->second;
    }
  }
  // --set NAME=VALUE: literal values that replace fields of the selected config; formulas that
  // use them follow.
  std::map<std::string, Ty> overrides;
  for (const auto& [name, text] : options_.overrides) {
    Ty v;
    char* end = nullptr;
    errno = 0;
    long long iv = std::strtoll(text.c_str(), &end, 10);
    bool decimal = !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos;
    if (!text.empty() && *end == '\0' && errno == 0) {
      v = Ty::intConst(Poly::constant(iv));
    } else if (text == "true" || text == "false") {
      v = Ty::boolConst(text == "true");
    } else {
      errno = 0;
      double dv = decimal ? std::strtod(text.c_str(), &end) : 0;
      // Only plain decimal numbers: no hex floats, no inf or nan, nothing out of range.
      if (!decimal || *end != '\0' || errno != 0 || !std::isfinite(dv) ||
          text.find_first_of(".eE") == std::string::npos) {
        diags_->emit(SourceRange{}, BadOverride, name, text);
        continue;
      }
      v = Ty::floatConst(dv);
    }
    overrides[name] = v;
  }
  std::map<const ConfigDecl*, std::map<std::string, std::pair<Ty, SourceRange>>> values;
  auto eval = [&](const ConfigDecl* c) {
    if (!build(c)) return;
    Ctx ctx;
    ctx.mod = root;
    ctx.kind = BodyKind::Config;
    ctx.decl = c;
    ctx.scopes.emplace_back();
    configOrder_ = &order[c];
    auto& out = values[c];
    for (const ConfigField* f : order[c]) {
      Ty v = evalConst(f->value.get(), ctx, fmt::format("config field '{}'", f->name.name));
      if (auto forced = c == selected ? overrides.find(f->name.name) : overrides.end(); forced != overrides.end()) {
        // The override must be of the field's kind (an integer may stand for a float).
        const Ty& o = forced->second;
        bool fits = v.isError() || o.kind == v.kind || (v.kind == TyKind::Float && o.kind == TyKind::Int);
        if (!fits) {
          diags_->emit(SourceRange{}, OverrideKind, f->name.name, tyStr(v), tyStr(o));
        } else if (v.kind == TyKind::Float && o.kind == TyKind::Int) {
          v = Ty::floatConst(static_cast<double>(o.intValue->value()));
        } else {
          v = o;
        }
      }
      out[f->name.name] = {v, f->name.range};
      ctx.scopes.back().names[f->name.name] = Local{Local::Const, v, f->name.range};
      if (recording())
        if (auto i = index_->symbolAt(f->name.range); i && !index_->symbols[*i].ty) index_->symbols[*i].ty = v;
    }
    configOrder_ = nullptr;
  };
  for (auto* c : configs) eval(c);
  if (selected)
    for (const auto& [name, _] : overrides)
      if (!values[selected].count(name)) {
        std::vector<std::string> fields;
        for (auto& [n, __] : values[selected]) fields.push_back(n);
        diags_->emit(SourceRange{}, NoSuchOverride, name, selected->name.name, suggest(name, fields));
      }
  program_.config = selected;
  if (!selected) return;
  configFields_ = values[selected];
  auto& table = globals_[root];
  for (auto& [n, v] : configFields_) {
    program_.configValues[n] = v.first;
    if (auto it = table.find(n); it != table.end())
      diags_->emit(v.second, ConfigFieldClash, n).note(it->second.decl->name.range, PreviousDefinition);
  }
}

Ty Checker::evalConst(const Expr* e, Ctx& ctx, const std::string& what) {
  Ty t = checkExpr(e, ctx);
  if (t.isError() || t.isCompileTime()) return t;
  diags_->emit(e->range, NotConstant, what, fmt::format("this is {}", t.kind == TyKind::Tensor ? "a tensor" : "a runtime value"));
  return Ty::error();
}

std::optional<int64_t> Checker::constInt(const Expr* e, Ctx& ctx, const std::string& what) {
  Ty t = evalConst(e, ctx, what);
  if (t.isError()) return std::nullopt;
  if (t.kind != TyKind::Int) {
    diags_->emit(e->range, ExpectedInt, what, tyStr(t));
    return std::nullopt;
  }
  if (!t.intValue || !t.intValue->isConstant()) return std::nullopt;
  return t.intValue->value();
}

// ---- Types ---------------------------------------------------------------------------------------

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

// ---- Expressions ---------------------------------------------------------------------------------

bool Checker::sameShape(const Shape& a, const Shape& b) const {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].value != b[i].value) return false;
  return true;
}

void Checker::shapeNotes(DiagnosticBuilder& b, const Shape& s) {
  if (!s.empty()) b.note(s[0].origin, ShapeFrom, shapeStr(s));
}

bool Checker::requireValue(const Ty& t, const Expr* e, const std::string& what) {
  if (t.isError()) return false;
  if (t.isValue()) return true;
  if (t.kind == TyKind::Tensor) diags_->emit(e->range, TensorInArith, t.name);
  else diags_->emit(e->range, OperandType, what, tyStr(t));
  return false;
}

Ty Checker::checkExpr(const Expr* e, Ctx& ctx) {
  Ty t = checkExprImpl(e, ctx);
  if (record_ && e) (*record_)[e] = t;
  return t;
}

Ty Checker::checkExprImpl(const Expr* e, Ctx& ctx) {
  if (!e) return Ty::error();
  switch (e->kind) {
    case ExprKind::Int: return Ty::intConst(Poly::constant(as<IntLit>(e)->value));
    case ExprKind::Float: return Ty::floatConst(as<FloatLit>(e)->value);
    case ExprKind::Bool: return Ty::boolConst(as<BoolLit>(e)->value);
    case ExprKind::Name: return nameValue(as<NameExpr>(e)->name, e->range, ctx);
    case ExprKind::Call: {
      auto* c = as<CallExpr>(e);
      if (ctx.kind == BodyKind::Op) return checkBuiltin(c, ctx);
      if (ctx.kind == BodyKind::Fn || ctx.kind == BodyKind::Step) return checkCall(c, ctx);
      diags_->emit(e->range, NotConstant, "this", fmt::format("'{}(...)' is computed at run time", c->callee.name));
      return Ty::error();
    }
    case ExprKind::Tuple: {
      Ty t;
      t.kind = TyKind::Tuple;
      for (const auto& el : as<TupleExpr>(e)->elems) {
        t.elems.push_back(checkExpr(el.get(), ctx));
        if (t.elems.back().isError()) return Ty::error();
      }
      return t;
    }
    case ExprKind::Index: return checkIndex(as<IndexExpr>(e), ctx, Access::Value);
    case ExprKind::Field: {
      auto* f = as<FieldExpr>(e);
      Ty base = checkExpr(f->base.get(), ctx);
      if (base.isError()) return base;
      if (base.kind != TyKind::GroupElem) {
        diags_->emit(f->field.range, NoFields, tyStr(base));
        return Ty::error();
      }
      auto& members = groupMembers_[base.group];
      auto it = members.find(f->field.name);
      if (it == members.end()) {
        std::vector<std::string> names;
        for (auto& [n, _] : members) names.push_back(n);
        diags_->emit(f->field.range, NoSuchMember, base.group->name.name, f->field.name, suggest(f->field.name, names));
        return Ty::error();
      }
      Ty t = it->second.first;
      recordUse(f->field.range, it->second.second->name.range, &t);
      if (!t.isError()) t.name = fmt::format("{}[{}].{}", base.group->name.name,
                                             base.groupIndex ? std::to_string(*base.groupIndex) : base.group->var.name,
                                             f->field.name);
      if (sink_ && !t.isError()) t = graphStorage(it->second.second, t, base.groupIndex);
      return t;
    }
    case ExprKind::Load: {
      auto* l = as<LoadExpr>(e);
      if (ctx.kind != BodyKind::Op) {
        diags_->emit(e->range, LoadOutsideOp);
        return Ty::error();
      }
      if (auto* ix = as<IndexExpr>(l->source.get())) return checkIndex(ix, ctx, Access::Load);
      // `load s` of a rank-0 tensor.
      Ty t = checkExpr(l->source.get(), ctx);
      if (t.isError()) return t;
      if (t.kind != TyKind::Tensor) {
        diags_->emit(l->source->range, LoadNotTensor, fmt::format("found {}", tyStr(t)));
        return Ty::error();
      }
      if (!t.shape.empty()) {
        diags_->emit(l->source->range, RegionRank, t.name, static_cast<unsigned>(t.shape.size()), plural(t.shape.size()), 0u);
        return Ty::error();
      }
      if (t.storage == Storage::OpResult) {
        diags_->emit(l->source->range, LoadFromResult, t.name);
        return Ty::error();
      }
      return Ty::scalar(t.dtype);
    }
    case ExprKind::Cast: {
      auto* c = as<CastExpr>(e);
      Ty v = checkExpr(c->value.get(), ctx);
      auto dt = parseDType(c->dtype.name);
      if (!dt) {
        if (!c->dtype.name.empty()) diags_->emit(c->dtype.range, CastTarget, c->dtype.name);
        return Ty::error();
      }
      if (v.isError()) return v;
      if (v.kind == TyKind::Tensor) {
        diags_->emit(c->value->range, CastNotValue, fmt::format("tensor '{}'", v.name));
        return Ty::error();
      }
      if (!v.isValue()) {
        diags_->emit(c->value->range, CastNotValue, tyStr(v));
        return Ty::error();
      }
      if (ctx.kind != BodyKind::Op) {
        diags_->emit(e->range, NotConstant, "this", "casts produce runtime values, which only ops compute");
        return Ty::error();
      }
      if (v.kind == TyKind::Tile) return Ty::tile(*dt, v.shape);
      return Ty::scalar(*dt);
    }
    case ExprKind::Unary: {
      auto* u = as<UnaryExpr>(e);
      Ty v = checkExpr(u->operand.get(), ctx);
      if (ctx.kind != BodyKind::Op && (runtimeValue(v) || v.kind == TyKind::Tensor)) {
        diags_->emit(e->range, TensorArith, spelling(u->op), v.kind == TyKind::Tensor ? "tensor '" + v.name + "'" : "a runtime " + tyStr(v));
        return Ty::error();
      }
      if (!requireValue(v, u->operand.get(), spelling(u->op))) return Ty::error();
      if (u->op == UnaryOp::Not) {
        bool isBool = v.kind == TyKind::Bool || (runtimeValue(v) && v.dtype == DType::Bool);
        if (!isBool) {
          diags_->emit(u->operand->range, ExpectedBool, "the operand of '!'", tyStr(v));
          return Ty::error();
        }
        if (v.kind == TyKind::Bool) return Ty::boolConst(v.boolValue ? std::optional<bool>(!*v.boolValue) : std::nullopt);
        return v;
      }
      if (v.kind == TyKind::Bool || (runtimeValue(v) && v.dtype == DType::Bool)) {
        diags_->emit(u->operand->range, OperandType, "-", tyStr(v));
        return Ty::error();
      }
      if (v.kind == TyKind::Int) {
        auto r = Poly::sub(Poly::constant(0), *v.intValue);
        if (!r) {
          diags_->emit(e->range, IntOverflow);
          return Ty::error();
        }
        return Ty::intConst(*r);
      }
      if (v.kind == TyKind::Float) return Ty::floatConst(v.floatValue ? std::optional<double>(-*v.floatValue) : std::nullopt);
      return v;
    }
    case ExprKind::Binary: return checkBinary(as<BinaryExpr>(e), ctx);
  }
  return Ty::error();
}

Ty Checker::checkBinary(const BinaryExpr* b, Ctx& ctx) {
  Ty l = checkExpr(b->lhs.get(), ctx);
  Ty r = checkExpr(b->rhs.get(), ctx);
  if (l.isError() || r.isError()) return Ty::error();
  std::string opName = spelling(b->op);
  if (ctx.kind != BodyKind::Op && !(l.isCompileTime() && r.isCompileTime()) &&
      (l.isValue() || l.kind == TyKind::Tensor) && (r.isValue() || r.kind == TyKind::Tensor)) {
    const Ty& rt = l.isCompileTime() ? r : l;
    std::string what = rt.kind == TyKind::Tensor ? "tensor '" + rt.name + "'" : "a runtime " + tyStr(rt);
    if (ctx.constNeeded && rt.kind != TyKind::Tensor)
      diags_->emit(b->range, *ctx.constNeeded, ctx.constWhat + fmt::format("'{}' is computed at run time", opName));
    else
      diags_->emit(b->range, TensorArith, opName, what);
    return Ty::error();
  }
  if (!requireValue(l, b->lhs.get(), opName) || !requireValue(r, b->rhs.get(), opName)) return Ty::error();
  if (l.isCompileTime() && r.isCompileTime()) return foldConst(b->op, l, r, b->range);
  return combine(opName, b->op, l, r, b->opRange, b->lhs.get(), b->rhs.get());
}

// Runtime elementwise arithmetic: dtypes agree (compile-time constants adapt), shapes agree or
// one side is a scalar.
Ty Checker::combine(const std::string& opName, BinaryOp op, const Ty& a, const Ty& b, SourceRange range,
                    const Expr* ea, const Expr* eb) {
  bool logical = op == BinaryOp::And || op == BinaryOp::Or;
  bool compare = op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
                 op == BinaryOp::Eq || op == BinaryOp::Ne;
  // The runtime side decides the dtype; a constant must fit it.
  const Ty& rt = runtimeValue(a) ? a : b;
  const Ty& other = runtimeValue(a) ? b : a;
  const Expr* otherExpr = runtimeValue(a) ? eb : ea;
  DType dt = rt.dtype;
  if (runtimeValue(other)) {
    if (other.dtype != dt) {
      diags_->emit(range, DTypeMismatch, opName, tyStr(a), tyStr(b));
      return Ty::error();
    }
  } else if (other.kind == TyKind::Float && !isFloat(dt)) {
    diags_->emit(otherExpr->range, FloatConstToInt, other.floatValue ? fmt::format("{}", *other.floatValue) : "value", tyStr(rt));
    return Ty::error();
  } else if ((other.kind == TyKind::Bool) != (dt == DType::Bool)) {
    diags_->emit(range, DTypeMismatch, opName, tyStr(a), tyStr(b));
    return Ty::error();
  }
  if (logical && dt != DType::Bool) {
    diags_->emit(range, OperandType, opName, tyStr(rt));
    return Ty::error();
  }
  if (!logical && dt == DType::Bool && !(op == BinaryOp::Eq || op == BinaryOp::Ne)) {
    diags_->emit(range, OperandType, opName, tyStr(rt));
    return Ty::error();
  }
  if (op == BinaryOp::Mod && isFloat(dt)) {
    diags_->emit(range, OperandType, opName, tyStr(rt));
    return Ty::error();
  }
  Shape shape;
  if (a.kind == TyKind::Tile && b.kind == TyKind::Tile) {
    if (!sameShape(a.shape, b.shape)) {
      auto d = diags_->emit(range, ShapeMismatch, opName, tyStr(a), tyStr(b));
      shapeNotes(d, a.shape);
      shapeNotes(d, b.shape);
      return Ty::error();
    }
    shape = a.shape;
  } else if (a.kind == TyKind::Tile) {
    shape = a.shape;
  } else if (b.kind == TyKind::Tile) {
    shape = b.shape;
  }
  return Ty::tile(compare ? DType::Bool : dt, shape);
}

Ty Checker::foldConst(BinaryOp op, const Ty& a, const Ty& b, SourceRange range) {
  std::string opName = spelling(op);
  bool compare = op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
                 op == BinaryOp::Eq || op == BinaryOp::Ne;
  if (op == BinaryOp::And || op == BinaryOp::Or) {
    if (a.kind != TyKind::Bool || b.kind != TyKind::Bool) {
      diags_->emit(range, OperandType, opName, tyStr(a.kind != TyKind::Bool ? a : b));
      return Ty::error();
    }
    if (!a.boolValue || !b.boolValue) return Ty::boolConst(std::nullopt);
    return Ty::boolConst(op == BinaryOp::And ? (*a.boolValue && *b.boolValue) : (*a.boolValue || *b.boolValue));
  }
  if (a.kind == TyKind::Bool || b.kind == TyKind::Bool) {
    if (a.kind == TyKind::Bool && b.kind == TyKind::Bool && (op == BinaryOp::Eq || op == BinaryOp::Ne)) {
      if (!a.boolValue || !b.boolValue) return Ty::boolConst(std::nullopt);
      return Ty::boolConst((*a.boolValue == *b.boolValue) == (op == BinaryOp::Eq));
    }
    diags_->emit(range, OperandType, opName, tyStr(a.kind == TyKind::Bool ? a : b));
    return Ty::error();
  }
  if (a.kind == TyKind::Int && b.kind == TyKind::Int) {
    const Poly& x = *a.intValue;
    const Poly& y = *b.intValue;
    if (compare) {
      if (!x.isConstant() || !y.isConstant()) {
        if (x == y && (op == BinaryOp::Eq || op == BinaryOp::Le || op == BinaryOp::Ge)) return Ty::boolConst(true);
        if (x == y) return Ty::boolConst(false);
        return Ty::boolConst(std::nullopt);
      }
      int64_t p = x.value(), q = y.value();
      bool r = op == BinaryOp::Lt ? p < q : op == BinaryOp::Le ? p <= q : op == BinaryOp::Gt ? p > q
             : op == BinaryOp::Ge ? p >= q : op == BinaryOp::Eq ? p == q : p != q;
      return Ty::boolConst(r);
    }
    if ((op == BinaryOp::Div || op == BinaryOp::Mod) && y.isConstant() && y.value() == 0) {
      diags_->emit(range, DivisionByZero);
      return Ty::error();
    }
    std::optional<Poly> r;
    switch (op) {
      case BinaryOp::Add: r = Poly::add(x, y); break;
      case BinaryOp::Sub: r = Poly::sub(x, y); break;
      case BinaryOp::Mul: r = Poly::mul(x, y); break;
      case BinaryOp::Div: r = Poly::div(x, y); break;
      case BinaryOp::Mod: r = Poly::mod(x, y); break;
      default: break;
    }
    if (!r) {
      diags_->emit(range, IntOverflow);
      return Ty::error();
    }
    return Ty::intConst(*r);
  }
  // Float arithmetic; ints promote.
  auto asDouble = [](const Ty& t) -> std::optional<double> {
    if (t.kind == TyKind::Float) return t.floatValue;
    if (t.intValue && t.intValue->isConstant()) return static_cast<double>(t.intValue->value());
    return std::nullopt;
  };
  auto x = asDouble(a), y = asDouble(b);
  if (op == BinaryOp::Mod) {
    diags_->emit(range, OperandType, opName, "compile-time float");
    return Ty::error();
  }
  if (!x || !y) return compare ? Ty::boolConst(std::nullopt) : Ty::floatConst(std::nullopt);
  switch (op) {
    case BinaryOp::Add: return Ty::floatConst(*x + *y);
    case BinaryOp::Sub: return Ty::floatConst(*x - *y);
    case BinaryOp::Mul: return Ty::floatConst(*x * *y);
    case BinaryOp::Div:
      if (*y == 0) {
        diags_->emit(range, DivisionByZero);
        return Ty::error();
      }
      return Ty::floatConst(*x / *y);
    case BinaryOp::Lt: return Ty::boolConst(*x < *y);
    case BinaryOp::Le: return Ty::boolConst(*x <= *y);
    case BinaryOp::Gt: return Ty::boolConst(*x > *y);
    case BinaryOp::Ge: return Ty::boolConst(*x >= *y);
    case BinaryOp::Eq: return Ty::boolConst(*x == *y);
    case BinaryOp::Ne: return Ty::boolConst(*x != *y);
    default: return Ty::error();
  }
}

Shape Checker::checkRegion(const IndexExpr* ix, const Ty& base, const std::string& name, Ctx& ctx) {
  Shape out;
  bool bad = false;
  if (ix->slices.size() != base.shape.size()) {
    diags_->emit(ix->range, RegionRank, name, static_cast<unsigned>(base.shape.size()), plural(base.shape.size()),
                 static_cast<unsigned>(ix->slices.size()));
    return {{Poly::symbol("?"), {}}};
  }
  for (size_t i = 0; i < ix->slices.size(); ++i) {
    const Slice& sl = ix->slices[i];
    const Dim& dim = base.shape[i];
    Ty start = checkExpr(sl.start.get(), ctx);
    if (start.isError()) {
      bad = true;
    } else if (!(start.kind == TyKind::Int || (start.kind == TyKind::Scalar && start.dtype == DType::I32))) {
      diags_->emit(sl.start->range, ExpectedInt, "a region start", tyStr(start));
      bad = true;
    }
    std::optional<int64_t> s0;
    if (!bad && start.kind == TyKind::Int && start.intValue->isConstant()) s0 = start.intValue->value();
    bool knownExtent = dim.value.isConstant();
    int64_t extent = knownExtent ? dim.value.value() : 0;
    if (!sl.length) {
      if (s0 && knownExtent && (*s0 < 0 || *s0 >= extent))
        diags_->emit(sl.range, SliceOutOfBounds, fmt::format("[{}]", *s0), static_cast<unsigned>(i), name, dim.value.str());
      continue;
    }
    Ty len = checkExpr(sl.length.get(), ctx);
    if (len.isError()) {
      bad = true;
      continue;
    }
    if (len.kind != TyKind::Int) {
      diags_->emit(sl.length->range, SliceLengthNotConst,
                   runtimeValue(len) ? "this is a runtime value" : fmt::format("found {}", tyStr(len)));
      bad = true;
      continue;
    }
    if (len.intValue->isConstant()) {
      int64_t n = len.intValue->value();
      if (n <= 0) {
        diags_->emit(sl.length->range, SliceLengthPositive, std::to_string(n));
        bad = true;
        continue;
      }
      if (knownExtent && (n > extent || (s0 && (*s0 < 0 || *s0 > extent - n))))
        diags_->emit(sl.range, SliceOutOfBounds, s0 ? fmt::format("[{} : +{}]", *s0, n) : fmt::format("of length {}", n),
                     static_cast<unsigned>(i), name, dim.value.str())
            .note(dim.origin, ShapeFrom, shapeStr(base.shape));
    }
    out.push_back({*len.intValue, sl.length->range});
  }
  if (bad) return {{Poly::symbol("?"), {}}};
  return out;
}

Ty Checker::checkIndex(const IndexExpr* ix, Ctx& ctx, Access access) {
  Ty base = checkExpr(ix->base.get(), ctx);
  if (base.isError()) return base;
  auto badRegion = [](const Shape& s) { return s.size() == 1 && !s[0].origin.valid() && !s[0].value.isConstant(); };
  if (base.kind == TyKind::GroupArray) {
    if (access != Access::Value || ix->slices.size() != 1 || ix->slices[0].length) {
      diags_->emit(ix->range, NotIndexable, fmt::format("group '{}' that way; write {}[i] with one index", base.group->name.name, base.group->name.name));
      return Ty::error();
    }
    Ty i = checkExpr(ix->slices[0].start.get(), ctx);
    if (i.isError()) return i;
    if (i.kind != TyKind::Int) {
      diags_->emit(ix->slices[0].start->range, NotConstant, "a group index", fmt::format("found {}", tyStr(i)));
      return Ty::error();
    }
    Ty t = base;
    t.kind = TyKind::GroupElem;
    if (i.intValue->isConstant()) {
      int64_t v = i.intValue->value();
      t.groupIndex = v;
      auto [lo, hi] = groupRange_[base.group];
      if (lo && hi && (v < *lo || v >= *hi))
        diags_->emit(ix->slices[0].start->range, GroupIndexRange, std::to_string(v), base.group->name.name,
                     std::to_string(*lo), std::to_string(*hi))
            .note(base.group->name.range, DeclaredHere, base.group->name.name);
    }
    return t;
  }
  if (base.kind == TyKind::Tensor) {
    if (access == Access::Value && ctx.kind != BodyKind::Op) {
      diags_->emit(ix->range, NotIndexable, fmt::format("{} '{}' in a fn or step; its regions are loaded inside ops", storageName(base.storage), base.name));
      return Ty::error();
    }
    if (access == Access::Value) {
      diags_->emit(ix->range, TensorInArith, base.name);
      return Ty::error();
    }
    if (access == Access::Load && base.storage == Storage::OpResult) {
      diags_->emit(ix->base->range, LoadFromResult, base.name);
      return Ty::error();
    }
    Shape region = checkRegion(ix, base, base.name, ctx);
    if (badRegion(region)) return Ty::error();
    Ty t = Ty::tile(base.dtype, region);
    t.name = base.name;
    return t;
  }
  if (base.kind == TyKind::Tile && access == Access::Value) {
    auto* baseName = as<NameExpr>(ix->base.get());
    Shape region = checkRegion(ix, base, baseName ? baseName->name : "the tile", ctx);
    if (badRegion(region)) return Ty::error();
    return Ty::tile(base.dtype, region);
  }
  if (access == Access::Load) {
    diags_->emit(ix->base->range, LoadNotTensor, fmt::format("found {}", tyStr(base)));
    return Ty::error();
  }
  diags_->emit(ix->base->range, NotIndexable, tyStr(base));
  return Ty::error();
}

// Tile-level builtins. Each checks its operands and gives the result type.
Ty Checker::checkBuiltin(const CallExpr* call, Ctx& ctx) {
  const std::string& name = call->callee.name;
  if (name.empty()) return Ty::error();
  bool known = std::find(kBuiltins.begin(), kBuiltins.end(), name) != kBuiltins.end();
  if (!known) {
    if (auto sym = findGlobal(ctx.mod, name, call->callee.range, false); sym && sym->decl &&
        (as<OpDecl>(sym->decl) || as<FnDecl>(sym->decl))) {
      recordUse(call->callee.range, sym->decl->name.range, nullptr);
      diags_->emit(call->callee.range, CallInOp, name);
      return Ty::error();
    }
    diags_->emit(call->callee.range, UnknownBuiltin, name, suggest(name, kBuiltins));
    return Ty::error();
  }
  std::vector<Ty> args;
  for (const auto& a : call->args) {
    if (a.name) {
      diags_->emit(a.name->range, BuiltinNamedArg, name);
      return Ty::error();
    }
    args.push_back(checkExpr(a.value.get(), ctx));
    if (args.back().isError()) return Ty::error();
  }
  auto arity = [&](size_t n, const char* words) {
    if (args.size() == n) return true;
    diags_->emit(call->range, BuiltinArity, name, words, static_cast<unsigned>(args.size()));
    return false;
  };
  auto operand = [&](size_t i, const char* need, auto pred) {
    const Ty& t = args[i];
    if (t.kind == TyKind::Tensor) {
      diags_->emit(call->args[i].value->range, TensorInArith, t.name);
      return false;
    }
    if (pred(t)) return true;
    diags_->emit(call->args[i].value->range, BuiltinOperand, name, need, tyStr(t));
    return false;
  };
  auto floatValue = [](const Ty& t) {
    return t.kind == TyKind::Float || t.kind == TyKind::Int || ((t.kind == TyKind::Scalar || t.kind == TyKind::Tile) && isFloat(t.dtype));
  };
  auto runtimeTile = [&](const Ty& t) { return t.kind == TyKind::Tile; };
  auto oneD = [&](const Ty& t) { return t.kind == TyKind::Tile && t.shape.size() == 1; };
  auto twoD = [&](const Ty& t) { return t.kind == TyKind::Tile && t.shape.size() == 2 && isFloat(t.dtype); };

  static const std::set<std::string> unaryFloat = {"exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "silu", "abs"};
  if (unaryFloat.count(name)) {
    if (!arity(1, "1 argument") || !operand(0, "a float scalar or tile", floatValue)) return Ty::error();
    if (args[0].isCompileTime()) return Ty::floatConst(std::nullopt);
    return args[0];
  }
  if (name == "pow" || ((name == "max" || name == "min") && args.size() == 2)) {
    if (!arity(2, "2 arguments")) return Ty::error();
    for (size_t i = 0; i < 2; ++i)
      if (!operand(i, name == "pow" ? "a float scalar or tile" : "a number or tile",
                   name == "pow" ? floatValue : [](const Ty& t) { return t.isValue() && !(t.kind == TyKind::Bool); }))
        return Ty::error();
    if (args[0].isCompileTime() && args[1].isCompileTime()) return Ty::floatConst(std::nullopt);
    return combine(name, BinaryOp::Add, args[0], args[1], call->range, call->args[0].value.get(), call->args[1].value.get());
  }
  if (name == "sum" || name == "mean" || name == "max" || name == "min") {
    if (!arity(1, "1 argument (or 2 for elementwise max/min)") || !operand(0, "a tile", runtimeTile)) return Ty::error();
    if (args[0].dtype == DType::Bool || (name == "mean" && !isFloat(args[0].dtype))) {
      diags_->emit(call->args[0].value->range, BuiltinOperand, name, name == "mean" ? "a float tile" : "a numeric tile", tyStr(args[0]));
      return Ty::error();
    }
    return Ty::scalar(args[0].dtype);
  }
  if (name == "argmax") {
    if (!arity(1, "1 argument") || !operand(0, "a 1-D numeric tile", oneD)) return Ty::error();
    return Ty::scalar(DType::I32);
  }
  if (name == "select") {
    if (!arity(3, "3 arguments")) return Ty::error();
    const Ty& c = args[0];
    bool condOk = (c.kind == TyKind::Bool) || ((c.kind == TyKind::Scalar || c.kind == TyKind::Tile) && c.dtype == DType::Bool);
    if (!condOk) {
      diags_->emit(call->args[0].value->range, ExpectedBool, "the condition of 'select'", tyStr(c));
      return Ty::error();
    }
    Ty v;
    if (args[1].isCompileTime() && args[2].isCompileTime()) {
      // Both branches constant: the dtype follows them (ints give i32, floats f32).
      if ((args[1].kind == TyKind::Bool) != (args[2].kind == TyKind::Bool)) {
        diags_->emit(call->range, DTypeMismatch, name, tyStr(args[1]), tyStr(args[2]));
        return Ty::error();
      }
      DType dt = args[1].kind == TyKind::Bool ? DType::Bool
                 : args[1].kind == TyKind::Float || args[2].kind == TyKind::Float ? DType::F32 : DType::I32;
      v = Ty::scalar(dt);
    } else {
      v = combine("select", BinaryOp::Add, args[1], args[2], call->range, call->args[1].value.get(), call->args[2].value.get());
    }
    if (v.isError()) return v;
    if (c.kind == TyKind::Tile && v.kind == TyKind::Tile && !sameShape(c.shape, v.shape)) {
      auto d = diags_->emit(call->range, ShapeMismatch, "select", tyStr(c), tyStr(v));
      shapeNotes(d, c.shape);
      shapeNotes(d, v.shape);
      return Ty::error();
    }
    if (c.kind == TyKind::Tile && v.kind != TyKind::Tile) return Ty::tile(v.dtype, c.shape);
    return v;
  }
  if (name == "dot" || name == "rowdot" || name == "coldot") {
    if (!arity(2, "2 arguments")) return Ty::error();
    bool isDot = name == "dot";
    if (!operand(0, isDot ? "a 1-D float tile" : "a 2-D float tile", isDot ? std::function<bool(const Ty&)>(
                     [&](const Ty& t) { return oneD(t) && isFloat(t.dtype); }) : std::function<bool(const Ty&)>(twoD)) ||
        !operand(1, "a 1-D float tile", [&](const Ty& t) { return oneD(t) && isFloat(t.dtype); }))
      return Ty::error();
    const Ty& a = args[0];
    const Ty& x = args[1];
    if (a.dtype != x.dtype) {
      diags_->emit(call->range, DTypeMismatch, name, tyStr(a), tyStr(x));
      return Ty::error();
    }
    // dot: a[K] . x[K]; rowdot: A[M, K] x[K] -> [M]; coldot: A[M, K]^T y[M] -> [K].
    size_t axis = isDot ? 0 : name == "rowdot" ? 1 : 0;
    if (a.shape[axis].value != x.shape[0].value) {
      auto d = diags_->emit(call->range, ShapeMismatch, name, tyStr(a), tyStr(x));
      d.note(a.shape[axis].origin, ShapeFrom, shapeStr(a.shape));
      d.note(x.shape[0].origin, ShapeFrom, shapeStr(x.shape));
      return Ty::error();
    }
    if (isDot) return Ty::scalar(DType::F32);
    return Ty::tile(DType::F32, {a.shape[name == "rowdot" ? 0 : 1]});
  }
  if (name == "iota") {
    if (!arity(1, "1 argument")) return Ty::error();
    if (args[0].kind != TyKind::Int) {
      diags_->emit(call->args[0].value->range, SliceLengthNotConst,
                   runtimeValue(args[0]) ? "this is a runtime value" : fmt::format("found {}", tyStr(args[0])));
      return Ty::error();
    }
    if (args[0].intValue->isConstant() && args[0].intValue->value() <= 0) {
      diags_->emit(call->args[0].value->range, SliceLengthPositive, args[0].intValue->str());
      return Ty::error();
    }
    return Ty::tile(DType::I32, {{*args[0].intValue, call->args[0].value->range}});
  }
  if (name == "concat") {
    if (!arity(2, "2 arguments") || !operand(0, "a 1-D tile", oneD) || !operand(1, "a 1-D tile", oneD)) return Ty::error();
    if (args[0].dtype != args[1].dtype) {
      diags_->emit(call->range, DTypeMismatch, name, tyStr(args[0]), tyStr(args[1]));
      return Ty::error();
    }
    auto n = Poly::add(args[0].shape[0].value, args[1].shape[0].value);
    if (!n) {
      diags_->emit(call->range, IntOverflow);
      return Ty::error();
    }
    return Ty::tile(args[0].dtype, {{*n, call->range}});
  }
  return Ty::error();
}

// ---- Calls of ops and fns ------------------------------------------------------------------------

namespace {
bool concreteValue(const Ty& t) {
  return (t.kind == TyKind::Int && t.intValue && t.intValue->isConstant()) || (t.kind == TyKind::Float && t.floatValue) ||
         (t.kind == TyKind::Bool && t.boolValue);
}
std::string valueStr(const Ty& t) {
  if (t.kind == TyKind::Int && t.intValue) return t.intValue->str();
  if (t.kind == TyKind::Float && t.floatValue) return fmt::format("{}", *t.floatValue);
  if (t.kind == TyKind::Bool && t.boolValue) return *t.boolValue ? "true" : "false";
  return tyStr(t);
}
std::string genericKind(const GenericParam& g) { return g.type ? g.type->name : "int"; }
bool genericAccepts(const GenericParam& g, const Ty& v) {
  std::string k = genericKind(g);
  if (k == "int") return v.kind == TyKind::Int;
  if (k == "float") return v.kind == TyKind::Float || v.kind == TyKind::Int;
  if (k == "bool") return v.kind == TyKind::Bool;
  return false;
}
Ty genericValue(const GenericParam& g, const Ty& v) {
  if (genericKind(g) == "float" && v.kind == TyKind::Int)
    return Ty::floatConst(v.intValue && v.intValue->isConstant() ? std::optional<double>(static_cast<double>(v.intValue->value())) : std::nullopt);
  return v;
}
}  // namespace

Ty Checker::checkCall(const CallExpr* call, Ctx& ctx) {
  const std::string& name = call->callee.name;
  if (name.empty()) return Ty::error();
  auto sym = findGlobal(ctx.mod, name, call->callee.range, true);
  if (!sym) {
    if (std::find(kBuiltins.begin(), kBuiltins.end(), name) != kBuiltins.end()) {
      diags_->emit(call->callee.range, StmtNotInFn, fmt::format("the tile builtin '{}'", name));
      return Ty::error();
    }
    diags_->emit(call->callee.range, UnknownName, name, suggest(name, namesInScope(ctx)));
    return Ty::error();
  }
  if (!sym->decl) return Ty::error();
  recordUse(call->callee.range, sym->decl->name.range, nullptr);
  Callable c;
  if (auto* op = as<OpDecl>(sym->decl)) c.op = op;
  else if (auto* fn = as<FnDecl>(sym->decl)) c.fn = fn;
  else {
    const Decl* d = sym->decl;
    const char* what = as<StepDecl>(d) ? "the step" : as<ConstDecl>(d) ? "a constant" : as<WeightDecl>(d) ? "a weight"
                       : as<StateDecl>(d) ? "a state tensor" : as<GroupDecl>(d) ? "a group" : as<ConfigDecl>(d) ? "a config" : "a declaration";
    diags_->emit(call->callee.range, NotCallable, name, what)
        .note(sym->decl->name.range, DeclaredHere, name);
    return Ty::error();
  }
  if (ctx.decl) {
    if (!calls_.count(ctx.decl)) callers_.push_back(ctx.decl);
    auto& edges = calls_[ctx.decl];
    if (std::none_of(edges.begin(), edges.end(), [&](auto& e) { return e.first == c.decl(); }))
      edges.push_back({c.decl(), call->callee.range});
  }
  if (std::find(callStack_.begin(), callStack_.end(), c.decl()) != callStack_.end() || c.decl() == ctx.decl) {
    diags_->emit(call->callee.range, Recursion, name);
    return Ty::error();
  }
  Module* calleeMod = sym->mod;
  const auto& gparams = c.generics();
  const auto& params = c.params();

  // Arguments: positional first, then generic parameters by name.
  std::vector<std::pair<const CallArg*, Ty>> positional;
  std::map<std::string, Ty> bindings;
  std::map<std::string, SourceRange> bindingFrom;
  bool bad = false, sawNamed = false;
  for (const auto& a : call->args) {
    Ty v = checkExpr(a.value.get(), ctx);
    if (v.isError()) bad = true;
    if (!a.name) {
      if (sawNamed) {
        diags_->emit(a.value->range, PositionalAfterNamed);
        bad = true;
      }
      positional.push_back({&a, v});
      continue;
    }
    sawNamed = true;
    auto g = std::find_if(gparams.begin(), gparams.end(), [&](const GenericParam& gp) { return gp.name.name == a.name->name; });
    if (g == gparams.end()) {
      std::vector<std::string> names;
      for (const auto& gp : gparams) names.push_back(gp.name.name);
      diags_->emit(a.name->range, UnknownGenericArg, name, a.name->name, suggest(a.name->name, names))
          .note(c.decl()->name.range, DeclaredHere, name);
      bad = true;
      continue;
    }
    recordUse(a.name->range, g->name.range, nullptr);
    if (bindings.count(a.name->name)) {
      diags_->emit(a.name->range, DuplicateGenericArg, a.name->name).note(bindingFrom[a.name->name], PreviousDefinition);
      bad = true;
      continue;
    }
    if (v.isError()) continue;
    if (runtimeValue(v) || v.kind == TyKind::Tensor) {
      diags_->emit(a.value->range, NotConstant, fmt::format("generic parameter '{}' of '{}'", a.name->name, name),
                   v.kind == TyKind::Tensor ? "this is a tensor" : "this is a runtime value");
      bad = true;
      continue;
    }
    if (!genericAccepts(*g, v)) {
      diags_->emit(a.value->range, GenericArgType, a.name->name, name, "a compile-time " + genericKind(*g), tyStr(v));
      bad = true;
      continue;
    }
    bindings[a.name->name] = genericValue(*g, v);
    bindingFrom[a.name->name] = a.value->range;
  }
  if (positional.size() != params.size()) {
    diags_->emit(call->range, ArgCount, name, static_cast<unsigned>(params.size()), plural(params.size()),
                 static_cast<unsigned>(positional.size()))
        .note(c.decl()->name.range, DeclaredHere, name);
    return Ty::error();
  }
  if (bad) return Ty::error();

  // Infer generic dims from the arguments' shapes: a dim written as a bare generic name takes the
  // argument's dim.
  auto isGeneric = [&](const std::string& n) {
    return std::any_of(gparams.begin(), gparams.end(), [&](const GenericParam& g) { return g.name.name == n; });
  };
  for (size_t i = 0; i < params.size(); ++i) {
    const Ty& arg = positional[i].second;
    const TypeRef& pt = params[i].type;
    if (arg.kind != TyKind::Tensor || pt.dims.size() != arg.shape.size()) continue;
    auto bind = [&](const Expr* written, const Poly& value) {
      auto* n = as<NameExpr>(written);
      if (!n || !isGeneric(n->name) || bindings.count(n->name)) return;
      bindings[n->name] = Ty::intConst(value);
      bindingFrom[n->name] = positional[i].first->value->range;
    };
    for (size_t d = 0; d < pt.dims.size(); ++d) bind(pt.dims[d].get(), arg.shape[d].value);
    // Layout arguments too: `w: bf16[N, K] tiled(R, K)` learns R from the argument's layout.
    if (pt.layout && arg.layout.written && pt.layout->name.name == layoutKindName(arg.layout.kind) &&
        pt.layout->args.size() == arg.layout.args.size())
      for (size_t k = 0; k < pt.layout->args.size(); ++k) bind(pt.layout->args[k].get(), arg.layout.args[k]);
  }

  // The callee's signature is evaluated in its own module, with its generics bound.
  Ctx sig;
  sig.mod = calleeMod;
  sig.kind = BodyKind::TopLevel;
  sig.scopes.emplace_back();
  bool wasSuppressed = diags_->suppressed();
  for (const auto& g : gparams) {
    if (!bindings.count(g.name.name) && g.defaultValue) {
      diags_->setSuppressed(true);  // defaults were checked with the callee
      Ty v = checkExpr(g.defaultValue.get(), sig);
      diags_->setSuppressed(wasSuppressed);
      if (!v.isError() && genericAccepts(g, v)) bindings[g.name.name] = genericValue(g, v);
    }
    if (!bindings.count(g.name.name)) {
      diags_->emit(call->range, CannotInfer, g.name.name, name).note(g.name.range, DeclaredHere, g.name.name);
      return Ty::error();
    }
    sig.scopes.back().names[g.name.name] = Local{Local::Generic, bindings[g.name.name], g.name.range};
  }
  auto resolveSig = [&](const TypeRef& t, const std::string& what, const std::string& n) {
    diags_->setSuppressed(true);  // the signature itself was checked with the callee
    Ty ty = resolveType(t, sig, what, n, true);
    diags_->setSuppressed(wasSuppressed);
    return ty;
  };
  for (size_t i = 0; i < params.size(); ++i) {
    const Param& p = params[i];
    const Ty& arg = positional[i].second;
    const Expr* argExpr = positional[i].first->value.get();
    Ty pt = resolveSig(p.type, "parameter", p.name.name);
    if (pt.isError()) return Ty::error();
    auto mismatch = [&](const std::string& want) {
      diags_->emit(argExpr->range, ArgMismatch, p.name.name, name, want, tyStr(arg)).note(p.range, ParamDeclared, p.name.name);
      return Ty::error();
    };
    if (pt.kind == TyKind::GroupElem) {
      if (arg.kind != TyKind::GroupElem || arg.group != pt.group) return mismatch(tyStr(pt));
      continue;
    }
    if (pt.shape.empty() && !p.inout) {
      // A scalar parameter takes a runtime scalar, a 0-d tensor or a constant of its dtype.
      bool ok = ((arg.kind == TyKind::Scalar || (arg.kind == TyKind::Tensor && arg.shape.empty())) && arg.dtype == pt.dtype) ||
                (arg.kind == TyKind::Int && pt.dtype != DType::Bool) || (arg.kind == TyKind::Float && isFloat(pt.dtype)) ||
                (arg.kind == TyKind::Bool && pt.dtype == DType::Bool);
      if (!ok) return mismatch(dtypeName(pt.dtype));
      continue;
    }
    if (arg.kind != TyKind::Tensor) return mismatch("a tensor " + tyStr(pt));
    if (arg.dtype != pt.dtype) return mismatch(tyStr(pt));
    if (!sameShape(arg.shape, pt.shape)) {
      auto d = diags_->emit(argExpr->range, ArgShapeMismatch, p.name.name, name, shapeStr(pt.shape), shapeStr(arg.shape));
      d.note(p.range, ParamDeclared, p.name.name);
      for (const auto& dim : p.type.dims)
        if (auto* n = as<NameExpr>(dim.get()); n && bindingFrom.count(n->name) && bindingFrom[n->name].begin != argExpr->range.begin)
          d.note(bindingFrom[n->name], InferredFrom, n->name, valueStr(bindings[n->name]));
      shapeNotes(d, arg.shape);
      return Ty::error();
    }
    if (pt.layout.written && !(pt.layout == arg.layout)) {
      diags_->emit(argExpr->range, ArgLayoutMismatch, p.name.name, name, pt.layout.str(), arg.layout.str())
          .note(p.range, ParamDeclared, p.name.name)
          .note(arg.layout.written ? arg.layout.origin : arg.declRange, LayoutFrom, arg.name);
      return Ty::error();
    }
    if (p.inout && !(arg.writable && (arg.storage == Storage::State || arg.storage == Storage::OpParam))) {
      diags_->emit(argExpr->range, InoutArg, p.name.name, name, storageName(arg.storage), arg.name)
          .note(p.range, ParamDeclared, p.name.name);
      return Ty::error();
    }
  }

  // Results, typed under the bindings.
  Ty result;
  result.kind = TyKind::Tuple;
  for (const auto& r : c.results()) {
    Ty rt = resolveSig(r.type, "result", r.name ? r.name->name : name);
    if (rt.isError()) return Ty::error();
    if (rt.kind == TyKind::Tensor) {
      rt.storage = Storage::Activation;
      rt.writable = false;
      rt.name = r.name ? r.name->name : name;
      rt.declRange = call->range;
    }
    result.elems.push_back(rt);
  }

  if (sink_) {
    std::vector<Ty> args;
    for (auto& [a, t] : positional) args.push_back(t);
    if (c.fn) return inlineFn(c.fn, calleeMod, bindings, args);
    GraphSink::OpCall oc;
    oc.instance = &opInstance(c.op, calleeMod, bindings);
    oc.args = args;
    oc.results = result.elems;
    oc.after = pendingAfter_;
    oc.gridSync = pendingSync_;
    oc.call = call->range;
    pendingSync_ = false;
    std::vector<int> ids = sink_->opCall(oc);
    for (size_t i = 0; i < result.elems.size() && i < ids.size(); ++i) result.elems[i].tensorId = ids[i];
  } else if (!gparams.empty() &&
             std::all_of(bindings.begin(), bindings.end(), [](auto& b) { return concreteValue(b.second); })) {
    instantiate(c, calleeMod, bindings, call->range);
  }
  pendingSync_ = false;  // a `sync grid;` applies to the first call after it only

  if (result.elems.empty()) {
    result.kind = TyKind::Void;
    return result;
  }
  if (result.elems.size() == 1 && !(c.fn && c.fn->tupleResult) && !(c.op && c.op->results.size() > 1)) return result.elems[0];
  return result;
}

// Re-checks a generic op or fn with concrete generic values, where rules that need numbers
// (exact task grids, region bounds, layout divisibility, static assertions) can be decided.
// Only what the generic check could not see is reported, with a note naming the call.
void Checker::instantiate(const Callable& c, Module* m, const std::map<std::string, Ty>& bindings, SourceRange callRange) {
  const Decl* d = c.decl();
  if (!genericClean_.count(d)) {
    // Checked before its turn, so the generic pass runs now.
    if (c.op) checkOp(c.op, m, nullptr);
    else checkFn(c.fn, m, nullptr);
  }
  if (!genericClean_[d]) return;
  std::string desc;
  for (const auto& [n, v] : bindings) desc += (desc.empty() ? "" : ", ") + n + " = " + valueStr(v);
  std::string key = fmt::format("{}|{}", static_cast<const void*>(d), desc);
  if (!instantiated_.insert(key).second) return;
  if (index_ && !sink_) index_->instances[d].push_back(bindings);
  DiagnosticEngine local(sources_);
  DiagnosticEngine* outer = diags_;
  diags_ = &local;
  callStack_.push_back(d);
  ++instantiating_;
  if (c.op) checkOp(c.op, m, &bindings);
  else checkFn(c.fn, m, &bindings);
  --instantiating_;
  callStack_.pop_back();
  diags_ = outer;
  for (Diagnostic diag : local.diagnostics()) {
    if (!reportedInInstances_.insert({diag.kind, diag.range.file, diag.range.begin, diag.range.end}).second) continue;
    diag.notes.push_back({callRange, fmt::format(fmt::runtime(InstantiatedFrom.format), d->name.name, desc)});
    diags_->report(std::move(diag));
  }
}

// ---- Statements ----------------------------------------------------------------------------------

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

void Checker::checkStaticAssert(const Expr* cond, const std::optional<std::string>& msg, SourceRange range, Ctx& ctx) {
  Ty c = checkExpr(cond, ctx);
  if (c.isError()) return;
  if (c.kind != TyKind::Bool) {
    diags_->emit(cond->range, StaticAssertNotBool, tyStr(c));
    return;
  }
  // Unknown while generic parameters are symbolic: decided per instantiation.
  if (c.boolValue && !*c.boolValue) diags_->emit(range, StaticAssertFailed, msg ? ": " + *msg : std::string());
}

bool Checker::assignable(const Ty& target, const Ty& value) const {
  if (value.isCompileTime()) {
    if (value.kind == TyKind::Bool) return target.dtype == DType::Bool;
    if (value.kind == TyKind::Float) return isFloat(target.dtype);
    return target.dtype != DType::Bool;
  }
  if (value.dtype != target.dtype) return false;
  if (value.kind == TyKind::Scalar) return true;  // broadcast
  return value.kind == TyKind::Tile && target.kind == TyKind::Tile && sameShape(value.shape, target.shape);
}

void Checker::checkOpStmt(const Stmt* s, Ctx& ctx) {
  switch (s->kind) {
    case StmtKind::Let: {
      auto* l = as<LetStmt>(s);
      if (l->names.empty()) {  // the parser recovered from a missing name; it reported that
        checkExpr(l->value.get(), ctx);
        return;
      }
      if (!l->annotations.empty())
        diags_->emit(l->annotations[0].range, AnnotationPlace, l->annotations[0].name.name, "applies to calls in a fn or step, not to statements in an op");
      if (l->tuplePattern) {
        diags_->emit(s->range, StmtNotInOp, "binding several names at once");
        return;
      }
      Ty v = checkExpr(l->value.get(), ctx);
      if (!v.isError() && !v.isValue()) {
        requireValue(v, l->value.get(), "let");
        v = Ty::error();
      }
      if (l->type && !v.isError()) {
        Ty t = resolveType(*l->type, ctx, "variable", l->names[0].name, false);
        if (!t.isError()) {
          Ty declared = Ty::tile(t.dtype, t.shape);
          if (!assignable(declared, v) || (v.kind == TyKind::Scalar && declared.kind == TyKind::Tile)) {
            diags_->emit(l->value->range, InitMismatch, l->names[0].name, tyStr(declared), tyStr(v));
          }
          v = declared;
        }
      }
      if (record_) (*record_)[l] = v;
      for (const auto& n : l->names) declareLocal(ctx, n, Local{Local::Let, v, {}}, s->range);
      return;
    }
    case StmtKind::Var: {
      auto* v = as<VarStmt>(s);
      Ty t = resolveType(v->type, ctx, "variable", v->name.name, false);
      Ty declared = t.isError() ? t : Ty::tile(t.dtype, t.shape);
      if (v->init) {
        Ty init = checkExpr(v->init.get(), ctx);
        if (!init.isError() && !declared.isError()) {
          if (!init.isValue()) requireValue(init, v->init.get(), "var");
          else if (!assignable(declared, init)) diags_->emit(v->init->range, InitMismatch, v->name.name, tyStr(declared), tyStr(init));
        }
      }
      if (record_) (*record_)[v] = declared;
      declareLocal(ctx, v->name, Local{Local::Var, declared, {}}, s->range);
      return;
    }
    case StmtKind::Const: {
      auto* c = as<ConstStmt>(s);
      Ty v = evalConst(c->value.get(), ctx, fmt::format("constant '{}'", c->name.name));
      declareLocal(ctx, c->name, Local{Local::Const, v, {}}, s->range);
      return;
    }
    case StmtKind::Assign: {
      auto* a = as<AssignStmt>(s);
      Ty value = checkExpr(a->value.get(), ctx);
      auto* n = as<NameExpr>(a->target.get());
      if (!n) {
        if (as<IndexExpr>(a->target.get()))
          diags_->emit(a->target->range, NotAssignable, "a region", "write to tensors with `store`, and to tiles by assigning the whole var");
        else
          diags_->emit(a->target->range, NotAssignable, "this expression", "only vars can be assigned");
        return;
      }
      if (n->name.empty()) return;
      Local* l = findLocal(ctx, n->name);
      if (l) recordUse(n->range, l->range, &l->ty);
      if (!l) {
        nameValue(n->name, n->range, ctx);  // reports unknown or misuse
        return;
      }
      if (l->kind != Local::Var) {
        static const char* why[] = {"it is a let binding; declare it with var to change it", "", "it is a constant",
                                    "parameters cannot be assigned; results are written with `store`", "it is a generic parameter",
                                    "it is a task index", "it is a loop variable"};
        diags_->emit(a->target->range, NotAssignable, n->name, why[l->kind]).note(l->range, DeclaredHere, n->name);
        return;
      }
      if (value.isError() || l->ty.isError()) return;
      if (!value.isValue()) {
        requireValue(value, a->value.get(), ast::spelling(a->op));
        return;
      }
      if (!assignable(l->ty, value)) {
        auto d = diags_->emit(a->value->range, AssignMismatch, tyStr(value), n->name, tyStr(l->ty));
        if (value.kind == TyKind::Tile && l->ty.kind == TyKind::Tile && value.dtype == l->ty.dtype) {
          shapeNotes(d, value.shape);
          shapeNotes(d, l->ty.shape);
        }
        return;
      }
      if (a->op != AssignOp::Set && l->ty.dtype == DType::Bool)
        diags_->emit(a->opRange, OperandType, ast::spelling(a->op), tyStr(l->ty));
      return;
    }
    case StmtKind::Store: {
      auto* st = as<StoreStmt>(s);
      Ty value = checkExpr(st->value.get(), ctx);
      Ty region;
      std::string tname;
      const Ty* tensor = nullptr;
      Ty base;
      if (auto* ix = as<IndexExpr>(st->target.get())) {
        base = checkExpr(ix->base.get(), ctx);
        if (base.isError()) return;
        if (base.kind == TyKind::Tile || base.kind == TyKind::Scalar) {
          diags_->emit(st->target->range, StoreNotWritable, as<NameExpr>(ix->base.get()) ? as<NameExpr>(ix->base.get())->name : "this",
                       "it is a tile value; store writes op results and inout parameters");
          return;
        }
        if (base.kind != TyKind::Tensor) {
          diags_->emit(st->target->range, StoreTarget);
          return;
        }
        if (base.shape.empty()) {
          diags_->emit(st->target->range, StoreScalarRegion, base.name);
          return;
        }
        region = checkIndex(ix, ctx, Access::Store);
        tensor = &base;
      } else if (auto* n = as<NameExpr>(st->target.get())) {
        base = checkExpr(n, ctx);
        if (base.isError()) return;
        if (base.kind != TyKind::Tensor) {
          diags_->emit(st->target->range, StoreTarget);
          return;
        }
        if (!base.shape.empty()) {
          diags_->emit(st->target->range, RegionRank, base.name, static_cast<unsigned>(base.shape.size()), plural(base.shape.size()), 0u);
          return;
        }
        region = Ty::scalar(base.dtype);
        tensor = &base;
      } else {
        checkExpr(st->target.get(), ctx);
        diags_->emit(st->target->range, StoreTarget);
        return;
      }
      if (!tensor->writable) {
        diags_->emit(st->target->range, StoreNotWritable, tensor->name,
                     tensor->storage == Storage::OpParam ? "parameters are read-only; mark it inout to write it" : "it is read-only")
            .note(tensor->declRange, DeclaredHere, tensor->name);
        return;
      }
      if (tensor->storage == Storage::OpResult) ctx.stored.insert(tensor->name);
      if (region.isError() || value.isError()) return;
      if (!value.isValue()) {
        requireValue(value, st->value.get(), "store");
        return;
      }
      if (runtimeValue(value) && value.dtype != tensor->dtype) {
        diags_->emit(st->value->range, StoreDType, tyStr(value), dtypeName(tensor->dtype), tensor->name);
        return;
      }
      if (value.kind == TyKind::Tile && !(region.kind == TyKind::Tile && sameShape(region.shape, value.shape))) {
        auto d = diags_->emit(st->value->range, StoreShape, shapeStr(value.shape), region.kind == TyKind::Tile ? shapeStr(region.shape) : "[]", tensor->name);
        shapeNotes(d, value.shape);
        return;
      }
      if (!runtimeValue(value) && !assignable(Ty::tile(tensor->dtype, {}), value))
        diags_->emit(st->value->range, StoreDType, tyStr(value), dtypeName(tensor->dtype), tensor->name);
      return;
    }
    case StmtKind::For: {
      auto* f = as<ForStmt>(s);
      for (const Expr* b : {f->lo.get(), f->hi.get()}) {
        Ty t = checkExpr(b, ctx);
        if (!t.isError() && !(t.kind == TyKind::Int || (t.kind == TyKind::Scalar && t.dtype == DType::I32)))
          diags_->emit(b->range, LoopBound, tyStr(t));
      }
      if (f->step) {
        Ty st = checkExpr(f->step.get(), ctx);
        if (!st.isError()) {
          if (st.kind != TyKind::Int)
            diags_->emit(f->step->range, LoopStep, runtimeValue(st) ? "this is a runtime value" : fmt::format("found {}", tyStr(st)));
          else if (st.intValue->isConstant() && st.intValue->value() <= 0)
            diags_->emit(f->step->range, LoopStep, fmt::format("found {}", st.intValue->str()));
        }
      }
      ctx.scopes.emplace_back();
      declareLocal(ctx, f->var, Local{Local::LoopVar, Ty::scalar(DType::I32), {}}, f->range, f->body.range);
      ++ctx.nesting;
      checkBlock(f->body, ctx);
      --ctx.nesting;
      ctx.scopes.pop_back();
      return;
    }
    case StmtKind::If: {
      auto* i = as<IfStmt>(s);
      Ty c = checkExpr(i->cond.get(), ctx);
      if (!c.isError() && !(c.kind == TyKind::Bool || (c.kind == TyKind::Scalar && c.dtype == DType::Bool)))
        diags_->emit(i->cond->range, ExpectedBool, "an if condition", tyStr(c));
      ++ctx.nesting;
      checkBlock(i->then, ctx);
      if (i->otherwise) checkBlock(*i->otherwise, ctx);
      --ctx.nesting;
      return;
    }
    case StmtKind::Return: diags_->emit(s->range, StmtNotInOp, "return (ops write their results with `store`)"); return;
    case StmtKind::Sync: diags_->emit(s->range, StmtNotInOp, "sync (it goes between op calls in a fn or step)"); return;
    case StmtKind::Assert: {
      auto* a = as<AssertStmt>(s);
      checkStaticAssert(a->cond.get(), a->message, s->range, ctx);
      return;
    }
    case StmtKind::Expr: {
      auto* e = as<ExprStmt>(s);
      if (!e->annotations.empty())
        diags_->emit(e->annotations[0].range, AnnotationPlace, e->annotations[0].name.name, "applies to calls in a fn or step, not to statements in an op");
      Ty t = checkExpr(e->expr.get(), ctx);
      if (!t.isError()) diags_->emit(e->expr->range, StmtNotInOp, "an expression statement (its value would be unused)");
      return;
    }
  }
}

void Checker::checkAnnotations(const std::vector<Annotation>& anns, const Expr* value, Ctx& ctx) {
  std::set<std::string> seen;
  for (const auto& a : anns) {
    const std::string& n = a.name.name;
    if (n.empty()) continue;
    if (!seen.insert(n).second) {
      diags_->emit(a.range, DuplicateAnnotation, n);
      continue;
    }
    if (n == "cluster") {
      diags_->emit(a.range, AnnotationPlace, n, "applies to an op declaration");
      continue;
    }
    if (n != "after") {
      diags_->emit(a.name.range, UnknownAnnotation, n, suggest(n, {"after", "cluster"}));
      continue;
    }
    if (!as<CallExpr>(value)) {
      diags_->emit(a.range, AnnotationPlace, n, "applies to an op or fn call");
      continue;
    }
    if (a.args.empty()) {
      diags_->emit(a.range, AfterNoArgs);
      continue;
    }
    for (const auto& arg : a.args) {
      auto* nm = as<NameExpr>(arg.get());
      Ty t = checkExpr(arg.get(), ctx);
      if (t.isError()) continue;
      if (t.kind == TyKind::Tensor && (t.storage == Storage::Activation || t.storage == Storage::State ||
                                       (t.storage == Storage::OpParam && t.writable))) {
        if (!nm && !as<FieldExpr>(arg.get())) diags_->emit(arg->range, AfterArg, "name a tensor");
        else if (t.tensorId >= 0) pendingAfter_.push_back(t.tensorId);
        continue;
      }
      std::string why = t.kind == TyKind::Tensor && t.storage == Storage::Weight
                            ? fmt::format("'{}' is a weight, which nothing writes", t.name)
                        : t.kind == TyKind::Tensor ? fmt::format("'{}' is a {}, which nothing writes during the step", t.name, storageName(t.storage))
                                                   : fmt::format("found {}", tyStr(t));
      diags_->emit(arg->range, AfterArg, why);
    }
  }
}

void Checker::checkFnStmt(const Stmt* s, Ctx& ctx) {
  switch (s->kind) {
    case StmtKind::Let: {
      auto* l = as<LetStmt>(s);
      if (l->names.empty()) {  // the parser recovered from a missing name; it reported that
        checkExpr(l->value.get(), ctx);
        return;
      }
      checkAnnotations(l->annotations, l->value.get(), ctx);
      Ty v = checkExpr(l->value.get(), ctx);
      auto callee = [&]() { auto* c = as<CallExpr>(l->value.get()); return c ? c->callee.name : std::string("value"); };
      std::vector<Ty> bound(l->names.size(), Ty::error());
      if (!v.isError()) {
        if (v.kind == TyKind::Void) {
          diags_->emit(l->value->range, VoidValue, callee());
        } else if (l->tuplePattern || v.kind == TyKind::Tuple) {
          size_t have = v.kind == TyKind::Tuple ? v.elems.size() : 1;
          if (have != l->names.size() || !l->tuplePattern)
            diags_->emit(s->range, TupleCount, callee(), static_cast<unsigned>(have), plural(have),
                         static_cast<unsigned>(l->names.size()), plural(l->names.size()));
          else if (v.kind != TyKind::Tuple)
            bound[0] = v;  // `let (a) = f(...)` of a single result
          else
            for (size_t i = 0; i < have; ++i) bound[i] = v.elems[i];
        } else {
          bound[0] = v;
        }
      }
      if (l->type && !bound[0].isError()) {
        Ty t = resolveType(*l->type, ctx, "binding", l->names[0].name, true);
        if (!t.isError() && !(t.kind == TyKind::Tensor && bound[0].kind == TyKind::Tensor && t.dtype == bound[0].dtype &&
                              sameShape(t.shape, bound[0].shape)) && !(t.kind == bound[0].kind && t.kind != TyKind::Tensor))
          diags_->emit(l->value->range, InitMismatch, l->names[0].name, tyStr(t), tyStr(bound[0]));
      }
      for (size_t i = 0; i < l->names.size(); ++i) {
        if (bound[i].kind == TyKind::Tensor && bound[i].storage == Storage::Activation) bound[i].name = l->names[i].name;
        declareLocal(ctx, l->names[i], Local{Local::Let, bound[i], {}}, s->range);
      }
      return;
    }
    case StmtKind::Var: {
      auto* v = as<VarStmt>(s);
      Ty t = resolveType(v->type, ctx, "variable", v->name.name, true);
      Ty init = Ty::error();
      if (!v->init) {
        diags_->emit(s->range, InitMismatch, v->name.name, tyStr(t), "nothing; a var in a fn starts from a call's result");
      } else {
        init = checkExpr(v->init.get(), ctx);
        if (!init.isError() && !t.isError() &&
            !(init.kind == TyKind::Tensor && init.dtype == t.dtype && sameShape(init.shape, t.shape) && init.layout == t.layout))
          diags_->emit(v->init->range, InitMismatch, v->name.name, tyStr(t), tyStr(init));
      }
      if (!t.isError()) {
        t.storage = Storage::Activation;
        t.name = v->name.name;
        t.tensorId = init.tensorId;  // graph mode: the name stands for the initialising tensor
      }
      declareLocal(ctx, v->name, Local{Local::Var, t, {}}, s->range);
      return;
    }
    case StmtKind::Const: {
      auto* c = as<ConstStmt>(s);
      ctx.constNeeded = &ConstNeedsValue;
      ctx.constWhat = fmt::format("constant '{}' must be a compile-time value; ", c->name.name);
      Ty v = evalConst(c->value.get(), ctx, fmt::format("constant '{}'", c->name.name));
      ctx.constNeeded = nullptr;
      declareLocal(ctx, c->name, Local{Local::Const, v, {}}, s->range);
      return;
    }
    case StmtKind::Assign: {
      auto* a = as<AssignStmt>(s);
      Ty value = checkExpr(a->value.get(), ctx);
      auto* n = as<NameExpr>(a->target.get());
      if (!n || a->op != AssignOp::Set) {
        diags_->emit(a->target->range, NotAssignable, n ? n->name : "this expression",
                     n ? "fns rebind names with `=`; arithmetic belongs in ops" : "only vars can be rebound");
        return;
      }
      Local* l = findLocal(ctx, n->name);
      if (l) recordUse(n->range, l->range, &l->ty);
      if (!l) {
        nameValue(n->name, n->range, ctx);
        return;
      }
      if (l->kind != Local::Var) {
        diags_->emit(a->target->range, NotAssignable, n->name,
                     l->kind == Local::Let ? "it is a let binding; declare it with var to rebind it" : "only vars can be rebound")
            .note(l->range, DeclaredHere, n->name);
        return;
      }
      if (value.isError() || l->ty.isError()) return;
      if (!(value.kind == TyKind::Tensor && value.dtype == l->ty.dtype && sameShape(value.shape, l->ty.shape) &&
            value.layout == l->ty.layout)) {
        diags_->emit(a->value->range, RebindType, n->name, tyStr(l->ty), tyStr(value)).note(l->range, DeclaredHere, n->name);
      } else if (sink_) {
        l->ty = value;  // the name now stands for the new tensor
      }
      return;
    }
    case StmtKind::Store: diags_->emit(s->range, StoreOutsideOp); return;
    case StmtKind::For: {
      auto* f = as<ForStmt>(s);
      // Bounds must be compile-time integers; symbolic ones (generic parameters) check the body once.
      auto bound = [&](const Expr* b) -> std::optional<int64_t> {
        ctx.constNeeded = &FnLoopNotConst;
        ctx.constWhat.clear();
        Ty t = checkExpr(b, ctx);
        ctx.constNeeded = nullptr;
        if (t.isError()) return std::nullopt;
        if (t.kind != TyKind::Int) {
          diags_->emit(b->range, FnLoopNotConst, runtimeValue(t) || t.kind == TyKind::Tensor
                                                     ? "this bound is a runtime value"
                                                     : fmt::format("this bound is {}", tyStr(t)));
          return std::nullopt;
        }
        return t.intValue->isConstant() ? std::optional<int64_t>(t.intValue->value()) : std::nullopt;
      };
      auto lo = bound(f->lo.get());
      auto hi = bound(f->hi.get());
      int64_t step = 1;
      bool knownStep = true;
      if (f->step) {
        auto st = constInt(f->step.get(), ctx, "a loop step");
        knownStep = st.has_value();
        if (st && *st <= 0) {
          diags_->emit(f->step->range, LoopStep, fmt::format("found {}", *st));
          knownStep = false;
        }
        if (knownStep) step = *st;
      }
      ++ctx.nesting;
      auto body = [&](Ty var) {
        ctx.scopes.emplace_back();
        declareLocal(ctx, f->var, Local{Local::LoopVar, var, {}}, f->range, f->body.range);
        checkBlock(f->body, ctx);
        ctx.scopes.pop_back();
      };
      constexpr int64_t kMaxUnroll = 65536;
      if (lo && hi && knownStep) {
        __int128 span = static_cast<__int128>(*hi) - *lo;
        int64_t n = span > 0 ? static_cast<int64_t>(std::min<__int128>((span + step - 1) / step, INT64_MAX)) : 0;
        if (n > kMaxUnroll) {
          diags_->emit(SourceRange::cover(f->lo->range, f->hi->range), UnrollLimit, std::to_string(n), std::to_string(kMaxUnroll));
        } else if (n > unrollBudget_) {
          if (unrollBudget_ >= 0) diags_->emit(SourceRange::cover(f->lo->range, f->hi->range), UnrollBudget, std::to_string(kUnrollBudget));
          unrollBudget_ = -1;  // reported once
        } else {
          unrollBudget_ -= n;
          // Unrolled: each iteration sees its own index, so group indices are checked exactly.
          for (int64_t k = 0; k < n; ++k) body(Ty::intConst(Poly::constant(static_cast<int64_t>(*lo + static_cast<__int128>(k) * step))));
        }
      } else {
        body(Ty::intConst(Poly::symbol(f->var.name)));
      }
      --ctx.nesting;
      return;
    }
    case StmtKind::If: {
      auto* i = as<IfStmt>(s);
      ctx.constNeeded = &FnIfNotConst;
      ctx.constWhat.clear();
      Ty c = checkExpr(i->cond.get(), ctx);
      ctx.constNeeded = nullptr;
      if (!c.isError() && c.kind != TyKind::Bool)
        diags_->emit(i->cond->range, FnIfNotConst, fmt::format("found {}", tyStr(c)));
      ++ctx.nesting;
      // Both branches are checked; the graph is built from the one the condition selects.
      bool known = c.kind == TyKind::Bool && c.boolValue.has_value();
      if (!sink_ || !known || *c.boolValue) checkBlock(i->then, ctx);
      if (i->otherwise && (!sink_ || !known || !*c.boolValue)) checkBlock(*i->otherwise, ctx);
      --ctx.nesting;
      return;
    }
    case StmtKind::Return: {
      auto* r = as<ReturnStmt>(s);
      if (ctx.nesting > 0) diags_->emit(s->range, ReturnInLoop);
      if (!r->value) {
        if (!ctx.results.empty())
          diags_->emit(s->range, ReturnCount, ctx.decl->name.name, 0u, "s", static_cast<unsigned>(ctx.results.size()), plural(ctx.results.size()));
        return;
      }
      Ty v = checkExpr(r->value.get(), ctx);
      if (v.isError()) return;
      ctx.returned = v;
      if (ctx.results.empty()) {
        diags_->emit(r->value->range, ReturnNoResults, ctx.decl->name.name);
        return;
      }
      std::vector<Ty> vals = v.kind == TyKind::Tuple ? v.elems : std::vector<Ty>{v};
      std::vector<const Expr*> exprs;
      if (auto* t = as<TupleExpr>(r->value.get()))
        for (const auto& e : t->elems) exprs.push_back(e.get());
      else
        exprs.push_back(r->value.get());
      if (vals.size() != ctx.results.size()) {
        diags_->emit(r->value->range, ReturnCount, ctx.decl->name.name, static_cast<unsigned>(vals.size()), plural(vals.size()),
                     static_cast<unsigned>(ctx.results.size()), plural(ctx.results.size()));
        return;
      }
      const std::vector<Result>& declared = as<FnDecl>(ctx.decl) ? as<FnDecl>(ctx.decl)->results : as<StepDecl>(ctx.decl)->results;
      for (size_t i = 0; i < vals.size(); ++i) {
        const Ty& want = ctx.results[i];
        const Ty& got = vals[i];
        const Expr* e = i < exprs.size() ? exprs[i] : r->value.get();
        if (want.isError() || got.isError()) continue;
        if (ctx.kind == BodyKind::Step && got.kind == TyKind::Tensor &&
            (got.storage == Storage::Weight || got.storage == Storage::StepInput || got.storage == Storage::State)) {
          diags_->emit(e->range, ReturnWeight, declared[i].name ? declared[i].name->name : std::to_string(i + 1),
                       storageName(got.storage), got.name);
          continue;
        }
        if (ctx.kind == BodyKind::Step && got.kind == TyKind::Scalar) {
          auto* n = as<NameExpr>(e);
          diags_->emit(e->range, ReturnWeight, declared[i].name ? declared[i].name->name : std::to_string(i + 1),
                       "step input", n ? n->name : "value");
          continue;
        }
        bool ok;
        if (want.kind == TyKind::Tensor && want.shape.empty())
          ok = (got.kind == TyKind::Tensor || got.kind == TyKind::Scalar) && got.shape.empty() && got.dtype == want.dtype;
        else if (want.kind == TyKind::Tensor)
          ok = got.kind == TyKind::Tensor && got.dtype == want.dtype && sameShape(got.shape, want.shape) && got.layout == want.layout;
        else
          ok = got.kind == want.kind && got.group == want.group;
        if (!ok)
          diags_->emit(e->range, ReturnType, static_cast<unsigned>(i + 1), ctx.decl->name.name, tyStr(want), tyStr(got))
              .note(declared[i].range, ResultDeclared);
      }
      return;
    }
    case StmtKind::Sync: {
      auto* sy = as<SyncStmt>(s);
      if (!sy->scope.name.empty() && sy->scope.name != "grid") diags_->emit(sy->scope.range, SyncScope, sy->scope.name);
      pendingSync_ = true;
      return;
    }
    case StmtKind::Assert: {
      auto* a = as<AssertStmt>(s);
      checkStaticAssert(a->cond.get(), a->message, s->range, ctx);
      return;
    }
    case StmtKind::Expr: {
      auto* e = as<ExprStmt>(s);
      checkAnnotations(e->annotations, e->expr.get(), ctx);
      if (!as<CallExpr>(e->expr.get())) {
        Ty t = checkExpr(e->expr.get(), ctx);
        if (!t.isError()) diags_->emit(e->expr->range, ExprStmtNotCall);
        return;
      }
      Ty t = checkExpr(e->expr.get(), ctx);
      // Discarding results is fine for a call whose point is writing state through inout.
      auto* call = as<CallExpr>(e->expr.get());
      bool writesState = false;
      if (auto sym = findGlobal(ctx.mod, call->callee.name, call->callee.range, false); sym && sym->decl) {
        const std::vector<Param>* ps = as<OpDecl>(sym->decl) ? &as<OpDecl>(sym->decl)->params
                                       : as<FnDecl>(sym->decl) ? &as<FnDecl>(sym->decl)->params : nullptr;
        writesState = ps && std::any_of(ps->begin(), ps->end(), [](const Param& p) { return p.inout; });
      }
      if (!t.isError() && t.kind != TyKind::Void && !writesState) diags_->emit(e->expr->range, UnusedResults, call->callee.name);
      return;
    }
  }
}

// ---- Ops, fns and the step -----------------------------------------------------------------------

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
    if (record_) (*record_)[&p] = t;
    declareLocal(ctx, p.name, Local{Local::Param, t, {}}, p.range);
  }
}

void Checker::checkTaskGrid(const OpDecl* op, Ctx& ctx, bool concrete) {
  if (op->tasks.size() > 3) diags_->emit(op->tasks[3].range, TaskGridRank, static_cast<unsigned>(op->tasks.size()));
  int64_t total = 1;
  bool knownTotal = true;
  for (const auto& td : op->tasks) {
    Ty e = checkExpr(td.extent.get(), ctx);
    if (!e.isError()) {
      if (e.kind != TyKind::Int) {
        diags_->emit(td.extent->range, TaskExtent, td.var.name,
                     runtimeValue(e) || e.kind == TyKind::Tensor ? "this is a runtime value" : fmt::format("found {}", tyStr(e)));
        knownTotal = false;
      } else if (e.intValue->isConstant()) {
        if (e.intValue->value() <= 0) diags_->emit(td.extent->range, TaskExtent, td.var.name, fmt::format("found {}", e.intValue->str()));
        if (__builtin_mul_overflow(total, e.intValue->value(), &total)) knownTotal = false;
      } else {
        knownTotal = false;
      }
      // Every division in an extent must be exact, or tasks would silently drop elements.
      std::function<void(const Expr*)> exact = [&](const Expr* x) {
        auto* b = as<BinaryExpr>(x);
        if (!b) return;
        exact(b->lhs.get());
        exact(b->rhs.get());
        if (b->op != BinaryOp::Div) return;
        bool was = diags_->suppressed();
        diags_->setSuppressed(true);
        Ty l = checkExpr(b->lhs.get(), ctx), r = checkExpr(b->rhs.get(), ctx);
        diags_->setSuppressed(was);
        if (l.kind != TyKind::Int || r.kind != TyKind::Int || !l.intValue->isConstant() || !r.intValue->isConstant()) return;
        int64_t p = l.intValue->value(), q = r.intValue->value();
        if (q != 0 && p % q != 0) {
          const std::string& text = sources_.file(b->range.file).text();
          diags_->emit(b->range, TaskGridInexact, text.substr(b->range.begin, b->range.end - b->range.begin),
                       fmt::format("{} / {}", p, q), std::to_string(p), std::to_string(q));
        }
      };
      exact(td.extent.get());
    }
    declareLocal(ctx, td.var, Local{Local::TaskVar, Ty::scalar(DType::I32), {}}, td.range);
  }
  (void)concrete;
  for (const auto& a : op->annotations) {
    if (a.name.name != "cluster" || a.args.size() != 1) continue;
    bool was = diags_->suppressed();
    diags_->setSuppressed(true);
    Ty n = checkExpr(a.args[0].get(), ctx);
    diags_->setSuppressed(was);
    if (n.kind == TyKind::Int && n.intValue->isConstant() && knownTotal && n.intValue->value() > 0 && total % n.intValue->value() != 0)
      diags_->emit(a.range, ClusterTasks, n.intValue->str(), std::to_string(total), op->name.name);
  }
}

void Checker::checkOp(const OpDecl* op, Module* m, const std::map<std::string, Ty>* bindings) {
  if (!bindings && genericClean_.count(op)) return;
  BodyScope scope(*this, !bindings);
  unsigned before = diags_->errorCount();
  if (!bindings) genericClean_[op] = false;  // in progress
  Ctx ctx;
  ctx.mod = m;
  ctx.kind = BodyKind::Op;
  ctx.decl = op;
  ctx.scopes.emplace_back();
  bindGenerics(op->generics, ctx, bindings);
  std::set<std::string> seenAnn;
  for (const auto& a : op->annotations) {
    const std::string& n = a.name.name;
    if (n.empty()) continue;
    if (!seenAnn.insert(n).second) {
      diags_->emit(a.range, DuplicateAnnotation, n);
      continue;
    }
    if (n == "after") {
      diags_->emit(a.range, AnnotationPlace, n, "applies to a call in a fn or step, not to an op declaration");
      continue;
    }
    if (n != "cluster") {
      diags_->emit(a.name.range, UnknownAnnotation, n, suggest(n, {"after", "cluster"}));
      continue;
    }
    if (a.args.size() != 1) {
      diags_->emit(a.range, ClusterArg, fmt::format("{} arguments", a.args.size()));
      continue;
    }
    Ty v = checkExpr(a.args[0].get(), ctx);
    if (v.isError()) continue;
    if (v.kind != TyKind::Int) {
      diags_->emit(a.args[0]->range, ClusterArg, tyStr(v));
    } else if (v.intValue->isConstant()) {
      int64_t c = v.intValue->value();
      if (c < 1 || c > 8 || (c & (c - 1)) != 0) diags_->emit(a.args[0]->range, ClusterArg, std::to_string(c));
    }
  }
  bindParams(op->params, ctx, true);
  for (const auto& r : op->results) {
    std::string rn = r.name ? r.name->name : "";
    Ty t = resolveType(r.type, ctx, "result", rn, true);
    if (t.kind == TyKind::GroupElem) {
      diags_->emit(r.type.range, ParamType, "result", rn, tyStr(t));
      t = Ty::error();
    }
    if (t.kind == TyKind::Tensor) {
      t.storage = Storage::OpResult;
      t.writable = true;
      t.name = rn;
      t.declRange = r.name ? r.name->range : r.range;
    }
    if (record_) (*record_)[&r] = t;
    if (r.name) declareLocal(ctx, *r.name, Local{Local::Param, t, {}}, r.range, {}, SymbolKind::Result);
  }
  checkTaskGrid(op, ctx, bindings != nullptr);
  checkBlock(op->body, ctx);
  if (!bindings) {
    // Only for an op with no other error: a broken body often lost its stores to recovery.
    if (diags_->errorCount() == before && !parseErrors_.count(m))
      for (const auto& r : op->results)
        if (r.name && !ctx.stored.count(r.name->name)) diags_->emit(r.name->range, ResultNeverStored, r.name->name);
    genericClean_[op] = diags_->errorCount() == before;
  }
}

void Checker::checkFn(const FnDecl* fn, Module* m, const std::map<std::string, Ty>* bindings) {
  if (!bindings && genericClean_.count(fn)) return;
  BodyScope scope(*this, !bindings);
  unsigned before = diags_->errorCount();
  if (!bindings) genericClean_[fn] = false;
  Ctx ctx;
  ctx.mod = m;
  ctx.kind = BodyKind::Fn;
  ctx.decl = fn;
  ctx.scopes.emplace_back();
  bindGenerics(fn->generics, ctx, bindings);
  bindParams(fn->params, ctx, false);
  for (const auto& r : fn->results) {
    Ty t = resolveType(r.type, ctx, "result", r.name ? r.name->name : fn->name.name, true);
    if (t.kind == TyKind::GroupElem) {
      diags_->emit(r.type.range, ParamType, "result", r.name ? r.name->name : fn->name.name, tyStr(t));
      t = Ty::error();
    }
    ctx.results.push_back(t);
  }
  callStack_.push_back(fn);
  checkBlock(fn->body, ctx);
  callStack_.pop_back();
  if (!fn->results.empty() && (fn->body.stmts.empty() || !as<ReturnStmt>(fn->body.stmts.back().get())))
    diags_->emit(fn->name.range, MissingReturn, fn->name.name);
  if (!bindings) genericClean_[fn] = diags_->errorCount() == before;
}

void Checker::checkStep(const StepDecl* step, Module* m) {
  std::vector<std::pair<std::string, Ty>> inputs;
  Ctx ctx;
  ctx.mod = m;
  ctx.kind = BodyKind::Step;
  ctx.decl = step;
  ctx.scopes.emplace_back();
  for (const auto& p : step->params) {
    Ty t = resolveType(p.type, ctx, "step input", p.name.name, true);
    if (p.inout) {
      diags_->emit(p.range, StepInout);
      t = Ty::error();
    }
    if (!t.isError()) {
      bool ok = t.kind == TyKind::Tensor && (t.dtype == DType::I32 || (!t.shape.empty() && t.dtype == DType::F32));
      if (!ok) {
        diags_->emit(p.type.range, StepParam, p.name.name, tyStr(t));
        t = Ty::error();
      } else if (t.shape.empty()) {
        t = Ty::scalar(t.dtype);
        t.inputIndex = static_cast<int>(&p - step->params.data());
      } else {
        t.storage = Storage::StepInput;
        t.name = p.name.name;
        t.declRange = p.name.range;
        if (sink_) t.tensorId = sink_->inputTensor(p, t);
      }
    }
    inputs.push_back({p.name.name, t});
    declareLocal(ctx, p.name, Local{Local::Param, t, {}}, p.range);
  }
  if (sink_) sink_->stepInputs(inputs);
  for (size_t i = 0; i < step->results.size(); ++i) {
    const Result& r = step->results[i];
    if (!r.name) diags_->emit(r.range, StepResultName, static_cast<unsigned>(i + 1));
    Ty t = resolveType(r.type, ctx, "step result", r.name ? r.name->name : "", true);
    if (!t.isError() && t.kind != TyKind::Tensor) {
      diags_->emit(r.type.range, StepResultType, r.name ? r.name->name : std::to_string(i + 1), tyStr(t));
      t = Ty::error();
    }
    ctx.results.push_back(t);
  }
  checkBlock(step->body, ctx);
  if (!step->results.empty() && (step->body.stmts.empty() || !as<ReturnStmt>(step->body.stmts.back().get())))
    diags_->emit(step->name.range, MissingReturn, step->name.name);
  if (sink_) {
    std::vector<Ty> values = ctx.returned.kind == TyKind::Tuple ? ctx.returned.elems : std::vector<Ty>{ctx.returned};
    std::vector<std::pair<std::string, Ty>> outputs;
    for (size_t i = 0; i < step->results.size() && i < values.size(); ++i)
      outputs.push_back({step->results[i].name ? step->results[i].name->name : "", values[i]});
    sink_->stepOutputs(outputs);
  }
}

// ---- Graph mode ----------------------------------------------------------------------------------

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
  GraphSink* outerSink = sink_;
  record_ = &slot->types;
  sink_ = nullptr;
  checkOp(op, m, &bindings);
  sink_ = outerSink;
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

void Checker::elaborate(GraphSink& sink) {
  if (!program_.step) return;
  // The walk starts afresh: nothing pending from the check, and the whole unroll budget.
  pendingSync_ = false;
  pendingAfter_.clear();
  unrollBudget_ = kUnrollBudget;
  sink_ = &sink;
  checkStep(program_.step, program_.root());
  sink_ = nullptr;
}

void Checker::checkCallCycles() {
  // Depth-first search; a back edge closes a cycle, reported at the call that closes it.
  std::map<const Decl*, int> state;  // 0 unseen, 1 on the path, 2 done
  std::vector<const Decl*> path;
  std::function<void(const Decl*)> visit = [&](const Decl* d) {
    state[d] = 1;
    path.push_back(d);
    for (auto& [callee, range] : calls_[d]) {
      if (state[callee] == 1 && callee != d) {
        std::string chain;
        for (auto it = std::find(path.begin(), path.end(), callee); it != path.end(); ++it) chain += (*it)->name.name + " -> ";
        diags_->emit(range, CallCycle, chain + callee->name.name);
      } else if (state[callee] == 0) {
        visit(callee);
      }
    }
    path.pop_back();
    state[d] = 2;
  };
  for (const Decl* d : callers_)
    if (state[d] == 0) visit(d);
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
          if (program_.step) {
            diags_->emit(decl->name.range, MultipleSteps, decl->name.name).note(program_.step->name.range, PreviousDefinition);
            break;
          }
          program_.step = as<StepDecl>(decl);
          checkStep(program_.step, m);
          break;
        case DeclKind::Import:
        case DeclKind::Config: break;
      }
    }
  }
  checkCallCycles();
}

}  // namespace

std::string defaultStdlibDir() {
  if (const char* env = std::getenv("MKDSL_STDLIB"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "mkdsl" / "stdlib";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return MK_STDLIB_DIR;
}

bool elaborateStep(SourceManager& sources, DiagnosticEngine& diags, FileId root, const CheckOptions& options,
                   GraphSink& sink) {
  Program program;
  Checker checker(sources, diags, options, program);
  unsigned before = diags.errorCount();
  checker.run(root);
  if (diags.errorCount() != before) return false;
  if (!program.step) {
    diags.emit(SourceRange{program.root()->ast->file, 0, 0}, NoStep);
    return false;
  }
  sink.config = program.config ? program.config->name.name : "";
  sink.configValues = program.configValues;
  checker.elaborate(sink);
  return diags.errorCount() == before;
}

std::unique_ptr<Program> checkProgram(SourceManager& sources, DiagnosticEngine& diags, FileId root, const CheckOptions& options) {
  auto program = std::make_unique<Program>();
  Checker checker(sources, diags, options, *program);
  checker.run(root);
  if (!options.allConfigs || options.configName || !program->root()) return program;
  // The other configs: report only what the first one did not already show.
  std::set<std::tuple<DiagKind, FileId, uint32_t, uint32_t>> seen;
  for (const auto& d : diags.diagnostics()) seen.insert({d.kind, d.range.file, d.range.begin, d.range.end});
  bool first = true;
  for (const auto& decl : program->root()->ast->decls) {
    auto* cfg = as<ConfigDecl>(decl.get());
    if (!cfg || cfg->name.name.empty()) continue;
    if (first) {
      first = false;
      continue;
    }
    CheckOptions one = options;
    one.configName = cfg->name.name;
    one.buildIndex = false;
    DiagnosticEngine local(sources);
    Program scratch;
    Checker other(sources, local, one, scratch);
    other.run(root);
    for (Diagnostic d : local.diagnostics()) {
      if (!seen.insert({d.kind, d.range.file, d.range.begin, d.range.end}).second) continue;
      d.notes.push_back({cfg->name.range, fmt::format("with config '{}'", cfg->name.name)});
      diags.report(std::move(d));
    }
  }
  return program;
}

}  // namespace mk
