// The checker's diagnostics, grouped as their codes are (support/diagnostic_kinds.def).
#pragma once

#include "support/diagnostics.h"

namespace mk::check {

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
MK_DIAGNOSTIC(ContractedDims, Error, "'{0}' of {1} and {2}: the contracted dimensions {3} and {4} differ", std::string, std::string, std::string, std::string, std::string);
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

}  // namespace mk::check
