--- Server log messages (`mcp/serverLog`: MCP's notifications/message at warning or above), kept
--- per server for `:Mcp logs`; the first at error level or above of each server is also shown with
--- vim.notify. `:Mcp logs SERVER` adds what the sidecar keeps for it (`mcp/server/logs`: the
--- server's stderr and its log messages at its logLevel or above).
local Config = require("mcp_sidecar.config")
local Text = require("mcp_sidecar.text")

local M = {}

M.max = 200

M.severity = { debug = 0, info = 1, notice = 2, warning = 3, error = 4, critical = 5, alert = 6, emergency = 7 }

---@class mcp_sidecar.LogEntry
---@field time number os.time()
---@field level string
---@field logger? string
---@field text string

---@type table<string, {entries: mcp_sidecar.LogEntry[], dropped: integer, notified: boolean}>
M.servers = {}

--- Keep one `mcp/serverLog` message.
---@param params {server: string, level: string, logger?: string, data: any, text?: string}
function M.add(params)
  if type(params) ~= "table" or type(params.server) ~= "string" then
    return
  end
  local server = Text.one_line(params.server)
  local text = params.text
  if type(text) ~= "string" then
    local ok, encoded = pcall(vim.json.encode, params.data)
    text = ok and encoded or "?"
  end
  local level = Text.one_line(params.level or "warning")
  local entry = {
    time = os.time(),
    level = level,
    logger = type(params.logger) == "string" and Text.one_line(params.logger) or nil,
    text = Text.one_line(text),
  }
  local kept = M.servers[server] or { entries = {}, dropped = 0, notified = false }
  M.servers[server] = kept
  table.insert(kept.entries, entry)
  if #kept.entries > M.max then
    table.remove(kept.entries, 1)
    kept.dropped = kept.dropped + 1
  end
  if (M.severity[level] or 3) >= M.severity.error and not kept.notified and Config.notify.server_errors then
    kept.notified = true
    vim.schedule(function()
      vim.notify(
        ("%s logged %s: %s\n:Mcp logs %s shows its log"):format(server, level, entry.text, server),
        vim.log.levels.WARN,
        { title = "mcp" }
      )
    end)
  end
end

---@param entry mcp_sidecar.LogEntry
---@return string
function M.format(entry)
  return ("%s [%s] %s%s"):format(
    os.date("%H:%M:%S", entry.time),
    entry.level,
    entry.logger and (entry.logger .. ": ") or "",
    entry.text
  )
end

--- The kept messages of one server (or of every server), as lines.
---@param server? string
---@return string[]
function M.lines(server)
  local names = server and { server } or vim.tbl_keys(M.servers)
  table.sort(names)
  local lines = {}
  for _, name in ipairs(names) do
    local kept = M.servers[name]
    table.insert(lines, ("%s: log messages (warning and above) since Neovim started"):format(name))
    if not kept or #kept.entries == 0 then
      table.insert(lines, "  (none)")
    else
      if kept.dropped > 0 then
        table.insert(lines, ("  (%d older ones dropped)"):format(kept.dropped))
      end
      for _, entry in ipairs(kept.entries) do
        table.insert(lines, "  " .. M.format(entry))
      end
    end
    table.insert(lines, "")
  end
  if #names == 0 then
    table.insert(lines, "No server has sent a log message at warning or above yet.")
    table.insert(lines, "")
  end
  return lines
end

--- `:Mcp logs [SERVER]`: a scratch buffer with the kept messages, and for one server what the
--- sidecar captured (`mcp/server/logs`).
---@param server? string
---@param cb? fun(buf: integer)
function M.show(server, cb)
  local Scratch = require("mcp_sidecar.ui.scratch")
  local lines = M.lines(server)
  if not server then
    table.insert(lines, ":Mcp logs SERVER adds the server's stderr as the sidecar captured it.")
    local buf = Scratch.open("mcp://logs", table.concat(lines, "\n"), { filetype = "mcp_sidecar_log" })
    return cb and cb(buf)
  end
  local Client = require("mcp_sidecar.client")
  Client.request(require("mcp_sidecar.protocol").m.server_logs, { server = server }, function(err, result)
    if err then
      table.insert(lines, "mcp/server/logs failed: " .. Text.one_line(Client.format_error(err)))
    else
      table.insert(
        lines,
        ("%s: captured by the sidecar (stderr and log messages, newest last; %d dropped)"):format(
          server,
          result.dropped or 0
        )
      )
      for _, line in ipairs(result.lines or {}) do
        local time = type(line.time) == "number" and os.date("%H:%M:%S", math.floor(line.time)) or "?"
        table.insert(lines, ("  %s %s"):format(time, Text.one_line(line.text)))
      end
      if #(result.lines or {}) == 0 then
        table.insert(lines, "  (nothing yet)")
      end
    end
    local buf = Scratch.open("mcp://logs/" .. server, table.concat(lines, "\n"), { filetype = "mcp_sidecar_log" })
    if cb then
      cb(buf)
    end
  end)
end

---@private tests
function M._reset()
  M.servers = {}
end

return M
