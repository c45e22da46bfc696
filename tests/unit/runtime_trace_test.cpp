// A traced kernel's records as a Chrome trace and a summary (runtime/trace.h), on hand-made
// records of eight words: the JSON parsed back event by event (the SM tracks, the loader warps'
// tracks and the origin they move), the summary's numbers (span, bandwidth, per-op busy, wait,
// ring wait, loader wait and lead, the slowest SMs) and its table, records never written or
// malformed (the loader's stamps included), and garbage.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "abi/json.h"
#include "runtime/metadata.h"
#include "runtime/trace.h"

namespace rt = mk::runtime;

namespace {

constexpr uint64_t T = 1000000;  // the global timer when the step began

rt::TraceInfo info() {
  rt::TraceInfo i;
  i.records = 14;
  i.nodes = {{"embed#0", "embed", 1, 400}, {"matvec#1", "matvec", 2, 1000}, {"matvec#2", "matvec", 1, 600}, {"norm#3", "norm", 1, 100}};
  return i;
}

// The loader's words of a record (metadata.h TraceRingWait .. TraceLoaderWait); all 0 for a task
// that streams no weights.
struct Loader {
  uint64_t ringWait = 0, first = 0, last = 0, wait = 0;
};

void add(std::vector<uint64_t>& w, uint64_t start, uint64_t ready, uint64_t end, uint64_t node, uint64_t sm,
         Loader l = {}) {
  static_assert(rt::TraceWords == 8);
  w.insert(w.end(), {start, ready, end, node << 32 | sm, l.ringWait, l.first, l.last, l.wait});
}

// Five good records on SMs 0, 1 and 3 (three of them streamed weights: matvec's), one never
// written, seven malformed and a partial one.
std::vector<uint64_t> words() {
  std::vector<uint64_t> w;
  add(w, T + 0, T + 0, T + 100, 0, 0);                                  // 0: no wait, no weights
  add(w, T + 100, T + 150, T + 300, 1, 0, {30, T - 40, T + 200, 15});   // 1: wait 50, busy 150; lead 190, the
                                                                        //    earliest stamp of all
  add(w, T + 10, T + 60, T + 260, 1, 1, {20, T + 70, T + 180, 5});      // 2: wait 50, busy 200; lead -10 (late)
  add(w, T + 260, T + 400, T + 500, 2, 1, {10, T + 280, T + 450, 0});   // 3: wait 140, busy 100; lead 120
  add(w, 0, 0, 0, 0, 0);                                                // 4: never written
  add(w, T + 50, T + 40, T + 60, 3, 2);                                 // 5: ready before start
  add(w, T + 0, T + 10, 0, 3, 2);                                       // 6: no end (the step stopped)
  add(w, T + 0, T + 10, T + 20, 9, 2);                                  // 7: no node 9
  add(w, T + 300, T + 310, T + 1100, 3, 3);                             // 8: wait 10, busy 790
  add(w, T + 0, T + 10, T + 20, 1, 2, {3, T + 5, 0, 0});                // 9: loader first, no last
  add(w, T + 0, T + 10, T + 20, 1, 2, {3, 0, T + 5, 0});                // 10: loader last, no first
  add(w, T + 0, T + 10, T + 20, 1, 2, {3, T + 8, T + 6, 0});            // 11: loader last before first
  add(w, 0, 0, 0, 0, 0, {0, T + 5, T + 6, 0});                          // 12: only the loader's stamps
  w.insert(w.end(), {T, T + 1, T + 2, 1ull << 32, 0, T, T + 1});        // 13: seven words of eight
  return w;
}

double number(const mk::abi::JsonValue* v) {
  REQUIRE(v);
  REQUIRE(v->kind == mk::abi::JsonValue::Number);
  return std::strtod(v->text.c_str(), nullptr);
}
std::string text(const mk::abi::JsonValue* v) {
  REQUIRE(v);
  REQUIRE(v->kind == mk::abi::JsonValue::String);
  return v->text;
}

}  // namespace

