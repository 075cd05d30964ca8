--- A centered floating window over a scratch buffer, closed with `q` / `<Esc>`.
local Config = require("mcp_sidecar.config")

local M = {}

---@class mcp_sidecar.FloatOpts
---@field title? string
---@field lines? string[]
---@field width? integer
---@field height? integer
---@field row? integer
---@field filetype? string
---@field enter? boolean
---@field modifiable? boolean

---@param opts mcp_sidecar.FloatOpts
---@return integer buf, integer win
function M.open(opts)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  local cols, lines = vim.o.columns, vim.o.lines
  local width = opts.width or math.max(40, math.floor(cols * Config.float.width))
  width = math.min(width, cols - 4)
  local height = opts.height or math.max(5, math.floor(lines * Config.float.height))
  height = math.min(height, lines - 4)
  local win = vim.api.nvim_open_win(buf, opts.enter ~= false, {
    relative = "editor",
    width = width,
    height = height,
    row = opts.row or math.floor((lines - height) / 2) - 1,
    col = math.floor((cols - width) / 2),
    style = "minimal",
    border = Config.float.border,
    title = opts.title and (" " .. opts.title .. " ") or nil,
    title_pos = opts.title and "center" or nil,
  })
  vim.wo[win].wrap = false
  vim.wo[win].cursorline = true
  if opts.lines then
    M.set_lines(buf, opts.lines)
  end
  if opts.filetype then
    vim.bo[buf].filetype = opts.filetype
  end
  vim.bo[buf].modifiable = opts.modifiable == true
  for _, key in ipairs({ "q", "<Esc>" }) do
    vim.keymap.set("n", key, function()
      M.close(win)
    end, { buffer = buf, nowait = true, desc = "Close" })
  end
  return buf, win
end

---@param buf integer
---@param lines string[]
function M.set_lines(buf, lines)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local modifiable = vim.bo[buf].modifiable
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = modifiable
end

---@param win integer
function M.close(win)
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
end

return M
