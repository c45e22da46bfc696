// The .mk abstract syntax tree. Built from the parse tree by parse.cpp; every node carries the
// source range it came from. Nothing here knows ANTLR.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/source.h"

namespace mk::ast {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

struct Ident {
  std::string name;
  SourceRange range;
};

// ---- Expressions -------------------------------------------------------------------------------

enum class ExprKind { Int, Float, Bool, Name, Call, Tuple, Index, Field, Load, Cast, Unary, Binary };

enum class BinaryOp { Mul, Div, Mod, Add, Sub, Lt, Le, Gt, Ge, Eq, Ne, And, Or };
enum class UnaryOp { Neg, Not };

const char* spelling(BinaryOp op);
const char* spelling(UnaryOp op);

struct Expr {
  explicit Expr(ExprKind kind, SourceRange range) : kind(kind), range(range) {}
  virtual ~Expr() = default;
  ExprKind kind;
  SourceRange range;
};

template <typename T>
T* as(Expr* e) {
  return e && e->kind == T::kKind ? static_cast<T*>(e) : nullptr;
}
template <typename T>
const T* as(const Expr* e) {
  return e && e->kind == T::kKind ? static_cast<const T*>(e) : nullptr;
}

struct IntLit : Expr {
  static constexpr ExprKind kKind = ExprKind::Int;
  IntLit(SourceRange r, int64_t v) : Expr(kKind, r), value(v) {}
  int64_t value;
};
struct FloatLit : Expr {
  static constexpr ExprKind kKind = ExprKind::Float;
  FloatLit(SourceRange r, double v) : Expr(kKind, r), value(v) {}
  double value;
};
struct BoolLit : Expr {
  static constexpr ExprKind kKind = ExprKind::Bool;
  BoolLit(SourceRange r, bool v) : Expr(kKind, r), value(v) {}
  bool value;
};
struct NameExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Name;
  NameExpr(SourceRange r, std::string n) : Expr(kKind, r), name(std::move(n)) {}
  std::string name;
};
struct CallArg {
  std::optional<Ident> name;  // `R = 16`: a generic parameter given by name
  ExprPtr value;
};
struct CallExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Call;
  CallExpr(SourceRange r, Ident c) : Expr(kKind, r), callee(std::move(c)) {}
  Ident callee;
  std::vector<CallArg> args;
};
struct TupleExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Tuple;
  explicit TupleExpr(SourceRange r) : Expr(kKind, r) {}
  std::vector<ExprPtr> elems;
};
// One dimension of an index: `i` selects one element (the dimension goes away),
// `start : +length` selects `length` elements.
struct Slice {
  ExprPtr start;
  ExprPtr length;  // null for a single index
  SourceRange range;
};
struct IndexExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Index;
  IndexExpr(SourceRange r, ExprPtr b) : Expr(kKind, r), base(std::move(b)) {}
  ExprPtr base;
  std::vector<Slice> slices;
};
struct FieldExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Field;
  FieldExpr(SourceRange r, ExprPtr b, Ident f) : Expr(kKind, r), base(std::move(b)), field(std::move(f)) {}
  ExprPtr base;
  Ident field;
};
struct LoadExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Load;
  LoadExpr(SourceRange r, ExprPtr s) : Expr(kKind, r), source(std::move(s)) {}
  ExprPtr source;
};
struct CastExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Cast;
  CastExpr(SourceRange r, ExprPtr v, Ident t) : Expr(kKind, r), value(std::move(v)), dtype(std::move(t)) {}
  ExprPtr value;
  Ident dtype;
};
struct UnaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Unary;
  UnaryExpr(SourceRange r, UnaryOp o, ExprPtr v, SourceRange opR)
      : Expr(kKind, r), op(o), operand(std::move(v)), opRange(opR) {}
  UnaryOp op;
  ExprPtr operand;
  SourceRange opRange;
};
struct BinaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinaryExpr(SourceRange r, BinaryOp o, ExprPtr a, ExprPtr b, SourceRange opR)
      : Expr(kKind, r), op(o), lhs(std::move(a)), rhs(std::move(b)), opRange(opR) {}
  BinaryOp op;
  ExprPtr lhs, rhs;
  SourceRange opRange;
};

