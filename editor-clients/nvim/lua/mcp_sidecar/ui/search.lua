--- `:Mcp search [query]`: a live search over `mcp/discover` (results update as you type; the
--- last word matches as a prefix). `search.picker = "select"` uses vim.ui.select instead,
--- which snacks, telescope (ui-select) or fzf-lua take over when they are installed.
local Actions = require("mcp_sidecar.ui.actions")
local Config = require("mcp_sidecar.config")
local Float = require("mcp_sidecar.ui.float")

local M = {}
local uv = vim.uv or vim.loop

---@class mcp_sidecar.SearchView
---@field input_buf integer
---@field input_win integer
---@field list_buf integer
---@field list_win integer
---@field candidates table[]
---@field selected integer
---@field seq integer
---@field timer uv.uv_timer_t
---@field on_results? fun(view: mcp_sidecar.SearchView)

---@type mcp_sidecar.SearchView?
M.view = nil

local ns = vim.api.nvim_create_namespace("mcp_sidecar_search")

local function render(view, header)
  local lines = {}
  for _, c in ipairs(view.candidates) do
    table.insert(lines, " " .. Actions.format(c))
  end
  if #lines == 0 then
    lines = { header or " no matches" }
  end
  Float.set_lines(view.list_buf, lines)
  vim.api.nvim_buf_clear_namespace(view.list_buf, ns, 0, -1)
  if #view.candidates > 0 then
    view.selected = math.min(math.max(view.selected, 1), #view.candidates)
    vim.api.nvim_buf_set_extmark(view.list_buf, ns, view.selected - 1, 0, { line_hl_group = "Visual" })
    pcall(vim.api.nvim_win_set_cursor, view.list_win, { view.selected, 0 })
  end
end

---@param view mcp_sidecar.SearchView
---@param query string
function M.query(view, query)
  view.seq = view.seq + 1
  local seq = view.seq
  require("mcp_sidecar").discover(query, { limit = Config.search.limit }, function(err, result)
    if M.view ~= view or seq ~= view.seq then
      return -- a newer query is on its way, or the search closed
    end
    if err then
      view.candidates = {}
      render(view, " " .. require("mcp_sidecar.client").format_error(err):gsub("\n", " · "))
    else
      view.candidates = result.candidates or {}
      view.selected = 1
      local header
      if #(result.unavailable or {}) > 0 then
        local names = {}
        for _, u in ipairs(result.unavailable) do
          -- A configuration file whose servers are unknown has server "".
          table.insert(names, (u.server ~= "" and u.server or "configuration") .. " (" .. u.kind .. ")")
        end
        header = " no matches · unavailable: " .. table.concat(names, ", ")
      end
      render(view, header)
    end
    if view.on_results then
      view.on_results(view)
    end
  end)
end

function M.close()
  local view = M.view
  if not view then
    return
  end
  M.view = nil
  if not view.timer:is_closing() then
    view.timer:stop()
    view.timer:close()
  end
  Float.close(view.input_win)
  Float.close(view.list_win)
  vim.cmd.stopinsert()
end

---@return table? the selected candidate
function M.selected()
  local view = M.view
  return view and view.candidates[view.selected]
end

local function accept()
  local c = M.selected()
  M.close()
  if c then
    vim.schedule(function()
      Actions.choose(c)
    end)
  end
end

local function move(delta)
  local view = M.view
  if view and #view.candidates > 0 then
    view.selected = (view.selected - 1 + delta) % #view.candidates + 1
    render(view)
  end
end

--- The builtin live search.
---@param query? string
---@param opts? {on_results?: fun(view: mcp_sidecar.SearchView)}
function M.open_builtin(query, opts)
  M.close()
  local cols, lines = vim.o.columns, vim.o.lines
  local width = math.min(cols - 4, math.max(50, math.floor(cols * Config.float.width)))
  local height = math.min(lines - 8, math.max(5, math.floor(lines * Config.float.height)))
  local top = math.floor((lines - height - 3) / 2)
  local list_buf, list_win =
    Float.open({ title = "MCP search", width = width, height = height, row = top + 3, enter = false })
  local input_buf, input_win = Float.open({ title = "query", width = width, height = 1, row = top, modifiable = true })
  vim.wo[list_win].cursorline = false
  local view = {
    input_buf = input_buf,
    input_win = input_win,
    list_buf = list_buf,
    list_win = list_win,
    candidates = {},
    selected = 1,
    seq = 0,
    timer = assert(uv.new_timer()),
    on_results = opts and opts.on_results,
  }
  M.view = view
  vim.api.nvim_buf_set_lines(input_buf, 0, -1, false, { query or "" })
  local function schedule_query()
    view.timer:stop()
    view.timer:start(
      Config.search.debounce_ms,
      0,
      vim.schedule_wrap(function()
        if M.view == view and vim.api.nvim_buf_is_valid(input_buf) then
          M.query(view, vim.api.nvim_buf_get_lines(input_buf, 0, 1, false)[1] or "")
        end
      end)
    )
  end
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, { buffer = input_buf, callback = schedule_query })
  vim.api.nvim_create_autocmd("BufLeave", {
    buffer = input_buf,
    once = true,
    callback = function()
      vim.schedule(function()
        if M.view == view then
          M.close()
        end
      end)
    end,
  })
  local map = function(modes, lhs, fn)
    vim.keymap.set(modes, lhs, fn, { buffer = input_buf, nowait = true })
  end
  map({ "i", "n" }, "<CR>", accept)
  map({ "i", "n" }, "<Down>", function()
    move(1)
  end)
  map({ "i", "n" }, "<Up>", function()
    move(-1)
  end)
  map("i", "<C-n>", function()
    move(1)
  end)
  map("i", "<C-p>", function()
    move(-1)
  end)
  map({ "i", "n" }, "<C-c>", M.close)
  map("n", "<Esc>", M.close)
  map("n", "q", M.close)
  vim.cmd.startinsert({ bang = true })
  M.query(view, query or "")
  return view
end

--- vim.ui.select over one query's results.
---@param query? string
function M.open_select(query)
  local function run(q)
    require("mcp_sidecar").discover(q, { limit = Config.search.limit }, function(err, result)
      if err then
        return Actions.fail(err, "Search")
      end
      vim.ui.select(result.candidates or {}, { prompt = "MCP: " .. q, format_item = Actions.format }, function(c)
        if c then
          Actions.choose(c)
        end
      end)
    end)
  end
  if query and query ~= "" then
    return run(query)
  end
  vim.ui.input({ prompt = "MCP search: " }, function(q)
    if q then
      run(q)
    end
  end)
end

---@param query? string
---@param opts? table
function M.open(query, opts)
  if Config.search.picker == "select" then
    return M.open_select(query)
  end
  return M.open_builtin(query, opts)
end

return M
