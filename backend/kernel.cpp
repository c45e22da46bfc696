// The megakernel skeleton: one persistent kernel entry per step of the program. Each block (one per SM) walks
// its compile-time task list: acquire-wait the task's counters, run the op body, barrier,
// release-increment the counters it signals. With weight streaming, one extra warp per block
// (the loader) walks the same list ahead of the compute threads and copies each task's weight
// tiles into a shared-memory ring, never waiting on counters: weights do not depend on the step.
// A target without async copies (Target::asyncWeightRing) has no ring: weights are read directly.
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/raw_ostream.h>

#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "backend/backend.h"
#include "backend/codegen.h"
#include "backend/emit.h"

namespace mk::backend {

MK_DIAGNOSTIC(BackendUnknownArch, Error, "unknown code architecture '{0}'; known: {1}", std::string, std::string);
MK_DIAGNOSTIC(BackendUnsupported, Error, "cannot generate code for '{0}': {1}", std::string, std::string);
MK_DIAGNOSTIC(BackendMmaScalar, Warning,
              "this {0} of {1} operands runs element by element, not on the matrix instruction: {2}",
              std::string, std::string, std::string);
MK_DIAGNOSTIC(BackendSmem, Error,
              "'{0}' needs {1} bytes of shared memory for its tiles; a block of target '{2}' has {3}", std::string,
              int64_t, std::string, int64_t);
MK_DIAGNOSTIC(BackendTarget, Error, "target '{0}' cannot run this kernel: {1}", std::string, std::string);

namespace {

using llvm::Value;
using V = llvm::Value*;

// A task record: taskId, node, variant (the node's lowered form), 0, index[4], waitBegin, waitEnd,
// signalBegin, signalEnd. 48 bytes: the variant comes with the record (no dependent lookup before
// the dispatch) and the record is three 16-byte loads.
constexpr int kTaskWords = 12;
constexpr int kMaxGridRank = 4;
constexpr int64_t kMaxSlotBytes = 64 * 1024;
enum Arena : uint64_t { Weights = 0, State = 1, Activations = 2 };

struct Placement {
  uint64_t arena = 0;
  int64_t offset = 0;
};

class KernelBuilder {
 public:
  KernelBuilder(const ir::Megakernel& mk, std::string entryName, const Options& opt, const Target& target,
                DiagnosticEngine& diags)
      : mk_(mk), entryName_(std::move(entryName)), opt_(opt), target_(target), diags_(diags) {}

  struct Built {
    std::unique_ptr<llvm::LLVMContext> ctx;
    std::unique_ptr<llvm::Module> mod;
    LaunchInfo launch;
    bool ringRejected = false;
  };

  // The module of this step's entry and how to launch it.
  std::optional<Built> run() {
    const ir::TargetDesc& td = mk_.target;
    if (td.warpSize != target_.warpSize()) {
      diags_.emit(SourceRange{}, BackendTarget, td.name, "its warp size " + std::to_string(td.warpSize) +
                  " differs from the " + std::to_string(target_.warpSize()) + " lanes of " + opt_.arch);
      return std::nullopt;
    }
    const int lanes = target_.warpSize();
    if (td.threadsPerBlock % lanes != 0 || td.threadsPerBlock < 64 || td.threadsPerBlock > 1024) {
      diags_.emit(SourceRange{}, BackendTarget, td.name, "blocks of " + std::to_string(td.threadsPerBlock) +
                  " threads; the kernel needs a multiple of " + std::to_string(lanes) + " between 64 and 1024");
      return std::nullopt;
    }
    if (td.smemPerBlock > target_.maxSharedPerBlock()) {
      diags_.emit(SourceRange{}, BackendTarget, td.name, std::to_string(td.smemPerBlock) +
                  " bytes of shared memory per block; " + opt_.arch + " has at most " +
                  std::to_string(target_.maxSharedPerBlock()));
      return std::nullopt;
    }
    if (opt_.warpgroupMma.value_or(false) && !target_.arch().warpgroupMma) {
      diags_.emit(SourceRange{}, BackendTarget, td.name, "--mma=warpgroup needs sm_90a's wgmma, which " + opt_.arch + " lacks");
      return std::nullopt;
    }
    if (!placeTensors() || !makeVariants()) return std::nullopt;
    auto first = build(/*ring=*/target_.asyncWeightRing());
    if (!first) return std::nullopt;
    if (first->ringRejected) {
      first.reset();  // its module before its context: assigning over it would free them the other way round
      first = build(false);
      if (!first) return std::nullopt;
    }
    return first;
  }

 private:
  bool placeTensors() {
    place_.assign(mk_.graph.tensors.size(), {});
    auto put = [&](const std::vector<ir::Buffer>& bufs, uint64_t arena) {
      for (const auto& b : bufs)
        if (b.tensor >= 0 && size_t(b.tensor) < place_.size()) place_[size_t(b.tensor)] = {arena, b.offset};
    };
    put(mk_.memory.weights, Weights);
    put(mk_.memory.state, State);
    put(mk_.memory.activations, Activations);
    return true;
  }

