--- Read the whole of something, then decide on it (a sampling request, a model's answer): a
--- focused, read-only float, lines wrapped to its width, whose footer says which lines are in view
--- (`lines 1–18 of 57`). `<CR>` turns the page until the last line has been in view, then asks
--- `vim.ui.select` Approve / Decline (`<Esc>` there comes back to the float); `d`, `q`, `<Esc>` or
--- closing the float declines. Every other key moves as in any buffer (`j`, `<C-f>`, `G`, the
--- mouse). The lines are plain text: no filetype highlighting, nothing interpreted.
local Float = require("mcp_sidecar.ui.float")
local Text = require("mcp_sidecar.text")

local M = {}

M.choices = { "Approve", "Decline" }
M.filetype = "mcp_sidecar_review"

---@class mcp_sidecar.ReviewOpts
---@field title string
---@field lines string[] plain text (already cleaned with text.lua)
---@field prompt string the question `vim.ui.select` asks at the end
---@field kind? string `vim.ui.select`'s kind

---@class mcp_sidecar.Review
---@field buf integer
---@field win integer
---@field lines string[] as shown (wrapped)
---@field height integer
---@field seen integer the last line that has been in view
---@field asking boolean the choice is open
---@field settled boolean

--- The footer: which lines are in view, and what `<CR>` does now.
---@param r mcp_sidecar.Review
---@return string
function M.footer(r)
  local n = #r.lines
  local where = ("all %d lines"):format(n)
  if n > r.height then
    where = ("lines %d–%d of %d"):format(vim.fn.line("w0", r.win), vim.fn.line("w$", r.win), n)
  end
  local enter = r.seen >= n and "<CR> approve or decline" or "<CR> next page"
  return (" %s · %s · q decline "):format(where, enter)
end

---@param r mcp_sidecar.Review
local function update(r)
  if r.settled or not vim.api.nvim_win_is_valid(r.win) then
    return
  end
  r.seen = math.max(r.seen, vim.fn.line("w$", r.win))
  pcall(vim.api.nvim_win_set_config, r.win, { footer = M.footer(r), footer_pos = "center" })
end

--- Show the page after the one in view (the last page ends at the last line).
---@param r mcp_sidecar.Review
local function next_page(r)
  local top = math.min(vim.fn.line("w$", r.win) + 1, math.max(1, #r.lines - r.height + 1))
  vim.api.nvim_win_call(r.win, function()
    vim.fn.winrestview({ topline = top, lnum = top, col = 0 })
  end)
  update(r)
end

---@param r mcp_sidecar.Review
---@param approved boolean
---@param cb fun(approved: boolean)
local function finish(r, approved, cb)
  if r.settled then
    return
  end
  r.settled = true
  Float.close(r.win)
  cb(approved)
end

---@param r mcp_sidecar.Review
---@param opts mcp_sidecar.ReviewOpts
---@param cb fun(approved: boolean)
local function decide(r, opts, cb)
  if r.settled or r.asking then
    return
  end
  update(r)
  if r.seen < #r.lines then
    return next_page(r)
  end
  r.asking = true
  vim.ui.select(M.choices, { prompt = opts.prompt, kind = opts.kind or "mcp_sidecar.review" }, function(choice)
    r.asking = false
    if r.settled then
      return
    end
    if choice == nil then
      -- <Esc>: back to the text, still undecided
      return pcall(vim.api.nvim_set_current_win, r.win)
    end
    finish(r, choice == M.choices[1], cb)
  end)
end

--- The lines as shown in a float `width` cells wide.
---@param lines string[]
---@param width integer
---@return string[]
function M.wrapped(lines, width)
  local out = {}
  for _, line in ipairs(lines) do
    vim.list_extend(out, Text.wrap(line, width))
  end
  return out
end

--- Open the float (focused) and wait for the decision; `cb(approved)` once.
---@param opts mcp_sidecar.ReviewOpts
---@param cb fun(approved: boolean)
---@return mcp_sidecar.Review review
---@return fun() close closes it without calling `cb`
function M.open(opts, cb)
  local widest = 0
  for _, line in ipairs(opts.lines) do
    widest = math.max(widest, vim.fn.strdisplaywidth(line))
  end
  local width = math.max(20, math.min(math.max(widest + 1, 60), vim.o.columns - 4))
  local lines = M.wrapped(opts.lines, width - 1)
  local height = math.max(1, math.min(#lines, vim.o.lines - 8))
  local buf, win = Float.open({
    title = Text.one_line(opts.title),
    lines = lines,
    width = width,
    height = height,
    row = 1,
    filetype = M.filetype,
  })
  vim.bo[buf].syntax = "OFF" -- the filetype names the float for keymaps; nothing highlights it
  vim.wo[win].cursorline = false
  vim.wo[win].scrolloff = 0
  ---@type mcp_sidecar.Review
  local r = { buf = buf, win = win, lines = lines, height = height, seen = 0, asking = false, settled = false }
  local function map(key, fn, desc)
    vim.keymap.set("n", key, fn, { buffer = buf, nowait = true, desc = desc })
  end
  map("<CR>", function()
    decide(r, opts, cb)
  end, "Next page; at the end, approve or decline")
  for _, key in ipairs({ "d", "q", "<Esc>" }) do
    map(key, function()
      finish(r, false, cb)
    end, "Decline")
  end
  vim.api.nvim_create_autocmd({ "CursorMoved", "WinScrolled", "VimResized" }, {
    buffer = buf,
    callback = function()
      update(r)
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      finish(r, false, cb)
    end,
  })
  update(r)
  vim.cmd("redraw")
  return r, function()
    r.settled = true
    Float.close(win)
  end
end

return M
