// The schedule text parser; the grammar is in ir/parse_ir.h.
#include "ir/parse_ir.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "ir/print.h"

namespace mk::ir {

namespace {

MK_DIAGNOSTIC(IrExpected, Error, "expected {0}, found {1}", std::string, std::string);
MK_DIAGNOSTIC(IrBadNumber, Error, "bad number '{0}': expected {1}", std::string, std::string);
MK_DIAGNOSTIC(IrUnknownId, Error, "unknown {0} {1}", std::string, std::string);
MK_DIAGNOSTIC(IrDuplicateId, Error, "{0} {1} is defined twice", std::string, std::string);
MK_DIAGNOSTIC(IrFirstDefinition, Note, "first defined here");
MK_DIAGNOSTIC(IrExpectsMismatch, Error, "counter c{0} expects {1} but lists {2} producers", int, int64_t, int64_t);
MK_DIAGNOSTIC(IrArgCount, Error, "node n{0} passes {1} arguments, but f{2} has {3} parameters", int, int64_t, int,
              int64_t);
MK_DIAGNOSTIC(IrOpMismatch, Error, "{0} runs op '{1}', not '{2}'", std::string, std::string, std::string);
MK_DIAGNOSTIC(IrTaskNotDefined, Error, "task {0} is listed but its fields are given nowhere", int);
MK_DIAGNOSTIC(IrBadChar, Error, "{0}", std::string);
MK_DIAGNOSTIC(IrUnknownWord, Error, "unknown {0} '{1}'", std::string, std::string);
MK_DIAGNOSTIC(IrOrderMismatch, Error, "{0}", std::string);

enum class Tok { Ident, Number, String, Punct, Newline, Eof };

struct Token {
  Tok kind;
  std::string text;  // identifier, number text, punctuation, or the decoded string
  uint32_t begin = 0, end = 0;
};

struct Abort {};  // unwinds to the line loop after an error was reported

class Parser {
 public:
  Parser(std::string_view text, DiagnosticEngine& diags, FileId file) : text_(text), diags_(diags), file_(file) {}

  std::optional<Megakernel> run();

 private:
  // ---- lexing ---------------------------------------------------------------------------------
  void lex();
  SourceRange range(uint32_t b, uint32_t e) const { return {file_, b, e}; }
  SourceRange range(const Token& t) const { return range(t.begin, t.end); }

  // ---- token access ---------------------------------------------------------------------------
  const Token& peek(size_t ahead = 0) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool atEol() const { return peek().kind == Tok::Newline || peek().kind == Tok::Eof; }
  bool isWord(const Token& t, std::string_view w) const { return t.kind == Tok::Ident && t.text == w; }
  bool isPunct(const Token& t, std::string_view p) const { return t.kind == Tok::Punct && t.text == p; }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::Newline: return "end of line";
      case Tok::Eof: return "end of file";
      case Tok::String: return "\"" + t.text + "\"";
      default: return "'" + t.text + "'";
    }
  }
  [[noreturn]] void fail(const std::string& expected) {
    diags_.emit(range(peek()), IrExpected, expected, describe(peek()));
    throw Abort{};
  }
  bool acceptWord(std::string_view w) {
    if (!isWord(peek(), w)) return false;
    next();
    return true;
  }
  bool acceptPunct(std::string_view p) {
    if (!isPunct(peek(), p)) return false;
    next();
    return true;
  }
  void expectWord(std::string_view w, const std::string& expected = "") {
    if (!acceptWord(w)) fail(expected.empty() ? "'" + std::string(w) + "'" : expected);
  }
  void expectPunct(std::string_view p, const std::string& expected = "") {
    if (!acceptPunct(p)) fail(expected.empty() ? "'" + std::string(p) + "'" : expected);
  }
  void expectEol() {
    if (!atEol()) fail("end of line");
  }

