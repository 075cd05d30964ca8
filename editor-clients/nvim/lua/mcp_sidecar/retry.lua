--- A tool call that needed a step in the browser first (`elicitation_required`: the server
--- answered MCP error -32042 and the sidecar asked each URL through `mcp/elicit`). The call is
--- never run again by itself: once the step is done (the server's `mcp/elicitationComplete`, or
--- the result says it arrived already) the person is offered Retry / Cancel; `:Mcp retry` calls it
--- again at any time, for when the completion never comes.
local Text = require("mcp_sidecar.text")

local M = {}

---@class mcp_sidecar.Retry
---@field id string the tool id
---@field server string the server that asked (the result's `server`)
---@field run fun() calls it again with the same arguments
---@field waiting table<string, true> elicitation ids whose completion has not arrived

--- Server -> elicitationId -> the call waiting for it. An id is the server's own: another
--- server's completion notice naming the same id is not this one's.
---@type table<string, table<string, mcp_sidecar.Retry>>
M.pending = {}
---@type mcp_sidecar.Retry? the last call that needed a browser step (what `:Mcp retry` runs)
M.last = nil

M.choices = { "Retry", "Cancel" }

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "mcp" })
end

---@param retry mcp_sidecar.Retry
local function forget(retry)
  local of_server = M.pending[retry.server] or {}
  for eid, r in pairs(of_server) do
    if r == retry then
      of_server[eid] = nil
    end
  end
  if next(of_server) == nil then
    M.pending[retry.server] = nil
  end
  if M.last == retry then
    M.last = nil
  end
end

--- Ask Retry / Cancel for a call.
---@param retry mcp_sidecar.Retry
---@param why string
function M.offer(retry, why)
  vim.ui.select(M.choices, {
    prompt = ("%s Call %s again?"):format(why, Text.one_line(retry.id)),
    kind = "mcp_sidecar.retry",
  }, function(choice)
    forget(retry)
    if choice == M.choices[1] then
      retry.run()
    end
  end)
end

--- Look at a call's result: when it needed a browser step, say so and arrange the retry offer.
---@param id string the tool id
---@param result table the `mcp/callTool` result
---@param run fun() calls the tool again with the same arguments
---@return boolean handled whether the result was an `elicitation_required`
function M.after_call(id, result, run)
  local diag = type(result) == "table" and result.diagnostic or nil
  if type(diag) ~= "table" or diag.code ~= "elicitation_required" then
    return false
  end
  -- without the result's server no completion notice can be matched to it: :Mcp retry only
  local server = type(result.server) == "string" and result.server or nil
  ---@type mcp_sidecar.Retry
  local retry = { id = id, server = server or "", run = run, waiting = {} }
  local accepted, waiting = false, 0
  for _, e in ipairs(type(result.elicitations) == "table" and result.elicitations or {}) do
    if type(e) == "table" and e.action == "accept" then
      accepted = true
      if not e.completed then
        waiting = waiting + 1
        if server and type(e.elicitationId) == "string" then
          retry.waiting[e.elicitationId] = true
          M.pending[server] = M.pending[server] or {}
          M.pending[server][e.elicitationId] = retry
        end
      end
    end
  end
  local text = ("%s needs a step in the browser first: %s"):format(Text.one_line(id), Text.one_line(diag.message))
  if not accepted then
    notify(text .. "\nNothing was opened; call it again to be asked again.", vim.log.levels.WARN)
    return true
  end
  M.last = retry
  if waiting == 0 then
    notify(text, vim.log.levels.WARN)
    M.offer(retry, "The browser step is done.")
  elseif next(retry.waiting) then
    notify(
      text .. "\nYou are offered a retry when the server says the step is done; :Mcp retry calls it again now.",
      vim.log.levels.WARN
    )
  else
    notify(text .. "\n:Mcp retry calls it again once the step is done.", vim.log.levels.WARN)
  end
  return true
end

--- `mcp/elicitationComplete`: the server says a URL step is done.
---@param params {server: string, elicitationId: string}
function M.complete(params)
  if type(params) ~= "table" then
    return
  end
  local name = Text.one_line(params.server or "?")
  local of_server = type(params.server) == "string" and M.pending[params.server] or nil
  local retry = of_server and of_server[params.elicitationId]
  if not retry then
    return notify(("%s: the browser step is done"):format(name))
  end
  of_server[params.elicitationId] = nil
  if next(of_server) == nil then
    M.pending[params.server] = nil
  end
  retry.waiting[params.elicitationId] = nil
  if next(retry.waiting) == nil then
    M.offer(retry, ("%s: the browser step is done."):format(name))
  end
end

--- `:Mcp retry`: call the last tool that needed a browser step again.
function M.retry_last()
  local retry = M.last
  if not retry then
    return notify("No tool call waits for a browser step", vim.log.levels.WARN)
  end
  forget(retry)
  retry.run()
end

---@private tests
function M._reset()
  M.pending, M.last = {}, nil
end

return M