TEST_CASE("runtime trace: the summary's span, bandwidth, per-op and per-SM sums") {
  const rt::TraceSummary s = rt::summarizeTrace(info(), words(), 3);
  CHECK(s.step == 3);
  CHECK(s.records == 14);
  CHECK(s.written == 5);
  CHECK(s.notWritten == 1);
  CHECK(s.malformed == 8);
  CHECK(s.startNs == T);  // the earliest start: the loader's earlier stamp (record 1) moves only the JSON's origin
  CHECK(s.spanNs == 1100);
  CHECK(s.estimatedBytes == 2100);
  CHECK(s.gbPerS == doctest::Approx(2100.0 / 1100.0));
  CHECK(s.sms == 3);

  // Ops in the nodes' order, both matvec nodes together.
  REQUIRE(s.ops.size() == 3);
  CHECK(s.ops[0].op == "embed");
  CHECK(s.ops[0].tasks == 1);
  CHECK(s.ops[0].busyNs == 100);
  CHECK(s.ops[0].waitNs == 0);
  CHECK(s.ops[0].ringWaitNs == 0);
  CHECK(s.ops[0].streamedTasks == 0);
  CHECK(s.ops[0].loaderWaitNs == 0);
  CHECK(s.ops[0].leadNs == 0);
  CHECK(s.ops[0].meanLeadNs() == 0);
  CHECK(s.ops[1].op == "matvec");
  CHECK(s.ops[1].tasks == 3);
  CHECK(s.ops[1].busyNs == 450);
  CHECK(s.ops[1].waitNs == 240);
  CHECK(s.ops[1].meanBusyNs() == doctest::Approx(150));
  // Records 1, 2 and 3 streamed: ring waits 30 + 20 + 10, loader waits 15 + 5 + 0, leads (ready
  // minus the loader's first copy) 190 - 10 + 120; none of the malformed matvec records (9 to 11).
  CHECK(s.ops[1].ringWaitNs == 60);
  CHECK(s.ops[1].streamedTasks == 3);
  CHECK(s.ops[1].loaderWaitNs == 20);
  CHECK(s.ops[1].leadNs == 300);
  CHECK(s.ops[1].meanLeadNs() == doctest::Approx(100));
  CHECK(s.ops[2].op == "norm");
  CHECK(s.ops[2].busyNs == 790);
  CHECK(s.ops[2].waitNs == 10);
  CHECK(s.ops[2].ringWaitNs == 0);
  CHECK(s.ops[2].streamedTasks == 0);
  CHECK(s.ops[0].share == doctest::Approx(100.0 / 1590));
  CHECK(s.ops[1].share == doctest::Approx(690.0 / 1590));
  CHECK(s.ops[2].share == doctest::Approx(800.0 / 1590));

  // The SMs that finished last first; times from the earliest start.
  REQUIRE(s.slowestSms.size() == 3);
  CHECK(s.slowestSms[0].sm == 3);
  CHECK(s.slowestSms[0].lastEndNs == 1100);
  CHECK(s.slowestSms[0].tasks == 1);
  CHECK(s.slowestSms[1].sm == 1);
  CHECK(s.slowestSms[1].lastEndNs == 500);
  CHECK(s.slowestSms[1].busyNs == 300);
  CHECK(s.slowestSms[1].waitNs == 190);
  CHECK(s.slowestSms[1].tasks == 2);
  CHECK(s.slowestSms[2].sm == 0);
  CHECK(s.slowestSms[2].lastEndNs == 300);

  const std::vector<std::string> lines = rt::traceReport(s);
  REQUIRE(lines.size() == 12);
  CHECK(lines[0] == "trace of step 3: 5 tasks on 3 SMs in 1.100 us (the earliest start to the latest end)");
  CHECK(lines[1] == "estimated traffic 2100 bytes (the compiler's estimate): 1.91 GB/s over the span");
  // The ring's columns: "-" for the ops that streamed nothing.
  CHECK(lines[2] ==
        "op       tasks     busy us     wait us  busy/task us   share ring wait us loader wait us  lead/task us");
  CHECK(lines[3] ==
        "embed        1       0.100       0.000         0.100    6.3%        0.000              -             -");
  CHECK(lines[4] ==
        "matvec       3       0.450       0.240         0.150   43.4%        0.060          0.020         0.100");
  CHECK(lines[5] ==
        "norm         1       0.790       0.010         0.790   50.3%        0.000              -             -");
  CHECK(lines[6] == "(ring wait: the compute threads waited for weight tiles; loader wait: the loader waited for free "
                    "ring slots; lead: how long before the task was ready its first tile copy was issued)");
  CHECK(lines[7] == "slowest SMs (by their last task's end):");
  CHECK(lines[8] == "  SM 3: last end 1.100 us, 1 task, busy 0.790 us, wait 0.010 us");
  CHECK(lines[9] == "  SM 1: last end 0.500 us, 2 tasks, busy 0.300 us, wait 0.190 us");
  CHECK(lines[10] == "  SM 0: last end 0.300 us, 2 tasks, busy 0.250 us, wait 0.050 us");
  CHECK(lines[11] ==
        "1 record not written (all zero); 8 records malformed (partly written, times backwards or an unknown node): skipped");
}