  int64_t integer(const std::string& what = "an integer");
  int intValue(const std::string& what = "an integer");
  double number();
  std::string name(const std::string& what = "a name");
  // t12, c3, f0, n5; records the reference's place in `where` when given.
  int ref(char prefix, const char* what);
  Shape shape();
  DType dtype();
  std::vector<int> counterList();
  Region region();
  std::vector<Region> regionList();

  // ---- items ----------------------------------------------------------------------------------
  void line();
  void target();
  void tensor();
  void input();
  void output();
  void func();
  void node();
  void memoryHeader();
  void buffer();
  void counter();
  void queueHeader();
  void task();
  void order();
  void finish();

  template <typename Map>
  void define(Map& seen, const char* what, const std::string& idText, int id, SourceRange r) {
    auto [it, fresh] = seen.emplace(id, r);
    if (!fresh) {
      diags_.emit(r, IrDuplicateId, std::string(what), idText).note(it->second, IrFirstDefinition);
      throw Abort{};
    }
  }

  std::string_view text_;
  DiagnosticEngine& diags_;
  FileId file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  bool lexOk_ = true;

  enum class Section { None, Tensors, Inputs, Outputs, Funcs, Nodes, Memory, Counters, Queues };
  Section section_ = Section::None;
  int queue_ = -2;  // the queue being read; -1: unqueued; -2: none yet

  Megakernel m_;
  bool haveTarget_ = false;
  std::map<int, SourceRange> tensorDefs_, nodeDefs_, counterDefs_, taskDefs_, funcDefs_;
  std::map<int, std::shared_ptr<TileFunc>> funcs_;
  std::map<int, Task> tasks_;
  // References resolved once everything is read.
  struct Ref {
    char kind;  // 't' tensor, 'n' node, 'c' counter, 'k' task (fields required)
    int id;
    SourceRange where;
  };
  std::vector<Ref> refs_;
  struct OpCheck {
    int node;
    std::string op;
    SourceRange where;
    int task;
  };
  std::vector<OpCheck> opChecks_;
  std::optional<std::vector<int>> order_;
  SourceRange orderRange_;
};

// ---- lexer --------------------------------------------------------------------------------------

void Parser::lex() {
  size_t i = 0, n = text_.size();
  auto isIdent = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (i < n) {
    char c = text_[i];
    auto b = static_cast<uint32_t>(i);
    if (c == '\n') {
      toks_.push_back({Tok::Newline, "\n", b, b + 1});
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '/' && i + 1 < n && text_[i + 1] == '/') {
      while (i < n && text_[i] != '\n') ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (i < n && isIdent(text_[i])) ++i;
      toks_.push_back({Tok::Ident, std::string(text_.substr(b, i - b)), b, static_cast<uint32_t>(i)});
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      // Digits, letters, '.' (not '..') and an exponent's sign: the parser checks the value.
      while (i < n) {
        char d = text_[i];
        if (isIdent(d)) ++i;
        else if (d == '.' && !(i + 1 < n && text_[i + 1] == '.')) ++i;
        else if ((d == '+' || d == '-') && (text_[i - 1] == 'e' || text_[i - 1] == 'E') && i + 1 < n &&
                 std::isdigit(static_cast<unsigned char>(text_[i + 1])))
          ++i;
        else break;
      }
      toks_.push_back({Tok::Number, std::string(text_.substr(b, i - b)), b, static_cast<uint32_t>(i)});
    } else if (c == '"') {
      std::string s;
      ++i;
      bool closed = false;
      while (i < n && text_[i] != '\n') {
        char d = text_[i++];
        if (d == '"') {
          closed = true;
          break;
        }
        if (d != '\\' || i >= n) {
          s += d;
          continue;
        }
        char e = text_[i++];
        switch (e) {
          case 'n': s += '\n'; break;
          case 't': s += '\t'; break;
          case 'x': {
            int v = 0, k = 0;
            for (; k < 2 && i < n && std::isxdigit(static_cast<unsigned char>(text_[i])); ++k, ++i)
              v = v * 16 + (std::isdigit(static_cast<unsigned char>(text_[i])) ? text_[i] - '0'
                                                                               : (std::tolower(text_[i]) - 'a' + 10));
            s += static_cast<char>(v);
            break;
          }
          default: s += e;
        }
      }
      if (!closed) {
        diags_.emit(range(b, static_cast<uint32_t>(i)), IrBadChar, std::string("unterminated string"));
        lexOk_ = false;
      }
      toks_.push_back({Tok::String, s, b, static_cast<uint32_t>(i)});
    } else if (c == '.' && i + 1 < n && text_[i + 1] == '.') {
      toks_.push_back({Tok::Punct, "..", b, b + 2});
      i += 2;
    } else if (std::string_view("[](),:=#+-{}").find(c) != std::string_view::npos) {
      toks_.push_back({Tok::Punct, std::string(1, c), b, b + 1});
      ++i;
    } else {
      size_t len = 1;
      auto u = static_cast<unsigned char>(c);
      if (u >= 0xC0) len = u >= 0xF0 ? 4 : u >= 0xE0 ? 3 : 2;
      len = std::min(len, n - i);
      diags_.emit(range(b, static_cast<uint32_t>(i + len)), IrBadChar,
                  "unexpected character '" + std::string(text_.substr(i, len)) + "'");
      lexOk_ = false;
      i += len;
    }
  }
  toks_.push_back({Tok::Eof, "", static_cast<uint32_t>(n), static_cast<uint32_t>(n)});
}

