#!/usr/bin/env bash
# ctest's editors_vscode_package: in a copy of editors/vscode (so the checkout's node_modules are
# neither used nor touched), `npm ci`, the extension's node tests (`npm test`: the TextMate grammar
# tokenizes as it should, the client starts `mkdsl lsp`), then `npx vsce package`, and checks the
# .vsix holds the manifest, the grammar, the language configuration, the client and its
# vscode-languageclient dependency.
#   bash tests/editors/package_vscode.sh [--keep DIR]   (--keep: copy the .vsix into DIR)
# Exit: 0 passed, 1 failed, 77 skipped (no node/npm, or the npm registry cannot be reached).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KEEP=
while (($#)); do
  case $1 in
    --keep) KEEP=$2; shift 2 ;;
    *) echo "package_vscode.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

for tool in node npm; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed (the VS Code extension is packaged with node and npm)"
    exit 77
  fi
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
if ((node_major < 20)); then
  echo "SKIP: node $(node --version) is older than 20, which @vscode/vsce needs"
  exit 77
fi
if ! npm ping --fetch-timeout=30000 --fetch-retries=1 >/dev/null 2>&1; then
  echo "SKIP: the npm registry cannot be reached (npm ping failed), so npm ci cannot install the packaging tools"
  exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
step() { printf '\n== %s\n' "$*"; }
die() { echo "FAIL: $*" >&2; exit 1; }

step "copy editors/vscode (without node_modules and .vsix files) to $tmp/vscode"
tar -C "$ROOT/editors" --exclude=node_modules --exclude='*.vsix' -cf - vscode | tar -C "$tmp" -xf - ||
  die "could not copy editors/vscode"
cd "$tmp/vscode" || die "no $tmp/vscode"
[[ -f package-lock.json ]] || die "editors/vscode/package-lock.json is missing (npm ci needs it)"

step "npm ci"
npm ci --no-audit --no-fund || die "npm ci failed"

step "npm test (grammar tokenization and client start-up)"
MKDSL_SOURCE_DIR=$ROOT npm test || die "the extension's node tests failed"

step "npx vsce package"
npx --no-install vsce package </dev/null || die "vsce package failed"
shopt -s nullglob
vsix=(*.vsix)
((${#vsix[@]} == 1)) || die "expected one .vsix, found ${#vsix[@]}: ${vsix[*]}"
echo "packaged ${vsix[0]} ($(stat -c %s "${vsix[0]}") bytes)"

step "check the contents of ${vsix[0]}"
node - "${vsix[0]}" "$ROOT/editors/vscode" <<'JS' || die "the .vsix lacks what the extension needs"
// Lists the .vsix (a zip) with the yauzl reader that vsce itself depends on.
const [vsixPath, srcDir] = process.argv.slice(2);
const fs = require('fs');
const path = require('path');
const yauzl = require(require.resolve('yauzl', { paths: [require.resolve('@vscode/vsce')] }));
const need = [
  'extension.vsixmanifest',
  'extension/package.json',
  'extension/language-configuration.json',
  'extension/syntaxes/mkdsl.tmLanguage.json',
  'extension/src/extension.js',
  'extension/node_modules/vscode-languageclient/package.json',
];
yauzl.open(vsixPath, { lazyEntries: true }, (err, zip) => {
  if (err) throw err;
  const entries = new Map();
  zip.on('entry', (e) => {
    if (!need.includes(e.fileName)) { entries.set(e.fileName, null); zip.readEntry(); return; }
    zip.openReadStream(e, (err2, s) => {
      if (err2) throw err2;
      const chunks = [];
      s.on('data', (c) => chunks.push(c));
      s.on('end', () => { entries.set(e.fileName, Buffer.concat(chunks).toString('utf8')); zip.readEntry(); });
    });
  });
  zip.on('end', () => {
    let ok = true;
    for (const n of need) {
      if (!entries.has(n)) { console.error(`missing: ${n}`); ok = false; }
    }
    const bad = [...entries.keys()].filter((n) => /^extension\/(test\/|node_modules\/(@vscode\/vsce|vscode-textmate|vscode-oniguruma)\/)/.test(n));
    if (bad.length) { console.error(`shipped but should not be: ${bad.slice(0, 5).join(', ')}`); ok = false; }
    if (ok) {
      const pkg = JSON.parse(entries.get('extension/package.json'));
      const grammar = JSON.parse(entries.get('extension/syntaxes/mkdsl.tmLanguage.json'));
      const src = fs.readFileSync(path.join(srcDir, 'syntaxes', 'mkdsl.tmLanguage.json'), 'utf8');
      if (JSON.stringify(grammar) !== JSON.stringify(JSON.parse(src))) { console.error('the packaged grammar differs from the source'); ok = false; }
      if (pkg.contributes.languages[0].id !== 'mkdsl' || grammar.scopeName !== 'source.mkdsl') { console.error('wrong language id or scope'); ok = false; }
      JSON.parse(entries.get('extension/language-configuration.json'));
      console.log(`${entries.size} entries; ${pkg.name} ${pkg.version}: language ${pkg.contributes.languages[0].id}, grammar ${grammar.scopeName}`);
    }
    process.exit(ok ? 0 : 1);
  });
  zip.readEntry();
});
JS

if [[ -n $KEEP ]]; then
  mkdir -p "$KEEP" && cp "${vsix[0]}" "$KEEP/" && echo "kept $KEEP/${vsix[0]}"
fi
echo "vscode extension: packaged and checked"