  bool makeVariants() {
    const ir::Graph& g = mk_.graph;
    std::map<std::string, int> byKey;
    for (const ir::Node& n : g.nodes) {  // nodeVariant_ follows graph positions, as Task::node does
      if (!n.func) {
        nodeVariant_.push_back(-1);
        continue;
      }
      const ir::TileFunc& f = *n.func;
      if (f.taskGrid.size() > kMaxGridRank) {
        diags_.emit(f.range, BackendUnsupported, f.name,
                    "a task grid of rank " + std::to_string(f.taskGrid.size()) + " (at most 4)");
        return false;
      }
      Variant v;
      v.func = &f;
      v.key = f.name;
      for (size_t p = 0; p < f.params.size(); ++p) {
        const int tid = p < n.tensors.size() ? n.tensors[p] : -1;
        const ir::Tensor* t = tid >= 0 ? &g.tensors[size_t(tid)] : nullptr;
        v.tensors.push_back(t);
        ir::ScalarArg::Kind kind = p < n.scalars.size() ? n.scalars[p].kind : ir::ScalarArg::Const;
        v.scalarKinds.push_back(kind);
        DType sd = DType::I32;
        if (!t && kind == ir::ScalarArg::Tensor && p < n.scalars.size()) sd = g.tensors.at(size_t(n.scalars[p].index)).dtype;
        v.scalarTensorDtypes.push_back(sd);
        if (t) v.key += "|" + t->layout.str() + (t->kind == ir::Tensor::Weight ? ":w" : ":a");
        else v.key += "|s" + std::to_string(int(kind)) + dtypeName(sd);
      }
      auto [it, fresh] = byKey.emplace(v.key, int(variants_.size()));
      if (fresh) {
        planStreaming(v, kMaxSlotBytes);
        variants_.push_back(std::move(v));
      }
      nodeVariant_.push_back(it->second);
    }
    return true;
  }

  // --- Tables -----------------------------------------------------------------------------------
  // A read-only table in global memory (u32 or u64 words).
  template <typename Word>
  llvm::GlobalVariable* table(llvm::Module& m, const std::string& name, std::vector<Word> words) {
    if (words.empty()) words.push_back(0);
    auto* init = llvm::ConstantDataArray::get(m.getContext(), words);
    auto* gv = new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::InternalLinkage, init, name, nullptr,
                                        llvm::GlobalValue::NotThreadLocal, target_.globalSpace());
    gv->setAlignment(llvm::Align(16));
    return gv;
  }

  // How one build shapes the block and the ring (planBlock).
  struct BlockShape {
    bool ring = false;
    int needSlots = 0;      // the most ring slots one statement holds
    int64_t slotBytes = 0;
    int blockSize = 0;
    int computeThreads = 0;
    // The fewest slots a ring may have (sizeRing), and the shared memory they take at most after
    // the tiles (the ring starts 128-byte aligned).
    int leastSlots() const { return std::max(2, needSlots); }
    int64_t leastRingBytes() const { return ring ? int64_t(leastSlots()) * slotBytes + 128 : 0; }
  };

  // The step's read-only tables in global memory (emitTables).
  struct Tables {
    llvm::GlobalVariable *queueStart = nullptr, *tasks = nullptr, *waits = nullptr, *signals = nullptr,
                         *nodeArgs = nullptr;
    size_t maxParams = 1;  // words per node in nodeArgs
    int64_t records = 0;   // task records, one per queue entry
  };

  // The kernel entry and its parameters, in abi::kKernelParams' order (declareEntry).
  struct Entry {
    llvm::Function* fn = nullptr;
    std::vector<std::string> paramNames;
    V weights = nullptr, state = nullptr, acts = nullptr, sync = nullptr, error = nullptr, inputs = nullptr,
      epoch = nullptr, timeout = nullptr;
    V trace = nullptr;  // traced kernels only
  };

  // What the entry's code is emitted with, from its prologue on (one build).
  struct Code {
    Code(const BlockShape& shape, const Tables& tables, const Entry& entry, Builder& b, llvm::GlobalVariable* smem)
        : shape(shape), tables(tables), entry(entry), b(b), smem(smem) {}
    const BlockShape& shape;
    const Tables& tables;
    const Entry& entry;
    Builder& b;
    llvm::GlobalVariable* smem = nullptr;
    llvm::BasicBlock* exit = nullptr;
    V tid = nullptr, sm = nullptr, qBegin = nullptr, qEnd = nullptr;
    llvm::AllocaInst* seqSlot = nullptr;
    llvm::AllocaInst* loaderWords[3] = {};  // TraceLoaderWait, TraceLoaderFirst, TraceLoaderLast
    std::vector<llvm::AllocaInst*> scalarSlots;
    TaskEnv env;
    int64_t tilePeak = 0;
    const Variant* widest = nullptr;  // the op with the largest tile area

    llvm::BasicBlock* block(const char* n) { return llvm::BasicBlock::Create(b.getContext(), n, entry.fn); }
    void when(V cond, const std::function<void()>& then) { emitIf(b, entry.fn, cond, then); }
    void loop(V lo, V hi, const std::function<void(V)>& body) { emitLoop(b, entry.fn, lo, hi, b.getInt32(1), body); }
    V u32At(llvm::GlobalVariable* g, V i) { return b.CreateLoad(b.getInt32Ty(), b.CreateGEP(b.getInt32Ty(), g, i)); }
    V smemAt(V off) { return b.CreateGEP(b.getInt8Ty(), smem, off); }
  };

