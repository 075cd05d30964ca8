--- Read-only scratch buffers for results (tool output, resources, schemas, long command output).
local M = {}

---@param text string
---@return boolean
function M.is_json(text)
  local trimmed = vim.trim(text or "")
  local first = trimmed:sub(1, 1)
  if first ~= "{" and first ~= "[" then
    return false
  end
  return (pcall(vim.json.decode, trimmed))
end

--- Indented JSON for display, keys sorted.
---@param value any
---@param indent? string
---@return string
function M.json(value, indent)
  indent = indent or ""
  if type(value) ~= "table" or value == vim.NIL then
    return vim.json.encode(value)
  end
  local inner = indent .. "  "
  local parts = {}
  if vim.islist(value) and (next(value) ~= nil or getmetatable(value) ~= getmetatable(vim.empty_dict())) then
    if #value == 0 then
      return "[]"
    end
    for _, item in ipairs(value) do
      table.insert(parts, inner .. M.json(item, inner))
    end
    return "[\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "]"
  end
  local keys = vim.tbl_keys(value)
  if #keys == 0 then
    return "{}"
  end
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  for _, key in ipairs(keys) do
    table.insert(parts, inner .. vim.json.encode(tostring(key)) .. ": " .. M.json(value[key], inner))
  end
  return "{\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "}"
end

---@param name string buffer name (unique per content, e.g. "mcp://demo/notes://todo")
---@param text string
---@param opts? {filetype?: string, split?: string}
---@return integer buf
function M.open(name, text, opts)
  opts = opts or {}
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 then
    pcall(vim.api.nvim_buf_delete, existing, { force = true })
  end
  local buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
  vim.bo[buf].filetype = opts.filetype or (M.is_json(text) and "json" or "markdown")
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
  vim.cmd((opts.split or "botright split") .. " | buffer " .. buf)
  vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, nowait = true })
  return buf
end

return M
