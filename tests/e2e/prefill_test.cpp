// Prefill on the CPU: the prefill_logits step of examples/llama_tiny.mk (std.llama's prefill
// forms, a chunk of T prompt tokens per step; `prefill` without every row's logits) on the
// interpreter, position by position against the program's decode step, against transformers'
// float32 goldens (tests/data), and with its KV cache handed to decode.
//
// The prefill's products run on bf16 operands: it rounds the normalised rows (the inputs of the
// q/k/v, gate/up and head products) and the attention probabilities to bf16, where decode keeps
// them f32; everything else is rounded where decode rounds it, and the sums go in another order.
// Each bf16 rounding moves a value by at most 2^-9 of itself, so the logits differ from decode's
// by a few 2^-9 relative, not by the 2^-24-per-term bound of a summation order alone: the gate
// below (rel L2 <= 1e-2, the distance at which transformers' own bf16 run sits from its float32 one,
// tests/data/README.md) is that size, and the prefill must stay as close to transformers float32 as
// decode's gate asks of decode (<= 5e-3).
//
// Run: build/tests/mk_prefill_tests   (ctest: the `e2e.prefill: ...` tests)
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "interp/interp.h"
#include "runtime/npy.h"
#include "runtime/safetensors.h"
#include "tests/e2e/e2e.h"
#include "tests/reference/llama_ref.h"

using namespace mk;
using namespace mk::e2e;

namespace {

const std::string kData = kRoot + "/tests/data";

const ir::Megakernel& decodeKernel() {
  static const ir::Megakernel mk = buildKernel(kRoot + "/examples/llama_tiny.mk", "", {}, 0, "decode");
  return mk;
}
const ir::Megakernel& prefillKernel() {
  static const ir::Megakernel mk = buildKernel(kRoot + "/examples/llama_tiny.mk", "", {}, 0, "prefill_logits");
  return mk;
}
const ir::Megakernel& prefillOnlyKernel() {
  static const ir::Megakernel mk = buildKernel(kRoot + "/examples/llama_tiny.mk", "", {}, 0, "prefill");
  return mk;
}

int tensorNamed(const ir::Megakernel& mk, const std::string& name) {
  for (const auto& t : mk.graph.tensors)
    if (t.name == name) return t.id;
  FAIL("no tensor '" << name << "'");
  return -1;
}
int outputNamed(const ir::Megakernel& mk, const std::string& name) {
  for (const auto& [n, t] : mk.graph.outputs)
    if (n == name) return t;
  FAIL("no output '" << name << "'");
  return -1;
}

// The prefill step's inputs: tokens (a tensor), pos0 and last (scalars).
struct PrefillIo {
  int tokensTensor = -1, pos0 = -1, last = -1;
  int chunk = 0;
};
PrefillIo prefillIo(const ir::Megakernel& mk) {
  PrefillIo io;
  const auto& in = mk.graph.inputs;
  REQUIRE(in.size() == 3);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].name == "tokens") io.tokensTensor = in[i].tensor;
    if (in[i].name == "pos0") io.pos0 = int(i);
    if (in[i].name == "last") io.last = int(i);
  }
  REQUIRE(io.tokensTensor >= 0);
  REQUIRE(io.pos0 >= 0);
  REQUIRE(io.last >= 0);
  io.chunk = int(mk.graph.tensors[size_t(io.tokensTensor)].shape.at(0));
  return io;
}