  // One module for the step: the entry walking the task queues, the tables it reads, the ring's
  // size. `ringRejected` when the ring was asked for but too few slots fit beside the tiles.
  std::optional<Built> build(bool ring) {
    Built out = newModule();
    llvm::Module& m = *out.mod;
    const auto shape = planBlock(ring);
    if (!shape) return std::nullopt;
    const Tables tables = emitTables(m);
    // Where the ring starts and how many slots it has: known only once every task's tile needs
    // are, so the code reads them from a constant that is filled in at the end (and folded).
    auto* i32 = llvm::Type::getInt32Ty(*out.ctx);
    auto* ringTy = llvm::ArrayType::get(i32, 2);
    auto* gRing = new llvm::GlobalVariable(m, ringTy, false, llvm::GlobalValue::InternalLinkage,
                                           llvm::ConstantAggregateZero::get(ringTy), "mk_ring", nullptr,
                                           llvm::GlobalValue::NotThreadLocal, target_.globalSpace());
    auto* smemTy = llvm::ArrayType::get(llvm::Type::getInt8Ty(*out.ctx), 0);
    auto* gSmem = new llvm::GlobalVariable(m, smemTy, false, llvm::GlobalValue::ExternalLinkage, nullptr, "mk_smem",
                                           nullptr, llvm::GlobalValue::NotThreadLocal, target_.sharedSpace());
    // The warpgroup matrix instruction's swizzled operands start 1024-byte aligned (tile/mma.cpp).
    gSmem->setAlignment(llvm::Align(warpgroupMma() ? 1024 : 128));
    const Entry entry = declareEntry(m, shape->blockSize);

    auto* entryBlock = llvm::BasicBlock::Create(*out.ctx, "entry", entry.fn);
    Builder b(entryBlock);
    Code k(*shape, tables, entry, b, gSmem);
    emitPrologue(k, ringTy, gRing);
    try {
      auto* computeBlock = k.block("compute");
      auto* loaderBlock = shape->ring ? k.block("loader") : nullptr;
      if (shape->ring) b.CreateCondBr(b.CreateICmpULT(k.tid, b.getInt32(uint32_t(shape->computeThreads))), computeBlock, loaderBlock);
      else b.CreateBr(computeBlock);
      b.SetInsertPoint(computeBlock);
      emitComputeThreads(k);
      if (shape->ring) {
        b.SetInsertPoint(loaderBlock);
        emitLoaderWarp(k);
      }
    } catch (const Unsupported& u) {
      SourceRange where;
      for (const Variant& v : variants_)
        if (v.func->name == u.op) where = v.func->range;
      diags_.emit(where, BackendUnsupported, u.op, u.what);
      return std::nullopt;
    }
    if (!sizeRing(k, gRing, out)) return std::nullopt;
    return out;
  }

  // An empty module for the target, in a context of its own.
  Built newModule() {
    Built out;
    out.ctx = std::make_unique<llvm::LLVMContext>();
    // An unroll count LLVM cannot apply (a loop whose trip count is only known at run time) is
    // the hint working as a cap, not a problem to tell the user about.
    out.ctx->setDiagnosticHandlerCallBack([](const llvm::DiagnosticInfo* d, void*) {
      if (d->getSeverity() == llvm::DS_Error) {
        std::string text;
        llvm::raw_string_ostream os(text);
        llvm::DiagnosticPrinterRawOStream printer(os);
        d->print(printer);
        llvm::report_fatal_error(llvm::StringRef("LLVM: " + text), false);
      }
    });
    out.mod = std::make_unique<llvm::Module>("mkdsl", *out.ctx);
    prepareModule(*out.mod, target_);
    return out;
  }

  // Whether a block has a product on the matrix instruction (onMatrixInstruction).
  bool hasMatrixProduct(const ir::Block& block) const {
    std::function<bool(const ir::Expr*)> inExpr = [&](const ir::Expr* e) {
      if (!e) return false;
      if (onMatrixInstruction(target_, *e)) return true;
      for (const auto& o : e->operands)
        if (inExpr(o.get())) return true;
      for (const auto& r : e->region)
        if (inExpr(r.start.get())) return true;
      return false;
    };
    for (const auto& st : block) {
      if (inExpr(st->value.get()) || inExpr(st->lo.get()) || inExpr(st->hi.get())) return true;
      if (hasMatrixProduct(st->body) || hasMatrixProduct(st->otherwise)) return true;
    }
    return false;
  }

  // Whether this build streams weights through the ring, the slots' size, and the block's
  // threads. Without the ring no load is streamed (the variants forget their streamed loads).
  std::optional<BlockShape> planBlock(bool ring) {
    const ir::TargetDesc& td = mk_.target;
    BlockShape s;
    bool streams = false;
    bool products = false;
    for (const Variant& v : variants_) {
      streams |= !v.streamed.empty();
      products |= v.func && hasMatrixProduct(v.func->body);
      s.needSlots = std::max(s.needSlots, v.maxStreamedPerStatement);
      s.slotBytes = std::max(s.slotBytes, v.largestStreamedBytes);
    }
    // Where the loader warp goes on top of the compute threads, a step with products on the
    // matrix instruction (a prefill) goes without the ring: their operands are copied by the
    // compute threads, several K chunks ahead, and the loader warp would cost every thread a
    // quarter of its registers (96 instead of 128 on sm_90a), for the few loads that stream
    // (bench/results/2026-12-06-attn: the 1B's prefill 4.4 ms without it, 5.1 with it).
    s.ring = ring && streams && !(products && target_.loaderWarpOnTop());
    // Without the ring no load is streamed: the compute threads read every weight themselves.
    if (!s.ring)
      for (Variant& v : variants_) {
        v.streamed.clear();
        v.contiguous.clear();
        v.largestStreamedBytes = 0;
        v.maxStreamedPerStatement = 0;
      }
    s.slotBytes = (s.slotBytes + 127) / 128 * 128;
    // Where the loader warp comes from (Target::loaderWarpOnTop): on top of the target's
    // threads, which then all compute (a power of two like the tiles' sizes gives every compute
    // thread the same share of a tile and a fixed column of it), or out of them.
    const bool onTop = s.ring && target_.loaderWarpOnTop();
    s.blockSize = td.threadsPerBlock + (onTop ? 32 : 0);
    s.computeThreads = s.blockSize - (s.ring ? 32 : 0);
    if (s.blockSize > 1024) {
      diags_.emit(SourceRange{}, BackendTarget, td.name, "blocks of " + std::to_string(td.threadsPerBlock) +
                  " compute threads and a loader warp: more than 1024 threads");
      return std::nullopt;
    }
    return s;
  }

