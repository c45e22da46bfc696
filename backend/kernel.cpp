// The megakernel skeleton: one persistent kernel entry per step. Each block (one per SM) walks
// its compile-time task list: acquire-wait the task's counters, run the op body, barrier,
// release-increment the counters it signals. With weight streaming, one extra warp per block
// (the loader) walks the same list ahead of the compute threads and copies each task's weight
// tiles into a shared-memory ring, never waiting on counters: weights do not depend on the step.
// A target without async copies (Target::asyncWeightRing) has no ring: weights are read directly.
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/raw_ostream.h>

#include <cstring>
#include <map>

#include "backend/backend.h"
#include "backend/codegen.h"
#include "backend/emit.h"

namespace mk::backend {

MK_DIAGNOSTIC(BackendUnknownArch, Error, "unknown code architecture '{0}'; known: {1}", std::string, std::string);
MK_DIAGNOSTIC(BackendUnsupported, Error, "cannot generate code for '{0}': {1}", std::string, std::string);
MK_DIAGNOSTIC(BackendSmem, Error,
              "'{0}' needs {1} bytes of shared memory for its tiles; a block of target '{2}' has {3}", std::string,
              int64_t, std::string, int64_t);
MK_DIAGNOSTIC(BackendTarget, Error, "target '{0}' cannot run this kernel: {1}", std::string, std::string);

std::vector<std::string> archNames() { return {"sm_90a", "sm_90", "sm_80", "gfx942", "gfx90a"}; }

bool isKnownArch(const std::string& arch) {
  for (const auto& a : archNames())
    if (a == arch) return true;
  return false;
}

bool isAmdgpuArch(const std::string& arch) { return isKnownArch(arch) && arch.rfind("gfx", 0) == 0; }

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
  KernelBuilder(const ir::Megakernel& mk, const Options& opt, const Target& target, DiagnosticEngine& diags)
      : mk_(mk), opt_(opt), target_(target), diags_(diags) {}

  std::optional<Artifact> run() {
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
    if (!placeTensors() || !makeVariants()) return std::nullopt;
    auto first = build(/*ring=*/target_.asyncWeightRing());
    if (!first) return std::nullopt;
    if (first->ringRejected) {
      first.reset();  // its module before its context: assigning over it would free them the other way round
      first = build(false);
      if (!first) return std::nullopt;
    }
    return emitArtifact(std::move(*first));
  }

 private:
  struct Built {
    std::unique_ptr<llvm::LLVMContext> ctx;
    std::unique_ptr<llvm::Module> mod;
    LaunchInfo launch;
    bool ringRejected = false;
  };

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

  std::optional<Built> build(bool ring) {
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
    llvm::Module& m = *out.mod;
    llvm::LLVMContext& c = *out.ctx;
    prepareModule(m, target_);
    const ir::TargetDesc& td = mk_.target;
    bool streams = false;
    int needSlots = 0;
    int64_t slotBytes = 0;
    for (const Variant& v : variants_) {
      streams |= !v.streamed.empty();
      needSlots = std::max(needSlots, v.maxStreamedPerStatement);
      slotBytes = std::max(slotBytes, v.largestStreamedBytes);
    }
    ring = ring && streams;
    // Without the ring no load is streamed: the compute threads read every weight themselves.
    if (!ring)
      for (Variant& v : variants_) {
        v.streamed.clear();
        v.contiguous.clear();
        v.largestStreamedBytes = 0;
        v.maxStreamedPerStatement = 0;
      }
    slotBytes = (slotBytes + 127) / 128 * 128;
    // Where the loader warp comes from (Target::loaderWarpOnTop): on top of the target's
    // threads, which then all compute (a power of two like the tiles' sizes gives every compute
    // thread the same share of a tile and a fixed column of it), or out of them.
    const bool onTop = ring && target_.loaderWarpOnTop();
    const int blockSize = td.threadsPerBlock + (onTop ? 32 : 0);
    const int T = blockSize - (ring ? 32 : 0);
    if (blockSize > 1024) {
      diags_.emit(SourceRange{}, BackendTarget, td.name, "blocks of " + std::to_string(td.threadsPerBlock) +
                  " compute threads and a loader warp: more than 1024 threads");
      return std::nullopt;
    }

    // The step's tables: per-SM queues of task records, wait and signal lists, node arguments.
    // A wait is a (counter, count per epoch) pair: the poll needs no further lookup.
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
    size_t maxParams = 1;
    for (const ir::Node& n : mk_.graph.nodes) maxParams = std::max(maxParams, n.tensors.size());
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
    auto* gQueue = table(m, "mk_queue_start", queueStart);
    auto* gTasks = table(m, "mk_tasks", tasks);
    auto* gWaits = table(m, "mk_waits", waits);
    auto* gSignals = table(m, "mk_signals", signals);
    auto* gArgs = table(m, "mk_node_args", nodeArgs);
    // Where the ring starts and how many slots it has: known only once every task's tile needs
    // are, so the code reads them from a constant that is filled in at the end (and folded).
    auto* i32 = llvm::Type::getInt32Ty(c);
    auto* ringTy = llvm::ArrayType::get(i32, 2);
    auto* gRing = new llvm::GlobalVariable(m, ringTy, false, llvm::GlobalValue::InternalLinkage,
                                           llvm::ConstantAggregateZero::get(ringTy), "mk_ring", nullptr,
                                           llvm::GlobalValue::NotThreadLocal, target_.globalSpace());
    auto* smemTy = llvm::ArrayType::get(llvm::Type::getInt8Ty(c), 0);
    auto* gSmem = new llvm::GlobalVariable(m, smemTy, false, llvm::GlobalValue::ExternalLinkage, nullptr, "mk_smem",
                                           nullptr, llvm::GlobalValue::NotThreadLocal, target_.sharedSpace());
    gSmem->setAlignment(llvm::Align(128));

    // The entry.
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
    auto* fn = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, "mk_step", m);
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

