// A traced kernel's records of one step (`mkdsl build --trace`; metadata.h TraceWord and
// TraceInfo), turned into what a person reads: a Chrome / Perfetto trace (open it in
// https://ui.perfetto.dev or chrome://tracing) and a text summary. Pure functions of the metadata's
// trace description and the record words, so they are tested without a GPU.
//
// A record is "not written" when all eight words are zero (the runtime zeroes the buffer before
// each traced step, so a task that never ran leaves zeros) and "malformed" when it is partly
// written (a step that stopped midway: a zero start, ready or end, or only one of the loader's
// first and last stamps), its times run backwards (also the loader's last before its first), or
// its node is not in the metadata. Both kinds are skipped and counted. A written record with a
// loader first stamp "streamed": its task's weight tiles came through the shared-memory ring.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/metadata.h"

namespace mk::runtime {

struct TraceOpSummary {
  std::string op;            // the op's name, all its nodes together ("matvec_residual")
  int64_t tasks = 0;         // its records that were written well
  uint64_t busyNs = 0;       // summed over its tasks: ready -> end (the body and its signals)
  uint64_t waitNs = 0;       // summed: start -> ready (waiting for producers)
  double share = 0;          // (busy + wait) / the sum of busy + wait over every op, in [0, 1]
  uint64_t ringWaitNs = 0;   // summed: the compute threads waited for weight tiles (inside busy)
  int64_t streamedTasks = 0; // its tasks that streamed weight tiles through the ring
  uint64_t loaderWaitNs = 0; // summed over those: the loader waited for free ring slots
  int64_t leadNs = 0;        // summed over those: ready minus the loader's first copy (< 0: late)
  double meanBusyNs() const { return tasks ? double(busyNs) / double(tasks) : 0.0; }
  double meanLeadNs() const { return streamedTasks ? double(leadNs) / double(streamedTasks) : 0.0; }
};

struct TraceSmSummary {
  uint32_t sm = 0;
  int64_t tasks = 0;
  uint64_t busyNs = 0, waitNs = 0;
  uint64_t lastEndNs = 0;  // its last task's end, from the step's earliest start
};

struct TraceSummary {
  int64_t step = 0;           // which step of the decode (1-based) the records are of
  size_t records = 0;         // in the words given
  size_t written = 0;         // well-formed records (the rest are the two counts below)
  size_t notWritten = 0;      // all zero
  size_t malformed = 0;       // partly written, times backwards, or an unknown node
  uint64_t startNs = 0;       // the earliest start (GPU global timer)
  uint64_t spanNs = 0;        // the earliest start to the latest end
  int64_t estimatedBytes = 0; // the compiler's estimate for the whole step: the exact nodes' bytes
  int64_t boundBytes = 0;     // the other nodes' bytes: upper bounds (TraceNode::bytesExact), not counted
  std::vector<std::string> boundOps;  // their ops, in the order the nodes first name them
  double gbPerS = 0;          // estimatedBytes over the span (bytes per ns = GB/s); 0 with no span
  size_t sms = 0;             // SMs that ran at least one written record
  std::vector<TraceOpSummary> ops;         // in the order the metadata's nodes first name them
  std::vector<TraceSmSummary> slowestSms;  // the 5 (at most) that finished last, latest first
};

// The summary of `words` (records of TraceWords words; a trailing partial record is malformed).
TraceSummary summarizeTrace(const TraceInfo& info, std::span<const uint64_t> words, int64_t step);

// The summary as text lines, without a tool's prefix:
//   trace of step 14: 138 tasks on 132 SMs in 52.310 us (the earliest start to the latest end)
//   estimated traffic 1234567 bytes (the compiler's estimate): 23.60 GB/s over the span
// or, when some nodes' bytes are upper bounds (loops to a run-time bound such as `pos`),
//   estimated traffic 1234567 bytes (the compiler's estimate, without the upper bound of 2048 bytes
//   for attention_partial): 23.60 GB/s over the span
//   op                  tasks     busy us     wait us  busy/task us   share ring wait us loader wait us  lead/task us
//   qkv_rope_append         8      12.345       3.210         1.543   12.3%        2.100          0.350         0.812
//   attention_partial      16       9.800       4.000         0.613    9.1%        0.000              -             -
//   ...
//   (ring wait: the compute threads waited for weight tiles; loader wait: ...; lead: ...)
//   slowest SMs (by their last task's end):
//     SM 7: last end 52.310 us, 3 tasks, busy 10.200 us, wait 30.100 us
//   5 records not written (all zero); 2 records malformed (...): skipped
// (the last line only when there are such records). Ring wait is summed over the op's tasks; loader
// wait and lead (ready minus the first tile copy, per task) over its streamed tasks only, "-"
// when it has none.
std::vector<std::string> traceReport(const TraceSummary& summary);

// The Chrome trace-event JSON of `words`: {"traceEvents": [...], "displayTimeUnit": "ns",
// "otherData": {...}}. One track per SM (pid 0, tid = SM, named "SM n"); per written record a
// "wait" slice from start to ready (when it has a length) and a slice named after the node from
// ready to end, with args node, op, sm, record, wait_ns, ring_wait_ns and est_bytes (the node's
// bytes over its tasks). When a written record streamed, a second process (pid 1, "loader warps
// (first to last tile copy issued)") with a track per SM, and per streamed record a slice named
// after the node (cat "loader") from the loader's first to its last tile copy, with args record
// and loader_wait_ns. Times in microseconds (ns precision) from the origin: the earliest start,
// or an earlier loader first stamp; otherData holds the step, the origin in ns (start_ns) and the
// record counts.
std::string traceEventsJson(const TraceInfo& info, std::span<const uint64_t> words, int64_t step);

// Writes `text` to `path` whole; throws std::runtime_error("PATH: cannot write: ...").
void writeTraceFile(const std::string& path, const std::string& text);

}  // namespace mk::runtime