  // The step's tables: per-SM queues of task records, wait and signal lists, node arguments.
  // A wait is a (counter, count per epoch) pair: the poll needs no further lookup.
  Tables emitTables(llvm::Module& m) {
    const ir::TargetDesc& td = mk_.target;
    std::vector<uint32_t> queueStart{0}, tasks, waits, signals;
    for (const auto& q : mk_.queues) {
      for (int id : q) {
        const ir::Task& t = mk_.tasks.at(size_t(id));
        tasks.push_back(uint32_t(t.id));
        tasks.push_back(uint32_t(t.node));
        tasks.push_back(uint32_t(nodeVariant_.at(size_t(t.node))));
        tasks.push_back(0);
        for (int d = 0; d < kMaxGridRank; ++d) tasks.push_back(d < int(t.index.size()) ? uint32_t(t.index[size_t(d)]) : 0);
        tasks.push_back(uint32_t(waits.size() / 2));
        for (int w : t.waits) {
          waits.push_back(uint32_t(w));
          waits.push_back(uint32_t(mk_.counters.at(size_t(w)).expected()));
        }
        tasks.push_back(uint32_t(waits.size() / 2));
        tasks.push_back(uint32_t(signals.size()));
        if (!(opt_.dropSignalOfTask && *opt_.dropSignalOfTask == t.id))
          for (int s : t.signals) signals.push_back(uint32_t(s));
        tasks.push_back(uint32_t(signals.size()));
      }
      queueStart.push_back(uint32_t(tasks.size() / kTaskWords));
    }
    while (queueStart.size() < size_t(td.sms) + 1) queueStart.push_back(queueStart.back());
    Tables out;
    for (const ir::Node& n : mk_.graph.nodes) out.maxParams = std::max(out.maxParams, n.tensors.size());
    const size_t maxParams = out.maxParams;
    std::vector<uint64_t> nodeArgs;
    for (size_t ni = 0; ni < mk_.graph.nodes.size(); ++ni) {
      const ir::Node& n = mk_.graph.nodes[ni];
      for (size_t p = 0; p < maxParams; ++p) {
        uint64_t w = 0;
        if (p < n.tensors.size() && n.tensors[p] >= 0) {
          const Placement& pl = place_[size_t(n.tensors[p])];
          w = pl.arena << 62 | uint64_t(pl.offset);
        } else if (p < n.scalars.size()) {
          const ir::ScalarArg& a = n.scalars[p];
          const ir::Param* par = n.func && p < n.func->params.size() ? &n.func->params[p] : nullptr;
          if (a.kind == ir::ScalarArg::Const) {
            if (par && isFloat(par->dtype)) {
              float f = float(a.value);
              uint32_t bits;
              std::memcpy(&bits, &f, 4);
              w = bits;
            } else {
              w = uint32_t(int32_t(a.value));
            }
          } else if (a.kind == ir::ScalarArg::Input) {
            w = uint64_t(a.index);
          } else {
            const Placement& pl = place_.at(size_t(a.index));
            w = pl.arena << 62 | uint64_t(pl.offset);
          }
        }
        nodeArgs.push_back(w);
      }
    }
    out.queueStart = table(m, "mk_queue_start", queueStart);
    out.tasks = table(m, "mk_tasks", tasks);
    out.waits = table(m, "mk_waits", waits);
    out.signals = table(m, "mk_signals", signals);
    out.nodeArgs = table(m, "mk_node_args", nodeArgs);
    out.records = int64_t(tasks.size() / kTaskWords);
    return out;
  }