    auto* entry = llvm::BasicBlock::Create(c, "entry", fn);
    Builder b(entry);
    auto block = [&](const char* n) { return llvm::BasicBlock::Create(c, n, fn); };
    auto* exitBlock = block("exit");
    {
      Builder eb(exitBlock);
      eb.CreateRetVoid();
    }
    std::vector<llvm::AllocaInst*> scalarSlots;
    auto* seqSlot = b.CreateAlloca(i32, nullptr, "ring.seq");
    b.CreateStore(b.getInt32(0), seqSlot);
    llvm::AllocaInst* loaderWords[3] = {};  // TraceLoaderWait, TraceLoaderFirst, TraceLoaderLast
    if (opt_.trace)
      for (auto*& a : loaderWords) a = b.CreateAlloca(b.getInt64Ty(), nullptr, "trace.loader");
    V tid = target_.threadId(b);
    V sm = target_.blockId(b);
    V ringBase = b.CreateLoad(i32, b.CreateConstGEP2_32(ringTy, gRing, 0, 0), "ring.base");
    V ringSlots = b.CreateLoad(i32, b.CreateConstGEP2_32(ringTy, gRing, 0, 1), "ring.slots");
    auto smemAt = [&](V off) { return b.CreateGEP(b.getInt8Ty(), gSmem, off); };
    auto when = [&](V cond, const std::function<void()>& then) { emitIf(b, fn, cond, then); };
    auto loop = [&](V lo, V hi, const std::function<void(V)>& body) { emitLoop(b, fn, lo, hi, b.getInt32(1), body); };
    auto u32At = [&](llvm::GlobalVariable* g, V i) {
      return b.CreateLoad(i32, b.CreateGEP(i32, g, i));
    };

    // Thread 0 clears the abort flag and sets up the ring's barriers; then everyone starts.
    const int fullCount = target_.bulkCopy() ? 1 : 32;
    when(b.CreateICmpEQ(tid, b.getInt32(0)), [&] {
      b.CreateStore(b.getInt32(0), smemAt(b.getInt32(SmemLayout::kAbortFlag)));
      if (!ring) return;
      loop(b.getInt32(0), ringSlots, [&](V s) {
        V off = b.CreateMul(s, b.getInt32(8));
        target_.mbarrierInit(b, smemAt(b.CreateAdd(b.getInt32(SmemLayout::kBarriers), off)), fullCount);
        // Every compute warp frees a slot (tile.cpp, releaseSlots).
        target_.mbarrierInit(b, smemAt(b.CreateAdd(b.getInt32(SmemLayout::kBarriers + SmemLayout::kMaxSlots * 8), off)), T / 32);
      });
      target_.mbarrierInitFence(b);
    });
    target_.barrier(b, 0, blockSize);
    V qBegin = u32At(gQueue, sm);
    V qEnd = u32At(gQueue, b.CreateAdd(sm, b.getInt32(1)));