TEST_CASE("runtime trace: upper-bound bytes (loops to a run-time bound) are named and left out of the bandwidth") {
  rt::TraceInfo i = info();
  i.nodes[2].bytesExact = false;  // matvec#2's 600 bytes
  const rt::TraceSummary s = rt::summarizeTrace(i, words(), 3);
  CHECK(s.estimatedBytes == 1500);
  CHECK(s.boundBytes == 600);
  CHECK(s.boundOps == std::vector<std::string>{"matvec"});
  CHECK(s.gbPerS == doctest::Approx(1500.0 / 1100.0));
  CHECK(rt::traceReport(s)[1] ==
        "estimated traffic 1500 bytes (the compiler's estimate, without the upper bound of 600 bytes for matvec): "
        "1.36 GB/s over the span");
  // In the Chrome trace, matvec#2's slices say their est_bytes are an upper bound; matvec#1's do not.
  const mk::abi::JsonValue doc = mk::abi::parseJson(rt::traceEventsJson(i, words(), 3));
  int bound = 0, exact = 0;
  for (const mk::abi::JsonValue& e : doc.get("traceEvents")->items) {
    const mk::abi::JsonValue* args = e.get("args");
    if (!args || !args->get("est_bytes")) continue;
    const mk::abi::JsonValue* b = args->get("est_bytes_bound");
    if (text(e.get("name")) == "matvec#2") {
      REQUIRE(b);
      CHECK(b->kind == mk::abi::JsonValue::Bool);
      CHECK(b->b);
      ++bound;
    } else {
      CHECK(b == nullptr);
      ++exact;
    }
  }
  CHECK(bound == 1);
  CHECK(exact > 0);
}

TEST_CASE("runtime trace: the loader's words: not written only when all eight are zero, malformed when half there") {
  rt::TraceInfo one;
  one.nodes = {{"mv#0", "mv", 4, 4000}};
  auto kind = [&](Loader l, std::vector<uint64_t> head = {T, T + 10, T + 50}) {
    std::vector<uint64_t> w;
    add(w, head[0], head[1], head[2], 0, 0, l);
    const rt::TraceSummary s = rt::summarizeTrace(one, w, 1);
    REQUIRE(s.written + s.notWritten + s.malformed == 1);
    return s.written ? "written" : s.notWritten ? "not written" : "malformed";
  };
  CHECK(kind({}) == std::string("written"));                        // streamed nothing
  CHECK(kind({0, T + 1, T + 1, 0}) == std::string("written"));      // one tile, first = last
  CHECK(kind({0, T - 500, T + 60, 0}) == std::string("written"));   // the loader ran ahead (and past end)
  CHECK(kind({0, T + 1, 0, 0}) == std::string("malformed"));        // first without last
  CHECK(kind({0, 0, T + 1, 0}) == std::string("malformed"));        // last without first
  CHECK(kind({0, T + 2, T + 1, 0}) == std::string("malformed"));    // last before first
  CHECK(kind({0, 0, 0, 0}, {0, 0, 0}) == std::string("not written"));
  for (int word = 4; word < 8; ++word) {  // any one loader word makes a record of zero times malformed
    INFO(word);
    std::vector<uint64_t> w(8, 0);
    w[size_t(word)] = 9;
    CHECK(rt::summarizeTrace(one, w, 1).malformed == 1);
  }

  // A ring wait counts for any task (the summary sums it over all of them); loader wait and lead
  // only over the streamed tasks, and a task the loader served late has a negative lead.
  std::vector<uint64_t> w;
  add(w, T, T + 10, T + 50, 0, 0, {4, 0, 0, 0});
  add(w, T, T + 100, T + 150, 0, 1, {6, T + 160, T + 170, 25});  // lead -60
  add(w, T, T + 100, T + 150, 0, 2, {8, T + 120, T + 130, 5});   // lead -20
  const rt::TraceSummary s = rt::summarizeTrace(one, w, 1);
  REQUIRE(s.ops.size() == 1);
  CHECK(s.ops[0].tasks == 3);
  CHECK(s.ops[0].ringWaitNs == 18);
  CHECK(s.ops[0].streamedTasks == 2);
  CHECK(s.ops[0].loaderWaitNs == 30);
  CHECK(s.ops[0].leadNs == -80);
  CHECK(s.ops[0].meanLeadNs() == doctest::Approx(-40));
  const std::vector<std::string> lines = rt::traceReport(s);
  REQUIRE(lines.size() >= 4);
  CHECK(lines[2] == "op   tasks     busy us     wait us  busy/task us   share ring wait us loader wait us  lead/task us");
  CHECK(lines[3] == "mv       3       0.140       0.210         0.047  100.0%        0.018          0.030        -0.040");
}

