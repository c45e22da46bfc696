// Tokenizes .mk text with the extension's TextMate grammar (vscode-textmate + vscode-oniguruma,
// the engine VS Code itself uses) and checks the scopes of representative tokens.
// Run: npm test (in editors/vscode, after npm ci).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const root = path.join(__dirname, '..');
// The repository root (grammar/Mk.g4, stdlib/, examples/): MKDSL_SOURCE_DIR when the extension
// was copied elsewhere (tests/editors/package_vscode.sh), else two folders up.
const repoRoot = process.env.MKDSL_SOURCE_DIR || path.join(root, '..', '..');
const grammarPath = path.join(root, 'syntaxes', 'mkdsl.tmLanguage.json');

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== 'source.mkdsl') return null;
      return vsctm.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath);
    },
  });
  return registry.loadGrammar('source.mkdsl');
}

/** Tokenizes text: a list of {line, text, scopes} for each token. */
function tokenize(grammar, text) {
  const out = [];
  let state = vsctm.INITIAL;
  text.split('\n').forEach((line, i) => {
    const r = grammar.tokenizeLine(line, state);
    for (const t of r.tokens) {
      out.push({ line: i, text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes });
    }
    state = r.ruleStack;
  });
  return out;
}

/** The innermost scope of the first token (on `line`, if given) whose text is `text`. */
function scopeOf(tokens, text, line) {
  const t = tokens.find((t) => t.text.trim() === text && (line === undefined || t.line === line));
  assert.ok(t, `no token '${text}'${line === undefined ? '' : ` on line ${line}`}`);
  return t.scopes[t.scopes.length - 1];
}

let grammarPromise;
function grammar() {
  grammarPromise ??= loadGrammar();
  return grammarPromise;
}

test('the grammar is valid JSON with the scope package.json names', () => {
  const g = JSON.parse(fs.readFileSync(grammarPath, 'utf8'));
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.equal(g.scopeName, 'source.mkdsl');
  assert.equal(pkg.contributes.grammars[0].scopeName, g.scopeName);
  assert.equal(pkg.contributes.grammars[0].language, 'mkdsl');
  assert.deepEqual(pkg.contributes.languages[0].extensions, ['.mk']);
  JSON.parse(fs.readFileSync(path.join(root, 'language-configuration.json'), 'utf8'));
});

test('every keyword of grammar/Mk.g4 is highlighted as a keyword', async () => {
  const g4 = fs.readFileSync(path.join(repoRoot, 'grammar', 'Mk.g4'), 'utf8');
  const keywords = [...g4.matchAll(/[A-Z_]+ : '([a-z_]+)' ;/g)].map((m) => m[1]);
  assert.ok(keywords.length >= 25, `found only ${keywords.length} keywords in Mk.g4`);
  const g = await grammar();
  for (const kw of keywords) {
    const tokens = tokenize(g, `${kw} `);
    const scope = tokens[0].scopes[tokens[0].scopes.length - 1];
    assert.match(scope, /^(keyword|storage|constant\.language)\./, `keyword '${kw}' got scope ${scope}`);
  }
});

