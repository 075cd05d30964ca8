--- Background calls: a tool call still running past the sidecar's threshold
--- (`initializationOptions.backgroundAfterSeconds`, the `background_after` option) goes on in the
--- background. The notifications (`mcp/call/background`, `mcp/call/progress`, `mcp/call/finished`)
--- keep the calls of this Neovim by id, with their latest progress; `:Mcp calls` lists them
--- (`mcp/calls/list`), `:Mcp calls cancel ID` cancels one (`mcp/calls/cancel`), `:Mcp calls result ID`
--- shows its result (`mcp/calls/result`: delivered once, so a chat's model cannot fetch it after).
local Text = require("mcp_sidecar.text")

local M = {}

---@class mcp_sidecar.BackgroundCall
---@field callId string
---@field tool string
---@field session string
---@field status "running"|"completed"|"failed"|"cancelled"
---@field startedAt string
---@field endedAt? string
---@field progress? {progress?: number, total?: number, message?: string}

---@type table<string, mcp_sidecar.BackgroundCall>
M.known = {}

local function notify(msg, level)
  vim.schedule(function()
    vim.notify(msg, level or vim.log.levels.INFO, { title = "mcp" })
  end)
end

--- One call as a line: id, tool, status, progress.
---@param call mcp_sidecar.BackgroundCall
---@return string
function M.format(call)
  local progress = type(call.progress) == "table" and call.progress or {}
  local done = ""
  if type(progress.progress) == "number" then
    done = type(progress.total) == "number" and (" %g/%g"):format(progress.progress, progress.total)
      or (" %g"):format(progress.progress)
  end
  if type(progress.message) == "string" and progress.message ~= "" then
    done = done .. " " .. Text.one_line(progress.message)
  end
  return ("%s  %s  %s%s"):format(
    Text.one_line(call.callId or "?"),
    Text.one_line(call.tool or "?"),
    Text.one_line(call.status or "?"),
    done
  )
end

--- The handler of one of the three notifications.
---@param kind "background"|"progress"|"finished"
---@return fun(err: any, call: mcp_sidecar.BackgroundCall)
function M.handler(kind)
  return function(_, call)
    if type(call) ~= "table" or type(call.callId) ~= "string" then
      return
    end
    M.known[call.callId] = call
    if kind == "background" then
      notify(("%s went to the background as %s: :Mcp calls"):format(Text.one_line(call.tool or "?"), call.callId))
    elseif kind == "finished" then
      notify(
        ("%s (%s) %s: :Mcp calls result %s"):format(
          call.callId,
          Text.one_line(call.tool or "?"),
          Text.one_line(call.status or "ended"),
          call.callId
        )
      )
    end
  end
end

--- How many kept calls still run (for the status line).
---@return integer
function M.running()
  local count = 0
  for _, call in pairs(M.known) do
    if call.status == "running" then
      count = count + 1
    end
  end
  return count
end

--- The list as text.
---@param calls mcp_sidecar.BackgroundCall[]
---@return string
function M.text(calls)
  if #calls == 0 then
    return "No background calls."
  end
  local lines = { "Background calls (oldest first):" }
  for _, call in ipairs(calls) do
    table.insert(lines, "  " .. M.format(call))
  end
  table.insert(lines, ":Mcp calls cancel ID cancels a running call; :Mcp calls result ID shows a result (once).")
  return table.concat(lines, "\n")
end

--- `:Mcp calls [cancel ID | result ID]`.
---@param args string[]
---@param cb? fun(err: any, result: any)
function M.run(args, cb)
  local Client = require("mcp_sidecar.client")
  local P = require("mcp_sidecar.protocol")
  local Commands = require("mcp_sidecar.commands")
  local action, id = args[1], args[2]
  local function done(err, result)
    if err then
      notify(Client.format_error(err), vim.log.levels.ERROR)
    end
    if cb then
      cb(err, result)
    end
  end
  if action == nil or action == "list" then
    return Client.request(P.m.calls_list, vim.empty_dict(), function(err, result)
      if not err then
        M.known = {}
        for _, call in ipairs(result.calls or {}) do
          M.known[call.callId] = call
        end
        Commands.show(M.text(result.calls or {}), "calls")
      end
      done(err, result)
    end)
  end
  if (action ~= "cancel" and action ~= "result") or not id then
    notify("Usage: :Mcp calls [cancel ID | result ID]", vim.log.levels.ERROR)
    return done(nil, nil)
  end
  if action == "cancel" then
    return Client.request(P.m.calls_cancel, { callId = id }, function(err, call)
      if not err then
        M.known[id] = call
        Commands.show("Cancelling " .. M.format(call))
      end
      done(err, call)
    end)
  end
  Client.request(P.m.calls_result, { callId = id }, function(err, result)
    if not err then
      M.known[id] = nil
      local call = result.call or {}
      local body
      if result.result then
        body = require("mcp_sidecar.ui.actions").content_text(result.result.content or {})
      elseif result.diagnostic then
        body = Text.one_line(result.diagnostic.message or "failed")
      else
        body = call.status == "running" and "Still running: :Mcp calls result " .. id .. " again later."
          or "Cancelled: no result."
      end
      require("mcp_sidecar.ui.scratch").open("mcp://calls/" .. id, M.format(call) .. "\n\n" .. body)
    end
    done(err, result)
  end)
end

---@private tests
function M._reset()
  M.known = {}
end

return M