// ---- Types -------------------------------------------------------------------------------------

struct Layout {
  Ident name;  // row_major, col_major, tiled, interleave, padded, swizzle
  std::vector<ExprPtr> args;
  SourceRange range;
};

// `bf16[N, K] tiled(16, K)`, `i32`, or a group's name.
struct TypeRef {
  Ident name;
  bool hasShape = false;  // `f32[]` is not valid syntax, so hasShape implies dims non-empty
  std::vector<ExprPtr> dims;
  std::optional<Layout> layout;
  SourceRange range;
};

struct Annotation {
  Ident name;  // after, cluster, wait
  std::vector<ExprPtr> args;
  SourceRange range;
};

// ---- Statements --------------------------------------------------------------------------------

enum class StmtKind { Let, Var, Const, Assign, Store, For, If, Return, Sync, Assert, Expr };
enum class AssignOp { Set, Add, Sub, Mul, Div };
const char* spelling(AssignOp op);

struct Block {
  std::vector<StmtPtr> stmts;
  SourceRange range;
};

struct Stmt {
  Stmt(StmtKind kind, SourceRange range) : kind(kind), range(range) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  SourceRange range;
};

template <typename T>
T* as(Stmt* s) {
  return s && s->kind == T::kKind ? static_cast<T*>(s) : nullptr;
}
template <typename T>
const T* as(const Stmt* s) {
  return s && s->kind == T::kKind ? static_cast<const T*>(s) : nullptr;
}

struct LetStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Let;
  explicit LetStmt(SourceRange r) : Stmt(kKind, r) {}
  std::vector<Annotation> annotations;
  std::vector<Ident> names;  // more than one for `let (a, b) = ...`
  bool tuplePattern = false;
  std::optional<TypeRef> type;
  ExprPtr value;
};
struct VarStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Var;
  explicit VarStmt(SourceRange r) : Stmt(kKind, r) {}
  Ident name;
  TypeRef type;
  ExprPtr init;  // may be null
};
struct ConstStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Const;
  explicit ConstStmt(SourceRange r) : Stmt(kKind, r) {}
  Ident name;
  std::optional<TypeRef> type;
  ExprPtr value;
};
struct AssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assign;
  explicit AssignStmt(SourceRange r) : Stmt(kKind, r) {}
  ExprPtr target;
  AssignOp op = AssignOp::Set;
  SourceRange opRange;
  ExprPtr value;
};
struct StoreStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Store;
  explicit StoreStmt(SourceRange r) : Stmt(kKind, r) {}
  ExprPtr target;
  ExprPtr value;
};
struct ForStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::For;
  explicit ForStmt(SourceRange r) : Stmt(kKind, r) {}
  Ident var;
  ExprPtr lo, hi, step;  // step may be null (1)
  Block body;
};
struct IfStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::If;
  explicit IfStmt(SourceRange r) : Stmt(kKind, r) {}
  ExprPtr cond;
  Block then;
  std::optional<Block> otherwise;  // `else if` becomes a block holding one IfStmt
};
struct ReturnStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Return;
  explicit ReturnStmt(SourceRange r) : Stmt(kKind, r) {}
  ExprPtr value;  // may be null
};
struct SyncStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Sync;
  explicit SyncStmt(SourceRange r) : Stmt(kKind, r) {}
  Ident scope;  // `sync grid;`
};
struct AssertStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assert;
  explicit AssertStmt(SourceRange r) : Stmt(kKind, r) {}
  ExprPtr cond;
  std::optional<std::string> message;
};
struct ExprStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Expr;
  explicit ExprStmt(SourceRange r) : Stmt(kKind, r) {}
  std::vector<Annotation> annotations;
  ExprPtr expr;
};

