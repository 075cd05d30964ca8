--- The sidecar process: one `vim.lsp` client per workspace root, started on first use,
--- not attached to any buffer, restarted when it dies. Framing, ids and cancellation are
--- Neovim's own (vim.lsp.rpc).
local Config = require("mcp_sidecar.config")
local Offer = require("mcp_sidecar.offer")
local P = require("mcp_sidecar.protocol")
local State = require("mcp_sidecar.state")

local M = {}
local uv = vim.uv or vim.loop
local has_011 = vim.fn.has("nvim-0.11") == 1

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

--- Whether the workspace is trusted, without asking: opts.trust, else Neovim's trust database.
---@param root string
---@return boolean
function M.trusted_quietly(root)
  if Config.trust == true or Config.trust == false then
    return Config.trust
  end
  return M.trust_state(root .. "/.mcp.json") == "allowed"
end

--- The sidecar command: opts.cmd, the workspace's .venv (only when the workspace is trusted:
--- a cloned repository can ship an executable .venv/bin/mcp-sidecar), then an absolute PATH entry.
---@param root string
---@param trusted? boolean whether the workspace is trusted (nil: decided without asking)
---@return string[]? cmd
---@return string? message why it was not found
function M.resolve_cmd(root, trusted)
  if trusted == nil then
    trusted = M.trusted_quietly(root)
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

local function notify(msg, level)
  vim.schedule(function()
    vim.notify(msg, level or vim.log.levels.INFO, { title = "mcp" })
  end)
end
M.notify = notify

---@param root? string the workspace of the sidecar these handle
local function handlers(root)
  local N = P.notifications
  local Questions = require("mcp_sidecar.questions")
  return {
    -- Server questions answer later: see questions.lua (the handler yields in vim.lsp's coroutine).
    [P.client_requests.elicit] = Questions.handler("elicit"),
    [P.client_requests.sample] = Questions.handler("sample"),
    [P.lsp.cancel_request] = function(_, params)
      Questions.on_cancel(params)
    end,
    [P.lsp.progress] = function(err, params, ctx)
      return require("mcp_sidecar.progress").handler(err, params, ctx)
    end,
    [N.elicitation_complete] = function(_, params)
      vim.schedule(function()
        require("mcp_sidecar.retry").complete(params)
      end)
    end,
    [N.server_log] = function(_, params)
      require("mcp_sidecar.logs").add(params)
    end,
    [N.server_status] = function(_, row)
      if type(row) ~= "table" or not row.name then
        return
      end
      local previous = State.update_server(row)
      if row.state ~= "connected" then
        Questions.server_closed(row.name)
      end
      local diag = row.lastDiagnostic
      local was = previous and previous.lastDiagnostic
      if Config.notify.failures and row.state == "failed" and diag and (not was or was.message ~= diag.message) then
        local text = ("%s %s: %s"):format(Config.icons.failed, row.name, diag.message or "failed")
        if diag.hint and diag.hint ~= "" then
          text = text .. "\n" .. diag.hint
        end
        notify(text, vim.log.levels.ERROR)
      elseif
        Config.notify.failures
        and row.state == "needs_login"
        and (not previous or previous.state ~= "needs_login")
      then
        notify(
          ("%s %s needs a login: :Mcp login %s"):format(Config.icons.login, row.name, row.name),
          vim.log.levels.WARN
        )
      end
    end,
    [N.catalog_changed] = function()
      State.changed()
    end,
    [N.approval_required] = function(_, params)
      local pending = type(params) == "table" and params.pending or nil
      vim.schedule(function()
        require("mcp_sidecar.approvals").offer(pending, root)
      end)
    end,
    [N.model_tool_changed] = function(_, params)
      if type(params) == "table" then
        require("mcp_sidecar.tools").set_definition(params.definition)
      end
    end,
    [N.active_tools_changed] = function(_, params)
      if type(params) == "table" and params.removed and #params.removed > 0 then
        notify(("Tools deactivated (%s): %s"):format(params.reason or "changed", table.concat(params.removed, ", ")))
      end
    end,
    [N.resource_updated] = function(_, params)
      if type(params) ~= "table" then
        return
      end
      State.watched[(params.server or "?") .. " " .. (params.uri or "?")] = true
      if Config.notify.resource_updates then
        notify(("↻ %s · %s"):format(params.server or "?", params.uri or "?"))
      end
    end,
    [N.watches_cleared] = function(_, params)
      if type(params) ~= "table" then
        return
      end
      for _, uri in ipairs(params.uris or {}) do
        State.watched[(params.server or "?") .. " " .. uri] = nil
      end
      if Config.notify.resource_updates and params.uris and #params.uris > 0 then
        notify(
          ("Watches on %s ended (%s): %s"):format(
            params.server or "?",
            params.reason or "?",
            table.concat(params.uris, ", ")
          )
        )
      end
    end,
  }
end
M.handlers = handlers

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
  entry.trusted = M.trusted(root)
  -- Set by :Mcp trust for the one start that follows the person's grant, never kept.
  local granted = entry.grant_next == true and entry.trusted
  entry.grant_next = nil
  local cmd, err = M.resolve_cmd(root, entry.trusted)
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
    },
    handlers = handlers(root),
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
        State.set_servers(result.servers)
        require("mcp_sidecar.approvals").offer(result.pendingApprovals, root)
      end
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
  local handler = function(e, result)
    cb(e and normalize(e) or nil, result)
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
