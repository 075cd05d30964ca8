--- The status float (`:Mcp`): the server matrix (with the engine's `Shared` column, line and
--- clients when one serves this Neovim), changed project servers waiting for approval,
--- configuration files and trust, with keys acting on the server under the cursor. Refreshes
--- on `mcp/serverStatus`.
local Client = require("mcp_sidecar.client")
local Config = require("mcp_sidecar.config")
local Float = require("mcp_sidecar.ui.float")
local P = require("mcp_sidecar.protocol")
local State = require("mcp_sidecar.state")

local M = {}

M.keys = {
  { "<CR>", "get", "details" },
  { "t", "tools", "tools" },
  { "r", "reconnect", "reconnect" },
  { "R", "refresh", "refresh" },
  { "e", "enable", "enable" },
  { "d", "disable", "disable" },
  { "l", "logs", "logs" },
  { "L", "login", "log in" },
  { "a", "review", "review change" },
  { "s", nil, "search" },
}

---@type {buf: integer, win: integer, rows: table<integer, string>, group: integer}?
M.view = nil

---@param result table the `mcp/command` "list" result
---@return string[] lines, table<integer, string> rows line -> server
function M.render(result)
  local data = result.data or {}
  local lines, rows = {}, {}
  local root = Client.last_root or Client.root()
  table.insert(
    lines,
    (" Workspace %s · project config %s"):format(root, data.trustedWorkspace and "trusted" or "untrusted")
  )
  table.insert(lines, "")
  local names = {}
  for _, server in ipairs(data.servers or {}) do
    names[server.name] = true
  end
  for _, line in ipairs(vim.split(result.text or "", "\n", { plain = true })) do
    table.insert(lines, " " .. line)
    local second = line:match("^%S+%s+(%S+)")
    -- A table row (its glyph, then the name); not the engine's line (`Engine pid N ...`) under it.
    if second and names[second] and not line:find("^Engine pid ") then
      rows[#lines] = second
    end
  end
  local waiting = vim.tbl_values(State.pending)
  table.sort(waiting, function(a, b)
    return a.server < b.server
  end)
  if #waiting > 0 then
    table.insert(lines, "")
  end
  for _, p in ipairs(waiting) do
    local change = p.change == "new" and "new" or "changed"
    local verb = p.transport == "http" and "connect to" or (p.transport == "profile" and "apply" or "run")
    local summary = tostring(p.summary or ""):gsub("[%c]", " ")
    table.insert(
      lines,
      (" ⚠ %s: %s in .mcp.json, needs approval (a); it would %s: %s"):format(p.server, change, verb, summary)
    )
    rows[#lines] = p.server
  end
  local Progress = require("mcp_sidecar.progress")
  local running = Progress.list()
  if #running > 0 then
    table.insert(lines, "")
  end
  for _, entry in ipairs(running) do
    table.insert(lines, (" %s running: %s"):format(Config.icons.running, Progress.describe(entry)))
  end
  table.insert(lines, "")
  for _, file in ipairs(data.configFiles or {}) do
    local state = not file.exists and "missing" or (file.read and "read" or "not read (untrusted)")
    table.insert(lines, (" %-7s %s · %s"):format(file.scope, file.path, state))
  end
  for _, diag in ipairs(data.diagnostics or {}) do
    table.insert(lines, " ✘ " .. (diag.message or diag.code or "?"))
  end
  table.insert(lines, "")
  local help = {}
  for _, key in ipairs(M.keys) do
    table.insert(help, key[1] .. " " .. key[3])
  end
  table.insert(help, "q close")
  table.insert(lines, " " .. table.concat(help, " · "))
  return lines, rows
end

---@param cb? fun()
function M.refresh(cb)
  Client.request(P.m.command, { line = "list" }, function(err, result)
    local view = M.view
    if not view or not vim.api.nvim_buf_is_valid(view.buf) then
      return cb and cb()
    end
    if err then
      Float.set_lines(view.buf, { " " .. Client.format_error(err):gsub("\n", " · ") })
      return cb and cb()
    end
    State.set_servers(result.data and result.data.servers, true, result.data and result.data.profile)
    local lines, rows = M.render(result)
    view.rows = rows
    Float.set_lines(view.buf, lines)
    if vim.api.nvim_win_is_valid(view.win) then
      local width = vim.api.nvim_win_get_width(view.win)
      local height = 0
      for _, l in ipairs(lines) do
        height = height + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
      end
      vim.api.nvim_win_set_height(view.win, math.min(height, vim.o.lines - 4))
    end
    if cb then
      cb()
    end
  end)
end

local function server_under_cursor()
  local view = M.view
  if not view then
    return nil
  end
  local line = vim.api.nvim_win_get_cursor(view.win)[1]
  return view.rows[line]
end

---@param cb? fun() called once the first render is done
function M.open(cb)
  if M.view and vim.api.nvim_win_is_valid(M.view.win) then
    vim.api.nvim_set_current_win(M.view.win)
    return M.refresh(cb)
  end
  local buf, win = Float.open({ title = "MCP servers", lines = { " loading…" }, height = 12 })
  vim.wo[win].wrap = true
  M.view = { buf = buf, win = win, rows = {} }
  vim.bo[buf].filetype = "mcp_sidecar_status"
  for _, key in ipairs(M.keys) do
    vim.keymap.set("n", key[1], function()
      if not key[2] then
        Float.close(win)
        return require("mcp_sidecar.ui.search").open()
      end
      local server = server_under_cursor()
      if not server then
        return vim.notify("Move the cursor to a server row", vim.log.levels.INFO, { title = "mcp" })
      end
      if key[2] == "review" then
        Float.close(win)
        return require("mcp_sidecar.approvals").review(server)
      elseif key[2] == "logs" then
        Float.close(win)
        return require("mcp_sidecar.logs").show(server)
      end
      require("mcp_sidecar.commands").execute(key[2] .. " " .. server, function()
        M.refresh()
      end)
    end, { buffer = buf, nowait = true, desc = key[3] })
  end
  M.view.group = vim.api.nvim_create_augroup("mcp_sidecar_status_float", { clear = true })
  vim.api.nvim_create_autocmd("User", {
    group = M.view.group,
    pattern = "McpSidecarStatus",
    callback = function()
      if M.view and vim.api.nvim_buf_is_valid(M.view.buf) and not M.view.pending then
        M.view.pending = true
        vim.defer_fn(function()
          if M.view then
            M.view.pending = false
            M.refresh()
          end
        end, 200)
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    group = M.view.group,
    buffer = buf,
    callback = function()
      pcall(vim.api.nvim_del_augroup_by_id, M.view.group)
      M.view = nil
    end,
  })
  M.refresh(cb)
end

return M
