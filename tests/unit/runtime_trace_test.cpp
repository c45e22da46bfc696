// A traced kernel's records as a Chrome trace and a summary (runtime/trace.h), on hand-made
// records: the JSON parsed back event by event, the summary's numbers (span, bandwidth, per-op
// busy and wait, the slowest SMs), records never written or malformed, and garbage.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "runtime/json.h"
#include "runtime/metadata.h"
#include "runtime/trace.h"

namespace rt = mk::runtime;

namespace {

constexpr uint64_t T = 1000000;  // the global timer when the step began

rt::TraceInfo info() {
  rt::TraceInfo i;
  i.records = 10;
  i.nodes = {{"embed#0", "embed", 1, 400}, {"matvec#1", "matvec", 2, 1000}, {"matvec#2", "matvec", 1, 600}, {"norm#3", "norm", 1, 100}};
  return i;
}

void add(std::vector<uint64_t>& w, uint64_t start, uint64_t ready, uint64_t end, uint64_t node, uint64_t sm) {
  w.insert(w.end(), {start, ready, end, node << 32 | sm});
}

// Five good records on SMs 0, 1 and 3, one never written, three malformed and a partial one.
std::vector<uint64_t> words() {
  std::vector<uint64_t> w;
  add(w, T + 0, T + 0, T + 100, 0, 0);      // 0: no wait
  add(w, T + 100, T + 150, T + 300, 1, 0);  // 1: wait 50, busy 150
  add(w, T + 10, T + 60, T + 260, 1, 1);    // 2: wait 50, busy 200
  add(w, T + 260, T + 400, T + 500, 2, 1);  // 3: wait 140, busy 100
  add(w, 0, 0, 0, 0, 0);                    // 4: never written
  add(w, T + 50, T + 40, T + 60, 3, 2);     // 5: ready before start
  add(w, T + 0, T + 10, 0, 3, 2);           // 6: no end (the step stopped)
  add(w, T + 0, T + 10, T + 20, 9, 2);      // 7: no node 9
  add(w, T + 300, T + 310, T + 1100, 3, 3); // 8: wait 10, busy 790
  w.insert(w.end(), {T, T});                // 9: half a record
  return w;
}

double number(const rt::JsonValue* v) {
  REQUIRE(v);
  REQUIRE(v->kind == rt::JsonValue::Number);
  return std::strtod(v->text.c_str(), nullptr);
}
std::string text(const rt::JsonValue* v) {
  REQUIRE(v);
  REQUIRE(v->kind == rt::JsonValue::String);
  return v->text;
}

}  // namespace

