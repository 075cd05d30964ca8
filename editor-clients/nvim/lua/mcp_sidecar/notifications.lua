--- What the sidecar sends the plugin, one handler each (the `handlers` of the vim.lsp client):
--- the questions servers ask (elicitation, sampling) and their cancellation, `$/progress`, and
--- the `mcp/*` notifications: server rows, catalog and tool changes, approvals, watches and log
--- messages, each turned into state (state.lua) or a message (vim.notify) a person should see.
local Config = require("mcp_sidecar.config")
local P = require("mcp_sidecar.protocol")
local State = require("mcp_sidecar.state")

local M = {}

--- vim.notify on the main loop, titled "mcp".
---@param msg string
---@param level? integer
local function notify(msg, level)
  vim.schedule(function()
    vim.notify(msg, level or vim.log.levels.INFO, { title = "mcp" })
  end)
end
M.notify = notify

--- The handler table of one sidecar's client.
---@param root? string the workspace of the sidecar these handle
---@return table<string, function>
local function handlers(root)
  local N = P.notifications
  local Questions = require("mcp_sidecar.questions")
  return {
    -- Server questions answer later: see questions.lua (the handler yields in vim.lsp's coroutine).
    [P.client_requests.elicit] = Questions.handler("elicit"),
    [P.client_requests.sample] = Questions.handler("sample"),
    [P.client_requests.app_confirm_call] = require("mcp_sidecar.apps").confirm_handler,
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
    [N.call_background] = require("mcp_sidecar.calls").handler("background"),
    [N.call_progress] = require("mcp_sidecar.calls").handler("progress"),
    [N.call_finished] = require("mcp_sidecar.calls").handler("finished"),
    [N.server_log] = function(_, params)
      require("mcp_sidecar.logs").add(params)
    end,
    [N.server_status] = function(_, row)
      if type(row) ~= "table" or not row.name then
        return
      end
      local previous = State.update_server(row)
      if not previous or previous.loaded ~= row.loaded or previous.tokens ~= row.tokens then
        require("mcp_sidecar.context").refresh() -- the session's tools (or their figures) may have changed
      end
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
      require("mcp_sidecar.context").refresh()
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

return M
