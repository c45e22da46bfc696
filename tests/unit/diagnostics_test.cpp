// SourceFile line/column mapping, the diagnostics engine (error limit, suppression) and its text and
// JSON renderings, and jsonQuote.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "abi/json.h"
#include "support/diagnostics.h"
#include "support/source.h"

namespace {

// Test-local definitions of a few real kinds, with messages of the same shape as the checker's.
MK_DIAGNOSTIC(UnknownName, Error, "unknown name '{0}'{1}", std::string, std::string);
MK_DIAGNOSTIC(DeclaredHere, Note, "'{0}' is declared here", std::string);
MK_DIAGNOSTIC(DuplicateImport, Warning, "module '{0}' is imported twice", std::string);
MK_DIAGNOSTIC(SyntaxError, Error, "expected {0}, found {1}", std::string, std::string);

std::string show(mk::LineCol lc) { return std::to_string(lc.line) + ":" + std::to_string(lc.col); }

}  // namespace

TEST_CASE("SourceFile: line and column of offsets") {
  mk::SourceFile f("a.mk", "ab\ncd\n\nxyz");
  CHECK(f.lineCount() == 4);
  CHECK(show(f.lineCol(0)) == "1:1");
  CHECK(show(f.lineCol(1)) == "1:2");
  CHECK(show(f.lineCol(2)) == "1:3");  // the '\n' belongs to its line
  CHECK(show(f.lineCol(3)) == "2:1");
  CHECK(show(f.lineCol(5)) == "2:3");
  CHECK(show(f.lineCol(6)) == "3:1");  // the empty line
  CHECK(show(f.lineCol(7)) == "4:1");
  CHECK(show(f.lineCol(9)) == "4:3");
  // The last line has no newline: its end is still on it, and offsets past the end clamp there.
  CHECK(show(f.lineCol(10)) == "4:4");
  CHECK(show(f.lineCol(1000)) == "4:4");
  CHECK(f.line(1) == "ab");
  CHECK(f.line(2) == "cd");
  CHECK(f.line(3) == "");
  CHECK(f.line(4) == "xyz");
  CHECK(f.line(0) == "");
  CHECK(f.line(5) == "");
  CHECK(f.offsetOf({2, 2}) == 4);
  CHECK(f.offsetOf({4, 3}) == 9);
  CHECK(f.offsetOf({4, 4}) == 10);
  CHECK(f.offsetOf({1, 99}) == 2);    // clamped to the line's end
  CHECK(f.offsetOf({9, 1}) == 10);    // past the last line: the end of the file
  CHECK(f.offsetOf({0, 5}) == 0);
  CHECK(f.offsetOf({2, 0}) == 3);
  // offsetOf inverts lineCol for every offset of the text.
  for (uint32_t off = 0; off <= f.text().size(); ++off) CHECK(f.offsetOf(f.lineCol(off)) == off);
}

TEST_CASE("SourceFile: trailing newline, CRLF and empty files") {
  mk::SourceFile trailing("t.mk", "ab\n");
  CHECK(trailing.lineCount() == 2);
  CHECK(show(trailing.lineCol(3)) == "2:1");
  CHECK(trailing.line(1) == "ab");
  CHECK(trailing.line(2) == "");

  mk::SourceFile crlf("c.mk", "ab\r\ncd\r\nef");
  CHECK(crlf.lineCount() == 3);
  CHECK(crlf.line(1) == "ab");  // no '\r'
  CHECK(crlf.line(2) == "cd");
  CHECK(crlf.line(3) == "ef");
  CHECK(show(crlf.lineCol(4)) == "2:1");
  CHECK(show(crlf.lineCol(8)) == "3:1");
  CHECK(crlf.offsetOf({2, 1}) == 4);
  CHECK(crlf.offsetOf({1, 99}) == 2);  // the end of "ab", before the '\r'

  mk::SourceFile empty("e.mk", "");
  CHECK(empty.lineCount() == 1);
  CHECK(show(empty.lineCol(0)) == "1:1");
  CHECK(show(empty.lineCol(5)) == "1:1");
  CHECK(empty.line(1) == "");
  CHECK(empty.offsetOf({1, 1}) == 0);
  CHECK(empty.offsetOf({3, 3}) == 0);
}

