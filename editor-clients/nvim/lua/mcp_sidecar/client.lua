--- The sidecar process: one `vim.lsp` client per workspace root, started on first use,
--- not attached to any buffer, restarted when it dies. Framing, ids and cancellation are
--- Neovim's own (vim.lsp.rpc). The executable comes from locate.lua, the workspace's trust from
--- trust.lua, and what the sidecar sends is handled by notifications.lua.
local Config = require("mcp_sidecar.config")
local Locate = require("mcp_sidecar.locate")
local Notifications = require("mcp_sidecar.notifications")
local Offer = require("mcp_sidecar.offer")
local P = require("mcp_sidecar.protocol")
local State = require("mcp_sidecar.state")
local Trust = require("mcp_sidecar.trust")

local M = {}
local uv = vim.uv or vim.loop
local has_011 = vim.fn.has("nvim-0.11") == 1
local notify = Notifications.notify

---@class mcp_sidecar.Root
---@field id? integer the vim.lsp client id while running
---@field restarts integer[] uv.now() of recent automatic restarts
---@field stopping? integer the client id of a stop we asked for (no restart)
---@field trusted? boolean what the sidecar was told
---@field grant_next? boolean the next start follows the person's grant of trust (:Mcp trust)
---@field folders? string[] workspace folders added with :Mcp folder add (kept across restarts)

---@type table<string, mcp_sidecar.Root>
M.roots = {}
M.last_root = nil ---@type string?

---@class mcp_sidecar.Error
---@field code integer JSON-RPC error code (-1: the sidecar is not running)
---@field message string
---@field data? {code: string, message: string, hint?: string, server?: string, usage?: string} the diagnostic

--- The workspace root for the current buffer: the nearest directory with a root marker,
--- else the current directory. Buffers that are not files (floats, scratch) use the last root.
---@param bufnr? integer
---@return string
function M.root(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local is_file = vim.bo[bufnr].buftype == "" and vim.api.nvim_buf_get_name(bufnr) ~= ""
  if not is_file and M.last_root then
    return M.last_root
  end
  local source = is_file and bufnr or vim.fn.getcwd()
  local root = vim.fs.root(source, Config.root_markers) or vim.fn.getcwd()
  return vim.fs.normalize(root)
end

---@param err table
---@return mcp_sidecar.Error
local function normalize(err)
  local data = type(err.data) == "table" and err.data or nil
  return { code = err.code or -32603, message = (data and data.message) or err.message or "error", data = data }
end

---@param err? mcp_sidecar.Error
---@return boolean
function M.unsupported(err)
  return err ~= nil
    and (err.code == P.errors.method_not_found or (err.data ~= nil and err.data.code == "not_supported"))
end

--- One line (plus the hint) for a failed request.
---@param err mcp_sidecar.Error
---@return string
function M.format_error(err)
  local text = err.message
  if err.data and err.data.hint and err.data.hint ~= "" then
    text = text .. "\n" .. err.data.hint
  end
  return text
end

---@param root string
---@param client_id integer
---@param code integer
---@param signal integer
function M._on_exit(root, client_id, code, signal)
  local entry = M.roots[root]
  if not entry or entry.id ~= client_id then
    return
  end
  entry.id = nil
  State.set_sidecar("stopped")
  require("mcp_sidecar.progress").clear()
  require("mcp_sidecar.questions").withdraw_all()
  if entry.stopping == client_id or M.leaving or (code == 0 and signal == 0) then
    entry.stopping = nil
    return
  end
  local now = uv.now()
  entry.restarts = vim.tbl_filter(function(t)
    return now - t < Config.restart.window_ms
  end, entry.restarts)
  if #entry.restarts >= Config.restart.max then
    notify(
      ("mcp-sidecar exited (code %d, signal %d) and was restarted %d times recently; it starts again on next use."):format(
        code,
        signal,
        #entry.restarts
      ),
      vim.log.levels.ERROR
    )
    return
  end
  table.insert(entry.restarts, now)
  notify(("mcp-sidecar exited (code %d, signal %d); restarting."):format(code, signal), vim.log.levels.WARN)
  vim.defer_fn(function()
    if not entry.id then
      M.ensure(root)
    end
  end, Config.restart.delay_ms)
end

---@param root string
---@return integer? client_id
---@return string? error
local function start(root)
  local entry = M.roots[root] or { restarts = {} }
  M.roots[root] = entry
  -- Trust first: the workspace's own .venv sidecar runs only in a trusted workspace.
  entry.trusted = Trust.trusted(root)
  -- Set by :Mcp trust for the one start that follows the person's grant, never kept.
  local granted = entry.grant_next == true and entry.trusted
  entry.grant_next = nil
  local cmd, err = Locate.resolve_cmd(root, entry.trusted)
  if not cmd then
    State.set_sidecar("missing")
    return nil, err
  end
  local config = {
    name = "mcp_sidecar",
    cmd = cmd,
    cmd_env = Config.env,
    root_dir = root,
    workspace_folders = Offer.workspace_folders(root),
    capabilities = Offer.capabilities(),
    -- trustGranted: the person granted trust just now (:Mcp trust), so the definitions the
    -- file has are approved; on every other start, unapproved definitions are asked about.
    -- mcpCapabilities: what a server may ask the person (elicitation, sampling).
    init_options = {
      trustedWorkspace = entry.trusted,
      trustGranted = granted,
      interactive = true,
      mcpCapabilities = Offer.mcp_capabilities(),
      -- A tool call still running after this many seconds goes to the background (:Mcp calls).
      backgroundAfterSeconds = Config.background_after,
      -- profile: the profile (mcp.json "profiles") this Neovim starts with; :Mcp profile switches.
      profile = Config.profile,
      -- The session budget (most tools / tokens active at once), over mcp.json's sessionBudget.
      sessionBudget = Config.session_budget,
    },
    handlers = Notifications.handlers(root),
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        M._on_exit(root, client_id, code, signal)
      end)
    end,
  }
  local id
  if has_011 then
    id = vim.lsp.start(config, {
      attach = false,
      reuse_client = function(client, conf)
        return client.name == conf.name and client.root_dir == conf.root_dir and not client:is_stopped()
      end,
    })
  else
    id = vim.lsp.start_client(config)
  end
  if not id then
    return nil, "mcp-sidecar could not be started: " .. table.concat(cmd, " ")
  end
  entry.id = id
  State.set_sidecar("running")
  vim.schedule(function()
    M.request(P.m.status, nil, function(_, result)
      if result then
        State.set_servers(result.servers, false, result.profile)
        require("mcp_sidecar.approvals").offer(result.pendingApprovals, root)
      end
      -- A profile's tools may be active from the start.
      require("mcp_sidecar.context").refresh()
    end, { root = root })
    -- The command table `:Mcp` completes from (and tells edits apart with).
    M.request(P.m.command_spec, nil, function(_, spec)
      State.command_spec = spec or State.command_spec
    end, { root = root })
  end)
  return id
