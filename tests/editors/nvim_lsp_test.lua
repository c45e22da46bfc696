-- Neovim, a real third-party LSP client, drives `mkdsl lsp` through editors/nvim/lua/mkdsl.lua:
-- diagnostics (and their clearing after an edit), hover, go to definition into the stdlib,
-- completion, document symbols and formatting. Works on Neovim 0.7.2 (Debian 12) and later.
--
-- Run by tests/editors/run_nvim_test.sh; by hand:
--   MKDSL_BIN=build/tools/mkdsl/mkdsl MKDSL_SOURCE_DIR=$PWD \
--     nvim --headless --clean -i NONE -n -c 'luafile tests/editors/nvim_lsp_test.lua'
-- Exits 0 when every check passed, 1 on the first failure (with a message on stderr); never waits
-- longer than MKDSL_NVIM_TIMEOUT_MS (default 60000) for any one answer: a hang guard, not a speed
-- limit.

local TIMEOUT = tonumber(vim.env.MKDSL_NVIM_TIMEOUT_MS or '') or 60000

local function log(msg)
  io.stdout:write(msg .. '\n')
  io.stdout:flush()
end

local function finish(code)
  io.stdout:flush()
  io.stderr:flush()
  vim.cmd((code == 0 and 'qall!') or ('cquit! ' .. code))
end

local Failure = {}
local function fail(fmt, ...)
  error(setmetatable({ msg = string.format(fmt, ...) }, Failure), 2)
end
local function check(cond, fmt, ...)
  if not cond then
    fail(fmt, ...)
  end
end

local function read_file(path)
  local f = assert(io.open(path, 'r'))
  local s = f:read('*a')
  f:close()
  return s
end

local function write_file(path, text)
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
end

-- 0-based line and byte column of the first `needle` on a line matching `line_pattern`.
local function find_pos(lines, line_pattern, needle)
  for i, l in ipairs(lines) do
    if l:find(line_pattern) then
      local col = l:find(needle, 1, true)
      if col then
        return i - 1, col - 1
      end
    end
  end
  fail('test bug: no line matching %q with %q', line_pattern, needle)
end

-- The text of a hover result (MarkupContent, MarkedString or a list of them).
local function hover_text(contents)
  if type(contents) == 'string' then
    return contents
  end
  if contents.value then
    return contents.value
  end
  local parts = {}
  for _, c in ipairs(contents) do
    table.insert(parts, type(c) == 'string' and c or c.value or '')
  end
  return table.concat(parts, '\n')
end

local function buf_clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  local list = {}
  for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
    table.insert(list, c)
  end
  return list
end

-- One request to the server through Neovim's client; fails on a timeout or an error answer.
local server_exit = function()
  return nil
end
local provider = {
  ['textDocument/hover'] = 'hoverProvider',
  ['textDocument/definition'] = 'definitionProvider',
  ['textDocument/completion'] = 'completionProvider',
  ['textDocument/documentSymbol'] = 'documentSymbolProvider',
  ['textDocument/formatting'] = 'documentFormattingProvider',
}
local function request(bufnr, method, params)
  for _, c in ipairs(buf_clients(bufnr)) do
    local caps = c.server_capabilities or {}
    local cap = caps[provider[method]]
    check(cap ~= nil and cap ~= false and cap ~= vim.NIL,
          '%s: the server does not announce %s in its capabilities', method, provider[method])
  end
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, TIMEOUT)
  check(server_exit() == nil, '%s: the server exited (%s)', method, tostring(server_exit()))
  check(responses ~= nil, '%s: no answer within %d ms (%s)', method, TIMEOUT, tostring(err))
  for _, r in pairs(responses) do
    check(r.err == nil, '%s: the server answered with an error: %s', method, vim.inspect(r.err))
    return r.result
  end
  fail('%s: no client answered', method)
end

