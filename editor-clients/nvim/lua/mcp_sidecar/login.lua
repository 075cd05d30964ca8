--- Carrying an OAuth login (`mcp/auth/login`) to its end after a `:Mcp login` line (or `L` in the
--- status float): the question before a login asks for more scopes (`needs_approval`, then the
--- login again with the answer), the callback address pasted back for a login without a browser
--- (`pending`, then `mcp/auth/completeLogin`), and the message of a finished one.
local Client = require("mcp_sidecar.client")
local P = require("mcp_sidecar.protocol")
local State = require("mcp_sidecar.state")

local M = {}

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "mcp" })
end

--- The buttons of the more-scopes question (|confirm()|): approve, without, cancel.
M.scope_choices = "&Approve and log in\nLog in &without them\n&Cancel"

--- The more-scopes question: a tool call was refused for want of scopes (403
--- insufficient_scope), or a new login's challenge asks for scopes never granted, and the
--- sidecar asks for them only once the person approves.
---@param data {server: string, extraScopes?: string[], scopes?: string[], expiresInSeconds?: integer}
---@return string
function M.scope_question(data)
  local Text = require("mcp_sidecar.text")
  local server = Text.one_line(data.server)
  local extra = vim.tbl_map(Text.one_line, data.extraScopes or {})
  local every = vim.tbl_map(Text.one_line, data.scopes or {})
  local one = #extra == 1
  local kept = ""
  local left = tonumber(data.expiresInSeconds)
  if left and left < 60 then
    kept = (" for %d more second%s"):format(left, left == 1 and "" or "s")
  elseif left then
    local minutes = math.ceil(left / 60)
    kept = (" for %d more minute%s"):format(minutes, minutes == 1 and "" or "s")
  end
  local lines = {
    ("%s asks for more access: %s"):format(server, table.concat(extra, ", ")),
    ("%s asks for %s it was not granted: %s."):format(server, one and "a scope" or "scopes", table.concat(extra, ", ")),
    ("Logging in with %s gives %s more access than it has now."):format(one and "it" or "them", server),
  }
  if #every > 0 then
    table.insert(lines, ("The login would ask for: %s."):format(table.concat(every, ", ")))
  end
  table.insert(
    lines,
    ("Without them: log in with the access it has and forget the request. Cancel: nothing is sent; the request is kept%s."):format(
      kept
    )
  )
  return table.concat(lines, "\n")
end

--- Ask the person about a `needs_approval` login with |confirm()|.
---@param data table the LoginResult
---@return "approve"|"without"|nil nil: cancelled
function M.ask_scopes(data)
  local choice = vim.fn.confirm(M.scope_question(data), M.scope_choices, 3, "Question")
  return ({ "approve", "without" })[choice]
end

--- Tell how a login ended (the error, or its text), then hand its answer on.
---@param cb? fun(err: mcp_sidecar.Error?, result: table?)
local function finish_login(err, result, cb)
  if err then
    notify(Client.format_error(err), vim.log.levels.ERROR)
  else
    notify(result.text or "Logged in")
    State.changed()
  end
  if cb then
    cb(err, result)
  end
end

--- A login that needs the person's approval of more scopes (`needs_approval`): ask, then log in
--- again with the answer (`approveScopes`: the extra scopes, or none, which drops the request) and
--- finish that login as any other. Cancel sends nothing.
---@param data table the `needs_approval` LoginResult
---@param no_browser boolean
---@param cb? fun(err: mcp_sidecar.Error?, result: table?)
function M.approve_scopes(data, no_browser, cb)
  local decision = M.ask_scopes(data)
  if not decision then
    return cb and cb(nil, data)
  end
  local params = {
    server = data.server,
    approveScopes = decision == "approve" and (data.extraScopes or {}) or {},
  }
  if no_browser then
    params.noBrowser = true
  end
  Client.request(P.m.auth_login, params, function(err, result)
    if not err and result.status == "pending" then
      -- Required here, not at the top: commands.lua requires this module.
      require("mcp_sidecar.commands").show(result.text or "", "login")
      return M.complete_login(result, cb)
    end
    finish_login(err, result, cb)
  end)
end

--- The no-browser login: ask for the address the browser was sent to, then finish the login.
---@param pending {loginId: string, redirectUri: string}
---@param cb? fun(err: mcp_sidecar.Error?, result: table?)
function M.complete_login(pending, cb)
  vim.ui.input({ prompt = "Paste the callback address (" .. pending.redirectUri .. "...): " }, function(pasted)
    if not pasted or vim.trim(pasted) == "" then
      notify("Login not completed (nothing pasted)", vim.log.levels.WARN)
      return cb and cb(nil, nil)
    end
    Client.request(P.m.auth_complete_login, {
      loginId = pending.loginId,
      callbackUrl = vim.trim(pasted),
    }, function(err, result)
      finish_login(err, result, cb)
    end)
  end)
end

return M