TEST_CASE("SourceManager: add, find, file") {
  mk::SourceManager sm;
  mk::FileId a = sm.add("a.mk", "x");
  mk::FileId b = sm.add("b.mk", "y");
  CHECK(a == 0);
  CHECK(b == 1);
  CHECK(sm.size() == 2);
  CHECK(sm.file(b).text() == "y");
  CHECK(sm.find("a.mk") == std::optional<mk::FileId>(a));
  CHECK_FALSE(sm.find("c.mk").has_value());
  CHECK_FALSE(sm.load("/nonexistent/dir/file.mk").has_value());
  CHECK(sm.size() == 2);
  // load of a path already added gives the same file without reading the disk.
  CHECK(sm.load("a.mk") == std::optional<mk::FileId>(a));

  mk::SourceRange r1{a, 2, 5}, r2{a, 4, 9}, other{b, 0, 1};
  mk::SourceRange c = mk::SourceRange::cover(r1, r2);
  CHECK(c.begin == 2);
  CHECK(c.end == 9);
  CHECK(mk::SourceRange::cover(mk::SourceRange{}, r2).begin == 4);
  CHECK(mk::SourceRange::cover(r1, other).end == 5);  // different files: the first wins
  CHECK_FALSE(mk::SourceRange{}.valid());
}

TEST_CASE("diagCode and diagName") {
  CHECK(mk::diagCode(mk::DiagKind::TooManyErrors) == "E0000");
  CHECK(mk::diagCode(mk::DiagKind::UnknownName) == "E0108");
  CHECK(mk::diagName(mk::DiagKind::UnknownName) == "UnknownName");
  CHECK(mk::diagCode(mk::DiagKind::DeclaredHere) == "");  // notes have no code
  CHECK(mk::diagCode(mk::DiagKind::TaskGridInexact) == "E0523");
}

TEST_CASE("renderText: error with a note, caret and underline") {
  mk::SourceManager sm;
  mk::FileId f = sm.add("m.mk", "const a = bbx;\nconst bbb = 1;\n");
  mk::DiagnosticEngine diags(sm);
  diags.emit({f, 10, 13}, UnknownName, "bbx", "; did you mean 'bbb'?").note({f, 21, 24}, DeclaredHere, "bbb");
  REQUIRE(diags.diagnostics().size() == 1);
  const mk::Diagnostic& d = diags.diagnostics()[0];
  CHECK(d.kind == mk::DiagKind::UnknownName);
  CHECK(d.severity == mk::Severity::Error);
  CHECK(d.message == "unknown name 'bbx'; did you mean 'bbb'?");
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].message == "'bbb' is declared here");
  CHECK(mk::renderText(sm, d) ==
        "m.mk:1:11: error: unknown name 'bbx'; did you mean 'bbb'? [E0108]\n"
        "    1 | const a = bbx;\n"
        "      |           ^~~\n"
        "m.mk:2:7: note: 'bbb' is declared here\n"
        "    2 | const bbb = 1;\n"
        "      |       ^~~\n");
  CHECK(diags.errorCount() == 1);
  CHECK(diags.hasErrors());
}

