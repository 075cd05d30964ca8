--- Where the sidecar executable comes from, in order: opts.cmd (a bare name looked up in
--- absolute PATH directories only), the workspace's .venv (trusted workspaces only: a cloned
--- repository can ship an executable .venv/bin/mcp-sidecar), then `mcp-sidecar` in an absolute
--- PATH directory. client.lua starts what this finds.
local Config = require("mcp_sidecar.config")
local Trust = require("mcp_sidecar.trust")

local M = {}

local is_windows = vim.fn.has("win32") == 1

--- Whether a directory is absolute (relative ones resolve against the current directory).
---@param dir string
---@return boolean
local function is_absolute(dir)
  if is_windows then
    return dir:match("^%a:[/\\]") ~= nil or dir:match("^[/\\][/\\]") ~= nil
  end
  return dir:sub(1, 1) == "/"
end
M._is_absolute = is_absolute

--- `name` in an absolute directory of PATH. Unlike exepath(), relative entries (`.`,
--- `node_modules/.bin`, an empty one) are skipped: they resolve against the current directory,
--- which is usually the workspace, and a repository can ship its own binary there.
---@param name string
---@return string?
function M.path_executable(name)
  local sep = is_windows and ";" or ":"
  local names = is_windows and { name .. ".exe", name .. ".cmd", name .. ".bat", name } or { name }
  for dir in vim.gsplit(vim.env.PATH or "", sep, { plain = true }) do
    dir = is_windows and dir:gsub('^"(.*)"$', "%1") or dir
    if dir ~= "" and is_absolute(dir) then
      for _, n in ipairs(names) do
        local full = dir:gsub("[/\\]+$", "") .. "/" .. n
        if vim.fn.executable(full) == 1 and vim.fn.isdirectory(full) == 0 then
          return full
        end
      end
    end
  end
end

--- The sidecar command: opts.cmd, the workspace's .venv (only when the workspace is trusted:
--- a cloned repository can ship an executable .venv/bin/mcp-sidecar), then an absolute PATH entry.
---@param root string
---@param trusted? boolean whether the workspace is trusted (nil: decided without asking)
---@return string[]? cmd
---@return string? message why it was not found
function M.resolve_cmd(root, trusted)
  if trusted == nil then
    trusted = Trust.trusted_quietly(root)
  end
  local cmd = Config.cmd
  if type(cmd) == "string" then
    cmd = { cmd }
  end
  if cmd then
    cmd = vim.deepcopy(cmd)
    local program = cmd[1]
    if type(program) ~= "string" or program == "" then
      return nil, "mcp-sidecar: opts.cmd names no program"
    end
    if not program:find("[/\\]") then
      -- A bare name: looked up in absolute PATH directories only, like the default.
      local found = M.path_executable(program)
      if not found then
        return nil,
          ("mcp-sidecar: `%s` (opts.cmd) is not executable (not in an absolute PATH directory)"):format(program)
      end
      cmd[1] = found
    elseif vim.fn.executable(program) == 0 then
      return nil, ("mcp-sidecar: `%s` (opts.cmd) is not executable"):format(program)
    end
  else
    local candidates = { root .. "/.venv/bin/mcp-sidecar", root .. "/.venv/Scripts/mcp-sidecar.exe" }
    if trusted then
      for _, path in ipairs(candidates) do
        if vim.fn.executable(path) == 1 then
          cmd = { path }
          break
        end
      end
    end
    if not cmd then
      local found = M.path_executable("mcp-sidecar")
      cmd = found and { found } or nil
    end
    if not cmd then
      local looked = trusted and (candidates[1] .. " and PATH")
        or "PATH (the workspace's .venv only once it is trusted)"
      return nil,
        ("mcp-sidecar not found (looked at opts.cmd and %s).\n"):format(looked)
          .. "Install it (`pipx install mcp-sidecar`) or pass require('mcp_sidecar').setup({ cmd = { '/path/to/mcp-sidecar' } })."
    end
  end
  return vim.list_extend(cmd, Config.args or {})
end

return M