    int64_t tilePeak = 0;
    const Variant* widest = nullptr;  // the op with the largest tile area
    TaskEnv env;
    env.target = &target_;
    env.b = &b;
    env.fn = fn;
    env.computeThreads = T;
    env.smem = gSmem;
    env.ringBase = ringBase;
    env.ringSlots = ringSlots;
    env.slotBytes = slotBytes;
    env.seq = seqSlot;
    env.ablateCopies = opt_.ablation == Ablation::WeightCopies;
    env.ablateMath = opt_.ablation == Ablation::WeightMath;
    env.l2AheadTiles = mk_.target.l2AheadTiles;
    env.error = argError;
    env.sm = sm;
    env.epoch = argEpoch;
    env.timeout = argTimeout;
    env.exit = exitBlock;
    env.scalarSlots = &scalarSlots;

    // The arguments of the task's node, decoded from the node table.
    auto taskArgs = [&](const Variant& v, V node, V rec) {
      TaskArgs a;
      V row = b.CreateMul(node, b.getInt32(uint32_t(maxParams)));
      for (size_t p = 0; p < v.func->params.size(); ++p) {
        V word = b.CreateLoad(b.getInt64Ty(), b.CreateGEP(b.getInt64Ty(), gArgs, b.CreateAdd(row, b.getInt32(uint32_t(p)))));
        auto arenaPtr = [&] {
          V arena = b.CreateLShr(word, b.getInt64(62));
          V off = b.CreateAnd(word, b.getInt64((uint64_t(1) << 62) - 1));
          V base = b.CreateSelect(b.CreateICmpEQ(arena, b.getInt64(Weights)), argWeights,
                                  b.CreateSelect(b.CreateICmpEQ(arena, b.getInt64(State)), argState, argActs));
          return b.CreateGEP(b.getInt8Ty(), base, off);
        };
        const ir::Param& par = v.func->params[p];
        if (v.tensors[p]) {
          a.params.push_back(arenaPtr());
          continue;
        }
        if (v.scalarKinds[p] == ir::ScalarArg::Tensor) {
          // A rank-0 tensor's value, converted to the parameter's kind of number.
          DType sd = v.scalarTensorDtypes[p];
          V x = loadStorage(b, sd, arenaPtr());
          if (isFloat(sd) && !isFloat(par.dtype)) x = target_.floatToInt(b, x);
          else if (!isFloat(sd) && isFloat(par.dtype)) x = b.CreateSIToFP(x, b.getFloatTy());
          a.params.push_back(x);
          continue;
        }
        // Constants and step inputs arrive as 32 bits (a float's bits for float parameters).
        V x = v.scalarKinds[p] == ir::ScalarArg::Const ? b.CreateTrunc(word, i32)
                                                       : b.CreateLoad(i32, b.CreateGEP(i32, argInputs, b.CreateTrunc(word, i32)));
        a.params.push_back(isFloat(par.dtype) ? b.CreateBitCast(x, b.getFloatTy()) : x);
      }
      for (size_t d = 0; d < v.func->taskGrid.size(); ++d)
        a.index.push_back(b.CreateLoad(i32, b.CreateGEP(i32, rec, b.getInt32(uint32_t(4 + d)))));
      return a;
    };

    // Dispatch: one case per variant, its code emitted once. `ready` (compute side) emits the
    // task's waits: after the arguments are decoded, so their loads are in flight while thread 0
    // polls, and nothing but the body is left between the last wait and the first load.
    auto dispatch = [&](V node, V rec, Side side, const std::function<void()>& ready) {
      V variant = b.CreateLoad(i32, b.CreateGEP(i32, rec, b.getInt32(2)));
      auto* join = block("task.end");
      // A task without a body (a node with no lowered form) still waits before it signals.
      auto* none = ready ? block("task.none") : join;
      auto* sw = b.CreateSwitch(variant, none, unsigned(variants_.size()));
      if (ready) {
        b.SetInsertPoint(none);
        ready();
        b.CreateBr(join);
      }
      for (size_t i = 0; i < variants_.size(); ++i) {
        const Variant& v = variants_[i];
        if (side == Side::Loader && v.streamed.empty()) continue;
        auto* caseBlock = block("task.case");
        sw->addCase(b.getInt32(uint32_t(i)), caseBlock);
        b.SetInsertPoint(caseBlock);
        TaskArgs a = taskArgs(v, node, rec);
        V here = target_.threadIdHere(b);
        env.tid = side == Side::Loader ? b.CreateSub(here, b.getInt32(uint32_t(T))) : here;
        if (ready) ready();
        int64_t peak = 0;
        env.tilePeak = &peak;
        emitTask(env, v, a, side);
        if (peak > tilePeak) tilePeak = peak, widest = &v;
        b.CreateBr(join);
      }
      b.SetInsertPoint(join);
    };
    // The TraceWord record of queue entry i (traced kernels; else null).
    auto traceRecordOf = [&](V i) -> V {
      if (!argTrace) return nullptr;
      return b.CreateGEP(b.getInt64Ty(), argTrace, b.CreateMul(b.CreateZExt(i, b.getInt64Ty()), b.getInt64(TraceWords)));
    };

