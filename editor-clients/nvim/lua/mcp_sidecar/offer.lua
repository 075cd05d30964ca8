--- What the plugin offers the sidecar and, through it, MCP servers: what a server may ask the
--- person (`initializationOptions.mcpCapabilities`), the LSP client capabilities (`$/progress`),
--- and the workspace folders (the roots servers are offered, kept current with
--- `workspace/didChangeWorkspaceFolders`).
local Config = require("mcp_sidecar.config")
local P = require("mcp_sidecar.protocol")

local M = {}
local has_011 = vim.fn.has("nvim-0.11") == 1

local function Client()
  return require("mcp_sidecar.client")
end

--- What the editor can render for a server (`initializationOptions.mcpCapabilities`, MCP's
--- ClientCapabilities subset): elicitation form and URL unless `opts.elicitation` turns them off,
--- sampling only when `opts.sampling` is a function.
---@return table
function M.mcp_capabilities()
  local caps = {}
  local e = Config.elicitation
  if type(e) == "table" then
    local modes = {}
    if e.form ~= false then
      modes.form = vim.empty_dict()
    end
    if e.url ~= false then
      modes.url = vim.empty_dict()
    end
    if next(modes) then
      caps.elicitation = modes
    end
  end
  if type(Config.sampling) == "function" then
    caps.sampling = vim.empty_dict()
  end
  if Config.apps == true then
    caps.extensions = { ["io.modelcontextprotocol/ui"] = { mimeTypes = { "text/html;profile=mcp-app" } } }
  end
  return next(caps) and caps or vim.empty_dict()
end

--- The LSP client capabilities: vim.lsp's own, which render `$/progress` (window.workDoneProgress).
---@return table
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  return caps
end

---@param client vim.lsp.Client
---@param method string
---@param params table
local function send_notification(client, method, params)
  if has_011 then
    client:notify(method, params)
  else
    client.notify(method, params)
  end
end

---@param dir string
---@return lsp.WorkspaceFolder
local function folder(dir)
  return { uri = vim.uri_from_fname(dir), name = dir }
end

---@param dir string
---@return string
local function normalize_dir(dir)
  local full = vim.fs.normalize(vim.fn.fnamemodify(vim.fs.normalize(dir), ":p"))
  return (#full > 1 and full:gsub("/+$", "") or full)
end

--- The workspace folders a sidecar starts with (the roots offered to servers): the root, then
--- `opts.workspace_folders`, then the folders added with :Mcp folder add.
---@param root string
---@return lsp.WorkspaceFolder[]
function M.workspace_folders(root)
  local dirs = { root }
  local extra = Config.workspace_folders
  if type(extra) == "function" then
    local ok, list = pcall(extra, root)
    extra = ok and list or nil
  end
  for _, dir in ipairs(type(extra) == "table" and extra or {}) do
    if type(dir) == "string" and dir ~= "" then
      table.insert(dirs, normalize_dir(dir))
    end
  end
  local entry = Client().roots[root]
  vim.list_extend(dirs, entry and entry.folders or {})
  local seen, out = {}, {}
  for _, dir in ipairs(dirs) do
    if not seen[dir] then
      seen[dir] = true
      table.insert(out, folder(dir))
    end
  end
  return out
end

--- Add a workspace folder to the running sidecar of a root (`workspace/didChangeWorkspaceFolders`;
--- the sidecar tells servers their roots changed) and to every later start. vim.lsp.buf's
--- add_workspace_folder() reaches only clients attached to the current buffer, never this one.
---@param dir string
---@param root? string
---@return boolean ok
---@return string? problem
function M.add_folder(dir, root)
  root = root or Client().root()
  dir = normalize_dir(dir)
  if vim.fn.isdirectory(dir) == 0 then
    return false, dir .. " is not a directory"
  end
  local client, err = Client().ensure(root)
  if not client then
    return false, err
  end
  for _, f in ipairs(client.workspace_folders or {}) do
    if f.name == dir then
      return false, dir .. " is already a workspace folder"
    end
  end
  local entry = Client().roots[root]
  entry.folders = entry.folders or {}
  table.insert(entry.folders, dir)
  client.workspace_folders = client.workspace_folders or {}
  table.insert(client.workspace_folders, folder(dir))
  send_notification(client, P.lsp.did_change_workspace_folders, { event = { added = { folder(dir) }, removed = {} } })
  return true
end

--- Remove a workspace folder (not the root itself) from the running sidecar and later starts.
---@param dir string
---@param root? string
---@return boolean ok
---@return string? problem
function M.remove_folder(dir, root)
  root = root or Client().root()
  dir = normalize_dir(dir)
  if dir == root then
    return false, "the workspace root stays a folder"
  end
  local entry = Client().roots[root]
  local client = entry and entry.id and vim.lsp.get_client_by_id(entry.id)
  local found = false
  for i, f in ipairs(client and client.workspace_folders or {}) do
    if f.name == dir then
      table.remove(client.workspace_folders, i)
      found = true
      break
    end
  end
  for i, d in ipairs(entry and entry.folders or {}) do
    if d == dir then
      table.remove(entry.folders, i)
      break
    end
  end
  if not found then
    return false, dir .. " is not a workspace folder"
  end
  send_notification(client, P.lsp.did_change_workspace_folders, { event = { added = {}, removed = { folder(dir) } } })
  return true
end

return M
