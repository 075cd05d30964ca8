--- Workspace trust: whether the project's .mcp.json (and so the workspace's own .venv sidecar
--- and the servers the file defines) is trusted. opts.trust decides, else vim.secure: what it
--- allowed is remembered here with the contents it allowed, so a changed file reads as changed.
local Config = require("mcp_sidecar.config")

local M = {}
local uv = vim.uv or vim.loop

--- Whether the workspace is trusted, without asking: opts.trust, else Neovim's trust database.
---@param root string
---@return boolean
function M.trusted_quietly(root)
  if Config.trust == true or Config.trust == false then
    return Config.trust
  end
  return M.trust_state(root .. "/.mcp.json") == "allowed"
end

--- What vim.secure allowed, as this plugin was told (realpath -> sha256 of the contents it
--- allowed): vim.secure.read returning a file, or vim.secure.trust allowing it. Neovim's own
--- trust database is private to it and never read here.
---@type table<string, string>
M.trust_seen = {}

---@param full string
---@return string?
local function file_hash(full)
  local f = io.open(full, "rb")
  if not f then
    return nil
  end
  local contents = f:read("*a")
  f:close()
  return vim.fn.sha256(contents)
end

--- Remember that vim.secure allowed `path` with these contents (nil: as the file is now).
---@param path string
---@param contents? string
function M.note_trusted(path, contents)
  local full = uv.fs_realpath(vim.fs.normalize(path))
  if full then
    M.trust_seen[full] = contents and vim.fn.sha256(contents) or file_hash(full)
  end
end

--- Where trust stands on a file, without prompting: "allowed" when vim.secure allowed its
--- current contents to this plugin, "changed" when it allowed other contents, else "unknown"
--- (never asked yet, ignored or denied) or "missing".
---@param path string
---@return "allowed"|"changed"|"unknown"|"missing"
function M.trust_state(path)
  local full = uv.fs_realpath(vim.fs.normalize(path))
  if not full then
    return "missing"
  end
  local seen = M.trust_seen[full]
  if not seen then
    return "unknown"
  end
  return file_hash(full) == seen and "allowed" or "changed"
end

--- Whether the project's .mcp.json is trusted. With trust = "ask", vim.secure.read decides:
--- silently for contents Neovim already allowed or a file it denied, else by asking once per
--- content of the file.
---@param root string
---@return boolean
function M.trusted(root)
  if Config.trust == true or Config.trust == false then
    return Config.trust
  end
  local path = root .. "/.mcp.json"
  if not uv.fs_stat(path) then
    return false
  end
  local contents = vim.secure.read(path)
  if type(contents) == "string" then
    M.note_trusted(path, contents)
  end
  return contents ~= nil
end

--- Keep a trusted project's .mcp.json trusted in vim.secure (which tracks its content hash)
--- after a change the person made or approved, so the next start does not ask again.
---@param root string
function M.keep_trusted(root)
  -- Required here, not at the top: client.lua requires this module.
  local entry = require("mcp_sidecar.client").roots[root]
  if not (entry and entry.trusted) then
    return
  end
  local path = root .. "/.mcp.json"
  if M.trust_state(path) == "changed" then
    local buf = vim.fn.bufadd(path)
    vim.fn.bufload(buf)
    vim.cmd.checktime(buf)
    if pcall(vim.secure.trust, { action = "allow", bufnr = buf }) then
      M.note_trusted(path)
    end
  end
end

return M
