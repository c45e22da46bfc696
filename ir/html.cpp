// The HTML schedule timeline; see ir/html.h.
#include "ir/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "ir/print.h"

namespace mk::ir {

namespace {

std::string esc(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\n': out += "&#10;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fmtNum(double v, int prec = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", prec, v);
  return buf;
}

std::string sig(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string px(double v) { return fmtNum(v, 2); }

std::string humanBytes(double b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000 && u < 4) b /= 1000, ++u;
  return fmtNum(b, u == 0 ? 0 : 2) + " " + units[u];
}

// Distinct, readable fill colors; ops past the palette get hues spread around the wheel.
std::string opColor(size_t i) {
  static const char* palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                  "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#8c564b"};
  if (i < std::size(palette)) return palette[i];
  char buf[32];
  std::snprintf(buf, sizeof buf, "hsl(%d, 55%%, 55%%)", static_cast<int>((i * 137) % 360));
  return buf;
}

// A round step for the time axis: 1, 2 or 5 times a power of ten, about `target` long.
double niceStep(double target) {
  if (!(target > 0)) return 1;
  double p = std::pow(10.0, std::floor(std::log10(target)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= target) return m * p;
  return 10 * p;
}

}  // namespace

std::string scheduleHtml(const Megakernel& m, const HtmlOptions& opt) {
  const Graph& g = m.graph;
  std::unordered_map<int, const Node*> nodes;
  for (const Node& n : g.nodes) nodes.emplace(n.id, &n);
  std::unordered_map<int, const Task*> tasks;
  for (const Task& t : m.tasks) tasks.emplace(t.id, &t);
  std::unordered_map<int, const Counter*> counters;
  for (const Counter& c : m.counters) counters.emplace(c.id, &c);
  auto opOf = [&](int node) -> std::string {
    auto it = nodes.find(node);
    if (it == nodes.end()) return "?";
    return it->second->func ? it->second->func->opName : "none";
  };

  // Ops in program order, with their colors and totals.
  std::vector<std::string> ops;
  std::map<std::string, size_t> opIndex;
  auto addOp = [&](const std::string& op) {
    if (!opIndex.count(op)) {
      opIndex[op] = ops.size();
      ops.push_back(op);
    }
  };
  for (const Node& n : g.nodes) addOp(n.func ? n.func->opName : "none");
  for (const Task& t : m.tasks) addOp(opOf(t.node));
  std::vector<int64_t> opTasks(ops.size()), opBytes(ops.size());

  // Estimated time per task: its bytes at this SM's share of the bandwidth.
  int lanes = static_cast<int>(m.queues.size());
  double bw = m.target.memoryBandwidth > 0 ? m.target.memoryBandwidth : 1e12;
  double perSm = bw / std::max(1, m.target.sms > 0 ? m.target.sms : lanes);
  auto micros = [&](int64_t bytes) { return static_cast<double>(bytes) / perSm * 1e6; };

  // Where each task's box lies: at its first place in any queue, starting when its SM is free
  // and every counter it waits on is complete (a list-scheduling estimate; should the queues
  // deadlock, the rest is laid out back to back, ignoring waits, and the caption says so).
  struct Box {
    int lane;
    double start, end;  // microseconds
  };
  std::unordered_map<int, Box> boxes;
  std::vector<double> laneEnd(lanes, 0.0);
  std::unordered_map<int, std::vector<int>> producerOf;  // task -> counters it counts toward
  std::unordered_map<int, int64_t> remaining;            // counter -> producers not yet done
  std::unordered_map<int, double> ready;                 // counter -> when its last producer ended
  std::unordered_map<int, int> placed;                   // task -> first queue holding it
  for (int q = 0; q < lanes; ++q)
    for (int id : m.queues[q]) placed.emplace(id, q);
  for (const Counter& c : m.counters) {
    remaining[c.id] = 0;
    ready[c.id] = 0;
    for (int p : c.producers)
      if (placed.count(p)) {
        producerOf[p].push_back(c.id);
        remaining[c.id]++;
      }
  }
  std::vector<size_t> head(lanes, 0);
  bool stuck = false;
  for (bool progress = true; progress;) {
    progress = false;
    for (int q = 0; q < lanes; ++q) {
      while (head[q] < m.queues[q].size()) {
        int id = m.queues[q][head[q]];
        auto it = tasks.find(id);
        double start = laneEnd[q];
        if (placed[id] == q && !boxes.count(id) && it != tasks.end()) {
          bool blocked = false;
          for (int c : it->second->waits) {
            auto r = remaining.find(c);
            if (r == remaining.end()) continue;
            if (r->second > 0) blocked = true;
            else start = std::max(start, ready[c]);
          }
          if (blocked) break;
          double end = start + micros(it->second->bytes);
          boxes[id] = {q, start, end};
          laneEnd[q] = end;
          for (int c : producerOf[id]) {
            remaining[c]--;
            ready[c] = std::max(ready[c], end);
          }
        }
        ++head[q];
        progress = true;
      }
    }
  }
  for (int q = 0; q < lanes; ++q)
    for (; head[q] < m.queues[q].size(); ++head[q]) {
      int id = m.queues[q][head[q]];
      auto it = tasks.find(id);
      if (placed[id] != q || boxes.count(id) || it == tasks.end()) continue;
      stuck = true;
      double end = laneEnd[q] + micros(it->second->bytes);
      boxes[id] = {q, laneEnd[q], end};
      laneEnd[q] = end;
    }
  int64_t totalBytes = 0;
  for (const Task& t : m.tasks) {
    totalBytes += t.bytes;
    size_t o = opIndex[opOf(t.node)];
    opTasks[o]++;
    opBytes[o] += t.bytes;
  }
  double span = 0;
  for (double e : laneEnd) span = std::max(span, e);
  if (!(span > 0)) span = 1;

  const double labelW = 64, top = 34, plotW = opt.plotWidth, right = 16;
  const double laneH = lanes > 64 ? 8 : lanes > 16 ? 14 : 22;
  const double boxH = std::max(2.0, laneH - 2);
  const double height = top + lanes * laneH + 24;
  const double width = labelW + plotW + right;
  auto xOf = [&](double us) { return labelW + us / span * plotW; };
  auto yOf = [&](int lane) { return top + lane * laneH; };

  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>mkdsl schedule: " + esc(g.program) + " " + esc(g.config) + " on " + esc(m.target.name) + "</title>\n";
  h += "<style>\n"
       "body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; background: #fff; }\n"
       "h1 { font-size: 17px; margin: 0 0 6px; }\n"
       "p.meta, p.caption { margin: 4px 0; color: #444; }\n"
       "ul.legend { list-style: none; padding: 0; margin: 8px 0; display: flex; flex-wrap: wrap; gap: 4px 16px; }\n"
       "ul.legend li { white-space: nowrap; }\n"
       "ul.legend span.sw { display: inline-block; width: 12px; height: 12px; margin-right: 5px; vertical-align: -1px; "
       "border: 1px solid #0004; }\n"
       "svg { display: block; border: 1px solid #ddd; }\n"
       "svg text { font: 10px system-ui, sans-serif; fill: #444; }\n"
       "svg rect.task { stroke: #0003; stroke-width: 0.3; }\n"
       "svg rect.task:hover { stroke: #000; stroke-width: 1; }\n"
       "svg line.dep { stroke: #222; stroke-opacity: 0.28; stroke-width: 0.6; }\n"
       "svg line.grid { stroke: #0001; }\n"
       "</style>\n</head>\n<body>\n";
  h += "<h1>Schedule of " + esc(g.program.empty() ? "(unnamed)" : g.program) +
       (g.config.empty() ? "" : " (config " + esc(g.config) + ")") + "</h1>\n";
  h += "<p class=\"meta\">target " + esc(m.target.name) + " (" + esc(m.target.arch) + "), " +
       std::to_string(lanes) + " SMs, " + std::to_string(m.tasks.size()) + " tasks, " +
       std::to_string(m.counters.size()) + " counters, " + humanBytes(static_cast<double>(totalBytes)) +
       " moved. Estimated step time (the longest lane) " + fmtNum(span, 2) + " µs (ideal at " +
       humanBytes(bw) + "/s: " + fmtNum(static_cast<double>(totalBytes) / bw * 1e6, 2) +
       " µs). Box widths: bytes / (bandwidth / SMs); a task starts when its SM is free and the counters it "
       "waits on are complete." +
       (stuck ? " <strong>The queues deadlock under this estimate: the tasks past the deadlock are laid out "
                "back to back, ignoring their waits.</strong>"
              : "") +
       "</p>\n";

  h += "<ul class=\"legend\">\n";
  for (size_t i = 0; i < ops.size(); ++i)
    h += "<li><span class=\"sw\" style=\"background:" + opColor(i) + "\"></span>" + esc(ops[i]) + " — " +
         std::to_string(opTasks[i]) + " tasks, " + humanBytes(static_cast<double>(opBytes[i])) + "</li>\n";
  h += "</ul>\n";

  // Dependency edges: producer box end -> consumer box start, sampled evenly.
  struct Edge {
    int from, to;
  };
  // Every edge once, in queue order, then an even sample of at most maxLines of them.
  std::vector<Edge> all;
  for (const auto& q : m.queues)
    for (int id : q) {
      auto it = tasks.find(id);
      if (it == tasks.end() || placed[id] != &q - &m.queues[0]) continue;
      for (int c : it->second->waits) {
        auto ci = counters.find(c);
        if (ci == counters.end()) continue;
        for (int p : ci->second->producers)
          if (boxes.count(p)) all.push_back({p, id});
      }
    }
  const int64_t totalEdges = static_cast<int64_t>(all.size());
  int64_t stride = opt.maxLines > 0 ? std::max<int64_t>(1, (totalEdges + opt.maxLines - 1) / opt.maxLines) : 0;
  std::vector<Edge> edges;
  for (int64_t k = 0; stride && k < totalEdges && static_cast<int64_t>(edges.size()) < opt.maxLines; k += stride)
    edges.push_back(all[k]);

  h += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + px(width) + "\" height=\"" + px(height) +
       "\" viewBox=\"0 0 " + px(width) + " " + px(height) + "\">\n";
  // Time axis.
  double step = niceStep(span / 10);
  h += "<g class=\"axis\">\n";
  for (double t = 0; t <= span * 1.0001; t += step) {
    double x = xOf(t);
    h += "<line class=\"grid\" x1=\"" + px(x) + "\" y1=\"" + px(top - 4) + "\" x2=\"" + px(x) + "\" y2=\"" +
         px(top + lanes * laneH) + "\"/>";
    h += "<text x=\"" + px(x) + "\" y=\"" + px(top - 8) + "\" text-anchor=\"middle\">" +
         fmtNum(t, step < 1 ? 2 : 0) + " µs</text>\n";
  }
  h += "</g>\n";
  // Lanes.
  int labelEvery = laneH >= 10 ? 1 : 4;
  for (int q = 0; q < lanes; ++q) {
    double y = yOf(q);
    std::string fill = q % 2 ? "#f6f6f6" : "#ffffff";
    h += "<g class=\"lane\" id=\"sm" + std::to_string(q) + "\"><rect x=\"0\" y=\"" + px(y) + "\" width=\"" +
         px(width) + "\" height=\"" + px(laneH) + "\" fill=\"" + fill + "\"/>";
    if (q % labelEvery == 0)
      h += "<text x=\"4\" y=\"" + px(y + laneH - 1.5) + "\">sm " + std::to_string(q) + "</text>";
    h += "\n";
    for (int id : m.queues[q]) {
      auto it = tasks.find(id);
      if (it == tasks.end() || placed[id] != q || !boxes.count(id)) continue;  // drawn at its first place only
      const Box& b = boxes[id];
      const Task& t = *it->second;
      std::string op = opOf(t.node);
      std::string waits;
      for (size_t i = 0; i < t.waits.size(); ++i) waits += (i ? "," : "") + std::string("c") + std::to_string(t.waits[i]);
      std::string signals;
      for (size_t i = 0; i < t.signals.size(); ++i)
        signals += (i ? "," : "") + std::string("c") + std::to_string(t.signals[i]);
      std::string index;
      for (size_t i = 0; i < t.index.size(); ++i) index += (i ? ", " : "") + std::to_string(t.index[i]);
      std::string tip = "task " + std::to_string(t.id) + " " + op + "#" + std::to_string(t.node) + "[" + index +
                        "]\nop " + op + "\nsm " + std::to_string(q) + "\nbytes " + std::to_string(t.bytes) +
                        "\nflops " + std::to_string(t.flops) + "\nwaits " + (waits.empty() ? "-" : waits) +
                        "\nsignals " + (signals.empty() ? "-" : signals) + "\nest. " + sig(b.start) + " .. " + sig(b.end) + " µs";
      double x0 = xOf(b.start), w = std::max(0.6, xOf(b.end) - x0);
      h += "<rect class=\"task\" x=\"" + px(x0) + "\" y=\"" + px(y + (laneH - boxH) / 2) + "\" width=\"" + px(w) +
           "\" height=\"" + px(boxH) + "\" fill=\"" + opColor(opIndex[op]) + "\"><title>" + esc(tip) +
           "</title></rect>\n";
    }
    h += "</g>\n";
  }
  h += "<g class=\"deps\">\n";
  for (const Edge& e : edges) {
    const Box& p = boxes[e.from];
    const Box& c = boxes[e.to];
    h += "<line class=\"dep\" x1=\"" + px(xOf(p.end)) + "\" y1=\"" + px(yOf(p.lane) + laneH / 2) + "\" x2=\"" +
         px(xOf(c.start)) + "\" y2=\"" + px(yOf(c.lane) + laneH / 2) + "\"/>\n";
  }
  h += "</g>\n</svg>\n";
  int64_t omitted = totalEdges - static_cast<int64_t>(edges.size());
  h += "<p class=\"caption\">Lines: " + std::to_string(edges.size()) + " of " + std::to_string(totalEdges) +
       " waits (producer end → consumer start)" +
       (omitted > 0 ? ", " + std::to_string(omitted) + " omitted (every " + std::to_string(stride) + "th drawn)"
                    : std::string(", none omitted")) +
       ". Hover a box for its task, op, index, bytes and waits.</p>\n";
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace mk::ir