  // The entry (entryName_) with the kernel's parameters (abi/kernel_params.h lists them).
  Entry declareEntry(llvm::Module& m, int blockSize) {
    llvm::LLVMContext& c = m.getContext();
    auto* i32 = llvm::Type::getInt32Ty(c);
    Entry e;
    auto* gptr = llvm::PointerType::get(c, target_.globalSpace());
    std::vector<llvm::Type*> params;
    const std::vector<std::string> paramNames = abi::kernelParamNames(opt_.trace);
    for (size_t i = 0; i < paramNames.size(); ++i)
      switch (abi::kKernelParams[i].kind) {
        case abi::ParamKind::GlobalPointer: params.push_back(gptr); break;
        case abi::ParamKind::U32: params.push_back(i32); break;
        case abi::ParamKind::U64: params.push_back(llvm::Type::getInt64Ty(c)); break;
      }
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(c), params, false);
    auto* fn = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, entryName_, m);
    for (unsigned i = 0; i < params.size(); ++i) {
      fn->getArg(i)->setName(paramNames[i]);
      if (abi::kKernelParams[i].kind == abi::ParamKind::GlobalPointer) fn->addParamAttr(i, llvm::Attribute::NoAlias);
    }
    V argTrace = opt_.trace ? fn->getArg(abi::ParamTrace) : nullptr;
    target_.markKernel(fn, blockSize);
    V argWeights = fn->getArg(abi::ParamWeights), argState = fn->getArg(abi::ParamState),
      argActs = fn->getArg(abi::ParamActivations), argSync = fn->getArg(abi::ParamSync), argError = fn->getArg(abi::ParamError),
      argInputs = fn->getArg(abi::ParamInputs), argEpoch = fn->getArg(abi::ParamEpoch),
      argTimeout = fn->getArg(abi::ParamTimeout);
    e.fn = fn;
    e.paramNames = paramNames;
    e.weights = argWeights, e.state = argState, e.acts = argActs, e.sync = argSync, e.error = argError,
    e.inputs = argInputs, e.epoch = argEpoch, e.timeout = argTimeout, e.trace = argTrace;
    return e;
  }

  // The entry block: the exit, the allocas every task reuses, thread 0's set-up of the abort flag
  // and the ring's barriers, the block-wide barrier after it, this SM's queue, and the TaskEnv.
  void emitPrologue(Code& k, llvm::ArrayType* ringTy, llvm::GlobalVariable* gRing) {
    Builder& b = k.b;
    auto* i32 = b.getInt32Ty();
    const int T = k.shape.computeThreads;
    k.exit = k.block("exit");
    {
      Builder eb(k.exit);
      eb.CreateRetVoid();
    }
    k.seqSlot = b.CreateAlloca(i32, nullptr, "ring.seq");
    b.CreateStore(b.getInt32(0), k.seqSlot);
    if (opt_.trace)
      for (auto*& a : k.loaderWords) a = b.CreateAlloca(b.getInt64Ty(), nullptr, "trace.loader");
    k.tid = target_.threadId(b);
    k.sm = target_.blockId(b);
    V ringBase = b.CreateLoad(i32, b.CreateConstGEP2_32(ringTy, gRing, 0, 0), "ring.base");
    V ringSlots = b.CreateLoad(i32, b.CreateConstGEP2_32(ringTy, gRing, 0, 1), "ring.slots");

    // Thread 0 clears the abort flag and sets up the ring's barriers; then everyone starts.
    const int fullCount = target_.bulkCopy() ? 1 : 32;
    k.when(b.CreateICmpEQ(k.tid, b.getInt32(0)), [&] {
      b.CreateStore(b.getInt32(0), k.smemAt(b.getInt32(SmemLayout::kAbortFlag)));
      if (!k.shape.ring) return;
      k.loop(b.getInt32(0), ringSlots, [&](V s) {
        V off = b.CreateMul(s, b.getInt32(8));
        target_.mbarrierInit(b, k.smemAt(b.CreateAdd(b.getInt32(SmemLayout::kBarriers), off)), fullCount);
        // Every compute warp frees a slot (tile/ring.cpp, releaseSlots).
        target_.mbarrierInit(b, k.smemAt(b.CreateAdd(b.getInt32(SmemLayout::kBarriers + SmemLayout::kMaxSlots * 8), off)), T / 32);
      });
      target_.mbarrierInitFence(b);
    });
    target_.barrier(b, 0, k.shape.blockSize);
    k.qBegin = k.u32At(k.tables.queueStart, k.sm);
    k.qEnd = k.u32At(k.tables.queueStart, b.CreateAdd(k.sm, b.getInt32(1)));

    TaskEnv& env = k.env;
    env.target = &target_;
    env.b = &b;
    env.fn = k.entry.fn;
    env.computeThreads = T;
    env.smem = k.smem;
    env.ringBase = ringBase;
    env.ringSlots = ringSlots;
    env.slotBytes = k.shape.slotBytes;
    env.smemPerBlock = mk_.target.smemPerBlock;
    env.ringNeedBytes = k.shape.leastRingBytes();
    env.seq = k.seqSlot;
    env.ablateCopies = opt_.ablation == Ablation::WeightCopies;
    env.ablateMath = opt_.ablation == Ablation::WeightMath;
    env.l2AheadTiles = mk_.target.l2AheadTiles;
    env.groupMmaChains = mk_.target.groupMmaChains;
    env.warpgroupMma = warpgroupMma();
    env.error = k.entry.error;
    env.sm = k.sm;
    env.epoch = k.entry.epoch;
    env.timeout = k.entry.timeout;
    env.exit = k.exit;
    env.scalarSlots = &k.scalarSlots;
    env.scalarMma = [this](const ir::Expr& e, const std::string& why) {
      if (!scalarMmaReported_.insert({e.range.file, e.range.begin, e.range.end}).second) return;
      diags_.emit(e.range, BackendMmaScalar, e.kind == ir::ExprKind::MmaNt ? "mma_nt" : "mma",
                  std::string(dtypeName(e.operands.at(0)->dtype)), why);
    };
  }

  // The arguments of the task's node, decoded from the node table.
  TaskArgs decodeTaskArgs(Code& k, const Variant& v, V node, V rec) {
    Builder& b = k.b;
    auto* i32 = b.getInt32Ty();
    const Entry& en = k.entry;
    TaskArgs a;
    V row = b.CreateMul(node, b.getInt32(uint32_t(k.tables.maxParams)));
    for (size_t p = 0; p < v.func->params.size(); ++p) {
      V word = b.CreateLoad(b.getInt64Ty(), b.CreateGEP(b.getInt64Ty(), k.tables.nodeArgs, b.CreateAdd(row, b.getInt32(uint32_t(p)))));
      auto arenaPtr = [&] {
        V arena = b.CreateLShr(word, b.getInt64(62));
        V off = b.CreateAnd(word, b.getInt64((uint64_t(1) << 62) - 1));
        V base = b.CreateSelect(b.CreateICmpEQ(arena, b.getInt64(Weights)), en.weights,
                                b.CreateSelect(b.CreateICmpEQ(arena, b.getInt64(State)), en.state, en.acts));
        return b.CreateGEP(b.getInt8Ty(), base, off);
      };
      const ir::Param& par = v.func->params[p];
      if (v.tensors[p]) {
        a.params.push_back(arenaPtr());
        continue;
      }
      if (v.scalarKinds[p] == ir::ScalarArg::Tensor) {
        // A rank-0 tensor's value: an op of this step writes it, so it is read after the task's
        // waits (loadTensorScalars), not here, where the loads are issued before them.
        a.tensorScalars.emplace_back(p, arenaPtr());
        a.params.push_back(nullptr);
        continue;
      }
      // Constants and step inputs arrive as 32 bits (a float's bits for float parameters).
      V x = v.scalarKinds[p] == ir::ScalarArg::Const ? b.CreateTrunc(word, i32)
                                                     : b.CreateLoad(i32, b.CreateGEP(i32, en.inputs, b.CreateTrunc(word, i32)));
      a.params.push_back(isFloat(par.dtype) ? b.CreateBitCast(x, b.getFloatTy()) : x);
    }
    for (size_t d = 0; d < v.func->taskGrid.size(); ++d)
      a.index.push_back(b.CreateLoad(i32, b.CreateGEP(i32, rec, b.getInt32(uint32_t(4 + d)))));
    return a;
  }

  // The rank-0 tensors' values among the task's scalar parameters, converted to the parameters'
  // kinds of number.
  void loadTensorScalars(Code& k, const Variant& v, TaskArgs& a) {
    Builder& b = k.b;
    for (auto& [p, ptr] : a.tensorScalars) {
      const DType sd = v.scalarTensorDtypes[p];
      const ir::Param& par = v.func->params[p];
      V x = loadStorage(b, sd, ptr);
      if (isFloat(sd) && !isFloat(par.dtype)) x = target_.floatToInt(b, x);
      else if (!isFloat(sd) && isFloat(par.dtype)) x = b.CreateSIToFP(x, b.getFloatTy());
      a.params[p] = x;
    }
    a.tensorScalars.clear();
  }

  // Dispatch: one case per variant, its code emitted once. `ready` (compute side) emits the
  // task's waits: after the arguments are decoded, so their loads are in flight while thread 0
  // polls, and nothing but the body is left between the last wait and the first load.
  void dispatch(Code& k, V node, V rec, Side side, const std::function<void()>& ready) {
    Builder& b = k.b;
    V variant = b.CreateLoad(b.getInt32Ty(), b.CreateGEP(b.getInt32Ty(), rec, b.getInt32(2)));
    auto* join = k.block("task.end");
    // A task without a body (a node with no lowered form) still waits before it signals.
    auto* none = ready ? k.block("task.none") : join;
    auto* sw = b.CreateSwitch(variant, none, unsigned(variants_.size()));
    if (ready) {
      b.SetInsertPoint(none);
      ready();
      b.CreateBr(join);
    }
    for (size_t i = 0; i < variants_.size(); ++i) {
      const Variant& v = variants_[i];
      if (side == Side::Loader && v.streamed.empty()) continue;
      auto* caseBlock = k.block("task.case");
      sw->addCase(b.getInt32(uint32_t(i)), caseBlock);
      b.SetInsertPoint(caseBlock);
      TaskArgs a = decodeTaskArgs(k, v, node, rec);
      V here = target_.threadIdHere(b);
      k.env.tid = side == Side::Loader ? b.CreateSub(here, b.getInt32(uint32_t(k.shape.computeThreads))) : here;
      if (ready) ready();
      loadTensorScalars(k, v, a);
      int64_t peak = 0;
      k.env.tilePeak = &peak;
      emitTask(k.env, v, a, side);
      if (peak > k.tilePeak) k.tilePeak = peak, k.widest = &v;
      b.CreateBr(join);
    }
    b.SetInsertPoint(join);
  }

  // The TraceWord record of queue entry i (traced kernels; else null).
  V traceRecordOf(Code& k, V i) {
    if (!k.entry.trace) return nullptr;
    Builder& b = k.b;
    return b.CreateGEP(b.getInt64Ty(), k.entry.trace, b.CreateMul(b.CreateZExt(i, b.getInt64Ty()), b.getInt64(abi::TraceWords)));
  }

  // The compute threads' walk of the SM's queue: per task, thread 0 waits for its counters, every
  // thread runs the body, and after the releasing barrier thread 0 signals.
  void emitComputeThreads(Code& k) {
    Builder& b = k.b;
    auto* i32 = b.getInt32Ty();
    const int T = k.shape.computeThreads;
    const Entry& en = k.entry;
    TaskEnv& env = k.env;
    V tid = k.tid;
    V abortPtr = k.smemAt(b.getInt32(SmemLayout::kAbortFlag));
    env.ringWaitNs = en.trace ? k.smemAt(b.getInt32(SmemLayout::kTraceRingWait)) : nullptr;
    k.loop(k.qBegin, k.qEnd, [&](V i) {
      V rec = b.CreateGEP(i32, k.tables.tasks, b.CreateMul(i, b.getInt32(kTaskWords)));
      // The next record is on this SM's path: start bringing it closer while this one runs.
      target_.prefetchLine(b, b.CreateGEP(i32, rec, b.getInt32(kTaskWords)));
      auto word = [&](int w) { return b.CreateLoad(i32, b.CreateGEP(i32, rec, b.getInt32(uint32_t(w)))); };
      env.taskId = word(0);
      V node = word(1);
      V waitBegin = word(8), waitEnd = word(9), sigBegin = word(10), sigEnd = word(11);
      // Traced: thread 0 stamps the entry's TraceWord record (it is the thread that waits and
      // signals, so its stamps bracket exactly those).
      env.traceRecord = traceRecordOf(k, i);
      auto stamp = [&](abi::TraceWord w, V value) {
        if (!en.trace) return;
        b.CreateStore(value, b.CreateGEP(b.getInt64Ty(), env.traceRecord, b.getInt64(w)));
      };
      auto stampNow = [&](abi::TraceWord w) {
        if (en.trace) k.when(b.CreateICmpEQ(tid, b.getInt32(0)), [&] { stamp(w, target_.globalTimerNs(b)); });
      };
      stampNow(abi::TraceStart);
      if (en.trace) k.when(b.CreateICmpEQ(tid, b.getInt32(0)), [&] { b.CreateStore(b.getInt64(0), env.ringWaitNs); });
      auto waits = [&] {
        k.when(b.CreateICmpEQ(tid, b.getInt32(0)), [&] {
          k.loop(waitBegin, waitEnd, [&](V w) {
            k.when(b.CreateICmpEQ(b.CreateLoad(i32, abortPtr), b.getInt32(0)), [&] {
              V pair = b.CreateMul(w, b.getInt32(2));
              V counter = k.u32At(k.tables.waits, pair);
              V want = b.CreateMul(en.epoch, k.u32At(k.tables.waits, b.CreateAdd(pair, b.getInt32(1))));
              V ctr = b.CreateGEP(i32, en.sync, counter);
              V failed = boundedWait(env, [&](V& seen) {
                seen = target_.loadAcquire(b, ctr);
                // Wrap-safe: the counter has reached `want` when their difference is >= 0.
                return b.CreateICmpSGE(b.CreateSub(seen, want), b.getInt32(0));
              }, abi::ErrCounterWait, counter, want);
              k.when(failed, [&] { b.CreateStore(b.getInt32(1), abortPtr); });
            });
          });
        });
        target_.barrier(b, 1, T);
        auto* go = k.block("task.run");
        b.CreateCondBr(b.CreateICmpNE(b.CreateLoad(i32, abortPtr), b.getInt32(0)), k.exit, go);
        b.SetInsertPoint(go);
        stampNow(abi::TraceReady);
      };
      dispatch(k, node, rec, Side::Compute, waits);
      // Every thread's stores are done (the barrier orders them before thread 0's release).
      target_.releaseBarrier(b, T);
      k.when(b.CreateICmpEQ(tid, b.getInt32(0)), [&] {
        k.loop(sigBegin, sigEnd, [&](V s) { target_.releaseAdd(b, b.CreateGEP(i32, en.sync, k.u32At(k.tables.signals, s)), b.getInt32(1)); });
        if (en.trace) {
          stamp(abi::TraceEnd, target_.globalTimerNs(b));
          stamp(abi::TraceRingWait, b.CreateLoad(b.getInt64Ty(), env.ringWaitNs));
          stamp(abi::TraceWhere, b.CreateOr(b.CreateShl(b.CreateZExt(node, b.getInt64Ty()), b.getInt64(32)),
                                       b.CreateZExt(k.sm, b.getInt64Ty())));
        }
      });
    });
    b.CreateBr(k.exit);
  }

  // The loader warp's walk of the same queue: each task's weight tiles into the ring, no waits.
  void emitLoaderWarp(Code& k) {
    Builder& b = k.b;
    auto* i32 = b.getInt32Ty();
    const Entry& en = k.entry;
    TaskEnv& env = k.env;
    b.CreateStore(b.getInt32(0), k.seqSlot);
    env.ringWaitNs = nullptr;  // the compute side's
    env.loaderWaitNs = k.loaderWords[0];
    env.loaderFirst = k.loaderWords[1];
    env.loaderLast = k.loaderWords[2];
    k.loop(k.qBegin, k.qEnd, [&](V i) {
      V rec = b.CreateGEP(i32, k.tables.tasks, b.CreateMul(i, b.getInt32(kTaskWords)));
      env.taskId = b.CreateLoad(i32, rec);
      env.traceRecord = traceRecordOf(k, i);
      if (en.trace)
        for (auto* a : k.loaderWords) b.CreateStore(b.getInt64(0), a);
      V node = b.CreateLoad(i32, b.CreateGEP(i32, rec, b.getInt32(1)));
      dispatch(k, node, rec, Side::Loader, nullptr);
      if (en.trace)
        k.when(b.CreateICmpEQ(k.tid, b.getInt32(uint32_t(k.shape.computeThreads))), [&] {  // lane 0
          const abi::TraceWord words[3] = {abi::TraceLoaderWait, abi::TraceLoaderFirst, abi::TraceLoaderLast};
          for (int w = 0; w < 3; ++w)
            b.CreateStore(b.CreateLoad(b.getInt64Ty(), k.loaderWords[w]),
                          b.CreateGEP(b.getInt64Ty(), env.traceRecord, b.getInt64(words[w])));
        });
    });
    b.CreateBr(k.exit);
  }

  // Now the tile area is known: sizes the ring from what is left (fills in mk_ring) and the
  // launch. False after a diagnostic; out.ringRejected when too few slots fit.
  bool sizeRing(const Code& k, llvm::GlobalVariable* gRing, Built& out) {
    const ir::TargetDesc& td = mk_.target;
    const BlockShape& shape = k.shape;
    const int64_t tilesEnd = SmemLayout::kTiles + k.tilePeak;
    if (tilesEnd > td.smemPerBlock) {
      diags_.emit(k.widest ? k.widest->func->range : SourceRange{}, BackendSmem,
                  k.widest ? k.widest->func->name : "the step", tilesEnd, td.name, int64_t(td.smemPerBlock));
      return false;
    }
    int64_t base = (tilesEnd + 127) / 128 * 128;
    int slots = 0;
    if (shape.ring && shape.slotBytes > 0) {
      int64_t fit = (td.smemPerBlock - base) / shape.slotBytes;
      // Any count: the slot of use `seq` is seq % slots with slots a folded constant.
      slots = int(std::min<int64_t>(fit, SmemLayout::kMaxSlots));
      if (slots < shape.leastSlots()) {
        out.ringRejected = true;
        return true;
      }
    }
    std::vector<uint32_t> ringWords{uint32_t(base), uint32_t(slots)};
    gRing->setInitializer(llvm::ConstantDataArray::get(*out.ctx, ringWords));
    gRing->setConstant(true);

    LaunchInfo& L = out.launch;
    L.arch = opt_.arch;
    L.entry = entryName_;
    L.grid = td.sms;
    L.block = shape.blockSize;
    L.computeThreads = shape.computeThreads;
    L.loaderWarp = shape.ring;
    L.ringSlots = slots;
    L.ringSlotBytes = shape.ring ? shape.slotBytes : 0;
    L.dynamicSmemBytes = shape.ring ? base + slots * shape.slotBytes : tilesEnd;
    L.syncCounters = int64_t(mk_.counters.size());
    L.params = k.entry.paramNames;
    L.traceRecords = opt_.trace ? k.tables.records : 0;
    return true;
  }

  // Options::warpgroupMma, its default resolved for this arch.
  bool warpgroupMma() const { return opt_.warpgroupMma.value_or(target_.arch().warpgroupMma); }

  const ir::Megakernel& mk_;
  const std::string entryName_;
  const Options& opt_;
  const Target& target_;
  DiagnosticEngine& diags_;
  std::set<std::tuple<FileId, uint32_t, uint32_t>> scalarMmaReported_;  // places warned of (BackendMmaScalar)
  std::vector<Placement> place_;
  std::vector<Variant> variants_;
  std::vector<int> nodeVariant_;
};

}  // namespace

