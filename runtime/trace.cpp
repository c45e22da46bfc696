#include "runtime/trace.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include "abi/json.h"

namespace mk::runtime {

namespace {

struct Record {
  enum Kind { Written, NotWritten, Malformed } kind = Malformed;
  uint64_t start = 0, ready = 0, end = 0;
  uint32_t node = 0, sm = 0;
  uint64_t ringWait = 0, loaderFirst = 0, loaderLast = 0, loaderWait = 0;
  bool streamed() const { return loaderFirst != 0; }
};

Record record(const TraceInfo& info, std::span<const uint64_t> words, size_t index) {
  Record r;
  if ((index + 1) * TraceWords > words.size()) return r;  // a trailing partial record
  const uint64_t* w = words.data() + index * TraceWords;
  r.start = w[TraceStart], r.ready = w[TraceReady], r.end = w[TraceEnd];
  r.node = uint32_t(w[TraceWhere] >> 32), r.sm = uint32_t(w[TraceWhere]);
  r.ringWait = w[TraceRingWait], r.loaderWait = w[TraceLoaderWait];
  r.loaderFirst = w[TraceLoaderFirst], r.loaderLast = w[TraceLoaderLast];
  if (std::all_of(w, w + TraceWords, [](uint64_t x) { return x == 0; })) r.kind = Record::NotWritten;
  // A zero time is a stamp that never came (the step stopped between them): the global timer
  // does not read 0 on a running GPU. The loader stamps come from another warp: the first
  // without the last (or after it) is a partial record too.
  else if (r.start == 0 || r.ready < r.start || r.end < r.ready || r.node >= info.nodes.size() ||
           (r.loaderFirst == 0) != (r.loaderLast == 0) || r.loaderLast < r.loaderFirst)
    r.kind = Record::Malformed;
  else r.kind = Record::Written;
  return r;
}

size_t recordCount(std::span<const uint64_t> words) { return (words.size() + TraceWords - 1) / TraceWords; }

// Nanoseconds as microseconds with all their digits: "1234.567".
std::string micros(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
  return buf;
}

// The bytes one task of the node moves, by the compiler's estimate (rounded).
int64_t taskBytes(const TraceNode& n) { return n.tasks > 0 ? (n.bytes + n.tasks / 2) / n.tasks : 0; }

std::string fmt(const char* format, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, a);
  return buf;
}

}  // namespace

TraceSummary summarizeTrace(const TraceInfo& info, std::span<const uint64_t> words, int64_t step) {
  TraceSummary s;
  s.step = step;
  s.records = recordCount(words);
  for (const TraceNode& n : info.nodes) {
    (n.bytesExact ? s.estimatedBytes : s.boundBytes) += n.bytes;
    if (!n.bytesExact && std::find(s.boundOps.begin(), s.boundOps.end(), n.op) == s.boundOps.end()) s.boundOps.push_back(n.op);
  }

  // Ops in the order the nodes name them; each node's op is found by index.
  std::vector<size_t> opOfNode;
  std::map<std::string, size_t> opIndex;
  for (const TraceNode& n : info.nodes) {
    auto [it, fresh] = opIndex.emplace(n.op, s.ops.size());
    if (fresh) {
      s.ops.emplace_back();
      s.ops.back().op = n.op;
    }
    opOfNode.push_back(it->second);
  }

  std::map<uint32_t, TraceSmSummary> bySm;
  uint64_t first = UINT64_MAX, last = 0;
  for (size_t i = 0; i < s.records; ++i) {
    const Record r = record(info, words, i);
    if (r.kind == Record::NotWritten) ++s.notWritten;
    if (r.kind == Record::Malformed) ++s.malformed;
    if (r.kind != Record::Written) continue;
    ++s.written;
    first = std::min(first, r.start);
    last = std::max(last, r.end);
    TraceOpSummary& op = s.ops[opOfNode[r.node]];
    ++op.tasks;
    op.busyNs += r.end - r.ready;
    op.waitNs += r.ready - r.start;
    op.ringWaitNs += r.ringWait;
    if (r.streamed()) {
      ++op.streamedTasks;
      op.loaderWaitNs += r.loaderWait;
      // In unsigned arithmetic: garbage stamps wrap instead of overflowing (C++20 converts back modulo 2^64).
      op.leadNs = int64_t(uint64_t(op.leadNs) + (r.ready - r.loaderFirst));
    }
    TraceSmSummary& sm = bySm[r.sm];
    sm.sm = r.sm;
    ++sm.tasks;
    sm.busyNs += r.end - r.ready;
    sm.waitNs += r.ready - r.start;
    sm.lastEndNs = std::max(sm.lastEndNs, r.end);
  }
  // Ops none of whose tasks were recorded say nothing about this step.
  std::erase_if(s.ops, [](const TraceOpSummary& op) { return op.tasks == 0; });
  if (s.written == 0) return s;

  s.startNs = first;
  s.spanNs = last - first;
  s.gbPerS = s.spanNs ? double(s.estimatedBytes) / double(s.spanNs) : 0.0;
  double total = 0;
  for (const TraceOpSummary& op : s.ops) total += double(op.busyNs) + double(op.waitNs);
  for (TraceOpSummary& op : s.ops) op.share = total > 0 ? (double(op.busyNs) + double(op.waitNs)) / total : 0.0;

  s.sms = bySm.size();
  for (auto& [id, sm] : bySm) {
    sm.lastEndNs -= first;
    s.slowestSms.push_back(sm);
  }
  std::sort(s.slowestSms.begin(), s.slowestSms.end(), [](const TraceSmSummary& a, const TraceSmSummary& b) {
    return a.lastEndNs != b.lastEndNs ? a.lastEndNs > b.lastEndNs : a.sm < b.sm;
  });
  if (s.slowestSms.size() > 5) s.slowestSms.resize(5);
  return s;
}