struct ChunkResult {
  std::vector<std::vector<float>> rows;  // logits of the chunk's real rows
  std::vector<float> logits;             // of row `last`
  int next = -1;
};
// One prefill step over `tokens` (at most a chunk; the rest padded with token 0) at pos0.
ChunkResult prefill(interp::Interpreter& in, const PrefillIo& io, const std::vector<int>& tokens, int pos0,
                    uint64_t seed) {
  REQUIRE(!tokens.empty());
  REQUIRE(int(tokens.size()) <= io.chunk);
  std::vector<float> padded(size_t(io.chunk), 0.0f);
  for (size_t i = 0; i < tokens.size(); ++i) padded[i] = float(tokens[i]);
  in.setTensor(io.tokensTensor, padded);
  std::vector<int64_t> scalars(3);
  scalars[size_t(io.pos0)] = pos0;
  scalars[size_t(io.last)] = int64_t(tokens.size()) - 1;
  in.step(scalars, seed);
  const ir::Megakernel& mk = in.megakernel();
  ChunkResult r;
  const bool everyRow = std::any_of(mk.graph.outputs.begin(), mk.graph.outputs.end(),
                                    [](const auto& o) { return o.first == "row_logits"; });
  const std::vector<float> all = everyRow ? in.tensor(outputNamed(mk, "row_logits")) : std::vector<float>();
  const size_t V = all.size() / size_t(io.chunk);
  for (size_t i = 0; i < tokens.size() && everyRow; ++i) r.rows.emplace_back(all.begin() + i * V, all.begin() + (i + 1) * V);
  r.logits = in.tensor(outputNamed(mk, "logits"));
  r.next = in.tensorInts(outputNamed(mk, "next")).at(0);
  return r;
}

// Copies every KV cache from one interpreter to the other (the two programs name them alike).
void copyCaches(const interp::Interpreter& from, interp::Interpreter& to) {
  int copied = 0;
  for (const auto& t : from.megakernel().graph.tensors)
    if (t.kind == ir::Tensor::State) {
      to.setTensor(tensorNamed(to.megakernel(), t.name), from.tensor(t.id));
      ++copied;
    }
  REQUIRE(copied == 4);  // k and v of 2 layers
}

// Every KV cache of `b` equals `a`'s bit for bit (the two programs name them alike).
void checkSameCaches(const interp::Interpreter& a, const interp::Interpreter& b) {
  for (const auto& t : a.megakernel().graph.tensors)
    if (t.kind == ir::Tensor::State) {
      CAPTURE(t.name);
      CHECK(b.tensor(tensorNamed(b.megakernel(), t.name)) == a.tensor(t.id));
    }
}

}  // namespace