TEST_CASE("runtime trace: skipped records are counted, at most five slowest SMs, ties by SM number") {
  rt::TraceInfo one;
  one.nodes = {{"n#0", "n", 8, 800}};
  std::vector<uint64_t> w;
  for (uint64_t sm = 0; sm < 7; ++sm) add(w, T, T + 5, T + 100 + (sm % 3) * 10, 0, sm);  // ends 100, 110, 120, ...
  add(w, 0, 0, 0, 0, 0);
  rt::TraceSummary s = rt::summarizeTrace(one, w, 1);
  CHECK(s.written == 7);
  CHECK(s.notWritten == 1);
  REQUIRE(s.slowestSms.size() == 5);
  const uint32_t order[] = {2, 5, 1, 4, 0};  // end 120 (SMs 2, 5), 110 (1, 4), 100 (0, 3, 6)
  for (size_t i = 0; i < 5; ++i) CHECK(s.slowestSms[i].sm == order[i]);
  CHECK(rt::traceReport(s).back() == "1 record not written (all zero): skipped");

  // Nothing written well: one line that says so, and the counts.
  s = rt::summarizeTrace(info(), std::vector<uint64_t>(2 * rt::TraceWords, 0), 2);
  CHECK(s.written == 0);
  CHECK(s.spanNs == 0);
  CHECK(s.ops.empty());
  CHECK(rt::traceReport(s) == std::vector<std::string>{"trace of step 2: none of its 2 records was written well",
                                                       "2 records not written (all zero): skipped"});
  // A span of zero has no bandwidth.
  w.clear();
  add(w, T, T, T, 0, 0);
  s = rt::summarizeTrace(one, w, 1);
  CHECK(s.spanNs == 0);
  CHECK(s.gbPerS == 0);
  CHECK(rt::traceReport(s)[1] == "estimated traffic 800 bytes (the compiler's estimate): no span to divide by");
}

