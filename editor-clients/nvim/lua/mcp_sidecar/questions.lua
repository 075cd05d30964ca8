--- What a server asks the person through the sidecar (docs/protocol.md, "Requests, sidecar to
--- client"): `mcp/elicit` (a form, or a URL to open) and `mcp/sample` (a model's answer, only
--- when `opts.sampling` is set).
---
--- Answering later: vim.lsp runs a server request's handler inside a coroutine (vim.lsp.rpc wraps
--- each incoming request in `coroutine.wrap`), so the handler yields until the person has answered
--- and then returns the answer, which vim.lsp sends. This is how vim.lsp's own
--- `window/showMessageRequest` handler waits for `vim.ui.select`. Outside such a coroutine (an
--- older Neovim) a question is answered at once: `cancel`, or an error for sampling.
---
--- One question is shown at a time; the others wait in order. The sidecar withdraws a question
--- with `$/cancelRequest` (10 minutes without an answer, or its server closed). vim.lsp does not
--- tell a handler its request id, so the sidecar puts it in the params (`requestId`) and the
--- cancel names exactly that question. Without one (an older sidecar), the question withdrawn is
--- the only one open, else one whose server is no longer connected, else the oldest (every
--- question has the same time limit). A server that leaves `connected` (`mcp/serverStatus`)
--- closes its questions at once; the cancel that follows for each is then taken as theirs.
local Config = require("mcp_sidecar.config")
local State = require("mcp_sidecar.state")
local Text = require("mcp_sidecar.text")

local M = {}
local uv = vim.uv or vim.loop

---@class mcp_sidecar.Question
---@field kind "elicit"|"sample"
---@field server string the server's name, one line
---@field params table the request's params as the sidecar sent them
---@field started integer uv.now() when it arrived
---@field reply fun(result: any, err: table?)
---@field withdraw? fun() closes what it shows (set while shown)
---@field settled boolean

---@type mcp_sidecar.Question[] waiting for their turn
M.queue = {}
---@type mcp_sidecar.Question? the one being shown
M.active = nil

local function notify(msg, level)
  vim.schedule(function()
    vim.notify(msg, level or vim.log.levels.INFO, { title = "mcp" })
  end)
end

local codes = vim.lsp.protocol.ErrorCodes

--- A JSON-RPC error answer (vim.lsp accepts only codes it knows).
---@param message string
---@return table
function M.error(message)
  return vim.lsp.rpc_response_error(codes.RequestFailed or codes.InternalError, message)
end

M.declined = "The user declined the request"
M.unanswered = "The editor could not answer"

--- The answer of a person who declined. MCP's code for it is -1, but vim.lsp sends only LSP's
--- own codes, so it is RequestFailed with exactly this message, which the sidecar reads as a
--- decline (docs/protocol.md, `mcp/sample`).
---@return table
function M.declined_error()
  return M.error(M.declined)
end

--- The answer that withdraws a question of this kind.
---@param kind "elicit"|"sample"
---@return table? result
---@return table? err
function M.cancel_answer(kind)
  if kind == "elicit" then
    return { action = "cancel" }, nil
  end
  return nil, M.declined_error()
end

local pump

---@param q mcp_sidecar.Question
---@param result any
---@param err? table
local function settle(q, result, err)
  if q.settled then
    return
  end
  q.settled = true
  if M.active == q then
    M.active = nil
  end
  for i, other in ipairs(M.queue) do
    if other == q then
      table.remove(M.queue, i)
      break
    end
  end
  q.reply(result, err)
  vim.schedule(pump)
end

--- What shows each kind of question: `run(q, answer)` returns a function that withdraws it.
---@type table<string, fun(q: mcp_sidecar.Question, answer: fun(result: any, err: table?)): fun()?>
M.runners = {
  elicit = function(q, answer)
    local p = q.params
    local offered = type(Config.elicitation) == "table" and Config.elicitation or {}
    local mode = p.mode == "url" and "url" or "form"
    if Config.elicitation == false or offered[mode] == false then
      -- not offered (the sidecar asks only what was): nothing is shown
      answer({ action = "decline" })
      return nil
    end
    if p.mode == "url" then
      return require("mcp_sidecar.ui.consent").url(q, answer)
    end
    local Form = require("mcp_sidecar.ui.form")
    local view = Form.open(type(p.requestedSchema) == "table" and p.requestedSchema or {}, {
      title = ("%s asks"):format(q.server),
      message = type(p.message) == "string" and p.message or nil,
      decline = true,
    }, function(action, content)
      if action == "accept" then
        answer({ action = "accept", content = content })
      else
        answer({ action = action })
      end
    end)
    return function()
      Form.cancel(view)
    end
  end,
  sample = function(q, answer)
    return require("mcp_sidecar.ui.consent").sample(q, answer)
  end,
}

