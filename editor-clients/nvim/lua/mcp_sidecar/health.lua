--- :checkhealth mcp_sidecar
local Client = require("mcp_sidecar.client")
local Locate = require("mcp_sidecar.locate")
local P = require("mcp_sidecar.protocol")
local Trust = require("mcp_sidecar.trust")

local M = {}

local start = vim.health.start or vim.health.report_start
local ok = vim.health.ok or vim.health.report_ok
local warn = vim.health.warn or vim.health.report_warn
local error = vim.health.error or vim.health.report_error
local info = vim.health.info or vim.health.report_info

--- Run a short command and return its first output line.
---@param cmd string[]
---@return string? line, integer code
local function first_line(cmd)
  local okay, result = pcall(function()
    return vim.system(cmd, { text = true }):wait(10000)
  end)
  if not okay or not result then
    return nil, -1
  end
  local out = vim.trim((result.stdout or "") .. (result.code ~= 0 and (result.stderr or "") or ""))
  return vim.split(out, "\n")[1], result.code
end

function M.check()
  start("mcp_sidecar: Neovim")
  local v = vim.version()
  if vim.fn.has("nvim-0.10") == 1 then
    ok(("Neovim %d.%d.%d"):format(v.major, v.minor, v.patch))
  else
    error(("Neovim %d.%d.%d is too old: mcp_sidecar needs 0.10 or newer"):format(v.major, v.minor, v.patch))
    return
  end

  start("mcp_sidecar: sidecar")
  local root = Client.last_root or Client.root()
  info("Workspace root: " .. root)
  local running = Client.roots[root]
  local cmd, missing = Locate.resolve_cmd(root, running and running.trusted)
  if not cmd then
    error(missing or "mcp-sidecar not found")
    return
  end
  local version, code = first_line({ cmd[1], "--version" })
  if code == 0 and version then
    ok(("%s (%s)"):format(version, cmd[1]))
  else
    error(("`%s --version` failed: %s"):format(cmd[1], version or "no output"))
    return
  end
  local python = vim.fs.joinpath(vim.fs.dirname(cmd[1]), "python")
  if vim.fn.executable(python) == 1 then
    local backend, kcode = first_line({ python, "-c", "import keyring; print(type(keyring.get_keyring()).__name__)" })
    if kcode == 0 then
      ok("Keyring for OAuth tokens: " .. (backend or "?"))
    else
      warn("No keyring available to the sidecar's Python: OAuth tokens cannot be stored", {
        "Install the `keyring` package into the sidecar's environment when you need OAuth servers",
      })
    end
  else
    info("Keyring: not detectable (no Python next to " .. cmd[1] .. ")")
  end

  start("mcp_sidecar: configuration")
  local project = root .. "/.mcp.json"
  local trust = Trust.trust_state(project)
  local entry = Client.roots[root]
  if trust == "missing" then
    info("No project .mcp.json in " .. root)
  elseif trust == "allowed" then
    ok("Project " .. project .. " is trusted (vim.secure)")
  elseif trust == "changed" then
    warn("Project " .. project .. " changed since vim.secure trusted it: it is read again only once trusted", {
      "Run :Mcp trust to trust it as it is now",
    })
  else
    warn(("Project %s is not trusted (vim.secure has not allowed it to this plugin): it is not read"):format(project), {
      "Run :Mcp trust to trust it",
    })
  end
  local err, status = Client.request_sync(P.m.status, nil, 10000, { root = root })
  if err or not status then
    error("mcp/status failed: " .. (err and Client.format_error(err) or "no answer"))
    return
  end
  if entry and entry.trusted ~= nil then
    info("The sidecar was told trustedWorkspace = " .. tostring(status.trustedWorkspace))
  end
  for _, file in ipairs(status.configFiles or {}) do
    local state = not file.exists and "does not exist" or (file.read and "read" or "not read")
    info(("%s config: %s (%s)"):format(file.scope, file.path, state))
  end
  for _, diag in ipairs(status.diagnostics or {}) do
    error(diag.message or diag.code, diag.hint and { diag.hint } or nil)
  end
  if #(status.diagnostics or {}) == 0 then
    ok("Configuration is valid")
  end

  M.check_capabilities(root)

  start("mcp_sidecar: servers")
  if #(status.servers or {}) == 0 then
    warn("No servers configured", { "Add one with :Mcp add --scope global NAME URL" })
  end
  for _, row in ipairs(status.servers or {}) do
    local line = ("%s: %s (%s, %s)"):format(row.name, row.state, row.scope, row.transport)
    if row.state == "failed" then
      local d = row.lastDiagnostic or {}
      error(line .. ": " .. (d.message or "failed"), d.hint and { d.hint } or nil)
    elseif row.state == "needs_login" then
      warn(line .. ": the server asks for a login", { "Log in: :Mcp login " .. row.name })
    elseif row.approvalRequired then
      warn(
        line .. ": its project definition is new or changed and waits for approval",
        { "Review it: :Mcp review " .. row.name }
      )
    elseif row.state == "disabled" then
      info(line)
    else
      ok(line)
    end
  end
end

--- What servers may ask (as the running sidecar was told), the roots, and calls in flight.
---@param root string
function M.check_capabilities(root)
  start("mcp_sidecar: what servers may ask")
  local entry = Client.roots[root]
  local client = entry and entry.id and vim.lsp.get_client_by_id(entry.id)
  local offered = client and client.config.init_options and client.config.init_options.mcpCapabilities
    or require("mcp_sidecar.offer").mcp_capabilities()
  local elicitation = type(offered.elicitation) == "table" and offered.elicitation or nil
  if elicitation then
    local modes = {}
    for _, mode in ipairs({ "form", "url" }) do
      if elicitation[mode] then
        table.insert(modes, mode)
      end
    end
    ok("Elicitation offered: " .. table.concat(modes, ", "))
  else
    info("Elicitation not offered (opts.elicitation = false): servers cannot ask you for input")
  end
  if offered.sampling then
    ok("Sampling offered: opts.sampling answers, after your approval")
  else
    info("Sampling not offered (set opts.sampling = function(request, done) to answer with your model)")
  end
  local folders = {}
  for _, f in ipairs(client and client.workspace_folders or require("mcp_sidecar.offer").workspace_folders(root)) do
    table.insert(folders, f.name)
  end
  info("Workspace folders (roots for servers, when the workspace is trusted): " .. table.concat(folders, ", "))
  local Progress = require("mcp_sidecar.progress")
  local running = Progress.list()
  if #running == 0 then
    info("No tool call running")
  end
  for _, r in ipairs(running) do
    info("Running: " .. Progress.describe(r))
  end
end

return M