local function run()
  local bin = vim.env.MKDSL_BIN
  local src = vim.env.MKDSL_SOURCE_DIR
  check(bin and bin ~= '', 'MKDSL_BIN (the mkdsl binary) is not set')
  check(src and src ~= '', 'MKDSL_SOURCE_DIR (the repository root) is not set')
  check(vim.fn.executable(bin) == 1, 'MKDSL_BIN=%s is not executable', bin)
  log('nvim ' .. tostring(vim.version().major) .. '.' .. vim.version().minor .. '.' .. vim.version().patch
      .. ', server: ' .. bin .. ' lsp')

  -- The snippet users put in their init.lua.
  vim.opt.runtimepath:append(src .. '/editors/nvim')
  local exited -- the server's exit, if it exits before the end
  local exit_code
  server_exit = function()
    return exited
  end
  require('mkdsl').setup({
    cmd = { bin, 'lsp' },
    on_exit = function(code, signal)
      exit_code = code
      exited = string.format('exit code %s, signal %s', tostring(code), tostring(signal))
    end,
  })

  -- A program with one error (`hh` is not declared) and one badly formatted line.
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  write_file(dir .. '/.git', '') -- the project root marker
  local path = dir .. '/prog.mk'
  local text = table.concat({
    'import std.linear;',
    '',
    '/// A small config.',
    'config small { hidden = 64; }',
    '',
    '/// The projection weight.',
    'weight proj:   bf16[hidden, hidden] tiled(16, 64) = "model.proj.weight";',
    '/// The input vector.',
    'weight xin: bf16[hidden] = "model.x.weight";',
    '',
    'step decode(pos: i32) -> (y: bf16[hidden]) {',
    '    let h = matvec(proj, xin);',
    '    return hh;',
    '}',
    '',
  }, '\n')
  write_file(path, text)
  local lines = vim.split(text, '\n', { plain = true })

  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  check(vim.bo[bufnr].filetype == 'mk', 'filetype of prog.mk is %q, not mk', vim.bo[bufnr].filetype)
  log('ok: *.mk gets the mk filetype')

  vim.wait(TIMEOUT, function()
    return #buf_clients(bufnr) > 0 or exited ~= nil
  end, 20)
  check(exited == nil, 'the server `%s lsp` exited at start-up (%s)', bin, tostring(exited))
  check(#buf_clients(bufnr) > 0, 'no LSP client attached to the buffer within %d ms', TIMEOUT)
  local client = buf_clients(bufnr)[1]
  check(client.name == 'mkdsl', 'the attached client is %q, not mkdsl', tostring(client.name))
  local ready = vim.wait(TIMEOUT, function()
    return client.initialized == nil or client.initialized or client:is_stopped()
  end, 20)
  check(ready and not client:is_stopped(), 'the server did not initialize (stopped: %s)',
        tostring(client:is_stopped()))
  log('ok: the mkdsl client attached and the server initialized')
  check(vim.bo[bufnr].omnifunc == 'v:lua.vim.lsp.omnifunc', 'omnifunc is %q', vim.bo[bufnr].omnifunc)
  for _, lhs in ipairs({ 'K', 'gd', 'gr' }) do
    check(vim.fn.maparg(lhs, 'n', false, true).buffer == 1, 'no buffer-local mapping of %s', lhs)
  end
  log('ok: omnifunc and the K/gd/gr mappings are set on attach')

  -- 1. The diagnostic of `hh`, with its range.
  local hh_line, hh_col = find_pos(lines, 'return hh;', 'hh')
  local diags
  vim.wait(TIMEOUT, function()
    diags = vim.diagnostic.get(bufnr)
    return #diags > 0 or exited ~= nil
  end, 20)
  check(exited == nil, 'the server exited (%s)', tostring(exited))
  check(#diags > 0, 'no diagnostics published for prog.mk within %d ms', TIMEOUT)
  local found
  for _, d in ipairs(diags) do
    if d.message:find("unknown name 'hh'", 1, true) then
      found = d
    end
  end
  check(found, "no diagnostic \"unknown name 'hh'\" among: %s", vim.inspect(diags))
  check(found.severity == vim.diagnostic.severity.ERROR, 'the diagnostic is not an error: %s', vim.inspect(found))
  check(found.lnum == hh_line and found.col == hh_col and found.end_lnum == hh_line and found.end_col == hh_col + 2,
        'the diagnostic range is %d:%d-%d:%d, expected %d:%d-%d:%d', found.lnum, found.col, found.end_lnum,
        found.end_col, hh_line, hh_col, hh_line, hh_col + 2)
  check(#diags == 1, 'expected exactly one diagnostic, got %s', vim.inspect(diags))
  log(string.format('ok: diagnostic %q at %d:%d-%d:%d', found.message, found.lnum, found.col, found.end_lnum,
                    found.end_col))

  -- 2. Fixing the error (a didChange from Neovim) clears the diagnostics.
  vim.api.nvim_buf_set_text(bufnr, hh_line, hh_col, hh_line, hh_col + 2, { 'h' })
  local cleared = vim.wait(TIMEOUT, function()
    return #vim.diagnostic.get(bufnr) == 0 or exited ~= nil
  end, 20)
  check(exited == nil, 'the server exited (%s)', tostring(exited))
  check(cleared, 'diagnostics still there %d ms after the fix: %s', TIMEOUT, vim.inspect(vim.diagnostic.get(bufnr)))
  log('ok: the edit that fixes the error clears the diagnostics')
  lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)

  local uri = vim.uri_from_bufnr(bufnr)
  local function at(line, col)
    return { textDocument = { uri = uri }, position = { line = line, character = col } }
  end

  -- 3. Hover on a stdlib op shows its signature and its /// doc comment; on a local weight, its doc.
  local mv_line, mv_col = find_pos(lines, 'let h = matvec', 'matvec')
  local hover = request(bufnr, 'textDocument/hover', at(mv_line, mv_col + 2))
  check(hover and hover.contents, 'no hover on matvec: %s', vim.inspect(hover))
  local htext = hover_text(hover.contents)
  check(htext:find('matvec', 1, true) and htext:find('Plain matvec', 1, true),
        'the hover on matvec lacks its name or doc comment: %q', htext)
  log('ok: hover on matvec: ' .. (htext:gsub('```[^\n]*\n', ''):match('[^\n]+') or '') .. ' ...')
  local pr_line, pr_col = find_pos(lines, 'matvec%(proj', 'proj')
  hover = request(bufnr, 'textDocument/hover', at(pr_line, pr_col))
  htext = hover and hover.contents and hover_text(hover.contents) or ''
  check(htext:find('The projection weight.', 1, true), 'the hover on proj lacks its doc comment: %q', htext)
  log('ok: hover on the weight proj shows its /// doc')

  -- 4. Go to definition of matvec: stdlib/linear.mk, the line of `op matvec<`.
  local linear = src .. '/stdlib/linear.mk'
  local def_line
  for i, l in ipairs(vim.split(read_file(linear), '\n', { plain = true })) do
    if l:find('^op matvec<') then
      def_line = i - 1
    end
  end
  check(def_line, 'test bug: no `op matvec<` in %s', linear)
  local def = request(bufnr, 'textDocument/definition', at(mv_line, mv_col + 2))
  check(def ~= nil and def ~= vim.NIL, 'no definition for matvec')
  if def.uri == nil and def.targetUri == nil then
    check(#def >= 1, 'empty definition list for matvec')
    def = def[1]
  end
  local def_uri = def.uri or def.targetUri
  local def_range = def.range or def.targetSelectionRange or def.targetRange
  check(def_uri:find('/stdlib/linear%.mk$'), 'the definition of matvec is in %s, not stdlib/linear.mk', def_uri)
  check(vim.loop.fs_realpath(vim.uri_to_fname(def_uri)) == vim.loop.fs_realpath(linear),
        'the definition URI %s is not the file %s', def_uri, linear)
  check(def_range.start.line == def_line, 'the definition of matvec is on line %d, expected %d',
        def_range.start.line, def_line)
  log(string.format('ok: definition of matvec: %s line %d', def_uri, def_range.start.line))

  -- 5. Completion inside the step body offers stdlib ops.
  local comp = request(bufnr, 'textDocument/completion', at(mv_line, mv_col + 3))
  check(comp ~= nil and comp ~= vim.NIL, 'no completion result')
  local items = comp.items or comp
  local labels = {}
  for _, it in ipairs(items) do
    labels[it.label] = true
  end
  check(labels['matvec'] and labels['matvec_residual'],
        'completion after "mat" does not offer the stdlib ops matvec and matvec_residual (got %d items: %s)',
        #items, table.concat(vim.tbl_keys(labels), ' '))
  log(string.format('ok: completion offers matvec and matvec_residual (%d items)', #items))

  -- 6. Document symbols: the config, the weights and the step.
  local syms = request(bufnr, 'textDocument/documentSymbol', { textDocument = { uri = uri } })
  local names = {}
  local function collect(list)
    for _, s in ipairs(list or {}) do
      names[s.name] = true
      collect(s.children)
    end
  end
  collect(syms)
  for _, n in ipairs({ 'small', 'proj', 'xin', 'decode' }) do
    check(names[n], 'documentSymbol lacks %s (got: %s)', n, table.concat(vim.tbl_keys(names), ' '))
  end
  log('ok: document symbols include small, proj, xin and decode')

  -- 7. Formatting: the edits turn the buffer into what `mkdsl fmt` makes of it.
  local fixed = table.concat(lines, '\n') .. '\n'
  local fixed_path = dir .. '/fixed.mk'
  write_file(fixed_path, fixed)
  local expected = vim.fn.system({ bin, 'fmt', '--stdout', fixed_path })
  check(vim.v.shell_error == 0, 'mkdsl fmt --stdout failed: %s', expected)
  check(expected ~= fixed, 'test bug: the program is already formatted')
  local edits = request(bufnr, 'textDocument/formatting',
                        { textDocument = { uri = uri }, options = { tabSize = 4, insertSpaces = true } })
  check(type(edits) == 'table' and #edits > 0, 'formatting returned no edits: %s', vim.inspect(edits))
  vim.lsp.util.apply_text_edits(edits, bufnr, client.offset_encoding or 'utf-16')
  local formatted = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') .. '\n'
  check(formatted == expected, 'the formatted buffer differs from mkdsl fmt:\n--- got\n%s--- expected\n%s',
        formatted, expected)
  log(string.format('ok: formatting (%d edit(s)) gives what mkdsl fmt gives', #edits))
  -- The formatted buffer still checks clean (the server saw the edits).
  vim.wait(500)
  local after = vim.diagnostic.get(bufnr)
  check(#after == 0, 'diagnostics after formatting: %s', vim.inspect(after))

  -- 8. Shutdown: the server exits when Neovim stops the client.
  vim.lsp.stop_client(client.id)
  local stopped = vim.wait(TIMEOUT, function()
    return client:is_stopped() and exited ~= nil
  end, 20)
  check(stopped, 'the server did not exit within %d ms of shutdown/exit', TIMEOUT)
  check(exit_code == 0, 'the server exited with %s after shutdown/exit, not 0', exited)
  log('ok: the server shut down (' .. exited .. ')')
  vim.fn.delete(dir, 'rf')
end

local ok, err = xpcall(run, function(e)
  if getmetatable(e) == Failure then
    return e
  end
  return { msg = 'Lua error: ' .. tostring(e) .. '\n' .. debug.traceback() }
end)
if ok then
  log('nvim LSP test: all checks passed')
  finish(0)
else
  io.stderr:write('FAIL: ' .. err.msg .. '\n')
  finish(1)
end