TEST_CASE("runtime trace: the Chrome trace-event JSON, parsed back") {
  const mk::abi::JsonValue doc = mk::abi::parseJson(rt::traceEventsJson(info(), words(), 3));
  REQUIRE(doc.kind == mk::abi::JsonValue::Object);
  CHECK(text(doc.get("displayTimeUnit")) == "ns");
  const mk::abi::JsonValue* other = doc.get("otherData");
  REQUIRE(other);
  CHECK(number(other->get("step")) == 3);
  // The origin: record 1's loader stamp, 40 ns before the earliest start.
  CHECK(other->get("start_ns")->text == std::to_string(T - 40));
  CHECK(number(other->get("records")) == 14);
  CHECK(number(other->get("not_written")) == 1);
  CHECK(number(other->get("malformed")) == 8);
  const mk::abi::JsonValue* events = doc.get("traceEvents");
  REQUIRE(events);
  REQUIRE(events->kind == mk::abi::JsonValue::Array);

  // Process 0, a named and ordered track per SM that ran something (0, 1 and 3), then process 1
  // (the loader warps) with a track per SM whose loader streamed tiles (0 and 1).
  std::vector<const mk::abi::JsonValue*> meta, slices, loader;
  for (const mk::abi::JsonValue& e : events->items) {
    const double pid = number(e.get("pid"));
    CHECK((pid == 0 || pid == 1));
    if (text(e.get("ph")) == "M") meta.push_back(&e);
    else (pid == 0 ? slices : loader).push_back(&e);
  }
  REQUIRE(meta.size() == 12);
  CHECK(text(meta[0]->get("name")) == "process_name");
  CHECK(number(meta[0]->get("pid")) == 0);
  CHECK(text(meta[0]->get("args")->get("name")) == "mk_step, step 3");
  auto checkTracks = [&](size_t at, double pid, std::vector<double> tracks) {
    for (size_t k = 0; k < tracks.size(); ++k) {
      INFO(pid << " " << tracks[k]);
      const mk::abi::JsonValue* name = meta[at + 2 * k];
      const mk::abi::JsonValue* sort = meta[at + 2 * k + 1];
      CHECK(number(name->get("pid")) == pid);
      CHECK(text(name->get("name")) == "thread_name");
      CHECK(number(name->get("tid")) == tracks[k]);
      CHECK(text(name->get("args")->get("name")) == "SM " + std::to_string(int(tracks[k])));
      CHECK(number(sort->get("pid")) == pid);
      CHECK(text(sort->get("name")) == "thread_sort_index");
      CHECK(number(sort->get("tid")) == tracks[k]);
      CHECK(number(sort->get("args")->get("sort_index")) == tracks[k]);
    }
  };
  checkTracks(1, 0, {0, 1, 3});
  CHECK(number(meta[7]->get("pid")) == 1);
  CHECK(text(meta[7]->get("name")) == "process_name");
  CHECK(text(meta[7]->get("args")->get("name")) == "loader warps (first to last tile copy issued)");
  checkTracks(8, 1, {0, 1});

  // A wait slice for each good record that waited (not record 0), and one per good record.
  REQUIRE(slices.size() == 9);
  int waits = 0;
  for (const mk::abi::JsonValue* e : slices) {
    CHECK(text(e->get("ph")) == "X");
    waits += text(e->get("name")) == "wait";
  }
  CHECK(waits == 4);
  // Record 3 (matvec#2 on SM 1): waits from 260 ns to 400 ns, runs to 500 ns (plus the 40 ns the
  // origin lies before the earliest start).
  const mk::abi::JsonValue* wait3 = nullptr;
  const mk::abi::JsonValue* run3 = nullptr;
  for (const mk::abi::JsonValue* e : slices)
    if (number(e->get("args")->get("record")) == 3) (text(e->get("name")) == "wait" ? wait3 : run3) = e;
  REQUIRE(wait3);
  REQUIRE(run3);
  CHECK(wait3->get("ts")->text == "0.300");
  CHECK(wait3->get("dur")->text == "0.140");
  CHECK(number(wait3->get("tid")) == 1);
  CHECK(text(wait3->get("cat")) == "wait");
  CHECK(wait3->get("args")->get("ring_wait_ns") == nullptr);
  CHECK(text(run3->get("name")) == "matvec#2");
  CHECK(text(run3->get("cat")) == "matvec");
  CHECK(number(run3->get("tid")) == 1);
  CHECK(run3->get("ts")->text == "0.440");
  CHECK(run3->get("dur")->text == "0.100");
  const mk::abi::JsonValue* args = run3->get("args");
  CHECK(number(args->get("node")) == 2);
  CHECK(text(args->get("op")) == "matvec");
  CHECK(number(args->get("sm")) == 1);
  CHECK(number(args->get("wait_ns")) == 140);
  CHECK(number(args->get("ring_wait_ns")) == 10);
  CHECK(number(args->get("est_bytes")) == 600);
  CHECK(args->get("est_bytes_bound") == nullptr);  // exact
  // matvec#1's 1000 bytes over its 2 tasks; record 8 ends 1.1 us after the earliest start.
  for (const mk::abi::JsonValue* e : slices) {
    const double record = number(e->get("args")->get("record"));
    if (record == 1 && text(e->get("name")) != "wait") {
      CHECK(number(e->get("args")->get("est_bytes")) == 500);
      CHECK(number(e->get("args")->get("ring_wait_ns")) == 30);
    }
    if (record == 0 && text(e->get("name")) != "wait") {
      CHECK(e->get("ts")->text == "0.040");
      CHECK(number(e->get("args")->get("ring_wait_ns")) == 0);
    }
    if (record == 8 && text(e->get("name")) != "wait") {
      CHECK(e->get("ts")->text == "0.350");
      CHECK(e->get("dur")->text == "0.790");
    }
    CHECK(record != 4);
    CHECK(record < 8.5);
    CHECK((record < 4.5 || record > 7.5));  // neither the unwritten nor the malformed ones
  }

  // The loader slices: one per good record that streamed (1, 2, 3; not the malformed 9 to 12),
  // on its SM's track of process 1, from the first tile copy issued to the last.
  REQUIRE(loader.size() == 3);
  struct Want {
    double record, tid;
    const char* name;
    const char* ts;
    const char* dur;
    double wait;
  } const want[] = {{1, 0, "matvec#1", "0.000", "0.240", 15},
                    {2, 1, "matvec#1", "0.110", "0.110", 5},
                    {3, 1, "matvec#2", "0.320", "0.170", 0}};
  for (size_t k = 0; k < 3; ++k) {
    INFO(k);
    const mk::abi::JsonValue* e = loader[k];
    CHECK(text(e->get("ph")) == "X");
    CHECK(text(e->get("cat")) == "loader");
    CHECK(text(e->get("name")) == want[k].name);
    CHECK(number(e->get("tid")) == want[k].tid);
    CHECK(e->get("ts")->text == want[k].ts);
    CHECK(e->get("dur")->text == want[k].dur);
    REQUIRE(e->get("args"));
    CHECK(e->get("args")->members.size() == 2);
    CHECK(number(e->get("args")->get("record")) == want[k].record);
    CHECK(number(e->get("args")->get("loader_wait_ns")) == want[k].wait);
  }

  // Without a streamed record there is no process 1, and times count from the earliest start.
  {
    std::vector<uint64_t> w;
    add(w, T + 20, T + 30, T + 40, 0, 5);
    add(w, T, T, T + 10, 3, 4);
    add(w, T, T + 10, T + 20, 1, 2, {0, T - 100, 0, 0});  // malformed: its stamp moves nothing
    const mk::abi::JsonValue plain = mk::abi::parseJson(rt::traceEventsJson(info(), w, 1));
    CHECK(plain.get("otherData")->get("start_ns")->text == std::to_string(T));
    size_t events = 0;
    for (const mk::abi::JsonValue& e : plain.get("traceEvents")->items) {
      ++events;
      CHECK(number(e.get("pid")) == 0);
      if (text(e.get("ph")) == "X" && text(e.get("name")) == "embed#0") CHECK(e.get("ts")->text == "0.030");
    }
    CHECK(events == 1 + 2 * 2 + 3);  // the process, two tracks, a wait and two tasks
  }
  // Names are JSON-escaped, also on the loader's slices.
  rt::TraceInfo odd;
  odd.nodes = {{"a\"b\\c\n#0", "a\"b", 1, 3}};
  std::vector<uint64_t> w;
  add(w, T, T + 1, T + 2, 0, 0, {0, T, T + 1, 0});
  const mk::abi::JsonValue oddDoc = mk::abi::parseJson(rt::traceEventsJson(odd, w, 1));
  const std::vector<mk::abi::JsonValue>& items = oddDoc.get("traceEvents")->items;
  CHECK(text(items.back().get("name")) == "a\"b\\c\n#0");
  CHECK(text(items.back().get("cat")) == "a\"b");
  CHECK(text(items[items.size() - 3].get("name")) == "a\"b\\c\n#0");  // the loader's, then the wait
  CHECK(text(items[items.size() - 3].get("cat")) == "loader");
}