    try {
      auto* computeBlock = block("compute");
      auto* loaderBlock = ring ? block("loader") : nullptr;
      if (ring) b.CreateCondBr(b.CreateICmpULT(tid, b.getInt32(uint32_t(T))), computeBlock, loaderBlock);
      else b.CreateBr(computeBlock);

      // --- Compute threads.
      b.SetInsertPoint(computeBlock);
      V abortPtr = smemAt(b.getInt32(SmemLayout::kAbortFlag));
      env.ringWaitNs = argTrace ? smemAt(b.getInt32(SmemLayout::kTraceRingWait)) : nullptr;
      loop(qBegin, qEnd, [&](V i) {
        V rec = b.CreateGEP(i32, gTasks, b.CreateMul(i, b.getInt32(kTaskWords)));
        // The next record is on this SM's path: start bringing it closer while this one runs.
        target_.prefetchLine(b, b.CreateGEP(i32, rec, b.getInt32(kTaskWords)));
        auto word = [&](int k) { return b.CreateLoad(i32, b.CreateGEP(i32, rec, b.getInt32(uint32_t(k)))); };
        env.taskId = word(0);
        V node = word(1);
        V waitBegin = word(8), waitEnd = word(9), sigBegin = word(10), sigEnd = word(11);
        // Traced: thread 0 stamps the entry's TraceWord record (it is the thread that waits and
        // signals, so its stamps bracket exactly those).
        env.traceRecord = traceRecordOf(i);
        auto stamp = [&](TraceWord w, V value) {
          if (!argTrace) return;
          b.CreateStore(value, b.CreateGEP(b.getInt64Ty(), env.traceRecord, b.getInt64(w)));
        };
        auto stampNow = [&](TraceWord w) {
          if (argTrace) when(b.CreateICmpEQ(tid, b.getInt32(0)), [&] { stamp(w, target_.globalTimerNs(b)); });
        };
        stampNow(TraceStart);
        if (argTrace) when(b.CreateICmpEQ(tid, b.getInt32(0)), [&] { b.CreateStore(b.getInt64(0), env.ringWaitNs); });
        auto waits = [&] {
          when(b.CreateICmpEQ(tid, b.getInt32(0)), [&] {
            loop(waitBegin, waitEnd, [&](V w) {
              when(b.CreateICmpEQ(b.CreateLoad(i32, abortPtr), b.getInt32(0)), [&] {
                V pair = b.CreateMul(w, b.getInt32(2));
                V counter = u32At(gWaits, pair);
                V want = b.CreateMul(argEpoch, u32At(gWaits, b.CreateAdd(pair, b.getInt32(1))));
                V ctr = b.CreateGEP(i32, argSync, counter);
                V failed = boundedWait(env, [&](V& seen) {
                  seen = target_.loadAcquire(b, ctr);
                  // Wrap-safe: the counter has reached `want` when their difference is >= 0.
                  return b.CreateICmpSGE(b.CreateSub(seen, want), b.getInt32(0));
                }, ErrCounterWait, counter, want);
                when(failed, [&] { b.CreateStore(b.getInt32(1), abortPtr); });
              });
            });
          });
          target_.barrier(b, 1, T);
          auto* go = block("task.run");
          b.CreateCondBr(b.CreateICmpNE(b.CreateLoad(i32, abortPtr), b.getInt32(0)), exitBlock, go);
          b.SetInsertPoint(go);
          stampNow(TraceReady);
        };
        dispatch(node, rec, Side::Compute, waits);
        // Every thread's stores are done (the barrier orders them before thread 0's release).
        target_.releaseBarrier(b, T);
        when(b.CreateICmpEQ(tid, b.getInt32(0)), [&] {
          loop(sigBegin, sigEnd, [&](V s) { target_.releaseAdd(b, b.CreateGEP(i32, argSync, u32At(gSignals, s)), b.getInt32(1)); });
          if (argTrace) {
            stamp(TraceEnd, target_.globalTimerNs(b));
            stamp(TraceRingWait, b.CreateLoad(b.getInt64Ty(), env.ringWaitNs));
            stamp(TraceWhere, b.CreateOr(b.CreateShl(b.CreateZExt(node, b.getInt64Ty()), b.getInt64(32)),
                                         b.CreateZExt(sm, b.getInt64Ty())));
          }
        });
      });
      b.CreateBr(exitBlock);

      // --- The loader warp.
      if (ring) {
        b.SetInsertPoint(loaderBlock);
        b.CreateStore(b.getInt32(0), seqSlot);
        env.ringWaitNs = nullptr;  // the compute side's
        env.loaderWaitNs = loaderWords[0];
        env.loaderFirst = loaderWords[1];
        env.loaderLast = loaderWords[2];
        loop(qBegin, qEnd, [&](V i) {
          V rec = b.CreateGEP(i32, gTasks, b.CreateMul(i, b.getInt32(kTaskWords)));
          env.taskId = b.CreateLoad(i32, rec);
          env.traceRecord = traceRecordOf(i);
          if (argTrace)
            for (auto* a : loaderWords) b.CreateStore(b.getInt64(0), a);
          V node = b.CreateLoad(i32, b.CreateGEP(i32, rec, b.getInt32(1)));
          dispatch(node, rec, Side::Loader, nullptr);
          if (argTrace)
            when(b.CreateICmpEQ(tid, b.getInt32(uint32_t(T))), [&] {  // lane 0
              const TraceWord words[3] = {TraceLoaderWait, TraceLoaderFirst, TraceLoaderLast};
              for (int k = 0; k < 3; ++k)
                b.CreateStore(b.CreateLoad(b.getInt64Ty(), loaderWords[k]),
                              b.CreateGEP(b.getInt64Ty(), env.traceRecord, b.getInt64(words[k])));
            });
        });
        b.CreateBr(exitBlock);
      }
    } catch (const Unsupported& u) {
      SourceRange where;
      for (const Variant& v : variants_)
        if (v.func->name == u.op) where = v.func->range;
      diags_.emit(where, BackendUnsupported, u.op, u.what);
      return std::nullopt;
    }