std::string entryName(const std::vector<ir::Megakernel>& steps, size_t index) {
  return index == 0 ? "mk_step" : "mk_step_" + steps[index].graph.step;
}

std::optional<Artifact> generate(const std::vector<ir::Megakernel>& steps, const Options& options, DiagnosticEngine& diags) {
  const ir::ArchDesc* arch = ir::findArch(options.arch);
  if (!arch) {
    std::string known;
    for (const auto& a : archNames()) known += (known.empty() ? "" : ", ") + a;
    diags.emit(SourceRange{}, BackendUnknownArch, options.arch, known);
    return std::nullopt;
  }
  if (steps.empty()) {
    diags.emit(SourceRange{}, BackendUnsupported, "the program", "it has no step");
    return std::nullopt;
  }
  auto target = makeTarget(*arch);
  Artifact a;
  std::optional<KernelBuilder::Built> module;
  for (size_t i = 0; i < steps.size(); ++i) {
    auto built = KernelBuilder(steps[i], entryName(steps, i), options, *target, diags).run();
    if (!built) return std::nullopt;
    a.launches.push_back(built->launch);
    if (!module) {
      module = std::move(built);
      continue;
    }
    // Each step's module is built in a context of its own; it joins the first through bitcode.
    // Their internal tables and ring words are renamed apart; the entries have distinct names.
    std::string bitcode;
    {
      llvm::raw_string_ostream os(bitcode);
      llvm::WriteBitcodeToFile(*built->mod, os);
    }
    auto moved = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "step"), *module->ctx);
    std::string why;
    if (!moved) why = llvm::toString(moved.takeError());
    else if (llvm::Linker::linkModules(*module->mod, std::move(*moved))) why = "LLVM could not link the entries";
    if (!why.empty()) {
      diags.emit(SourceRange{}, BackendUnsupported, "step '" + steps[i].graph.step + "'", why);
      return std::nullopt;
    }
    built->mod.reset();  // before its context
  }
  std::string error;
  if (!optimizeAndEmit(*module->mod, *target, int(steps.size()), a.llvmIR, a.assembly,
                       target->emitsObject() ? &a.object : nullptr, error)) {
    diags.emit(SourceRange{}, BackendUnsupported, "the step", error);
    return std::nullopt;
  }
  module->mod.reset();
  return a;
}

}  // namespace mk::backend