TEST_CASE("prefill: every position's logits against decode and transformers float32, in two chunks") {
  const std::vector<int> tokens = goldenTokens();
  const auto weights = runtime::SafetensorsSet::open(kData + "/tiny_llama.safetensors");
  runtime::NpyArray gold32 = runtime::readNpy(kData + "/tiny_llama_logits_f32.npy");
  REQUIRE(gold32.shape == std::vector<int64_t>{24, 256});

  interp::Interpreter dec(decodeKernel());
  dec.loadWeights(weights);
  const Io dio = findIo(decodeKernel());
  std::vector<std::vector<float>> decoded;
  std::vector<int> decodedNext;
  for (int p = 0; p < 24; ++p) {
    int next = -1;
    decoded.push_back(decode(dec, dio, tokens[size_t(p)], p, 1 + uint64_t(p), &next));
    decodedNext.push_back(next);
  }

  interp::Interpreter pre(prefillKernel());
  pre.loadWeights(weights);
  pre.setCheckAccesses(true);
  const PrefillIo pio = prefillIo(prefillKernel());
  REQUIRE(pio.chunk == 16);
  // A full chunk, then a partial one (8 real rows, 8 of padding).
  std::vector<std::vector<float>> rows;
  for (int p0 = 0; p0 < 24; p0 += pio.chunk) {
    const int n = std::min(pio.chunk, 24 - p0);
    ChunkResult r = prefill(pre, pio, std::vector<int>(tokens.begin() + p0, tokens.begin() + p0 + n), p0, 7 + uint64_t(p0));
    rows.insert(rows.end(), r.rows.begin(), r.rows.end());
    // The last row's head is decode's head, in f32, on the prefill's hidden state.
    const int last = p0 + n - 1;
    CHECK(mkref::rel_l2(r.logits, decoded[size_t(last)]) <= 1e-2);
    CHECK(mkref::rel_l2(r.logits, r.rows.back()) <= 1e-2);
    CHECK(r.next == mkref::argmax(r.logits));
  }
  REQUIRE(rows.size() == 24);
  double worstDecode = 0, worstHf = 0, worstDecodeHf = 0;
  int agree = 0;
  for (int p = 0; p < 24; ++p) {
    std::vector<float> hf32(gold32.data.begin() + p * 256, gold32.data.begin() + (p + 1) * 256);
    const double vsDecode = mkref::rel_l2(rows[size_t(p)], decoded[size_t(p)]);
    const double vsHf = mkref::rel_l2(rows[size_t(p)], hf32);
    worstDecode = std::max(worstDecode, vsDecode);
    worstHf = std::max(worstHf, vsHf);
    worstDecodeHf = std::max(worstDecodeHf, mkref::rel_l2(decoded[size_t(p)], hf32));
    agree += mkref::argmax(rows[size_t(p)]) == mkref::argmax(hf32);
    CAPTURE(p);
    CHECK(vsDecode <= 1e-2);
    CHECK(vsHf <= 5e-3);
  }
  MESSAGE("prefill vs decode, worst over 24 positions: " << fmtNum("%.3e", worstDecode)
          << "; prefill vs HF f32: " << fmtNum("%.3e", worstHf) << " (decode vs HF f32: "
          << fmtNum("%.3e", worstDecodeHf) << "); argmax equal to HF f32's at " << agree << "/24");
  CHECK(agree == 24);

  // Decode continues from the prefill's caches as from its own.
  interp::Interpreter cont(decodeKernel());
  cont.loadWeights(weights);
  copyCaches(pre, cont);
  for (int p = 24; p < 28; ++p) {
    int a = -1, b = -1;
    const int token = decodedNext.back();
    std::vector<float> mine = decode(cont, dio, token, p, 100 + uint64_t(p), &a);
    std::vector<float> ref = decode(dec, dio, token, p, 200 + uint64_t(p), &b);
    CAPTURE(p);
    CHECK(mkref::rel_l2(mine, ref) <= 1e-2);
    decodedNext.push_back(b);
  }
}

TEST_CASE("prefill: a chunk starting mid-block after decode steps, and interleavings") {
  // Positions 0..4 by decode, then one chunk at pos0 = 5 (no block of the attention starts at a
  // chunk boundary), on random weights; the prefill's logits under several SM interleavings are
  // bit-identical (its schedule orders every dependency).
  const ir::Megakernel& dk = decodeKernel();
  const ir::Megakernel& pk = prefillKernel();
  interp::Interpreter dec(dk), pre(pk);
  dec.randomWeights(11);
  pre.randomWeights(11);
  const Io dio = findIo(dk);
  const PrefillIo pio = prefillIo(pk);
  std::vector<int> tokens;
  for (int p = 0; p < 5 + pio.chunk; ++p) tokens.push_back((p * 37 + 11) % 256);
  std::vector<std::vector<float>> decoded;
  for (int p = 0; p < int(tokens.size()); ++p) {
    decoded.push_back(decode(dec, dio, tokens[size_t(p)], p, uint64_t(p)));
    if (p == 4) copyCaches(dec, pre);
  }
  const std::vector<int> chunk(tokens.begin() + 5, tokens.end());
  std::vector<std::vector<float>> first;
  for (uint64_t seed : {1, 2, 3, 4}) {
    // The chunk rewrites the same cache rows each time, so every run sees the same caches.
    ChunkResult r = prefill(pre, pio, chunk, 5, seed);
    if (first.empty()) {
      first = r.rows;
      for (size_t i = 0; i < r.rows.size(); ++i) {
        CAPTURE(i);
        CHECK(mkref::rel_l2(r.rows[i], decoded[5 + i]) <= 1e-2);
      }
    } else {
      CHECK(r.rows == first);
    }
  }
}

