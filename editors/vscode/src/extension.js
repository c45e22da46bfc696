// @ts-check
// The mkdsl extension's client: starts `mkdsl lsp` (LSP 3.17 over stdio) for .mk files.
'use strict';

const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

/** @type {LanguageClient | undefined} */
let client;

/** The server command from the settings: `mkdsl.server.path` (default `mkdsl`) plus `lsp`. */
function serverOptions() {
  const config = vscode.workspace.getConfiguration('mkdsl');
  const command = config.get('server.path', 'mkdsl') || 'mkdsl';
  const extraArgs = config.get('server.extraArgs', []);
  const executable = { command, args: ['lsp', ...extraArgs], transport: TransportKind.stdio };
  return { run: executable, debug: executable };
}

async function startClient() {
  client = new LanguageClient('mkdsl', 'mkdsl', serverOptions(), {
    documentSelector: [
      { scheme: 'file', language: 'mkdsl' },
      { scheme: 'untitled', language: 'mkdsl' },
    ],
    synchronize: {
      // Imported modules changing on disk can change a file's diagnostics.
      fileEvents: vscode.workspace.createFileSystemWatcher('**/*.mk'),
    },
  });
  try {
    await client.start();
  } catch (err) {
    const path = vscode.workspace.getConfiguration('mkdsl').get('server.path', 'mkdsl');
    vscode.window.showErrorMessage(
      `mkdsl: could not start the language server '${path} lsp' (${err && err.message ? err.message : err}). ` +
        'Set "mkdsl.server.path" to the mkdsl binary (e.g. build/tools/mkdsl/mkdsl).');
  }
}

async function stopClient() {
  if (client) {
    const c = client;
    client = undefined;
    if (c.isRunning()) await c.stop();
  }
}

/** @param {vscode.ExtensionContext} context */
async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand('mkdsl.restartServer', async () => {
      await stopClient();
      await startClient();
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('mkdsl.server')) {
        await stopClient();
        await startClient();
      }
    }),
  );
  await startClient();
}

function deactivate() {
  return stopClient();
}

module.exports = { activate, deactivate };
