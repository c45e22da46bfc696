-- mkdsl for Neovim (0.7 and later): the `mk` filetype for *.mk files and the mkdsl language
-- server (`mkdsl lsp`, LSP over stdio) through Neovim's built-in LSP client. No plugins needed.
--
-- Use (init.lua), with this folder (editors/nvim) on the runtimepath:
--
--   vim.opt.runtimepath:append('/path/to/mkdsl/editors/nvim')
--   require('mkdsl').setup({ cmd = { '/path/to/mkdsl/build/tools/mkdsl/mkdsl', 'lsp' } })
--
-- or without touching the runtimepath:
--
--   dofile('/path/to/mkdsl/editors/nvim/lua/mkdsl.lua').setup({})
--
-- Options (all optional):
--   cmd           the server command (default { 'mkdsl', 'lsp' }, or { $MKDSL, 'lsp' } when the
--                 environment variable MKDSL names the binary)
--   pattern       the files that get the `mk` filetype (default '*.mk'; note that Vim otherwise
--                 gives *.mk the `make` filetype: narrow this, e.g. '*/models/*.mk', to keep
--                 Makefile fragments as make)
--   root_markers  files or folders whose presence marks the project root (default { '.git' });
--                 one server runs per root
--   on_attach     function(client, bufnr) called when the server attaches to a buffer
--   on_exit       function(code, signal, client_id) called when the server exits
--   keymaps       set buffer-local LSP keymaps on attach (default true): K hover, gd definition,
--                 gr references, <leader>rn rename, <leader>f format, [d ]d diagnostics
--   capabilities  client capabilities (default: vim.lsp.protocol.make_client_capabilities())
local M = {}

M.filetype = 'mk'

local defaults = {
  cmd = nil,
  pattern = '*.mk',
  root_markers = { '.git' },
  on_attach = nil,
  on_exit = nil,
  keymaps = true,
  capabilities = nil,
}

M.config = vim.deepcopy(defaults)

-- One client id per project root, for Neovim before 0.8 (vim.lsp.start reuses clients itself).
local clients_by_root = {}

local function default_cmd()
  local bin = vim.env.MKDSL
  if bin == nil or bin == '' then
    bin = 'mkdsl'
  end
  return { bin, 'lsp' }
end

-- The nearest folder above `path` holding one of the root markers, else the file's folder.
local function find_root(path, markers)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  local cur = dir
  while true do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(cur .. '/' .. marker) then
        return cur
      end
    end
    local parent = vim.fn.fnamemodify(cur, ':h')
    if parent == cur then
      return dir
    end
    cur = parent
  end
end

local function set_keymaps(bufnr)
  local function map(lhs, rhs, desc)
    vim.keymap.set('n', lhs, rhs, { buffer = bufnr, silent = true, desc = desc })
  end
  map('K', vim.lsp.buf.hover, 'mkdsl: hover')
  map('gd', vim.lsp.buf.definition, 'mkdsl: go to definition')
  map('gr', vim.lsp.buf.references, 'mkdsl: references')
  map('<leader>rn', vim.lsp.buf.rename, 'mkdsl: rename')
  map('<leader>f', function()
    if vim.lsp.buf.format then
      vim.lsp.buf.format({ async = true })
    else
      vim.lsp.buf.formatting() -- Neovim 0.7
    end
  end, 'mkdsl: format')
  map('[d', vim.diagnostic.goto_prev, 'previous diagnostic')
  map(']d', vim.diagnostic.goto_next, 'next diagnostic')
end

local function on_attach(client, bufnr)
  vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
  vim.bo[bufnr].tagfunc = 'v:lua.vim.lsp.tagfunc'
  if M.config.keymaps then
    set_keymaps(bufnr)
  end
  if M.config.on_attach then
    M.config.on_attach(client, bufnr)
  end
end

-- The client configuration for a buffer.
local function client_config(bufnr)
  local root = find_root(vim.api.nvim_buf_get_name(bufnr), M.config.root_markers)
  return {
    name = 'mkdsl',
    cmd = M.config.cmd or default_cmd(),
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    capabilities = M.config.capabilities or vim.lsp.protocol.make_client_capabilities(),
    on_attach = on_attach,
    on_exit = function(code, signal, client_id)
      for r, id in pairs(clients_by_root) do
        if id == client_id then
          clients_by_root[r] = nil
        end
      end
      if M.config.on_exit then
        M.config.on_exit(code, signal, client_id)
      end
    end,
  }
end

-- Starts (or reuses) the server for the buffer's project and attaches the buffer to it.
-- Returns the client id, or nil when the server could not start.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local config = client_config(bufnr)
  if vim.lsp.start then -- Neovim 0.8+
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = clients_by_root[config.root_dir]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client(config)
    if id == nil then
      vim.notify('mkdsl: could not start ' .. table.concat(config.cmd, ' '), vim.log.levels.ERROR)
      return nil
    end
    clients_by_root[config.root_dir] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  local group = vim.api.nvim_create_augroup('mkdsl', { clear = true })
  -- After the runtime's filetype detection (which calls *.mk `make`), so this one wins.
  vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
    group = group,
    pattern = M.config.pattern,
    callback = function(args)
      vim.bo[args.buf].filetype = M.filetype
    end,
  })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.filetype,
    callback = function(args)
      vim.bo[args.buf].commentstring = '// %s'
      vim.bo[args.buf].comments = 's1:/*,mb:*,ex:*/,:///,://'
      vim.bo[args.buf].expandtab = true
      vim.bo[args.buf].shiftwidth = 4
      vim.bo[args.buf].softtabstop = 4
      M.attach(args.buf)
    end,
  })
  -- Buffers opened before setup() ran.
  local regex = vim.fn.glob2regpat(M.config.pattern)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].filetype ~= M.filetype
        and vim.fn.match(vim.api.nvim_buf_get_name(buf), regex) >= 0 then
      vim.bo[buf].filetype = M.filetype
    end
  end
end

return M