TEST_CASE("prefill: the prefill step is prefill_logits without the rows' logits, bit for bit") {
  // The two steps of one program share the layers (a fn) and the last row's head: the same tasks
  // on the same values, so the same bits, and the same caches for decode to continue from.
  const std::vector<int> tokens = goldenTokens();
  const auto weights = runtime::SafetensorsSet::open(kData + "/tiny_llama.safetensors");
  interp::Interpreter all(prefillKernel()), last(prefillOnlyKernel());
  all.loadWeights(weights);
  last.loadWeights(weights);
  last.setCheckAccesses(true);
  const PrefillIo aio = prefillIo(prefillKernel()), lio = prefillIo(prefillOnlyKernel());
  for (int p0 = 0; p0 < 24; p0 += aio.chunk) {
    const int n = std::min(aio.chunk, 24 - p0);
    const std::vector<int> chunk(tokens.begin() + p0, tokens.begin() + p0 + n);
    const ChunkResult a = prefill(all, aio, chunk, p0, 3);
    const ChunkResult l = prefill(last, lio, chunk, p0, 3);
    CAPTURE(p0);
    CHECK(l.rows.empty());
    CHECK(l.logits == a.logits);
    CHECK(l.next == a.next);
  }
  checkSameCaches(all, last);
}

TEST_CASE("prefill: a short prefill step gives a long one's logits and cache rows, bit for bit") {
  // examples/llama.mk's tiny config: `prefill` over 32 tokens and `prefill_short` over 16, one fn
  // over the same tiles (16 rows a task), so a chunk of real tokens gets the same bits either way.
  const std::string llama = kRoot + "/examples/llama.mk";
  const ir::Megakernel longMk = buildKernel(llama, "tiny", {}, 0, "prefill");
  const ir::Megakernel shortMk = buildKernel(llama, "tiny", {}, 0, "prefill_short");
  const PrefillIo lio = prefillIo(longMk), sio = prefillIo(shortMk);
  REQUIRE(lio.chunk == 32);
  REQUIRE(sio.chunk == 16);
  interp::Interpreter lg(longMk), sh(shortMk);
  lg.randomWeights(11);
  sh.randomWeights(11);
  sh.setCheckAccesses(true);
  std::vector<int> tokens;
  for (int i = 0; i < 39; ++i) tokens.push_back((i * 37 + 5) % 256);
  // The first 32 through the long step on both, then the last 7 through each step.
  const std::vector<int> first(tokens.begin(), tokens.begin() + 32), rest(tokens.begin() + 32, tokens.end());
  prefill(lg, lio, first, 0, 5);
  copyCaches(lg, sh);
  const ChunkResult l = prefill(lg, lio, rest, 32, 5);
  const ChunkResult s = prefill(sh, sio, rest, 32, 5);
  CHECK(s.logits == l.logits);
  CHECK(s.next == l.next);
  // The caches agree at every position the real tokens wrote (0 .. 38).
  for (const auto& t : longMk.graph.tensors)
    if (t.kind == ir::Tensor::State) {
      CAPTURE(t.name);
      const std::vector<float> lc = lg.tensor(t.id), sc = sh.tensor(tensorNamed(shortMk, t.name));
      const int64_t heads = t.shape.at(0), S = t.shape.at(1), Dh = t.shape.at(2);
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t p = 0; p < 39; ++p)
          for (int64_t d = 0; d < Dh; ++d) CHECK(sc[size_t((h * S + p) * Dh + d)] == lc[size_t((h * S + p) * Dh + d)]);
    }
}