    // Now the tile area is known: size the ring from what is left.
    const int64_t tilesEnd = SmemLayout::kTiles + tilePeak;
    if (tilesEnd > td.smemPerBlock) {
      diags_.emit(widest ? widest->func->range : SourceRange{}, BackendSmem, widest ? widest->func->name : "the step",
                  tilesEnd, td.name, int64_t(td.smemPerBlock));
      return std::nullopt;
    }
    int64_t base = (tilesEnd + 127) / 128 * 128;
    int slots = 0;
    if (ring && slotBytes > 0) {
      int64_t fit = (td.smemPerBlock - base) / slotBytes;
      // Any count: the slot of use `seq` is seq % slots with slots a folded constant.
      slots = int(std::min<int64_t>(fit, SmemLayout::kMaxSlots));
      if (slots < std::max(2, needSlots)) {
        out.ringRejected = true;
        return out;
      }
    }
    std::vector<uint32_t> ringWords{uint32_t(base), uint32_t(slots)};
    gRing->setInitializer(llvm::ConstantDataArray::get(c, ringWords));
    gRing->setConstant(true);

    LaunchInfo& L = out.launch;
    L.arch = opt_.arch;
    L.gridSize = td.sms;
    L.blockSize = blockSize;
    L.computeThreads = T;
    L.loaderWarp = ring;
    L.ringSlots = slots;
    L.ringSlotBytes = ring ? slotBytes : 0;
    L.dynamicSmemBytes = ring ? base + slots * slotBytes : tilesEnd;
    L.syncCounters = int64_t(mk_.counters.size());
    L.params = paramNames;
    L.traceRecords = opt_.trace ? int64_t(tasks.size() / kTaskWords) : 0;
    return out;
  }

  std::optional<Artifact> emitArtifact(Built built) {
    Artifact a;
    a.launch = built.launch;
    std::string error;
    if (!optimizeAndEmit(*built.mod, target_, a.llvmIR, a.assembly, target_.emitsObject() ? &a.object : nullptr, error)) {
      diags_.emit(SourceRange{}, BackendUnsupported, "the step", error);
      return std::nullopt;
    }
    return a;
  }

  const ir::Megakernel& mk_;
  const Options& opt_;
  const Target& target_;
  DiagnosticEngine& diags_;
  std::vector<Placement> place_;
  std::vector<Variant> variants_;
  std::vector<int> nodeVariant_;
};

}  // namespace

std::optional<Artifact> generate(const ir::Megakernel& kernel, const Options& options, DiagnosticEngine& diags) {
  auto target = isAmdgpuArch(options.arch) ? makeAmdgpuTarget(options.arch) : makeNvptxTarget(options.arch);
  if (!target) {
    std::string known;
    for (const auto& a : archNames()) known += (known.empty() ? "" : ", ") + a;
    diags.emit(SourceRange{}, BackendUnknownArch, options.arch, known);
    return std::nullopt;
  }
  return KernelBuilder(kernel, options, *target, diags).run();
}

}  // namespace mk::backend