TEST_CASE("runtime trace: the summary's span, bandwidth, per-op and per-SM sums") {
  const rt::TraceSummary s = rt::summarizeTrace(info(), words(), 3);
  CHECK(s.step == 3);
  CHECK(s.records == 10);
  CHECK(s.written == 5);
  CHECK(s.notWritten == 1);
  CHECK(s.malformed == 4);
  CHECK(s.startNs == T);
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
  CHECK(s.ops[1].op == "matvec");
  CHECK(s.ops[1].tasks == 3);
  CHECK(s.ops[1].busyNs == 450);
  CHECK(s.ops[1].waitNs == 240);
  CHECK(s.ops[1].meanBusyNs() == doctest::Approx(150));
  CHECK(s.ops[2].op == "norm");
  CHECK(s.ops[2].busyNs == 790);
  CHECK(s.ops[2].waitNs == 10);
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
  REQUIRE(lines.size() == 11);
  CHECK(lines[0] == "trace of step 3: 5 tasks on 3 SMs in 1.100 us (the earliest start to the latest end)");
  CHECK(lines[1] == "estimated traffic 2100 bytes (the compiler's estimate): 1.91 GB/s over the span");
  CHECK(lines[2] == "op       tasks     busy us     wait us  busy/task us   share");
  CHECK(lines[3] == "embed        1       0.100       0.000         0.100    6.3%");
  CHECK(lines[4] == "matvec       3       0.450       0.240         0.150   43.4%");
  CHECK(lines[5] == "norm         1       0.790       0.010         0.790   50.3%");
  CHECK(lines[6] == "slowest SMs (by their last task's end):");
  CHECK(lines[7] == "  SM 3: last end 1.100 us, 1 task, busy 0.790 us, wait 0.010 us");
  CHECK(lines[8] == "  SM 1: last end 0.500 us, 2 tasks, busy 0.300 us, wait 0.190 us");
  CHECK(lines[9] == "  SM 0: last end 0.300 us, 2 tasks, busy 0.250 us, wait 0.050 us");
  CHECK(lines[10] ==
        "1 record not written (all zero); 4 records malformed (partly written, times backwards or an unknown node): skipped");
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
  s = rt::summarizeTrace(info(), std::vector<uint64_t>(8, 0), 2);
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
  const rt::JsonValue doc = rt::parseJson(rt::traceEventsJson(info(), words(), 3));
  REQUIRE(doc.kind == rt::JsonValue::Object);
  CHECK(text(doc.get("displayTimeUnit")) == "ns");
  const rt::JsonValue* other = doc.get("otherData");
  REQUIRE(other);
  CHECK(number(other->get("step")) == 3);
  CHECK(number(other->get("start_ns")) == double(T));
  CHECK(number(other->get("records")) == 10);
  CHECK(number(other->get("not_written")) == 1);
  CHECK(number(other->get("malformed")) == 4);
  const rt::JsonValue* events = doc.get("traceEvents");
  REQUIRE(events);
  REQUIRE(events->kind == rt::JsonValue::Array);

  // The process, then a named and ordered track per SM that ran something (0, 1 and 3).
  std::vector<const rt::JsonValue*> meta, slices;
  for (const rt::JsonValue& e : events->items) {
    CHECK(number(e.get("pid")) == 0);
    (text(e.get("ph")) == "M" ? meta : slices).push_back(&e);
  }
  REQUIRE(meta.size() == 7);
  CHECK(text(meta[0]->get("name")) == "process_name");
  const double tracks[] = {0, 1, 3};
  for (size_t k = 0; k < 3; ++k) {
    CHECK(text(meta[1 + 2 * k]->get("name")) == "thread_name");
    CHECK(number(meta[1 + 2 * k]->get("tid")) == tracks[k]);
    CHECK(text(meta[1 + 2 * k]->get("args")->get("name")) == "SM " + std::to_string(int(tracks[k])));
    CHECK(text(meta[2 + 2 * k]->get("name")) == "thread_sort_index");
  }

  // A wait slice for each good record that waited (not record 0), and one per good record.
  REQUIRE(slices.size() == 9);
  int waits = 0;
  for (const rt::JsonValue* e : slices) {
    CHECK(text(e->get("ph")) == "X");
    waits += text(e->get("name")) == "wait";
  }
  CHECK(waits == 4);
  // Record 3 (matvec#2 on SM 1): waits from 260 ns to 400 ns, runs to 500 ns.
  const rt::JsonValue* wait3 = nullptr;
  const rt::JsonValue* run3 = nullptr;
  for (const rt::JsonValue* e : slices)
    if (number(e->get("args")->get("record")) == 3) (text(e->get("name")) == "wait" ? wait3 : run3) = e;
  REQUIRE(wait3);
  REQUIRE(run3);
  CHECK(wait3->get("ts")->text == "0.260");
  CHECK(wait3->get("dur")->text == "0.140");
  CHECK(number(wait3->get("tid")) == 1);
  CHECK(text(run3->get("name")) == "matvec#2");
  CHECK(text(run3->get("cat")) == "matvec");
  CHECK(number(run3->get("tid")) == 1);
  CHECK(run3->get("ts")->text == "0.400");
  CHECK(run3->get("dur")->text == "0.100");
  const rt::JsonValue* args = run3->get("args");
  CHECK(number(args->get("node")) == 2);
  CHECK(text(args->get("op")) == "matvec");
  CHECK(number(args->get("sm")) == 1);
  CHECK(number(args->get("wait_ns")) == 140);
  CHECK(number(args->get("est_bytes")) == 600);
  // matvec#1's 1000 bytes over its 2 tasks; record 8 ends 1.1 us after the earliest start.
  for (const rt::JsonValue* e : slices) {
    const double record = number(e->get("args")->get("record"));
    if (record == 1 && text(e->get("name")) != "wait") CHECK(number(e->get("args")->get("est_bytes")) == 500);
    if (record == 8 && text(e->get("name")) != "wait") {
      CHECK(e->get("ts")->text == "0.310");
      CHECK(e->get("dur")->text == "0.790");
    }
    CHECK(record != 4);
    CHECK(record < 8.5);
    CHECK((record < 4.5 || record > 7.5));  // neither the unwritten nor the malformed ones
  }
  // Names are JSON-escaped.
  rt::TraceInfo odd;
  odd.nodes = {{"a\"b\\c\n#0", "a\"b", 1, 3}};
  std::vector<uint64_t> w;
  add(w, T, T + 1, T + 2, 0, 0);
  const rt::JsonValue oddDoc = rt::parseJson(rt::traceEventsJson(odd, w, 1));
  CHECK(text(oddDoc.get("traceEvents")->items.back().get("name")) == "a\"b\\c\n#0");
}

TEST_CASE("runtime trace: garbage records never crash it") {
  std::mt19937_64 rng(7);
  const rt::TraceInfo i = info();
  for (int round = 0; round < 200; ++round) {
    std::vector<uint64_t> w(rng() % 64);
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
    CHECK(s.records == (w.size() + 3) / 4);
    CHECK(s.slowestSms.size() <= 5);
    CHECK_FALSE(rt::traceReport(s).empty());
    const rt::JsonValue doc = rt::parseJson(rt::traceEventsJson(i, w, 1));  // throws on bad JSON
    CHECK(doc.get("traceEvents") != nullptr);
  }
  // No nodes at all: every written record names an unknown node.
  const rt::TraceSummary s = rt::summarizeTrace(rt::TraceInfo{}, words(), 1);
  CHECK(s.written == 0);
  CHECK(s.malformed == 9);
}