// ---- Declarations ------------------------------------------------------------------------------

enum class DeclKind { Import, Const, Config, Weight, State, Group, Op, Fn, Step, Assert };

struct Decl {
  Decl(DeclKind kind, SourceRange range) : kind(kind), range(range) {}
  virtual ~Decl() = default;
  DeclKind kind;
  SourceRange range;
  Ident name;       // empty for imports and static assertions
  std::string doc;  // the `///` lines just above, without the slashes
};

template <typename T>
T* as(Decl* d) {
  return d && d->kind == T::kKind ? static_cast<T*>(d) : nullptr;
}
template <typename T>
const T* as(const Decl* d) {
  return d && d->kind == T::kKind ? static_cast<const T*>(d) : nullptr;
}

struct ImportDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::Import;
  explicit ImportDecl(SourceRange r) : Decl(kKind, r) {}
  std::vector<Ident> path;  // std.nn -> {std, nn}
  std::string dotted() const;
};
struct ConstDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::Const;
  explicit ConstDecl(SourceRange r) : Decl(kKind, r) {}
  std::optional<TypeRef> type;
  ExprPtr value;
};
struct ConfigField {
  Ident name;
  ExprPtr value;
  SourceRange range;
  std::string doc;
};
struct ConfigDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::Config;
  explicit ConfigDecl(SourceRange r) : Decl(kKind, r) {}
  std::optional<Ident> base;
  std::vector<ConfigField> fields;
};
struct WeightDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::Weight;
  explicit WeightDecl(SourceRange r) : Decl(kKind, r) {}
  TypeRef type;
  struct Source {
    std::string name;  // the safetensors name template, unquoted
    SourceRange range;
  };
  std::vector<Source> sources;
  bool sourceList = false;  // written as [..]
};
struct StateDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::State;
  explicit StateDecl(SourceRange r) : Decl(kKind, r) {}
  TypeRef type;
};
struct GroupDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::Group;
  explicit GroupDecl(SourceRange r) : Decl(kKind, r) {}
  Ident var;  // the index variable, usable in name templates as {var}
  ExprPtr lo, hi;
  std::vector<std::unique_ptr<Decl>> members;  // WeightDecl and StateDecl
};
struct GenericParam {
  Ident name;
  std::optional<Ident> type;  // int (default), float, bool
  ExprPtr defaultValue;
  SourceRange range;
};
struct Param {
  Ident name;
  bool inout = false;
  TypeRef type;
  SourceRange range;
};
struct Result {
  std::optional<Ident> name;
  TypeRef type;
  SourceRange range;
};
struct TaskDim {
  Ident var;
  ExprPtr extent;
  SourceRange range;
};
struct OpDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::Op;
  explicit OpDecl(SourceRange r) : Decl(kKind, r) {}
  std::vector<Annotation> annotations;
  std::vector<GenericParam> generics;
  std::vector<Param> params;
  std::vector<Result> results;  // every result of an op is named
  std::vector<TaskDim> tasks;
  Block body;
};
struct FnDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::Fn;
  explicit FnDecl(SourceRange r) : Decl(kKind, r) {}
  std::vector<GenericParam> generics;
  std::vector<Param> params;
  std::vector<Result> results;
  bool tupleResult = false;  // written as `-> (a, b)`
  Block body;
};
struct StepDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::Step;
  explicit StepDecl(SourceRange r) : Decl(kKind, r) {}
  std::vector<Param> params;
  std::vector<Result> results;
  bool tupleResult = false;
  Block body;
};
struct AssertDecl : Decl {
  static constexpr DeclKind kKind = DeclKind::Assert;
  explicit AssertDecl(SourceRange r) : Decl(kKind, r) {}
  ExprPtr cond;
  std::optional<std::string> message;
};

// One parsed .mk file.
struct Module {
  FileId file = kNoFile;
  std::vector<std::unique_ptr<Decl>> decls;
};

}  // namespace mk::ast