TEST_CASE("renderText: ranges spanning lines, empty ranges, tabs, wide gutters, warnings") {
  mk::SourceManager sm;
  mk::FileId f = sm.add("r.mk", "abc defg\nhij\n");
  // A range running onto the next line is underlined to the end of its first line.
  mk::Diagnostic multi{mk::DiagKind::SyntaxError, mk::Severity::Error, {f, 4, 11}, "msg", {}};
  CHECK(mk::renderText(sm, multi) ==
        "r.mk:1:5: error: msg [E0005]\n"
        "    1 | abc defg\n"
        "      |     ^~~~\n");
  // An empty range (end of file, a missing token) still gets a caret.
  mk::Diagnostic atEnd{mk::DiagKind::SyntaxError, mk::Severity::Error, {f, 8, 8}, "msg", {}};
  CHECK(mk::renderText(sm, atEnd) ==
        "r.mk:1:9: error: msg [E0005]\n"
        "    1 | abc defg\n"
        "      |         ^\n");

  // Tabs before the range are kept in the underline so it lines up.
  mk::FileId t = sm.add("tab.mk", "\tx\t= 1;\n");
  mk::Diagnostic tab{mk::DiagKind::SyntaxError, mk::Severity::Error, {t, 3, 4}, "msg", {}};
  CHECK(mk::renderText(sm, tab) ==
        "tab.mk:1:4: error: msg [E0005]\n"
        "    1 | \tx\t= 1;\n"
        "      | \t \t^\n");

  // Line numbers past 5 digits widen the gutter.
  std::string many;
  for (int i = 0; i < 123455; ++i) many += "\n";
  many += "zz";
  mk::FileId w = sm.add("w.mk", many);
  mk::Diagnostic wide{mk::DiagKind::SyntaxError, mk::Severity::Error, {w, 123455, 123457}, "msg", {}};
  CHECK(mk::renderText(sm, wide) ==
        "w.mk:123456:1: error: msg [E0005]\n"
        "123456 | zz\n"
        "       | ^~\n");

  mk::DiagnosticEngine diags(sm);
  diags.emit({f, 0, 3}, DuplicateImport, "std.nn");
  REQUIRE(diags.diagnostics().size() == 1);
  CHECK(diags.errorCount() == 0);  // warnings are not errors
  CHECK(mk::renderText(sm, diags.diagnostics()[0]) ==
        "r.mk:1:1: warning: module 'std.nn' is imported twice [E0104]\n"
        "    1 | abc defg\n"
        "      | ^~~\n");

  // A diagnostic about no particular place has no location and no snippet.
  mk::Diagnostic nowhere{mk::DiagKind::DivisionByZero, mk::Severity::Error, {}, "division by zero", {}};
  CHECK(mk::renderText(sm, nowhere) == "mkdsl: error: division by zero [E0203]\n");
}

TEST_CASE("renderText: color") {
  mk::SourceManager sm;
  mk::FileId f = sm.add("c.mk", "x\n");
  mk::Diagnostic d{mk::DiagKind::SyntaxError, mk::Severity::Error, {f, 0, 1}, "msg", {}};
  std::string out = mk::renderText(sm, d, true);
  CHECK(out.find("\033[1;31merror:\033[0m") != std::string::npos);
  CHECK(out.find("\033[1mmsg\033[0m") != std::string::npos);
  CHECK(out.find("    1 | x\n") != std::string::npos);
}

TEST_CASE("notes with an invalid range are dropped") {
  mk::SourceManager sm;
  mk::FileId f = sm.add("n.mk", "abc\n");
  mk::DiagnosticEngine diags(sm);
  diags.emit({f, 0, 3}, UnknownName, "abc", "").note({}, DeclaredHere, "abc").note({f, 1, 2}, DeclaredHere, "b");
  REQUIRE(diags.diagnostics().size() == 1);
  REQUIRE(diags.diagnostics()[0].notes.size() == 1);
  CHECK(diags.diagnostics()[0].notes[0].message == "'b' is declared here");
}

TEST_CASE("renderJson: exact output") {
  mk::SourceManager sm;
  mk::FileId f = sm.add("m.mk", "const a = bbx;\nconst bbb = 1;\n");
  mk::DiagnosticEngine diags(sm);
  CHECK(mk::renderJson(sm, diags.diagnostics()) == "[]\n");
  diags.emit({f, 10, 13}, UnknownName, "bbx", "").note({f, 21, 24}, DeclaredHere, "bbb");
  diags.emit({f, 0, 5}, DuplicateImport, "x");
  diags.report({mk::DiagKind::DivisionByZero, mk::Severity::Error, {}, "nowhere", {}});
  CHECK(mk::renderJson(sm, diags.diagnostics()) ==
        "[\n"
        "  {\"file\":\"m.mk\",\"line\":1,\"column\":11,\"endLine\":1,\"endColumn\":14,\"severity\":\"error\","
        "\"code\":\"E0108\",\"message\":\"unknown name 'bbx'\",\"notes\":[{\"file\":\"m.mk\",\"line\":2,"
        "\"column\":7,\"endLine\":2,\"endColumn\":10,\"message\":\"'bbb' is declared here\"}]},\n"
        "  {\"file\":\"m.mk\",\"line\":1,\"column\":1,\"endLine\":1,\"endColumn\":6,\"severity\":\"warning\","
        "\"code\":\"E0104\",\"message\":\"module 'x' is imported twice\",\"notes\":[]},\n"
        "  {\"file\":null,\"severity\":\"error\",\"code\":\"E0203\",\"message\":\"nowhere\",\"notes\":[]}\n"
        "]\n");
}

