--- :checkhealth mcp_sidecar
local Client = require("mcp_sidecar.client")
local Config = require("mcp_sidecar.config")
local Locate = require("mcp_sidecar.locate")
local P = require("mcp_sidecar.protocol")
local Text = require("mcp_sidecar.text")
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
  local profiles = type(status.profiles) == "table" and table.concat(status.profiles, ", ") or ""
  if type(status.profile) == "string" then
    info(("Profile: %s (profiles: %s)"):format(status.profile, profiles ~= "" and profiles or "none"))
  elseif profiles ~= "" then
    info("Profile: none (profiles: " .. profiles .. "; :Mcp profile NAME chooses one)")
  end
  for _, diag in ipairs(status.diagnostics or {}) do
    error(diag.message or diag.code, diag.hint and { diag.hint } or nil)
  end
  if #(status.diagnostics or {}) == 0 then
    ok("Configuration is valid")
  end

  M.check_capabilities(root)

  start("mcp_sidecar: engine")
  local engine_lines = M.engine_lines(status.engine)
  if #engine_lines == 0 then
    info(
      "No engine: this sidecar serves this Neovim alone (MCP_SIDECAR_ENGINE=on in opts.env shares one process per server with every window and session; see docs/engine.md)"
    )
  end
  for i, line in ipairs(engine_lines) do
    if i == 1 then
      ok(line)
    else
      info(line)
    end
  end

  start("mcp_sidecar: servers")
  if #(status.servers or {}) == 0 then
    warn("No servers configured", { "Add one with :Mcp add --scope global NAME URL" })
  end
  for _, row in ipairs(status.servers or {}) do
    local shared = M.shared_text(row)
    local line = ("%s: %s (%s, %s%s)"):format(
      row.name,
      row.state,
      row.scope,
      row.transport,
      shared ~= "" and ", " .. shared or ""
    )
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

  start("mcp_sidecar: what tools cost the context")
  local Context = require("mcp_sidecar.context")
  local _, active = Client.request_sync(P.m.active_tools, { session = Config.session }, 10000, { root = root })
  local report = { ok = ok, info = info, warn = warn }
  for _, line in ipairs(Context.health_lines(status.tokens, active)) do
    report[line[1]](line[2], line[3])
  end
end

--- "shared by 3" for a server whose process other clients of the engine use too; "" for one of its own.
---@param row table a status row
---@return string
function M.shared_text(row)
  local sharers = tonumber(row.sharedBy) or 1
  return sharers > 1 and ("shared by %d"):format(sharers) or ""
end

--- "42s", "3m 5s", "2h 4m", "3d 2h": the two largest units (as the sidecar's status text).
---@param seconds number
---@return string
function M.duration(seconds)
  local rest = math.max(0, math.floor(tonumber(seconds) or 0))
  local parts = {}
  for _, unit in ipairs({ { "d", 86400 }, { "h", 3600 }, { "m", 60 }, { "s", 1 } }) do
    local name, size = unit[1], unit[2]
    if rest >= size or (name == "s" and #parts == 0) then
      table.insert(parts, math.floor(rest / size) .. name)
      rest = rest % size
    elseif #parts > 0 then
      table.insert(parts, "0" .. name)
    end
    if #parts == 2 then
      break
    end
  end
  return table.concat(parts, " ")
end

--- The engine's line, then one line per client attached to it (this Neovim marked); none without an engine.
---@param engine table? `mcp/status`'s `engine` (vim.NIL or nil in a sidecar of its own)
---@return string[]
function M.engine_lines(engine)
  if type(engine) ~= "table" then
    return {}
  end
  local clients = type(engine.clients) == "table" and engine.clients or {}
  local lines = {
    ("Engine pid %s · mcp-sidecar %s · up %s · %d client%s"):format(
      Text.one_line(engine.pid),
      Text.one_line(engine.version),
      M.duration(engine.uptimeSeconds),
      #clients,
      #clients == 1 and "" or "s"
    ),
  }
  for _, client in ipairs(clients) do
    local workspace = type(client.workspace) == "string" and Text.one_line(client.workspace) or "(no workspace)"
    table.insert(
      lines,
      ("%s %s%s"):format(Text.one_line(client.kind), workspace, client.thisClient == true and " (this Neovim)" or "")
    )
  end
  return lines
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