end

--- The running client of a root, started when needed.
---@param root? string
---@return vim.lsp.Client? client
---@return string? error
function M.ensure(root)
  root = root or M.root()
  M.last_root = root
  local entry = M.roots[root]
  local client = entry and entry.id and vim.lsp.get_client_by_id(entry.id)
  if client and not client.is_stopped(client) then
    return client
  end
  local id, err = start(root)
  if not id then
    return nil, err
  end
  return vim.lsp.get_client_by_id(id)
end

--- The running client of a root, never starting one: nil while none runs, and from the moment a
--- stop was asked (a request then would start a new sidecar beside the one shutting down).
---@param root? string
---@return vim.lsp.Client?
function M.running(root)
  local entry = M.roots[root or M.root()]
  local client = entry and entry.id and vim.lsp.get_client_by_id(entry.id)
  if client and not client.is_stopped(client) and entry.stopping ~= client.id then
    return client
  end
end

--- Send a request; `cb(err, result)` runs on the main loop.
---@param method string
---@param params? table
---@param cb fun(err: mcp_sidecar.Error?, result: any)
---@param opts? {root?: string}
function M.request(method, params, cb, opts)
  opts = opts or {}
  local client, err = M.ensure(opts.root)
  if not client then
    cb({ code = -1, message = err, data = { code = "sidecar_missing", message = err } })
    return
  end
  if params == nil or (type(params) == "table" and next(params) == nil) then
    params = vim.empty_dict()
  end
  local changes_session = require("mcp_sidecar.context").session_changes[method]
  local handler = function(e, result)
    cb(e and normalize(e) or nil, result)
    if changes_session then
      require("mcp_sidecar.context").refresh()
    end
  end
  local ok
  if has_011 then
    ok = client:request(method, params, handler)
  else
    ok = client.request(method, params, handler)
  end
  if not ok then
    cb({
      code = -1,
      message = "mcp-sidecar is not running",
      data = { code = "sidecar_stopped", message = "mcp-sidecar is not running" },
    })
  end
end

--- Blocking request, for :checkhealth and tests only.
---@return mcp_sidecar.Error? err
---@return any result
function M.request_sync(method, params, timeout_ms, opts)
  local done, e, r = false, nil, nil
  M.request(method, params, function(err, result)
    done, e, r = true, err, result
  end, opts)
  if not vim.wait(timeout_ms or 10000, function()
    return done
  end, 10) then
    return { code = -2, message = method .. " timed out" }, nil
  end
  return e, r
end

--- Stop the sidecar of a root (no automatic restart).
---@param root? string
function M.stop(root)
  root = root or M.root()
  local entry = M.roots[root]
  local client = entry and entry.id and vim.lsp.get_client_by_id(entry.id)
  if client then
    entry.stopping = client.id
    if has_011 then
      client:stop()
    else
      client.stop()
    end
  end
end

--- Restart the sidecar of a root (for example after changing trust).
---@param root? string
---@param cb? fun()
---@param opts? {trust_granted?: boolean} trust_granted: the person granted trust just now (the new sidecar approves the definitions present)
function M.restart(root, cb, opts)
  root = root or M.root()
  if opts and opts.trust_granted then
    M.roots[root] = M.roots[root] or { restarts = {} }
    M.roots[root].grant_next = true
  end
  local entry = M.roots[root]
  local client = entry and entry.id and vim.lsp.get_client_by_id(entry.id)
  if not client then
    M.ensure(root)
    return cb and cb()
  end
  M.stop(root)
  local timer = uv.new_timer()
  local waited = 0
  timer:start(
    20,
    20,
    vim.schedule_wrap(function()
      waited = waited + 20
      if entry.id == nil or waited > 5000 then
        timer:stop()
        timer:close()
        entry.id = nil
        M.ensure(root)
        return cb and cb()
      end
    end)
  )
end

vim.api.nvim_create_autocmd("VimLeavePre", {
  group = vim.api.nvim_create_augroup("mcp_sidecar_leave", { clear = true }),
  callback = function()
    M.leaving = true
  end,
})

return M
