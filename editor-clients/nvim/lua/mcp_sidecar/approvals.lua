--- Approvals of project server definitions that changed on disk (a pull, a branch switch).
--- The sidecar keeps each new or changed definition of the workspace's .mcp.json disabled
--- until the person approves exactly what they were shown (its hash), and says so with
--- `mcp/approvalRequired`. This asks with vim.ui.select, one server at a time, once per server
--- and hash in this Neovim; `:Mcp review [SERVER]` (or `require("mcp_sidecar").review()`) asks again.
local Client = require("mcp_sidecar.client")
local P = require("mcp_sidecar.protocol")
local State = require("mcp_sidecar.state")

local M = {}

M.choices = { "Approve and start", "Keep disabled" }

---@class mcp_sidecar.PendingApproval
---@field server string
---@field change "new"|"changed"
---@field definitionHash string
---@field transport "stdio"|"http"|"profile" "profile": a project profile (its server is `profile:NAME`)
---@field summary string one sanitised line of what would run (never truncated): `command args (cwd: X; env: A, B)` or `url (headers: A)`
---@field changedFields? string[] for a changed definition: the fields that differ from the approved one (`args`, `env.TOKEN`, `env.X (removed)`)
---@field root? string the workspace whose sidecar reported it (set here)

---@type table<string, true> "root\nserver\nhash" of the pending approvals asked about already
local asked = {}
---@type mcp_sidecar.PendingApproval[] waiting for their turn
local queue = {}
local busy = false

---@param p mcp_sidecar.PendingApproval
local function key(p)
  return (p.root or "") .. "\n" .. p.server .. "\n" .. p.definitionHash
end

--- One line without control characters (what a prompt shows).
---@param text any
---@return string
local function one_line(text)
  return vim.trim((tostring(text or "")):gsub("[%c]", " "):gsub("%s+", " "))
end

--- A summary as the sidecar wrote it (it escapes invisible characters itself): control
--- characters become spaces, but no run of spaces is folded and nothing is cut, so a quoted
--- argument reads as it runs.
---@param text any
---@return string
local function exact_line(text)
  return vim.trim((tostring(text or "")):gsub("%c", " "))
end

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "mcp" })
end

--- The fields a changed definition changed, as one line ("" when the sidecar names none).
---@param p mcp_sidecar.PendingApproval
---@return string
local function changed_fields(p)
  if p.change ~= "changed" or type(p.changedFields) ~= "table" then
    return ""
  end
  local names = {}
  for _, name in ipairs(p.changedFields) do
    if type(name) == "string" and one_line(name) ~= "" then
      table.insert(names, one_line(name))
    end
  end
  return table.concat(names, ", ")
end

--- The question for one pending approval: the server, new or changed (and which fields), and
--- what would run, in full (a long line wraps; nothing is cut).
---@param p mcp_sidecar.PendingApproval
---@return string
function M.prompt(p)
  local fields = changed_fields(p)
  if p.transport == "profile" then
    local what = p.change == "new" and "defines a new profile" or "changed the profile"
    return ("The project's .mcp.json %s '%s'%s: %s. Allow it?"):format(
      what,
      one_line((tostring(p.server):gsub("^profile:", ""))),
      fields ~= "" and (" (changed: %s)"):format(fields) or "",
      exact_line(p.summary)
    )
  end
  local what = p.change == "new" and "defines a new MCP server" or "changed the MCP server"
  local verb = p.transport == "http" and "connect to" or "run"
  return ("The project's .mcp.json %s '%s'%s. It would %s: %s. Start it?"):format(
    what,
    one_line(p.server),
    fields ~= "" and (" (changed: %s)"):format(fields) or "",
    verb,
    exact_line(p.summary)
  )
end

---@type table<string, table<string, mcp_sidecar.PendingApproval>> root -> server -> pending
local by_root = {}

--- Remember a sidecar's whole current set of pending approvals (of `root`, default the current one).
---@param pending mcp_sidecar.PendingApproval[]?
---@param root? string
function M.set_pending(pending, root)
  root = root or Client.root()
  State.pending = {}
  for _, p in ipairs(type(pending) == "table" and pending or {}) do
    if type(p) == "table" and type(p.server) == "string" and type(p.definitionHash) == "string" then
      p.root = root
      State.pending[p.server] = p
    end
  end
  by_root[root] = State.pending
  State.changed()
end

--- The pending approval of `server` in `root` now, if any.
---@param root string
---@param server string
---@return mcp_sidecar.PendingApproval?
local function current(root, server)
  return (by_root[root] or {})[server]
end

local ask_next