pump = function()
  if M.active then
    return
  end
  local q = table.remove(M.queue, 1)
  if not q then
    return
  end
  M.active = q
  local ok, withdraw = pcall(M.runners[q.kind], q, function(result, err)
    settle(q, result, err)
  end)
  if not ok then
    notify(("Could not show %s's question: %s"):format(q.server, tostring(withdraw)), vim.log.levels.ERROR)
    local result, err = M.cancel_answer(q.kind)
    return settle(q, result, err or (q.kind == "sample" and M.error(M.unanswered) or nil))
  end
  q.withdraw = withdraw
end

--- Queue a question; `reply(result, err)` is called once with the answer.
---@param kind "elicit"|"sample"
---@param params table
---@param reply fun(result: any, err: table?)
---@return mcp_sidecar.Question
function M.ask(kind, params, reply)
  ---@type mcp_sidecar.Question
  local q = {
    kind = kind,
    server = Text.one_line(type(params) == "table" and params.server or "?"),
    params = type(params) == "table" and params or {},
    started = uv.now(),
    reply = reply,
    settled = false,
  }
  table.insert(M.queue, q)
  vim.schedule(pump)
  return q
end

--- Withdraw a question: close what it shows and answer it as cancelled.
---@param q mcp_sidecar.Question
function M.withdraw(q)
  if q.settled then
    return
  end
  if M.active == q and q.withdraw then
    pcall(q.withdraw)
  end
  local result, err = M.cancel_answer(q.kind)
  settle(q, result, err)
end

--- The question a `$/cancelRequest` withdraws (see the top of this file).
---@return mcp_sidecar.Question?
function M.pick_withdrawn()
  local open = {}
  if M.active then
    table.insert(open, M.active)
  end
  vim.list_extend(open, M.queue)
  if #open <= 1 then
    return open[1]
  end
  for _, q in ipairs(open) do
    local row = State.servers[q.server]
    if row and row.state ~= "connected" then
      return q
    end
  end
  table.sort(open, function(a, b)
    return a.started < b.started
  end)
  return open[1]
end

--- Questions withdrawn because their server closed, whose `$/cancelRequest` has not come yet: that
--- many cancels are taken as theirs instead of closing another question.
M.unclaimed = 0

--- A server is no longer connected (`mcp/serverStatus`): its questions can no longer be answered.
---@param server string
function M.server_closed(server)
  local open = vim.list_extend(M.active and { M.active } or {}, M.queue)
  for _, q in ipairs(open) do
    if q.server == server and not q.settled then
      M.withdraw(q)
      M.unclaimed = M.unclaimed + 1
      if q.params.requestId ~= nil then
        M.closed_ids[q.params.requestId] = true
      end
      notify(("%s's question was withdrawn: the server closed"):format(q.server))
    end
  end
end

--- Request ids of questions withdrawn because their server closed, whose cancel has not come yet.
---@type table<any, boolean>
M.closed_ids = {}

--- `$/cancelRequest` naming a question by its `requestId`; true when the id was one of ours.
---@param id any
---@return boolean
local function cancel_by_id(id)
  local open = vim.list_extend(M.active and { M.active } or {}, M.queue)
  for _, q in ipairs(open) do
    if q.params.requestId == id then
      if not q.settled then
        M.withdraw(q)
        notify(("%s's question was withdrawn (no answer in time, or the server closed)"):format(q.server))
      end
      return true
    end
  end
  if M.closed_ids[id] then
    M.closed_ids[id] = nil
    M.unclaimed = math.max(0, M.unclaimed - 1)
    return true
  end
  return false
end

--- `$/cancelRequest` from the sidecar.
---@param params? table `{id}`
function M.on_cancel(params)
  local id = type(params) == "table" and params.id or nil
  if id ~= nil and (cancel_by_id(id) or type(id) == "string" and id:match("^sidecar%-")) then
    return -- exactly that question (or one already answered)
  end
  if M.unclaimed > 0 then
    M.unclaimed = M.unclaimed - 1
    return
  end
  local q = M.pick_withdrawn()
  if q then
    M.withdraw(q)
    notify(("%s's question was withdrawn (no answer in time, or the server closed)"):format(q.server))
  end
end

--- A vim.lsp handler for a sidecar-to-client request that waits for the person.
---@param kind "elicit"|"sample"
---@return fun(err: any, params: table, ctx: table): any, table?
function M.handler(kind)
  return function(_, params, _)
    if kind == "sample" and type(Config.sampling) ~= "function" then
      return nil, M.error("Sampling is not offered: opts.sampling is not set")
    end
    local co, is_main = coroutine.running()
    if not co or is_main then
      local result, err = M.cancel_answer(kind)
      return result, err or M.error(M.unanswered)
    end
    local result, err
    M.ask(kind, params, function(r, e)
      result, err = r, e
      -- resume on the main loop: with a synchronous vim.ui the answer can come before the yield
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end)
    coroutine.yield()
    return result, err
  end
end

--- The sidecar stopped: close every question (their answers have nowhere to go).
function M.withdraw_all()
  local open = vim.list_extend(M.active and { M.active } or {}, M.queue)
  for _, q in ipairs(open) do
    M.withdraw(q)
  end
end

---@private tests: forget every question without answering
function M._reset()
  M.queue, M.active, M.unclaimed = {}, nil, 0
end

return M
