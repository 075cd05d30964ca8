--- Prompt preview float: `<CR>` uses the snapshot (chat integrations, else a register),
--- `q` discards it.
local Client = require("mcp_sidecar.client")
local Float = require("mcp_sidecar.ui.float")

local M = {}

---@param messages table[]
---@return string
function M.text(messages)
  local parts = {}
  for _, msg in ipairs(messages or {}) do
    local content = msg.content
    local body
    if type(content) == "table" and content.type == "text" then
      body = content.text
    elseif type(content) == "table" and content[1] then
      body = require("mcp_sidecar.ui.actions").content_text(content)
    elseif type(content) == "string" then
      body = content
    else
      body = vim.json.encode(content)
    end
    table.insert(parts, ("## %s\n\n%s"):format(msg.role or "message", body))
  end
  return table.concat(parts, "\n\n")
end

---@param preview table the `mcp/prompt/preview` result
---@param opts? {done?: fun(buf: integer, win: integer)}
function M.open(preview, opts)
  local text = M.text(preview.messages)
  local buf, win = Float.open({
    title = "Prompt preview · <CR> use · q discard",
    lines = vim.split(text, "\n", { plain = true }),
    filetype = "markdown",
  })
  vim.wo[win].wrap = true
  local settled = false
  local function discard()
    if settled then
      return
    end
    settled = true
    require("mcp_sidecar").prompt_discard(preview.previewId)
  end
  vim.keymap.set("n", "q", function()
    discard()
    Float.close(win)
  end, { buffer = buf, nowait = true, desc = "Discard the prompt" })
  vim.keymap.set("n", "<CR>", function()
    settled = true
    Float.close(win)
    require("mcp_sidecar").prompt_use(preview.previewId, function(err, snapshot)
      if err then
        return vim.notify(Client.format_error(err), vim.log.levels.ERROR, { title = "mcp" })
      end
      local used = M.text((snapshot and snapshot.messages) or preview.messages)
      local where = require("mcp_sidecar")._deliver_prompt(snapshot or preview, used)
      vim.notify(
        where == "handler" and "Prompt handed to the chat"
          or ("Prompt copied to register " .. require("mcp_sidecar.config").prompt.register),
        vim.log.levels.INFO,
        { title = "mcp" }
      )
    end)
  end, { buffer = buf, nowait = true, desc = "Use the prompt" })
  vim.api.nvim_create_autocmd("BufWipeout", { buffer = buf, once = true, callback = discard })
  if opts and opts.done then
    opts.done(buf, win)
  end
  return buf, win
end

return M