test('representative tokens of a sample file', async () => {
  const g = await grammar();
  const tokens = tokenize(g, fs.readFileSync(path.join(__dirname, 'sample.mk'), 'utf8'));
  const expect = [
    ['///', 0, 'punctuation.definition.comment.mkdsl'],
    ['`code`', 0, 'markup.inline.raw.mkdsl'],
    ['A line comment.', 1, 'comment.line.double-slash.mkdsl'],
    ['comment.', 3, 'comment.block.mkdsl'],
    ['*/', 3, 'punctuation.definition.comment.end.mkdsl'],
    ['import', 4, 'keyword.control.import.mkdsl'],
    ['linear', 4, 'entity.name.namespace.mkdsl'],
    ['config', 6, 'storage.type.config.mkdsl'],
    ['tiny', 6, 'entity.name.type.config.mkdsl'],
    ['base', 6, 'entity.other.inherited-class.mkdsl'],
    ['64', 6, 'constant.numeric.integer.mkdsl'],
    ['1e-5', 6, 'constant.numeric.float.mkdsl'],
    ['500_000.0', 6, 'constant.numeric.float.mkdsl'],
    ['groups', 7, 'variable.other.constant.mkdsl'],
    ['/', 7, 'keyword.operator.arithmetic.mkdsl'],
    ['w', 8, 'variable.other.storage.mkdsl'],
    ['bf16', 8, 'support.type.primitive.mkdsl'],
    ['tiled', 8, 'support.type.layout.mkdsl'],
    ['{l}', 8, 'constant.other.placeholder.mkdsl'],
    ['\\n', 8, 'constant.character.escape.mkdsl'],
    ['f16', 9, 'support.type.primitive.mkdsl'],
    ['col_major', 9, 'support.type.layout.mkdsl'],
    ['layer', 10, 'entity.name.type.group.mkdsl'],
    ['..', 10, 'keyword.operator.range.mkdsl'],
    ['padded', 10, 'support.type.layout.mkdsl'],
    ['cluster', 12, 'storage.type.annotation.mkdsl'],
    ['op', 13, 'storage.type.function.mkdsl'],
    ['scale', 13, 'entity.name.function.mkdsl'],
    ['inout', 13, 'storage.modifier.inout.mkdsl'],
    ['i32', 13, 'support.type.primitive.mkdsl'],
    ['->', 13, 'keyword.operator.arrow.mkdsl'],
    ['bool', 13, 'support.type.primitive.mkdsl'],
    ['tasks', 13, 'keyword.other.tasks.mkdsl'],
    ['static_assert', 14, 'keyword.other.static-assert.mkdsl'],
    ['%', 14, 'keyword.operator.arithmetic.mkdsl'],
    ['let', 15, 'storage.type.variable.mkdsl'],
    ['load', 15, 'keyword.other.memory.mkdsl'],
    ['as', 15, 'keyword.operator.cast.mkdsl'],
    ['inf', 16, 'constant.language.infinity.mkdsl'],
    ['for', 17, 'keyword.control.mkdsl'],
    ['0', 17, 'constant.numeric.integer.mkdsl'],
    ['..', 17, 'keyword.operator.range.mkdsl'],
    ['by', 17, 'keyword.control.mkdsl'],
    ['max', 17, 'support.function.builtin.mkdsl'],
    ['exp', 17, 'support.function.builtin.mkdsl'],
    ['&&', 18, 'keyword.operator.logical.mkdsl'],
    ['true', 18, 'constant.language.boolean.mkdsl'],
    ['store', 18, 'keyword.other.memory.mkdsl'],
    ['>=', 18, 'keyword.operator.comparison.mkdsl'],
    ['1.5', 18, 'constant.numeric.float.mkdsl'],
    ['return', 18, 'keyword.control.mkdsl'],
    ['step', 21, 'storage.type.function.mkdsl'],
    ['decode', 21, 'entity.name.function.mkdsl'],
    ['after', 22, 'storage.type.annotation.mkdsl'],
    ['matvec', 22, 'entity.name.function.call.mkdsl'],
    ['sync', 23, 'keyword.control.sync.mkdsl'],
    ['argmax', 24, 'support.function.builtin.mkdsl'],
  ];
  for (const [text, line, scope] of expect) {
    assert.equal(scopeOf(tokens, text, line), scope, `'${text}' on line ${line}`);
  }
  // The string holds the placeholder and the escape, and ends at its closing quote.
  const str = tokens.filter((t) => t.line === 8 && t.scopes.includes('string.quoted.double.mkdsl'));
  assert.equal(str.map((t) => t.text).join(''), '"model.layers.{l}.weight\\n"');
});

test('the shipped .mk files tokenize with no invalid token and no unclosed region', async () => {
  const g = await grammar();
  const files = ['stdlib', 'examples'].flatMap((d) =>
    fs.readdirSync(path.join(repoRoot, d)).filter((f) => f.endsWith('.mk')).map((f) => path.join(repoRoot, d, f)));
  assert.ok(files.length > 0);
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const tokens = tokenize(g, text);
    const bad = tokens.find((t) => t.scopes.some((s) => s.startsWith('invalid')));
    assert.equal(bad, undefined, `${file}:${bad && bad.line + 1}: invalid token '${bad && bad.text}'`);
    // Each line ends back at the top level (no string or comment spills into the next line),
    // except inside /* */ comments.
    const lines = text.split('\n');
    let state = vsctm.INITIAL;
    lines.forEach((line, i) => {
      const r = g.tokenizeLine(line, state);
      state = r.ruleStack;
      if (!text.includes('/*')) {
        assert.ok(state.depth === 1, `${file}:${i + 1}: a region stays open after this line`);
      }
    });
    // Declared op names come out as function names.
    for (const m of text.matchAll(/^op\s+([A-Za-z_]\w*)/gm)) {
      assert.equal(scopeOf(tokens, m[1]), 'entity.name.function.mkdsl', `${file}: op ${m[1]}`);
    }
  }
});