TEST_CASE("prefill: the last layer for the last row alone gives every row's caches bit for bit") {
  // examples/llama.mk's `prefill` runs its last layer's k and v for every row (the same op as
  // prefill_logits) and the rest of that layer for row `last` alone, as decode runs it: the same
  // caches, bit for bit, and that row's logits within the gate of decode's f32 arithmetic beside
  // the prefill's bf16 operands (the header). Another row's hidden state would be far off it.
  const std::string llama = kRoot + "/examples/llama.mk";
  const ir::Megakernel lastMk = buildKernel(llama, "tiny", {}, 0, "prefill");
  const ir::Megakernel allMk = buildKernel(llama, "tiny", {}, 0, "prefill_logits");
  const ir::Megakernel decMk = buildKernel(llama, "tiny", {}, 0, "decode");
  const PrefillIo lio = prefillIo(lastMk), aio = prefillIo(allMk);
  REQUIRE(lio.chunk == 32);
  interp::Interpreter lastRow(lastMk), every(allMk), dec(decMk);
  lastRow.randomWeights(11);
  every.randomWeights(11);
  dec.randomWeights(11);
  lastRow.setCheckAccesses(true);
  const Io dio = findIo(decMk);
  std::vector<int> tokens;
  for (int i = 0; i < 39; ++i) tokens.push_back((i * 37 + 5) % 256);
  std::vector<std::vector<float>> decoded;
  for (int p = 0; p < int(tokens.size()); ++p) decoded.push_back(decode(dec, dio, tokens[size_t(p)], p, uint64_t(p)));
  // A whole chunk, then a partial one (7 real rows).
  for (int p0 = 0; p0 < int(tokens.size()); p0 += lio.chunk) {
    const int n = std::min(lio.chunk, int(tokens.size()) - p0);
    const std::vector<int> chunk(tokens.begin() + p0, tokens.begin() + p0 + n);
    const ChunkResult l = prefill(lastRow, lio, chunk, p0, 3);
    const ChunkResult a = prefill(every, aio, chunk, p0, 3);
    CAPTURE(p0);
    CHECK(mkref::rel_l2(l.logits, a.logits) <= 1e-2);
    CHECK(mkref::rel_l2(l.logits, decoded[size_t(p0 + n - 1)]) <= 1e-2);
    CHECK(mkref::rel_l2(l.logits, a.rows.at(size_t(n - 2))) > 1e-1);
    CHECK(l.next == mkref::argmax(l.logits));
    checkSameCaches(every, lastRow);
  }
}

TEST_CASE("prefill: q/k/v tasks of whole heads give the rotation-pair tasks' logits and caches, bit for bit") {
  // std.rope's qkv_rope_append_rows with BN a multiple of head_dim / 2 (two whole heads a task,
  // one product over their contiguous weight rows) against BN = head_dim / 4 (half a head a task,
  // its halves' pairs in two products): every output is the same sum in the same order, so the
  // same bits. (The tiny config's q/k/v weight in tiles of 4 rows, so that a task can hold 4 pairs.)
  const std::string llama = kRoot + "/examples/llama.mk";
  const ir::Megakernel pairsMk = buildKernel(llama, "tiny", {{"qkv_rows", "4"}, {"prefill_qkv_cols", "4"}}, 0, "prefill");
  const ir::Megakernel headsMk = buildKernel(llama, "tiny", {{"qkv_rows", "4"}, {"prefill_qkv_cols", "16"}}, 0, "prefill");
  const PrefillIo pio = prefillIo(pairsMk), hio = prefillIo(headsMk);
  interp::Interpreter pairs(pairsMk), heads(headsMk);
  pairs.randomWeights(5);
  heads.randomWeights(5);
  heads.setCheckAccesses(true);
  std::vector<int> tokens;
  for (int i = 0; i < 40; ++i) tokens.push_back((i * 53 + 11) % 256);
  // Two chunks: the second one's rows at positions 32.. (a nonzero pos0 in the rotation).
  for (int c = 0; c < 2; ++c) {
    const std::vector<int> part(tokens.begin() + 32 * c, tokens.begin() + std::min<int>(40, 32 * (c + 1)));
    const ChunkResult p = prefill(pairs, pio, part, 32 * c, 3);
    const ChunkResult h = prefill(heads, hio, part, 32 * c, 3);
    CHECK(h.logits == p.logits);
    CHECK(h.next == p.next);
  }
  checkSameCaches(pairs, heads);
}
