// What a kernel writes for the host besides its tensors: the error record after a failed step
// and, when built with --trace, one trace record per queue entry. backend/ writes them, runtime/
// reads them.
#pragma once

namespace mk::abi {

// The u32 words of the error buffer after a failed step (word ErrFlag != 0).
enum ErrorWord { ErrFlag = 0, ErrSm, ErrTask, ErrCounter, ErrExpected, ErrSeen, ErrKind, ErrEpoch, ErrWords };
// ErrKind values: what the failing wait waited for.
enum ErrorKind { ErrCounterWait = 1, ErrRingFull = 2, ErrRingEmpty = 3 };

// A traced kernel's record of one queue entry (SM 0's entries first, in queue order), written on
// every step by the entry's first compute thread (the first four and TraceRingWait) and by the
// loader warp's first lane (the TraceLoader words): u64 words, times from the GPU's nanosecond
// global timer.
enum TraceWord {
  TraceStart = 0,    // the task's record was read, before its waits
  TraceReady,        // its waits were done (all compute threads past the barrier after them)
  TraceEnd,          // its body was done and its signals issued
  TraceWhere,        // (node << 32) | sm
  TraceRingWait,     // nanoseconds the first compute thread waited for the task's weight tiles
  TraceLoaderFirst,  // when the loader issued the task's first tile copy (0: it streams none)
  TraceLoaderLast,   // when it issued the last one
  TraceLoaderWait,   // nanoseconds the loader waited for free ring slots for the task's tiles
  TraceWords
};

}  // namespace mk::abi