---@param p mcp_sidecar.PendingApproval
---@param done fun()
local function approve(p, done)
  local root = p.root or Client.root()
  local params = { approvals = { { server = p.server, definitionHash = p.definitionHash } } }
  Client.request(P.m.workspace_approve, params, function(err, result)
    if err then
      notify(("Approving '%s' failed: %s"):format(p.server, Client.format_error(err)), vim.log.levels.ERROR)
      return done()
    end
    if not vim.tbl_contains(result.approved or {}, p.server) then
      local reason = "not approved"
      for _, entry in ipairs(result.notApproved or {}) do
        if entry.server == p.server then
          reason = entry.reason or reason
        end
      end
      notify(("'%s' was not approved: %s"):format(p.server, reason), vim.log.levels.WARN)
      return done()
    end
    local pending = by_root[root] or {}
    if pending[p.server] and pending[p.server].definitionHash == p.definitionHash then
      pending[p.server] = nil
      State.changed()
    end
    if next(pending) == nil then
      -- Everything the file now runs was approved: Neovim's trust of the file follows, so the
      -- next start does not ask about the whole file again (vim.secure tracks its content).
      require("mcp_sidecar.trust").keep_trusted(root)
    end
    Client.request(P.m.server_reconnect, { server = p.server }, function(e, row)
      if e then
        notify(
          ("'%s' was approved but did not start: %s"):format(p.server, Client.format_error(e)),
          vim.log.levels.ERROR
        )
      else
        State.update_server(row)
        notify(("Approved '%s'; it runs: %s"):format(p.server, exact_line(p.summary)))
      end
      done()
    end, { root = root })
  end, { root = root })
end

ask_next = function()
  if busy then
    return
  end
  local p = table.remove(queue, 1)
  if not p then
    return
  end
  -- Approved meanwhile, or changed again (the newer definition is queued): nothing to ask.
  local now = current(p.root or Client.root(), p.server)
  if not now or now.definitionHash ~= p.definitionHash then
    return ask_next()
  end
  busy = true
  local function done()
    busy = false
    ask_next()
  end
  vim.ui.select(M.choices, { prompt = M.prompt(p), kind = "mcp_sidecar.approval" }, function(choice)
    if choice == M.choices[1] then
      approve(p, done)
    else
      notify(("Kept '%s' disabled. :Mcp review %s asks again."):format(p.server, p.server))
      done()
    end
  end)
end

---@param list mcp_sidecar.PendingApproval[]
local function enqueue(list)
  for _, p in ipairs(list) do
    asked[key(p)] = true
    local queued = false
    for _, q in ipairs(queue) do
      queued = queued or key(q) == key(p)
    end
    if not queued then
      table.insert(queue, p)
    end
  end
  vim.schedule(ask_next)
end

--- The sidecar's pending approvals (from `mcp/approvalRequired` or `mcp/status`): remember
--- them and ask about each one not asked about in this Neovim yet.
---@param pending mcp_sidecar.PendingApproval[]?
---@param root? string the workspace whose sidecar sent them (default: the current one)
---@return integer count the questions queued
function M.offer(pending, root)
  root = root or Client.root()
  M.set_pending(pending, root)
  -- A definition no longer pending (approved, or the file moved on) is asked about again if it
  -- comes back: approving A, pulling B, then going back to A must ask about A again.
  local live = {}
  for _, p in pairs(State.pending) do
    live[key(p)] = true
  end
  local prefix = root .. "\n"
  for k in pairs(asked) do
    if k:sub(1, #prefix) == prefix and not live[k] then
      asked[k] = nil
    end
  end
  local fresh = {}
  for _, p in pairs(State.pending) do
    if not asked[key(p)] then
      table.insert(fresh, p)
    end
  end
  table.sort(fresh, function(a, b)
    return a.server < b.server
  end)
  if #fresh > 0 then
    enqueue(fresh)
  end
  return #fresh
end

--- Ask again about every pending approval (of `server` only, when given).
---@param server? string
---@param cb? fun(count: integer) how many questions were queued
function M.review(server, cb)
  local root = Client.root()
  Client.request(P.m.status, nil, function(err, result)
    if err then
      notify(Client.format_error(err), vim.log.levels.ERROR)
      return cb and cb(0)
    end
    State.set_servers(result.servers, true, result.profile)
    M.set_pending(result.pendingApprovals, root)
    local list = {}
    for name, p in pairs(State.pending) do
      if server == nil or server == "" or name == server then
        table.insert(list, p)
      end
    end
    table.sort(list, function(a, b)
      return a.server < b.server
    end)
    if #list == 0 then
      notify(
        server and server ~= "" and ("'%s' is not waiting for an approval"):format(server)
          or "No project server is waiting for an approval"
      )
    else
      enqueue(list)
    end
    if cb then
      cb(#list)
    end
  end, { root = root })
end

---@private tests: forget what was asked (a new Neovim session)
function M._reset()
  asked, queue, busy, by_root = {}, {}, false, {}
end

return M
