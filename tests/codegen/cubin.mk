// --emit=cubin runs ptxas on the PTX (found as $MKDSL_PTXAS, on PATH or in /usr/local/cuda/bin)
// and writes an ELF for the target; it needs -o (binary output never goes to a terminal).
// REQUIRES: ptxas
//
// RUN: %mkdsl build %s --emit=cubin --target sm_90a --stdlib %stdlib -o %t.cubin && \
// RUN:   head -c 4 %t.cubin | od -An -c | %FileCheck %s --check-prefix=ELF && \
// RUN:   { test -s %t.cubin.meta.json || test -s %t.meta.json; }
// RUN: %mkdsl build %s --emit=cubin --target sm_80 --stdlib %stdlib -o %t80.cubin && \
// RUN:   head -c 4 %t80.cubin | od -An -c | %FileCheck %s --check-prefix=ELF
// -v: ptxas's resource report on stderr (registers, spills), the output unchanged on stdout.
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib -v 2>%t.v.txt >%t.v.ptx && \
// RUN:   %FileCheck %s --check-prefix=VERBOSE < %t.v.txt && grep -q '^\.visible \.entry mk_step' %t.v.ptx
// The same PTX assembles by hand too.
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib -o %t.ptx && \
// RUN:   %ptxas -arch=sm_90a %t.ptx -o %t.hand.cubin
import std.linear;

// std.embed yields the f32 residual stream; matvec needs a bf16 row, so the test embeds with this
// local copy of the bf16 lookup (one task per C-column piece, as std.embed).
op embed_bf16<V, D, C = 64>(table: bf16[V, D], token: i32) -> y: bf16[D]
    tasks t in D / C {
    store y[t * C : +C] = load table[token, t * C : +C];
}

config small {
    vocab = 32;
    hidden = 64;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight w: bf16[hidden, hidden] tiled(16, 64) = "proj.weight";

step decode(token: i32) -> (y: bf16[hidden]) {
    let x = embed_bf16(table, token, C = 64);
    let y = matvec(w, x);
    return (y);
}

// ELF: 177 E L F

// VERBOSE: ptxas -arch=sm_90a: {{.*}}mk_step{{.*}}registers
// VERBOSE-SAME: spill