TEST_CASE("renderJson: escaping of messages and paths") {
  mk::SourceManager sm;
  mk::FileId f = sm.add("dir \"q\"/\xff.mk", "line one\nline two\n");
  mk::Diagnostic d{mk::DiagKind::SyntaxError, mk::Severity::Error, {f, 5, 13},
                   "expected \"x\",\nfound '\\' \x01 \xc3\xa9 \xe2\x9c\x93 \xc3", {}};
  CHECK(mk::renderJson(sm, {d}) ==
        "[\n"
        "  {\"file\":\"dir \\\"q\\\"/\\ufffd.mk\",\"line\":1,\"column\":6,\"endLine\":2,\"endColumn\":5,"
        "\"severity\":\"error\",\"code\":\"E0005\",\"message\":\"expected \\\"x\\\",\\nfound '\\\\' \\u0001 "
        "\xc3\xa9 \xe2\x9c\x93 \\ufffd\",\"notes\":[]}\n"
        "]\n");
}

TEST_CASE("jsonQuote") {
  CHECK(mk::abi::jsonQuote("") == "\"\"");
  CHECK(mk::abi::jsonQuote("plain") == "\"plain\"");
  CHECK(mk::abi::jsonQuote("a\"b") == "\"a\\\"b\"");
  CHECK(mk::abi::jsonQuote("a\\b") == "\"a\\\\b\"");
  CHECK(mk::abi::jsonQuote("a\nb\rc\td") == "\"a\\nb\\rc\\td\"");
  CHECK(mk::abi::jsonQuote(std::string_view("\x00\x1f", 2)) == "\"\\u0000\\u001f\"");
  CHECK(mk::abi::jsonQuote("\x7f") == "\"\x7f\"");
  // Valid UTF-8 of every length is kept as is.
  CHECK(mk::abi::jsonQuote("\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80") == "\"\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80\"");
  // Bytes that are not UTF-8 become U+FFFD, one per byte, and what follows is kept.
  CHECK(mk::abi::jsonQuote("\xff") == "\"\\ufffd\"");
  CHECK(mk::abi::jsonQuote("\x80x") == "\"\\ufffdx\"");
  CHECK(mk::abi::jsonQuote("\xc3(") == "\"\\ufffd(\"");         // a lead byte without its continuation
  CHECK(mk::abi::jsonQuote("a\xe2\x9c") == "\"a\\ufffd\\ufffd\"");  // truncated at the end
  CHECK(mk::abi::jsonQuote("\xf0\x9f\x98") == "\"\\ufffd\\ufffd\\ufffd\"");
}

// Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8 either.
TEST_CASE("jsonQuote: overlong forms, surrogates and out-of-range code points") {
  CHECK(mk::abi::jsonQuote("\xc0\x80") == "\"\\ufffd\\ufffd\"");                  // overlong NUL
  CHECK(mk::abi::jsonQuote("\xe0\x80\xaf") == "\"\\ufffd\\ufffd\\ufffd\"");       // overlong '/'
  CHECK(mk::abi::jsonQuote("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");       // U+D800
  CHECK(mk::abi::jsonQuote("\xf4\x90\x80\x80") == "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // U+110000
  CHECK(mk::abi::jsonQuote("\xf7\xbf\xbf\xbf") == "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

TEST_CASE("error limit") {
  mk::SourceManager sm;
  mk::FileId f = sm.add("l.mk", "abcdef\n");
  mk::DiagnosticEngine diags(sm);
  diags.setErrorLimit(2);
  diags.emit({f, 0, 1}, UnknownName, "a", "");
  diags.emit({f, 0, 1}, DuplicateImport, "w");  // warnings do not count towards the limit
  diags.emit({f, 1, 2}, UnknownName, "b", "");
  CHECK(diags.diagnostics().size() == 3);
  CHECK(diags.errorCount() == 2);
  diags.emit({f, 2, 3}, UnknownName, "c", "");  // the third error: replaced by the limit entry
  REQUIRE(diags.diagnostics().size() == 4);
  const mk::Diagnostic& limit = diags.diagnostics().back();
  CHECK(limit.kind == mk::DiagKind::TooManyErrors);
  CHECK(limit.severity == mk::Severity::Error);
  CHECK_FALSE(limit.range.valid());
  CHECK(limit.message == "too many errors (2); stopping here (raise the limit with --max-errors)");
  CHECK(mk::renderText(sm, limit) ==
        "mkdsl: error: too many errors (2); stopping here (raise the limit with --max-errors) [E0000]\n");
  // Everything after it is dropped, errors and warnings alike, and the entry is not repeated.
  diags.emit({f, 3, 4}, UnknownName, "d", "");
  diags.emit({f, 3, 4}, DuplicateImport, "w2");
  diags.emit({f, 4, 5}, UnknownName, "e", "");
  CHECK(diags.diagnostics().size() == 4);
  CHECK(diags.errorCount() == 2);
  std::vector<std::string> messages;
  for (const auto& d : diags.diagnostics()) messages.push_back(d.message);
  CHECK(messages == std::vector<std::string>{"unknown name 'a'", "module 'w' is imported twice", "unknown name 'b'",
                                             "too many errors (2); stopping here (raise the limit with --max-errors)"});
  // clear() starts over, with the same limit.
  diags.clear();
  CHECK(diags.diagnostics().empty());
  CHECK(diags.errorCount() == 0);
  diags.emit({f, 0, 1}, UnknownName, "x", "");
  CHECK(diags.diagnostics().size() == 1);
}

TEST_CASE("no error limit by default, and limit 0 means none") {
  mk::SourceManager sm;
  mk::FileId f = sm.add("l.mk", "abcdef\n");
  mk::DiagnosticEngine diags(sm);
  for (int i = 0; i < 100; ++i) diags.emit({f, 0, 1}, UnknownName, "a" + std::to_string(i), "");
  CHECK(diags.errorCount() == 100);
  diags.setErrorLimit(0);
  diags.emit({f, 0, 1}, UnknownName, "b", "");
  CHECK(diags.diagnostics().size() == 101);
}

TEST_CASE("the same diagnostic reached twice is reported once") {
  mk::SourceManager sm;
  mk::FileId f = sm.add("d.mk", "abcdef\n");
  mk::DiagnosticEngine diags(sm);
  diags.emit({f, 0, 1}, UnknownName, "a", "").note({f, 2, 3}, DeclaredHere, "a");
  diags.emit({f, 0, 1}, UnknownName, "a", "").note({f, 4, 5}, DeclaredHere, "a");  // other notes only
  CHECK(diags.diagnostics().size() == 1);
  CHECK(diags.errorCount() == 1);
  REQUIRE(diags.diagnostics()[0].notes.size() == 1);
  CHECK(diags.diagnostics()[0].notes[0].range.begin == 2);  // the first one is kept
  // Another place, another message or another kind is another diagnostic.
  diags.emit({f, 0, 2}, UnknownName, "a", "");
  diags.emit({f, 0, 1}, UnknownName, "b", "");
  diags.emit({f, 0, 1}, SyntaxError, "a", "b");
  CHECK(diags.diagnostics().size() == 4);
  CHECK(diags.errorCount() == 4);
}

TEST_CASE("suppression drops diagnostics") {
  mk::SourceManager sm;
  mk::FileId f = sm.add("s.mk", "abc\n");
  mk::DiagnosticEngine diags(sm);
  CHECK_FALSE(diags.suppressed());
  diags.setSuppressed(true);
  CHECK(diags.suppressed());
  diags.emit({f, 0, 1}, UnknownName, "a", "").note({f, 1, 2}, DeclaredHere, "a");
  diags.emit({f, 0, 1}, DuplicateImport, "w");
  CHECK(diags.diagnostics().empty());
  CHECK(diags.errorCount() == 0);
  CHECK_FALSE(diags.hasErrors());
  diags.setSuppressed(false);
  diags.emit({f, 0, 1}, UnknownName, "b", "");
  REQUIRE(diags.diagnostics().size() == 1);
  CHECK(diags.diagnostics()[0].message == "unknown name 'b'");
  CHECK(diags.errorCount() == 1);
}

TEST_CASE("a moved builder reports once") {
  mk::SourceManager sm;
  mk::FileId f = sm.add("b.mk", "abc\n");
  mk::DiagnosticEngine diags(sm);
  {
    mk::DiagnosticBuilder b = diags.emit({f, 0, 1}, UnknownName, "a", "");
    mk::DiagnosticBuilder moved(std::move(b));
    moved.note({f, 1, 2}, DeclaredHere, "a");
    CHECK(diags.diagnostics().empty());  // reported when the builder goes out of scope
  }
  REQUIRE(diags.diagnostics().size() == 1);
  CHECK(diags.diagnostics()[0].notes.size() == 1);
}