TEST_CASE("runtime trace: garbage records never crash it") {
  std::mt19937_64 rng(7);
  const rt::TraceInfo i = info();
  for (int round = 0; round < 200; ++round) {
    std::vector<uint64_t> w(rng() % 128);
    for (uint64_t& x : w) {
      switch (rng() % 4) {
        case 0: x = 0; break;
        case 1: x = ~uint64_t(0) - rng() % 3; break;
        case 2: x = T + rng() % 1000; break;
        default: x = rng(); break;
      }
    }
    const rt::TraceSummary s = rt::summarizeTrace(i, w, 1);
    CHECK(s.written + s.notWritten + s.malformed == s.records);
    CHECK(s.records == (w.size() + 7) / 8);  // a trailing partial record counts (as malformed)
    CHECK(s.slowestSms.size() <= 5);
    CHECK_FALSE(rt::traceReport(s).empty());
    const mk::abi::JsonValue doc = mk::abi::parseJson(rt::traceEventsJson(i, w, 1));  // throws on bad JSON
    CHECK(doc.get("traceEvents") != nullptr);
  }
  // No nodes at all: every written record names an unknown node.
  const rt::TraceSummary s = rt::summarizeTrace(rt::TraceInfo{}, words(), 1);
  CHECK(s.written == 0);
  CHECK(s.malformed == 13);
}
