--- Server text as plain text. The sidecar sanitises what it passes on; this is the plugin's own
--- guard for what reaches a buffer, a prompt or a message: no control, bidirectional or invisible
--- character survives, nothing is interpreted (no `:` command, no highlight, no markup), and a
--- prompt stays on one line.
local M = {}

--- Remove invisible and bidirectional format characters and C1 controls.
---@param text string
---@return string
local function strip_invisible(text)
  text = text:gsub("\226\128[\139-\143\168-\174]", "") -- U+200B-200F, U+2028-202E
  text = text:gsub("\226\129[\160-\175]", "") -- U+2060-206F
  text = text:gsub("\239\187\191", "") -- U+FEFF
  text = text:gsub("\243\160[\128-\129][\128-\191]", "") -- tags U+E0000-E007F
  text = text:gsub("\194[\128-\159]", "") -- C1 controls
  return text
end

--- One line: every control character (newline and tab too) becomes a space, runs of spaces fold.
---@param value any
---@return string
function M.one_line(value)
  local text = strip_invisible(tostring(value == nil and "" or value))
  return vim.trim((text:gsub("%c", " "):gsub("%s%s+", " ")))
end

--- Buffer lines: split on newlines; a tab becomes two spaces, other control characters a space.
---@param value any
---@param indent? string put before every line
---@return string[]
function M.lines(value, indent)
  local text = strip_invisible(tostring(value == nil and "" or value)):gsub("\r\n", "\n")
  local out = {}
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    table.insert(out, (indent or "") .. (line:gsub("\t", "  "):gsub("%c", " ")))
  end
  return out
end

--- `M.lines`, with every run of more than two blank lines as one `[N blank lines]` line: text that
--- puts its end below a screenful of nothing shows it at once (the text itself is unchanged).
---@param value any
---@param indent? string
---@return string[]
function M.folded_lines(value, indent)
  local out, blank = {}, 0
  local function flush()
    if blank > 2 then
      table.insert(out, ("%s[%d blank lines]"):format(indent or "", blank))
    else
      for _ = 1, blank do
        table.insert(out, "")
      end
    end
    blank = 0
  end
  for _, line in ipairs(M.lines(value, indent)) do
    if vim.trim(line) == "" then
      blank = blank + 1
    else
      flush()
      table.insert(out, line)
    end
  end
  flush()
  return out
end

--- Pieces of a line of at most `width` display cells (for a window that does not wrap);
--- the pieces after the first keep the line's indent.
---@param line string
---@param width integer
---@return string[]
function M.wrap(line, width)
  if vim.fn.strdisplaywidth(line) <= width then
    return { line }
  end
  local indent = line:match("^ *")
  if #indent * 2 > width then
    indent = ""
  end
  local out, piece, used = {}, {}, 0
  for char in line:gmatch("[%z\1-\127\192-\255][\128-\191]*") do
    local w = vim.api.nvim_strwidth(char)
    if used + w > width and used > #indent then
      table.insert(out, table.concat(piece))
      piece, used = { indent }, #indent
    end
    table.insert(piece, char)
    used = used + w
  end
  table.insert(out, table.concat(piece))
  return out
end

--- At most `width` display cells, with "…" when cut.
---@param text string
---@param width integer
---@return string
function M.clip(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local chars = vim.fn.strchars(text)
  while chars > 0 and vim.fn.strdisplaywidth(text) > width - 1 do
    chars = chars - 1
    text = vim.fn.strcharpart(text, 0, chars)
  end
  return text .. "…"
end

return M
