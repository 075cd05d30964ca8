--- What a sampling request (`mcp/sample`) and the model's answer show for approval: everything
--- `opts.sampling` gets, as plain text lines. The parts MCP defines are laid out for reading (the
--- system prompt, every message in full with the text of embedded resources and tool results,
--- the tools with their descriptions and input schemas, `toolChoice`, `maxTokens`, `temperature`,
--- `stopSequences`, `modelPreferences`); any other key of the params, a message, a tool or a
--- content block is shown as JSON, so nothing reaches the model unseen. Only the bytes of images,
--- audio and blobs are summarised (`[image image/png, 6 bytes]`). Every string goes through
--- text.lua: the sidecar sanitises server text, and this does not rely on it.
local Scratch = require("mcp_sidecar.ui.scratch")
local Text = require("mcp_sidecar.text")

local M = {}

local INDENT = "   "

--- The size of base64 data once decoded.
---@param data any
---@return integer
function M.bytes(data)
  if type(data) ~= "string" then
    return 0
  end
  local digits = data:gsub("[^%w+/_-]", "")
  return math.floor(#digits * 3 / 4)
end

--- A value on one line: a string as the text, anything else as compact JSON.
---@param value any
---@return string
local function scalar(value)
  if type(value) == "string" then
    return Text.one_line(value)
  end
  local ok, encoded = pcall(vim.json.encode, value)
  return Text.one_line(ok and encoded or tostring(value))
end

--- Indented JSON (keys sorted) as lines.
---@param value any
---@param indent string
---@return string[]
local function json_lines(value, indent)
  local ok, text = pcall(Scratch.json, value)
  return Text.lines(ok and text or tostring(value), indent)
end

--- `label value` on one line for a scalar, else `label` and the value as JSON below it.
---@param out string[]
---@param label string
---@param value any
---@param indent string of the JSON lines
local function labelled(out, label, value, indent)
  if type(value) ~= "table" then
    table.insert(out, label .. " " .. scalar(value))
  elseif next(value) == nil then
    table.insert(out, label .. " " .. scalar(value))
  else
    table.insert(out, label)
    vim.list_extend(out, json_lines(value, indent))
  end
end

--- The keys of `tbl` not in `known`, each with its value (what a layout left out).
---@param out string[]
---@param tbl table
---@param known table<string, true>
---@param indent string
local function rest(out, tbl, known, indent)
  local keys = {}
  for key in pairs(tbl) do
    if not known[key] then
      table.insert(keys, key)
    end
  end
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  for _, key in ipairs(keys) do
    labelled(out, ("%s%s:"):format(indent, Text.one_line(key)), tbl[key], indent .. "  ")
  end
end

local function set(...)
  local out = {}
  for _, key in ipairs({ ... }) do
    out[key] = true
  end
  return out
end

--- The keys each content block's layout shows; the others are shown by `rest`.
local KNOWN = {
  text = set("type", "text"),
  image = set("type", "data", "mimeType"),
  audio = set("type", "data", "mimeType"),
  resource = set("type", "resource"),
  tool_use = set("type", "id", "name", "input"),
  tool_result = set("type", "toolUseId", "content", "isError"),
}
local RESOURCE = set("uri", "mimeType", "text", "blob")

local blocks

--- One content block's lines.
---@param out string[]
---@param block any
---@param indent string
local function block(out, block_, indent)
  if type(block_) ~= "table" then
    return vim.list_extend(out, Text.folded_lines(block_, indent))
  end
  local kind = block_.type
  if kind == "text" then
    vim.list_extend(out, Text.folded_lines(block_.text, indent))
  elseif kind == "image" or kind == "audio" then
    table.insert(out, ("%s[%s %s, %d bytes]"):format(indent, kind, scalar(block_.mimeType), M.bytes(block_.data)))
  elseif kind == "resource" then
    local r = type(block_.resource) == "table" and block_.resource or {}
    local head = ("%s[resource %s%s"):format(indent, scalar(r.uri), r.mimeType and (" " .. scalar(r.mimeType)) or "")
    table.insert(out, head .. (r.blob ~= nil and (", %d bytes]"):format(M.bytes(r.blob)) or "]"))
    if r.text ~= nil then
      vim.list_extend(out, Text.folded_lines(r.text, indent .. "  "))
    end
    rest(out, r, RESOURCE, indent .. "  ")
  elseif kind == "tool_use" then
    labelled(
      out,
      ("%s[tool_use %s, id %s] input:"):format(indent, scalar(block_.name), scalar(block_.id)),
      block_.input,
      indent .. "  "
    )
  elseif kind == "tool_result" then
    local failed = block_.isError == true and ", an error" or ""
    table.insert(out, ("%s[tool_result for %s%s]"):format(indent, scalar(block_.toolUseId), failed))
    blocks(out, block_.content, indent .. "  ")
  else
    -- a kind this layout does not know (a resource link, a future block): all of it
    return vim.list_extend(out, json_lines(block_, indent))
  end
  rest(out, block_, KNOWN[kind], indent .. "  ")
end

--- A content block or a list of them.
---@param out string[]
---@param content any
---@param indent string
blocks = function(out, content, indent)
  if type(content) == "table" and content.type == nil and vim.islist(content) then
    for _, b in ipairs(content) do
      block(out, b, indent)
    end
  else
    block(out, content, indent)
  end
end

--- The lines of one content block or list (the model's answer, a message).
---@param content any
---@param indent string
---@return string[]
function M.content_lines(content, indent)
  local out = {}
  blocks(out, content, indent)
  return out
end

local TOOL = set("name", "description", "inputSchema")

---@param out string[]
---@param tools table
local function tool_lines(out, tools)
  vim.list_extend(out, { "", (" Tools offered to the model (%d):"):format(#tools) })
  for _, tool in ipairs(tools) do
    tool = type(tool) == "table" and tool or { name = tool }
    table.insert(out, INDENT .. scalar(tool.name))
    if tool.description ~= nil then
      vim.list_extend(out, Text.folded_lines(tool.description, INDENT .. "  "))
    end
    if tool.inputSchema ~= nil then
      labelled(out, INDENT .. "  input schema:", tool.inputSchema, INDENT .. "    ")
    end
    rest(out, tool, TOOL, INDENT .. "  ")
  end
end

local MESSAGE = set("role", "content")
local PARAMS = set(
  "server",
  "requestId",
  "maxTokens",
  "temperature",
  "stopSequences",
  "toolChoice",
  "modelPreferences",
  "systemPrompt",
  "tools",
  "messages"
)

--- Everything a sampling request holds, as lines (the sidecar's `requestId` aside: it is ours).
---@param p table the `mcp/sample` params
---@return string[]
function M.request_lines(p)
  local out = {
    " Server: " .. scalar(p.server),
    " Max tokens: " .. (p.maxTokens ~= nil and scalar(p.maxTokens) or "(not given)"),
  }
  -- short values on their line (`Stop sequences: ["\n"]`: JSON shows what is invisible)
  for _, part in ipairs({ { "temperature", " Temperature:" }, { "stopSequences", " Stop sequences:" } }) do
    if p[part[1]] ~= nil then
      table.insert(out, part[2] .. " " .. scalar(p[part[1]]))
    end
  end
  if p.toolChoice ~= nil then
    table.insert(out, " Tool choice: " .. scalar(p.toolChoice))
  end
  if p.modelPreferences ~= nil then
    labelled(out, " Model preferences:", p.modelPreferences, INDENT)
  end
  if p.systemPrompt ~= nil then
    vim.list_extend(out, { "", " System prompt:" })
    vim.list_extend(out, Text.folded_lines(p.systemPrompt, INDENT))
  end
  if type(p.tools) == "table" and #p.tools > 0 then
    tool_lines(out, p.tools)
  elseif p.tools ~= nil then
    labelled(out, " Tools:", p.tools, INDENT)
  end
  local messages = type(p.messages) == "table" and p.messages or {}
  vim.list_extend(out, { "", (" Messages (%d):"):format(#messages) })
  for i, msg in ipairs(messages) do
    msg = type(msg) == "table" and msg or { content = msg }
    table.insert(out, (" %d. %s:"):format(i, scalar(msg.role)))
    blocks(out, msg.content, INDENT)
    rest(out, msg, MESSAGE, INDENT)
  end
  local others = {}
  rest(others, p, PARAMS, INDENT)
  if #others > 0 then
    vim.list_extend(out, { "", " Other fields:" })
    vim.list_extend(out, others)
  end
  return out
end

--- The model's answer (as normalised), as lines.
---@param result table `{role, content, model, stopReason?}`
---@return string[]
function M.answer_lines(result)
  local out = {
    " Model: " .. scalar(result.model),
    " Stop reason: " .. (result.stopReason ~= nil and scalar(result.stopReason) or "—"),
    "",
  }
  blocks(out, result.content, " ")
  return out
end

return M
