--- MCP Apps in your browser: `:Mcp app SERVER URI` asks the sidecar for a loopback page
--- (`mcp/app/open`: the app in a sandboxed frame on 127.0.0.1, behind a token) and opens it with
--- vim.ui.open; each tool call the app then makes is asked here first (`mcp/app/confirmCall`).
--- Only with `opts.apps = true`, which also offers servers the extension.
local Client = require("mcp_sidecar.client")
local Config = require("mcp_sidecar.config")
local P = require("mcp_sidecar.protocol")

local M = {}

local function notify(msg, level)
  vim.schedule(function()
    vim.notify(msg, level or vim.log.levels.INFO, { title = "mcp" })
  end)
end

--- Open an app of a server in the browser.
---@param server string
---@param uri string the app's `ui://` URI, as the server's tool names it
---@param opts? { tool_input?: table, tool_result?: table, root?: string, done?: fun(err: any, result: table?) }
function M.open(server, uri, opts)
  opts = opts or {}
  if not Config.apps then
    local msg = "MCP Apps are off: set opts.apps = true to render them in your browser"
    notify(msg, vim.log.levels.ERROR)
    if opts.done then
      opts.done({ message = msg }, nil)
    end
    return
  end
  local params = { server = server, uri = uri, toolInput = opts.tool_input, toolResult = opts.tool_result }
  Client.request(P.m.app_open, params, function(err, result)
    if err then
      notify(Client.format_error(err), vim.log.levels.ERROR)
    else
      vim.ui.open(result.url)
      notify(("%s's app %s opened in your browser"):format(server, uri))
    end
    if opts.done then
      opts.done(err, result)
    end
  end, { root = opts.root })
end

--- The question put to the person for one call: the server, the tool and its arguments as JSON
--- (the app's, shown as plain text).
---@param params table `{server, uri, name, arguments}`
---@return string
function M.question(params)
  local args = vim.json.encode(params.arguments or vim.empty_dict())
  if #args > 500 then
    args = args:sub(1, 500) .. "…"
  end
  return ("The app %s of %s calls the tool %s with %s. Allow?"):format(
    tostring(params.uri),
    tostring(params.server),
    tostring(params.name),
    args
  )
end

--- The vim.lsp handler of `mcp/app/confirmCall`: asks with vim.ui.select (it yields in vim.lsp's
--- coroutine while the person decides); `{allow = true}` only for "Allow".
function M.confirm_handler(_, params, _)
  local co, is_main = coroutine.running()
  if not co or is_main or type(params) ~= "table" then
    return { allow = false }
  end
  local allow, answered = false, false
  vim.schedule(function()
    vim.ui.select({ "Allow", "Deny" }, { prompt = M.question(params) }, function(choice)
      allow, answered = choice == "Allow", true
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end)
  end)
  while not answered do
    coroutine.yield()
  end
  return { allow = allow }
end

return M
