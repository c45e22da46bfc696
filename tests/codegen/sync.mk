// The sync sequence between tasks on different SMs (issue 4, golden a). The embed tasks produce
// x; each matvec task reads all of x, so it waits on the embed node's counter.
//   consumer: thread 0 spins on `ld.acquire.gpu` of the counter (expected = epoch * signals:
//             counters are never reset, so the test is `seen - expected >= 0`, wrap-safe); then the
//             block's compute threads meet at named barrier 1 before reading the data;
//   producer: the compute threads meet at `bar.sync 1, <compute threads>` (after their stores),
//             then thread 0 does `red.release.gpu` adds on the counter.
// The loader warp is not part of barrier 1: its count is the compute threads (sm_90a: the h200's
// 512, with the loader warp on top, `.maxntid 544`; sm_80: 480, the loader warp one of the 512);
// barrier 0 (the whole block) is used once, after the ring's mbarriers are initialised. bar.sync is `aligned` (every thread of the CTA must reach
// the same instruction), so LLVM must see the barrier as convergent and never duplicate or sink it.
//
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefixes=PTX,SM90
// RUN: %mkdsl build %s --emit=ptx --target sm_80 --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefixes=PTX,SM80
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --sms 2 --stdlib %stdlib | \
// RUN:   %S/ptx_in_loop.sh 'ld\.acquire\.gpu\.global\.u32' '%globaltimer'
// RUN: %mkdsl build %s --emit=ptx --target sm_80 --sms 2 --stdlib %stdlib | \
// RUN:   %S/ptx_in_loop.sh 'ld\.acquire\.gpu\.global\.u32' '%globaltimer'
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --sms 2 --stdlib %stdlib | \
// RUN:   grep -E '^[[:space:]]*(bar|barrier)[.[:space:]]' | sed 's/^[[:space:]]*//' | sort -u | \
// RUN:   %FileCheck %s --check-prefix=BARS
// RUN: %mkdsl build %s --emit=llvm --target sm_90a --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefix=LLVM
import std.linear;

// std.embed yields the f32 residual stream; matvec needs a bf16 row, so the test embeds with this
// local copy of the bf16 lookup (one task per C-column piece, as std.embed).
op embed_bf16<V, D, C = 64>(table: bf16[V, D], token: i32) -> y: bf16[D]
    tasks t in D / C {
    store y[t * C : +C] = load table[token, t * C : +C];
}

config small {
    vocab = 32;
    hidden = 128;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight w: bf16[hidden, hidden] tiled(16, 128) = "proj.weight";

step decode(token: i32) -> (y: bf16[hidden]) {
    let x = embed_bf16(table, token, C = 32);
    let y = matvec(w, x);
    return (y);
}

// PTX-LABEL: .visible .entry mk_step(
// SM90: .maxntid 544, 1, 1
// SM80: .maxntid 512, 1, 1
// PTX: mov.u32 [[TID:%r[0-9]+]], %tid.x;
// PTX: setp.eq.s32 [[T0:%p[0-9]+]], [[TID]], 0;
// SM90: bar.sync 0, 544;
// SM80: bar.sync 0, 512;
// The signal: barrier 1 over the compute threads, then thread 0 alone does the release add on
// the counter (the node's one counter, at the start of the sync buffer, parameter 3).
// PTX: ld.param.u64 [[SYNC:%rd[0-9]+]], [mk_step_param_3];
// SM90: bar.sync 1, 512;
// SM80: bar.sync 1, 480;
// PTX: and.pred {{%p[0-9]+}}, [[T0]], {{%p[0-9]+}};
// PTX: red.release.gpu.global.add.u32 [[[SYNC]]], {{%r[0-9]+}};
// PTX-NOT: atom.global.add
// The wait (LLVM lays it out after the task body it guards): thread 0 acquire-loads the counter
// (its id and count per epoch come from one load of the wait table) and compares what it saw
// with the expected count, wrap-safe; a first poll, then the bounded spin.
// PTX: ld.global.nc.v2.u32 {[[CTR:%r[0-9]+]], [[PER:%r[0-9]+]]}, [{{%rd[0-9]+}}];
// PTX-NEXT: mul.lo.s32 [[WANT:%r[0-9]+]], [[PER]], {{%r[0-9]+}};
// PTX: ld.acquire.gpu.global.u32 [[SEEN:%r[0-9]+]], [{{%rd[0-9]+}}];
// PTX: sub.s32 [[DIFF:%r[0-9]+]], [[SEEN]], [[WANT]];
// PTX-NEXT: setp.{{(gt|lt)}}.s32 {{%p[0-9]+}}, [[DIFF]], {{(-1|0)}};

// Exactly two block barriers: 0 over the whole block (once, after set-up) and 1 over the compute
// threads; a warp meets its own lanes before freeing a ring slot.
// BARS: bar.sync 0, 544;
// BARS-NEXT: bar.sync 1, 512;
// BARS-NEXT: bar.warp.sync -1;
// BARS-NOT: bar

// LLVM: define void @mk_step(
// LLVM: call void asm sideeffect "bar.sync 1, 512;", "~{memory}"() #[[BAR:[0-9]+]]
// LLVM: call i32 asm sideeffect "ld.acquire.gpu.global.u32 $0, [$1];", "=r,l,~{memory}"
// LLVM: call void asm sideeffect "red.release.gpu.global.add.u32 [$0], $1;", "l,r,~{memory}"
// LLVM: attributes #[[BAR]] = { {{.*}}convergent
