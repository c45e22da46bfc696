// Loads src/extension.js with stand-ins for the `vscode` API and vscode-languageclient, and checks
// that activation starts `<mkdsl.server.path> lsp` over stdio for the mkdsl language.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const Module = require('node:module');
const path = require('node:path');

function loadExtension(settings) {
  const started = [];
  const commands = {};
  class LanguageClient {
    constructor(id, name, serverOptions, clientOptions) {
      Object.assign(this, { id, name, serverOptions, clientOptions, running: false });
      started.push(this);
    }
    async start() { this.running = true; }
    isRunning() { return this.running; }
    async stop() { this.running = false; }
  }
  const vscode = {
    workspace: {
      getConfiguration: (section) => ({
        get: (key, dflt) => (settings[`${section}.${key}`] ?? dflt),
      }),
      createFileSystemWatcher: (glob) => ({ glob, dispose() {} }),
      onDidChangeConfiguration: () => ({ dispose() {} }),
    },
    commands: {
      registerCommand: (name, fn) => { commands[name] = fn; return { dispose() {} }; },
    },
    window: { showErrorMessage: (m) => { throw new Error(`unexpected error message: ${m}`); } },
  };
  const stubs = {
    vscode,
    'vscode-languageclient/node': { LanguageClient, TransportKind: { stdio: 0, ipc: 1 } },
  };
  const load = Module._load;
  Module._load = function (request, ...rest) {
    return request in stubs ? stubs[request] : load.call(this, request, ...rest);
  };
  const file = path.join(__dirname, '..', 'src', 'extension.js');
  delete require.cache[file];
  try {
    return { ext: require(file), started, commands };
  } finally {
    Module._load = load;
  }
}

test('activation starts `mkdsl lsp` over stdio for .mk documents', async () => {
  const { ext, started, commands } = loadExtension({});
  const context = { subscriptions: [] };
  await ext.activate(context);
  assert.equal(started.length, 1);
  const c = started[0];
  assert.equal(c.id, 'mkdsl');
  assert.deepEqual(c.serverOptions.run, { command: 'mkdsl', args: ['lsp'], transport: 0 });
  assert.deepEqual(c.clientOptions.documentSelector.map((s) => s.language), ['mkdsl', 'mkdsl']);
  assert.ok('mkdsl.restartServer' in commands);
  await ext.deactivate();
  assert.equal(c.isRunning(), false);
});

test('mkdsl.server.path and extraArgs pick the server command', async () => {
  const { ext, started, commands } = loadExtension({
    'mkdsl.server.path': '/opt/mkdsl/bin/mkdsl',
    'mkdsl.server.extraArgs': ['--stdlib', '/opt/mkdsl/stdlib'],
  });
  await ext.activate({ subscriptions: [] });
  assert.deepEqual(started[0].serverOptions.run.command, '/opt/mkdsl/bin/mkdsl');
  assert.deepEqual(started[0].serverOptions.run.args, ['lsp', '--stdlib', '/opt/mkdsl/stdlib']);
  await commands['mkdsl.restartServer']();
  assert.equal(started.length, 2);
  assert.equal(started[0].isRunning(), false);
  assert.equal(started[1].isRunning(), true);
  await ext.deactivate();
});

test('package.json activates on the language and declares the server setting', () => {
  const pkg = require('../package.json');
  assert.deepEqual(pkg.activationEvents, ['onLanguage:mkdsl']);
  assert.equal(pkg.contributes.languages[0].id, 'mkdsl');
  assert.equal(pkg.contributes.configuration.properties['mkdsl.server.path'].default, 'mkdsl');
  assert.equal(pkg.main, './src/extension.js');
});