// ---- small pieces -------------------------------------------------------------------------------

int64_t Parser::integer(const std::string& what) {
  uint32_t b = peek().begin;
  bool neg = false;
  if (isPunct(peek(), "-") && peek(1).kind == Tok::Number && peek(1).begin == peek().end) {
    neg = true;
    next();
  }
  if (peek().kind != Tok::Number) fail(what);
  const Token& t = next();
  int64_t v = 0;
  auto res = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (res.ec != std::errc() || res.ptr != t.text.data() + t.text.size()) {
    diags_.emit(range(b, t.end), IrBadNumber, (neg ? "-" : "") + t.text, what);
    throw Abort{};
  }
  return neg ? -v : v;
}

int Parser::intValue(const std::string& what) {
  uint32_t b = peek().begin;
  int64_t v = integer(what);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    diags_.emit(range(b, toks_[pos_ - 1].end), IrBadNumber, std::to_string(v), what + " (out of range)");
    throw Abort{};
  }
  return static_cast<int>(v);
}

double Parser::number() {
  uint32_t b = peek().begin;
  bool neg = false;
  if (isPunct(peek(), "-") && peek(1).begin == peek().end) {
    neg = true;
    next();
  }
  if (isWord(peek(), "inf")) {
    next();
    return neg ? -HUGE_VAL : HUGE_VAL;
  }
  if (isWord(peek(), "nan")) {
    next();
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (peek().kind != Tok::Number) fail("a number");
  const Token& t = next();
  double v = 0;
  auto res = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (res.ec != std::errc() || res.ptr != t.text.data() + t.text.size()) {
    diags_.emit(range(b, t.end), IrBadNumber, (neg ? "-" : "") + t.text, std::string("a number"));
    throw Abort{};
  }
  return neg ? -v : v;
}

std::string Parser::name(const std::string& what) {
  if (peek().kind != Tok::Ident && peek().kind != Tok::String) fail(what);
  return next().text;
}

int Parser::ref(char prefix, const char* what) {
  const Token& t = peek();
  std::string expected = std::string(what) + " (" + prefix + "<id>)";
  if (t.kind != Tok::Ident || t.text.size() < 2 || t.text[0] != prefix) fail(expected);
  int v = 0;
  auto res = std::from_chars(t.text.data() + 1, t.text.data() + t.text.size(), v);
  if (res.ec != std::errc() || res.ptr != t.text.data() + t.text.size()) fail(expected);
  next();
  return v;
}

Shape Parser::shape() {
  Shape s;
  expectPunct("[");
  if (acceptPunct("]")) return s;
  do s.push_back(integer("a dimension")); while (acceptPunct(","));
  expectPunct("]", "',' or ']'");
  return s;
}

DType Parser::dtype() {
  if (peek().kind != Tok::Ident) fail("a dtype");
  const Token& t = next();
  auto d = parseDType(t.text);
  if (!d) {
    diags_.emit(range(t), IrUnknownWord, std::string("dtype"), t.text);
    throw Abort{};
  }
  return *d;
}

std::vector<int> Parser::counterList() {
  std::vector<int> out;
  do {
    const Token& t = peek();
    int id = ref('c', "a counter");
    refs_.push_back({'c', id, range(t)});
    out.push_back(id);
  } while (acceptPunct(","));
  return out;
}

Region Parser::region() {
  Region r;
  const Token& t = peek();
  r.tensor = ref('t', "a tensor");
  refs_.push_back({'t', r.tensor, range(t)});
  expectPunct("[");
  if (acceptPunct("]")) return r;
  do {
    int64_t lo = integer("a range start");
    expectPunct("..");
    int64_t hi = integer("a range end");
    r.ranges.emplace_back(lo, hi);
    if (acceptWord("at")) {  // `lo..hi at input K + a..b` (ir::RelativeRange)
      expectWord("input");
      RelativeRange rel;
      rel.input = intValue("an input index");
      expectPunct("+");
      rel.lo = integer("a relative range start");
      expectPunct("..");
      rel.hi = integer("a relative range end");
      r.relative.resize(r.ranges.size());
      r.relative.back() = rel;
    }
  } while (acceptPunct(","));
  if (!r.relative.empty()) r.relative.resize(r.ranges.size());
  expectPunct("]", "',' or ']'");
  return r;
}

std::vector<Region> Parser::regionList() {
  std::vector<Region> out;
  do out.push_back(region()); while (acceptPunct(","));
  return out;
}

// ---- items --------------------------------------------------------------------------------------

void Parser::target() {
  TargetDesc& t = m_.target;
  t.name = name("a target name");
  expectWord("arch");
  t.arch = name("an arch name");
  expectWord("sms");
  t.sms = intValue();
  expectWord("smem");
  t.smemPerBlock = intValue();
  expectWord("warp");
  t.warpSize = intValue();
  expectWord("threads");
  t.threadsPerBlock = intValue();
  expectWord("bandwidth");
  t.memoryBandwidth = number();
  haveTarget_ = true;
}

void Parser::tensor() {
  uint32_t b = peek().begin;
  Tensor t;
  t.id = ref('t', "a tensor");
  define(tensorDefs_, "tensor", "t" + std::to_string(t.id), t.id, range(b, peek().begin));
  t.name = name("a tensor name");
  const Token& k = peek();
  std::string kind = name("a tensor kind");
  if (kind == "weight") t.kind = Tensor::Weight;
  else if (kind == "state") t.kind = Tensor::State;
  else if (kind == "activation") t.kind = Tensor::Activation;
  else if (kind == "input") t.kind = Tensor::Input;
  else {
    diags_.emit(range(k), IrUnknownWord, std::string("tensor kind"), kind);
    throw Abort{};
  }
  t.dtype = dtype();
  t.shape = shape();
  const Token& l = peek();
  std::string layout = name("a layout");
  auto layoutKind = abi::parseLayoutKind(layout);
  if (!layoutKind) {
    diags_.emit(range(l), IrUnknownWord, std::string("layout"), layout);
    throw Abort{};
  }
  t.layout.kind = *layoutKind;
  if (acceptPunct("(")) {
    do t.layout.args.push_back(integer("a layout argument")); while (acceptPunct(","));
    expectPunct(")", "',' or ')'");
  }
  if (acceptWord("sources")) {
    do t.sources.push_back(name("a source name")); while (acceptPunct(","));
  }
  m_.graph.tensors.push_back(std::move(t));
}

void Parser::input() {
  StepInput in;
  in.name = name("an input name");
  in.dtype = dtype();
  if (!atEol()) {
    const Token& t = peek();
    in.tensor = ref('t', "a tensor or end of line");
    refs_.push_back({'t', in.tensor, range(t)});
  }
  m_.graph.inputs.push_back(std::move(in));
}

void Parser::output() {
  std::string n = name("an output name");
  const Token& t = peek();
  int id = ref('t', "a tensor");
  refs_.push_back({'t', id, range(t)});
  m_.graph.outputs.emplace_back(std::move(n), id);
}

void Parser::func() {
  uint32_t b = peek().begin;
  auto f = std::make_shared<TileFunc>();
  int id = ref('f', "a func");
  define(funcDefs_, "func", "f" + std::to_string(id), id, range(b, peek().begin));
  f->name = name("a func name");
  expectWord("op");
  f->opName = name("an op name");
  expectWord("grid");
  f->taskGrid = shape();
  expectWord("as");
  expectPunct("(");
  if (!acceptPunct(")")) {
    do f->taskVars.push_back(name("a task variable")); while (acceptPunct(","));
    expectPunct(")", "',' or ')'");
  }
  expectWord("params");
  expectPunct("(");
  if (!acceptPunct(")")) {
    do {
      Param p;
      p.name = name("a parameter name");
      expectPunct(":");
      const Token& k = peek();
      std::string kind = name("a parameter kind");
      if (kind == "tensor") p.kind = Param::Tensor;
      else if (kind == "inout") p.kind = Param::Tensor, p.inout = true;
      else if (kind == "scalar") p.kind = Param::Scalar;
      else if (kind == "result") p.kind = Param::Result;
      else {
        diags_.emit(range(k), IrUnknownWord, std::string("parameter kind"), kind);
        throw Abort{};
      }
      p.dtype = dtype();
      p.shape = shape();
      f->params.push_back(std::move(p));
    } while (acceptPunct(","));
    expectPunct(")", "',' or ')'");
  }
  expectEol();
  f->range = range(b, peek().begin);
  funcs_[id] = std::move(f);
}

void Parser::node() {
  uint32_t b = peek().begin;
  Node n;
  n.id = ref('n', "a node");
  define(nodeDefs_, "node", "n" + std::to_string(n.id), n.id, range(b, peek().begin));
  expectPunct("=");
  int funcId = -1;
  if (!acceptWord("none")) {
    const Token& ft = peek();
    funcId = ref('f', "a func or 'none'");
    auto it = funcs_.find(funcId);
    if (it == funcs_.end()) {
      diags_.emit(range(ft), IrUnknownId, std::string("func"), ft.text);
      throw Abort{};
    }
    n.func = it->second;
    const Token& ot = peek();
    std::string op = name("an op name");
    if (op != it->second->opName) {
      diags_.emit(range(ot), IrOpMismatch, ft.text, it->second->opName, op);
      throw Abort{};
    }
  }
  const Token& open = peek();
  expectPunct("(");
  if (!acceptPunct(")")) {
    do {
      ScalarArg a;
      int tensor = -1;
      if (acceptWord("input")) {
        a.kind = ScalarArg::Input;
        a.index = intValue("an input index");
      } else if (acceptWord("const")) {
        a.kind = ScalarArg::Const;
        a.value = number();
      } else if (acceptWord("scalar")) {
        a.kind = ScalarArg::Tensor;
        const Token& t = peek();
        a.index = ref('t', "a tensor");
        refs_.push_back({'t', a.index, range(t)});
      } else {
        const Token& t = peek();
        if (t.kind != Tok::Ident || t.text[0] != 't') fail("an argument (t<id>, input, const or scalar)");
        tensor = ref('t', "an argument (t<id>, input, const or scalar)");
        refs_.push_back({'t', tensor, range(t)});
      }
      n.tensors.push_back(tensor);
      n.scalars.push_back(a);
    } while (acceptPunct(","));
    expectPunct(")", "',' or ')'");
  }
  if (n.func && n.tensors.size() != n.func->params.size()) {
    diags_.emit(range(open.begin, toks_[pos_ - 1].end), IrArgCount, n.id, static_cast<int64_t>(n.tensors.size()),
                funcId, static_cast<int64_t>(n.func->params.size()));
    throw Abort{};
  }
  if (acceptWord("after")) {
    expectPunct("(");
    if (!acceptPunct(")")) {
      do {
        const Token& t = peek();
        int id = ref('t', "a tensor");
        refs_.push_back({'t', id, range(t)});
        n.after.push_back(id);
      } while (acceptPunct(","));
      expectPunct(")", "',' or ')'");
    }
  }
  if (acceptWord("sync")) {
    expectWord("grid");
    n.gridSyncBefore = true;
  }
  if (acceptWord("cluster")) n.cluster = intValue("a cluster size");
  if (!atEol()) fail(n.after.empty() && !n.gridSyncBefore && n.cluster == 1 ? "'after', 'sync', 'cluster' or end of line"
                                                                           : "end of line");
  n.call = range(b, peek().begin);
  m_.graph.nodes.push_back(std::move(n));
}

void Parser::memoryHeader() {
  MemoryPlan& mp = m_.memory;
  expectWord("weights");
  mp.weightBytes = integer();
  expectWord("state");
  mp.stateBytes = integer();
  expectWord("activations");
  mp.activationBytes = integer();
  expectWord("smem_per_task");
  mp.smemPerTask = integer();
}

void Parser::buffer() {
  const std::string& kind = peek().kind == Tok::Ident ? peek().text : std::string();
  std::vector<Buffer>* list = kind == "weight" ? &m_.memory.weights
                              : kind == "state" ? &m_.memory.state
                              : kind == "activation" ? &m_.memory.activations : nullptr;
  if (!list) fail("'weight', 'state' or 'activation'");
  next();
  Buffer b;
  const Token& t = peek();
  b.tensor = ref('t', "a tensor");
  refs_.push_back({'t', b.tensor, range(t)});
  expectWord("at");
  b.offset = integer("an offset");
  expectWord("size");
  b.bytes = integer("a size");
  list->push_back(b);
}

void Parser::counter() {
  uint32_t b = peek().begin;
  Counter c;
  c.id = ref('c', "a counter");
  define(counterDefs_, "counter", "c" + std::to_string(c.id), c.id, range(b, peek().begin));
  expectWord("expects");
  const Token& et = peek();
  int64_t expects = integer("a count");
  SourceRange expectsRange = range(et.begin, toks_[pos_ - 1].end);
  if (acceptWord("from")) {
    expectWord("tasks");
    do {
      const Token& t = peek();
      int lo = intValue("a task id");
      int hi = lo;
      if (acceptPunct("-")) hi = intValue("the last task id of a range");
      SourceRange r = range(t.begin, toks_[pos_ - 1].end);
      if (hi < lo) {
        diags_.emit(r, IrExpected, std::string("a range lo-hi with lo <= hi"), "'" + std::to_string(lo) + "-" +
                                                                                 std::to_string(hi) + "'");
        throw Abort{};
      }
      for (int id = lo; id <= hi; ++id) {
        c.producers.push_back(id);
        refs_.push_back({'k', id, r});
      }
    } while (acceptPunct(","));
  }
  if (acceptWord("why")) c.why = name("a reason");
  if (!atEol()) fail(c.why.empty() ? "'from', 'why' or end of line" : "end of line");
  if (expects != c.expected()) {
    diags_.emit(expectsRange, IrExpectsMismatch, c.id, expects, c.expected());
    throw Abort{};
  }
  c.range = range(b, peek().begin);
  m_.counters.push_back(std::move(c));
}

void Parser::queueHeader() {
  // `sm N:` or `unqueued:`
  if (acceptWord("unqueued")) {
    queue_ = -1;
  } else {
    expectWord("sm", "'sm' or 'unqueued'");
    const Token& t = peek();
    int n = intValue("an SM number");
    if (n != static_cast<int>(m_.queues.size())) {
      diags_.emit(range(t.begin, toks_[pos_ - 1].end), IrExpected, "sm " + std::to_string(m_.queues.size()),
                  "sm " + std::to_string(n));
      throw Abort{};
    }
    m_.queues.emplace_back();
    queue_ = n;
  }
  expectPunct(":");
}

void Parser::task() {
  uint32_t b = peek().begin;
  expectWord("task", "'task', 'sm' or 'unqueued'");
  const Token& idTok = peek();
  int id = intValue("a task id");
  SourceRange idRange = range(idTok.begin, toks_[pos_ - 1].end);
  if (queue_ == -2) {
    diags_.emit(range(b, b + 4), IrExpected, std::string("'sm N:' before the first task"), std::string("'task'"));
    throw Abort{};
  }
  if (atEol()) {  // a reference: the fields are given elsewhere
    if (queue_ < 0) fail("the task's fields");
    m_.queues[queue_].push_back(id);
    refs_.push_back({'k', id, idRange});
    return;
  }
  Task t;
  t.id = id;
  const Token& opTok = peek();
  if (!isPunct(peek(1), "#")) fail("op#node[index] or end of line");
  std::string op = name("op#node[index] or end of line");
  expectPunct("#");
  const Token& nodeTok = peek();
  t.node = intValue("a node id");
  refs_.push_back({'n', t.node, range(nodeTok.begin, toks_[pos_ - 1].end)});
  opChecks_.push_back({t.node, op, range(opTok.begin, opTok.end), id});
  expectPunct("[");
  if (!acceptPunct("]")) {
    do t.index.push_back(integer("a task index")); while (acceptPunct(","));
    expectPunct("]", "',' or ']'");
  }
  t.sm = queue_;
  std::string expect = "'sm', 'wait', 'signal' or 'bytes'";
  if (acceptWord("sm")) {
    t.sm = intValue("an SM number");
    expect = "'wait', 'signal' or 'bytes'";
  }
  if (acceptWord("wait")) {
    t.waits = counterList();
    expect = "',', 'signal' or 'bytes'";
  }
  if (acceptWord("signal")) {
    t.signals = counterList();
    expect = "',' or 'bytes'";
  }
  expectWord("bytes", expect);
  t.bytes = integer("a byte count");
  expectWord("flops");
  t.flops = integer("a flop count");
  if (acceptWord("reads")) t.reads = regionList();
  if (acceptWord("writes")) t.writes = regionList();
  if (!atEol())
    fail(!t.writes.empty() ? "',' or end of line"
         : !t.reads.empty() ? "',', 'writes' or end of line"
                            : "'reads', 'writes' or end of line");
  t.range = range(b, peek().begin);
  define(taskDefs_, "task", std::to_string(id), id, idRange);
  if (queue_ >= 0) m_.queues[queue_].push_back(id);
  tasks_[id] = std::move(t);
}

void Parser::order() {
  std::vector<int> ids;
  orderRange_ = range(toks_[pos_ - 1]);
  while (!atEol()) {
    const Token& t = peek();
    int id = intValue("a task id");
    refs_.push_back({'k', id, range(t.begin, toks_[pos_ - 1].end)});
    ids.push_back(id);
  }
  order_ = std::move(ids);
}

void Parser::line() {
  const Token& first = peek();
  bool alone = peek(1).kind == Tok::Newline || peek(1).kind == Tok::Eof;
  if (first.kind == Tok::Ident) {
    static const std::pair<const char*, Section> headers[] = {
        {"tensors", Section::Tensors}, {"inputs", Section::Inputs}, {"outputs", Section::Outputs},
        {"funcs", Section::Funcs},     {"nodes", Section::Nodes},   {"counters", Section::Counters},
        {"queues", Section::Queues}};
    for (auto [word, sec] : headers)
      if (first.text == word && alone) {
        next();
        section_ = sec;
        return;
      }
    if (acceptWord("program")) {
      m_.graph.program = name("a program name");
      section_ = Section::None;
      return expectEol();
    }
    if (acceptWord("config")) {
      m_.graph.config = name("a config name");
      section_ = Section::None;
      return expectEol();
    }
    if (acceptWord("target")) {
      target();
      section_ = Section::None;
      return expectEol();
    }
    if (acceptWord("memory")) {
      memoryHeader();
      section_ = Section::Memory;
      return expectEol();
    }
    if (acceptWord("order")) {
      order();
      section_ = Section::None;
      return;
    }
  }
  switch (section_) {
    case Section::None:
      fail("'program', 'config', 'target', 'memory', 'order' or a section name");
    case Section::Tensors: tensor(); break;
    case Section::Inputs: input(); break;
    case Section::Outputs: output(); break;
    case Section::Funcs: func(); return;
    case Section::Nodes: node(); return;
    case Section::Memory: buffer(); break;
    case Section::Counters: counter(); return;
    case Section::Queues:
      if (isWord(first, "sm") || isWord(first, "unqueued")) queueHeader();
      else task();
      break;
  }
  expectEol();
}

void Parser::finish() {
  if (!haveTarget_) diags_.emit(range(peek()), IrExpected, std::string("a 'target' line"), describe(peek()));
  for (const Ref& r : refs_) {
    switch (r.kind) {
      case 't':
        if (!tensorDefs_.count(r.id)) diags_.emit(r.where, IrUnknownId, std::string("tensor"), "t" + std::to_string(r.id));
        break;
      case 'n':
        if (!nodeDefs_.count(r.id)) diags_.emit(r.where, IrUnknownId, std::string("node"), "n" + std::to_string(r.id));
        break;
      case 'c':
        if (!counterDefs_.count(r.id))
          diags_.emit(r.where, IrUnknownId, std::string("counter"), "c" + std::to_string(r.id));
        break;
      case 'k':
        if (!tasks_.count(r.id)) {
          bool listed = false;
          for (const auto& q : m_.queues) listed |= std::find(q.begin(), q.end(), r.id) != q.end();
          if (listed) diags_.emit(r.where, IrTaskNotDefined, r.id);
          else diags_.emit(r.where, IrUnknownId, std::string("task"), std::to_string(r.id));
        }
        break;
    }
  }
  for (const OpCheck& c : opChecks_) {
    for (const Node& n : m_.graph.nodes)
      if (n.id == c.node) {
        std::string op = n.func ? n.func->opName : "none";
        if (op != c.op) diags_.emit(c.where, IrOpMismatch, "n" + std::to_string(c.node), op, c.op);
      }
  }
  // The global order.
  if (order_) {
    std::set<int> seen;
    for (int id : *order_) {
      if (!seen.insert(id).second) {
        diags_.emit(orderRange_, IrOrderMismatch, "task " + std::to_string(id) + " appears twice in 'order'");
        return;
      }
    }
    for (const auto& [id, t] : tasks_)
      if (!seen.count(id)) {
        diags_.emit(orderRange_, IrOrderMismatch, "'order' does not list task " + std::to_string(id));
        return;
      }
    if (diags_.hasErrors()) return;
    for (int id : *order_) m_.tasks.push_back(tasks_.at(id));
  } else {
    for (auto& [id, t] : tasks_) m_.tasks.push_back(t);
  }
}

std::optional<Megakernel> Parser::run() {
  unsigned before = diags_.errorCount();
  lex();
  if (lexOk_) {
    while (peek().kind != Tok::Eof) {
      if (peek().kind == Tok::Newline) {
        next();
        continue;
      }
      try {
        line();
      } catch (const Abort&) {
        while (!atEol()) next();
      }
    }
    if (diags_.errorCount() == before) finish();
  }
  if (diags_.errorCount() != before) return std::nullopt;
  return std::move(m_);
}

}  // namespace

std::optional<Megakernel> parseSchedule(std::string_view text, DiagnosticEngine& diags, FileId file) {
  return Parser(text, diags, file).run();
}

}  // namespace mk::ir