std::vector<std::string> traceReport(const TraceSummary& s) {
  std::vector<std::string> lines;
  const std::string head = "trace of step " + std::to_string(s.step) + ": ";
  if (s.written == 0) {
    lines.push_back(head + "none of its " + std::to_string(s.records) + " records was written well");
  } else {
    lines.push_back(head + std::to_string(s.written) + (s.written == 1 ? " task on " : " tasks on ") + std::to_string(s.sms) +
                    (s.sms == 1 ? " SM" : " SMs") + " in " + micros(s.spanNs) + " us (the earliest start to the latest end)");
    std::string bound;
    if (s.boundBytes > 0) {
      bound = ", without the upper bound of " + std::to_string(s.boundBytes) + " bytes for ";
      for (size_t i = 0; i < s.boundOps.size(); ++i) bound += (i ? ", " : "") + s.boundOps[i];
    }
    lines.push_back("estimated traffic " + std::to_string(s.estimatedBytes) + " bytes (the compiler's estimate" + bound + "): " +
                    (s.spanNs ? fmt("%.2f", s.gbPerS) + " GB/s over the span" : std::string("no span to divide by")));
    size_t width = 2;
    for (const TraceOpSummary& op : s.ops) width = std::max(width, op.op.size());
    char buf[512];
    std::snprintf(buf, sizeof buf, "%-*s %7s %11s %11s %13s %7s %12s %14s %13s", int(width), "op", "tasks", "busy us",
                  "wait us", "busy/task us", "share", "ring wait us", "loader wait us", "lead/task us");
    lines.push_back(buf);
    for (const TraceOpSummary& op : s.ops) {
      std::snprintf(buf, sizeof buf, "%-*s %7lld %11s %11s %13.3f %6.1f%% %12s %14s %13s", int(width), op.op.c_str(),
                    (long long)op.tasks, micros(op.busyNs).c_str(), micros(op.waitNs).c_str(), op.meanBusyNs() / 1000.0,
                    op.share * 100.0, micros(op.ringWaitNs).c_str(), op.streamedTasks ? micros(op.loaderWaitNs).c_str() : "-",
                    op.streamedTasks ? fmt("%.3f", op.meanLeadNs() / 1000.0).c_str() : "-");
      lines.push_back(buf);
    }
    lines.push_back("(ring wait: the compute threads waited for weight tiles; loader wait: the loader waited for "
                    "free ring slots; lead: how long before the task was ready its first tile copy was issued)");
    lines.push_back("slowest SMs (by their last task's end):");
    for (const TraceSmSummary& sm : s.slowestSms)
      lines.push_back("  SM " + std::to_string(sm.sm) + ": last end " + micros(sm.lastEndNs) + " us, " +
                      std::to_string(sm.tasks) + (sm.tasks == 1 ? " task" : " tasks") + ", busy " + micros(sm.busyNs) +
                      " us, wait " + micros(sm.waitNs) + " us");
  }
  std::string skipped;
  if (s.notWritten)
    skipped += std::to_string(s.notWritten) + (s.notWritten == 1 ? " record" : " records") + " not written (all zero)";
  if (s.malformed)
    skipped += (skipped.empty() ? "" : "; ") + std::to_string(s.malformed) +
               (s.malformed == 1 ? " record" : " records") + " malformed (partly written, times backwards or an unknown node)";
  if (!skipped.empty()) lines.push_back(skipped + ": skipped");
  return lines;
}

