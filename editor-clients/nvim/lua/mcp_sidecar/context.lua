--- What tool definitions cost a model's context (docs/context.md), for the statusline and
--- :checkhealth: the session's active tools (`mcp/activeTools`, kept in State.active), read again
--- after a request that may change them, a server row whose Loaded count or figure changed, and
--- tools deactivated. Never starts a sidecar by itself.
local Config = require("mcp_sidecar.config")
local P = require("mcp_sidecar.protocol")
local State = require("mcp_sidecar.state")

local M = {}

--- Requests whose answer may mean the session's active tools changed.
M.session_changes = {
  [P.m.activate] = true,
  [P.m.call_tool] = true,
  [P.m.model_tool_invoke] = true,
  [P.m.command] = true,
  [P.m.session_end] = true,
  [P.m.profile] = true,
}

local in_flight, stale = false, false

--- Read the session's active tools again (one request at a time; a change meanwhile asks once more).
function M.refresh()
  local Client = require("mcp_sidecar.client")
  if State.sidecar ~= "running" or not Client.running() then
    return -- never a new sidecar for this (one that is stopping would be replaced by it)
  end
  if in_flight then
    stale = true
    return
  end
  in_flight, stale = true, false
  Client.request(P.m.active_tools, { session = Config.session }, function(err, result)
    in_flight = false
    if not err and type(result) == "table" then
      State.set_active(result)
    end
    if stale then
      M.refresh()
    end
  end)
end

--- "12,345": a count with thousands separators.
---@param n number
---@return string
function M.thousands(n)
  local s = tostring(math.floor(n))
  local sign, digits = s:match("^(-?)(%d+)$")
  if not digits then
    return s
  end
  return sign .. digits:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
end

--- Statusline component: "⚙2 1,215 tok" (the session's active tools and their estimate), "⚙2"
--- without a tokenizer, "" with none active or before they are known.
---@return string
function M.status()
  local active = State.active
  if State.sidecar ~= "running" or not active or active.count == 0 then
    return ""
  end
  local text = Config.icons.loaded .. active.count
  if active.tokens then
    text = text .. " " .. M.thousands(active.tokens) .. " tok"
  end
  return text
end

--- :checkhealth's lines for `mcp/status`'s `tokens` and the session's active tools: {level, text, advice?}.
---@param tokens table|userdata|nil `mcp/status`'s tokens (vim.NIL: no tokenizer)
---@param active table? the `mcp/activeTools` answer
---@return {[1]: "ok"|"info"|"warn", [2]: string, [3]: string[]?}[]
function M.health_lines(tokens, active)
  if type(tokens) ~= "table" then
    return {
      {
        "warn",
        "No token estimates: the sidecar's tokenizer (from its wordllama package) is not installed",
        { "Reinstall mcp-sidecar with its dependencies (docs/context.md)" },
      },
    }
  end
  local lines = {
    {
      "ok",
      ("Token estimates with %s (a little above Claude's and GPT-4o's counts; docs/context.md)"):format(
        tostring(tokens.tokenizer)
      ),
    },
    {
      "info",
      ("Every server's tools, as a host connected to each directly lists them: %s tokens (%d of %d enabled servers counted)"):format(
        M.thousands(tonumber(tokens.allTools) or 0),
        tonumber(tokens.counted) or 0,
        tonumber(tokens.enabled) or 0
      ),
    },
    type(tokens.modelTool) == "number"
        and { "info", ("mcp_tools itself: %s tokens"):format(M.thousands(tokens.modelTool)) }
      or { "info", "mcp_tools itself: not counted yet (it is once a server's catalog is)" },
  }
  if type(active) == "table" then
    local count = #(active.tools or {})
    local figure = type(active.tokens) == "number" and (", %s tokens"):format(M.thousands(active.tokens)) or ""
    table.insert(lines, { "info", ("Active tools (session %s): %d%s"):format(tostring(active.session), count, figure) })
  end
  return lines
end

return M