std::string traceEventsJson(const TraceInfo& info, std::span<const uint64_t> words, int64_t step) {
  using abi::JsonValue;
  const TraceSummary s = summarizeTrace(info, words, step);
  // Numbers as std::to_string writes them (u64 nanoseconds stay exact); times as micros().
  auto num = [](auto v) { return abi::jsonNumberText(std::to_string(v)); };
  auto str = [](std::string v) { return abi::jsonString(std::move(v)); };
  std::string out = "{\"traceEvents\": [\n";
  bool firstEvent = true;
  auto event = [&](std::vector<abi::JsonMember> members) {
    out += (firstEvent ? "  " : ",\n  ") + abi::jsonText(abi::jsonObject(std::move(members)), {.spaced = true});
    firstEvent = false;
  };
  event({{"ph", str("M")}, {"pid", num(0)}, {"name", str("process_name")},
         {"args", abi::jsonObject({{"name", str("mk_step, step " + std::to_string(step))}})}});
  // One track per SM that ran something, in SM order, and one per SM whose loader warp streamed
  // tiles for a task (pid 1). Loader stamps can precede every task's start (the loader runs
  // ahead): times count from the earlier of the two.
  std::vector<uint32_t> sms, loaderSms;
  uint64_t origin = s.startNs;
  for (size_t i = 0; i < s.records; ++i) {
    const Record r = record(info, words, i);
    if (r.kind != Record::Written) continue;
    sms.push_back(r.sm);
    if (r.streamed()) {
      loaderSms.push_back(r.sm);
      origin = std::min(origin, r.loaderFirst);
    }
  }
  auto tracks = [&](int pid, std::vector<uint32_t>& ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (uint32_t sm : ids) {
      event({{"ph", str("M")}, {"pid", num(pid)}, {"tid", num(sm)}, {"name", str("thread_name")},
             {"args", abi::jsonObject({{"name", str("SM " + std::to_string(sm))}})}});
      event({{"ph", str("M")}, {"pid", num(pid)}, {"tid", num(sm)}, {"name", str("thread_sort_index")},
             {"args", abi::jsonObject({{"sort_index", num(sm)}})}});
    }
  };
  tracks(0, sms);
  if (!loaderSms.empty()) {
    event({{"ph", str("M")}, {"pid", num(1)}, {"name", str("process_name")},
           {"args", abi::jsonObject({{"name", str("loader warps (first to last tile copy issued)")}})}});
    tracks(1, loaderSms);
  }
  for (size_t i = 0; i < s.records; ++i) {
    const Record r = record(info, words, i);
    if (r.kind != Record::Written) continue;
    const TraceNode& node = info.nodes[r.node];
    if (r.streamed())
      event({{"ph", str("X")}, {"pid", num(1)}, {"tid", num(r.sm)}, {"name", str(node.name)}, {"cat", str("loader")},
             {"ts", abi::jsonNumberText(micros(r.loaderFirst - origin))},
             {"dur", abi::jsonNumberText(micros(r.loaderLast - r.loaderFirst))},
             {"args", abi::jsonObject({{"record", num(i)}, {"loader_wait_ns", num(r.loaderWait)}})}});
    if (r.ready > r.start)
      event({{"ph", str("X")}, {"pid", num(0)}, {"tid", num(r.sm)}, {"name", str("wait")}, {"cat", str("wait")},
             {"ts", abi::jsonNumberText(micros(r.start - origin))}, {"dur", abi::jsonNumberText(micros(r.ready - r.start))},
             {"args", abi::jsonObject({{"node", num(r.node)}, {"record", num(i)}})}});
    JsonValue args = abi::jsonObject({{"node", num(r.node)},
                                      {"op", str(node.op)},
                                      {"sm", num(r.sm)},
                                      {"record", num(i)},
                                      {"wait_ns", num(r.ready - r.start)},
                                      {"ring_wait_ns", num(r.ringWait)},
                                      {"est_bytes", num(taskBytes(node))}});
    if (!node.bytesExact) args.members.push_back({"est_bytes_bound", abi::jsonBool(true)});
    event({{"ph", str("X")}, {"pid", num(0)}, {"tid", num(r.sm)}, {"name", str(node.name)}, {"cat", str(node.op)},
           {"ts", abi::jsonNumberText(micros(r.ready - origin))}, {"dur", abi::jsonNumberText(micros(r.end - r.ready))},
           {"args", std::move(args)}});
  }
  const JsonValue other = abi::jsonObject({{"step", num(step)},
                                           {"start_ns", num(origin)},
                                           {"records", num(s.records)},
                                           {"not_written", num(s.notWritten)},
                                           {"malformed", num(s.malformed)}});
  out += "\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": " + abi::jsonText(other, {.spaced = true}) + "}\n";
  return out;
}

void writeTraceFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  out.write(text.data(), std::streamsize(text.size()));
  if (!out.flush()) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
}

}  // namespace mk::runtime
