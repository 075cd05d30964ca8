--- The person's consent to what a server asks: a URL to open (`mcp/elicit` in URL mode) and a
--- sampling request to send to the model of `opts.sampling` (`mcp/sample`). Each shows the
--- server's text in a float as plain text (no filetype, nothing interpreted) and asks with
--- `vim.ui.select`.
local Config = require("mcp_sidecar.config")
local Float = require("mcp_sidecar.ui.float")
local Text = require("mcp_sidecar.text")

local M = {}

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "mcp" })
end

--- A float near the top (clear of the command line and `vim.ui.select`), not focused.
---@param title string
---@param lines string[]
---@return integer win
function M.show(title, lines)
  local widest = 0
  for _, l in ipairs(lines) do
    widest = math.max(widest, vim.fn.strdisplaywidth(l))
  end
  local width = math.min(math.max(widest + 1, 50), vim.o.columns - 4)
  local height = 0
  for _, l in ipairs(lines) do
    height = height + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  local _, win = Float.open({
    title = Text.one_line(title),
    lines = lines,
    width = width,
    height = math.max(1, math.min(height, vim.o.lines - 10)),
    row = 1,
    enter = false,
  })
  vim.wo[win].wrap = true
  vim.wo[win].cursorline = false
  vim.cmd("redraw") -- painted before a blocking prompt (Neovim's own inputlist) covers the screen
  return win
end

--- The host of a URL as the sidecar gave it, else read from the URL.
---@param params table
---@return string
local function host_of(params)
  if type(params.host) == "string" and params.host ~= "" then
    return Text.one_line(params.host)
  end
  local url = type(params.url) == "string" and params.url or ""
  return Text.one_line(url:match("^%a[%w+.-]*://([^/?#]+)") or "?")
end

--- Copy to the clipboard register (when there is a clipboard) and the unnamed register.
---@param text string
---@return boolean clipboard whether `+` took it
function M.copy(text)
  vim.fn.setreg('"', text)
  return vim.fn.has("clipboard") == 1 and pcall(vim.fn.setreg, "+", text) and vim.fn.getreg("+") == text
end

M.url_choices = { open = "Open %s", copy = "Copy URL (I'll open it myself)", decline = "Decline" }

--- URL mode: show the message, the whole URL and its host; open it only after consent.
---@param q mcp_sidecar.Question
---@param answer fun(result: table)
---@return fun() withdraw
function M.url(q, answer)
  local p = q.params
  local url = type(p.url) == "string" and p.url or ""
  local host = host_of(p)
  local lines = Text.lines(type(p.message) == "string" and p.message or "", " ")
  vim.list_extend(lines, { "", " URL:  " .. Text.one_line(url), " Host: " .. host })
  local hidden = Text.one_line(url) ~= url or url == ""
  local web = url:match("^[Hh][Tt][Tt][Pp][Ss]?://") ~= nil
  if hidden then
    table.insert(lines, " ✘ The URL holds hidden or control characters: it is neither opened nor copied.")
  elseif not web then
    table.insert(lines, " Not a web address: it can be copied, not opened.")
  end
  local win = M.show(("%s asks you to open a URL"):format(q.server), lines)
  local items = {}
  if not hidden and web then
    table.insert(items, { key = "open", label = M.url_choices.open:format(host) })
  end
  if not hidden then
    table.insert(items, { key = "copy", label = M.url_choices.copy })
  end
  table.insert(items, { key = "decline", label = M.url_choices.decline })
  local settled = false
  local function done(result)
    if not settled then
      settled = true
      Float.close(win)
      answer(result)
    end
  end
  vim.ui.select(items, {
    prompt = ("%s asks you to open %s:"):format(q.server, host),
    kind = "mcp_sidecar.url",
    format_item = function(item)
      return item.label
    end,
  }, function(choice)
    if not choice then
      return done({ action = "cancel" })
    elseif choice.key == "decline" then
      return done({ action = "decline" })
    elseif choice.key == "open" then
      local ok, _, err = pcall(vim.ui.open, url)
      if ok and not err then
        return done({ action = "accept" })
      end
      M.copy(url)
      notify(("Could not open %s; the URL was copied instead"):format(host), vim.log.levels.WARN)
      return done({ action = "accept" })
    end
    local clipboard = M.copy(url)
    notify(("URL copied%s: open it yourself, then finish there"):format(clipboard and ' (+ and ")' or ' (")'))
    done({ action = "accept" })
  end)
  return function()
    done({ action = "cancel" })
  end
end

--- The text of a content block (or a list of them), for reading.
---@param content any
---@return string
function M.content_text(content)
  if type(content) ~= "table" then
    return tostring(content or "")
  end
  if content.type == nil and content[1] then
    local parts = {}
    for _, block in ipairs(content) do
      table.insert(parts, M.content_text(block))
    end
    return table.concat(parts, "\n")
  end
  if content.type == "text" then
    return tostring(content.text or "")
  elseif content.type == "tool_use" then
    return ("[tool_use %s %s]"):format(tostring(content.name), vim.json.encode(content.input or vim.empty_dict()))
  elseif content.type == "tool_result" then
    return "[tool_result] " .. M.content_text(content.content)
  end
  return ("[%s %s]"):format(tostring(content.type), tostring(content.mimeType or ""))
end

--- The lines showing a sampling request: server, model preferences, system prompt, messages.
---@param p table
---@return string[]
function M.request_lines(p)
  local lines = { (" Server: %s · at most %s tokens"):format(Text.one_line(p.server), Text.one_line(p.maxTokens)) }
  local prefs = type(p.modelPreferences) == "table" and p.modelPreferences or {}
  local hints = {}
  for _, h in ipairs(type(prefs.hints) == "table" and prefs.hints or {}) do
    if type(h) == "table" and h.name then
      table.insert(hints, Text.one_line(h.name))
    end
  end
  if #hints > 0 then
    table.insert(lines, " Model hints: " .. table.concat(hints, ", "))
  end
  if type(p.tools) == "table" and #p.tools > 0 then
    local names = {}
    for _, t in ipairs(p.tools) do
      table.insert(names, Text.one_line(type(t) == "table" and t.name or "?"))
    end
    table.insert(lines, " Tools offered to the model: " .. table.concat(names, ", "))
  end
  if type(p.systemPrompt) == "string" and p.systemPrompt ~= "" then
    vim.list_extend(lines, { "", " System prompt:" })
    vim.list_extend(lines, Text.lines(p.systemPrompt, "   "))
  end
  for _, msg in ipairs(type(p.messages) == "table" and p.messages or {}) do
    table.insert(lines, "")
    table.insert(lines, (" %s:"):format(Text.one_line(type(msg) == "table" and msg.role or "?")))
    vim.list_extend(lines, Text.lines(M.content_text(type(msg) == "table" and msg.content or msg), "   "))
  end
  return lines
end

--- What `opts.sampling` gave, as MCP's CreateMessageResult, or nil and the problem.
---@param result any
---@return table? result
---@return string? problem
function M.normalize_result(result)
  if type(result) == "string" then
    result = { content = result }
  end
  if type(result) ~= "table" then
    return nil, "opts.sampling gave no result"
  end
  local content = result.content
  if type(content) == "string" then
    content = { type = "text", text = content }
  end
  if type(content) ~= "table" then
    return nil, "opts.sampling gave no content"
  end
  return {
    role = "assistant",
    content = content,
    model = type(result.model) == "string" and result.model or "unknown",
    stopReason = result.stopReason,
  }
end

M.approve = { "Approve", "Decline" }

--- Show lines in a float and ask Approve / Decline; `cb(approved)`.
---@param title string
---@param lines string[]
---@param prompt string
---@param cb fun(approved: boolean)
---@return fun() close
local function approval(title, lines, prompt, cb)
  local win = M.show(title, lines)
  local closed = false
  local function close()
    closed = true
    Float.close(win)
  end
  vim.ui.select(M.approve, { prompt = prompt, kind = "mcp_sidecar.sampling" }, function(choice)
    if closed then
      return
    end
    close()
    cb(choice == M.approve[1])
  end)
  return close
end

--- Sampling: approve the request, run `opts.sampling(request, done)`, approve its answer.
---@param q mcp_sidecar.Question
---@param answer fun(result: table?, err: table?)
---@return fun() withdraw
function M.sample(q, answer)
  local Questions = require("mcp_sidecar.questions")
  local settled, close = false, function() end
  local function done(result, err)
    if not settled then
      settled = true
      close()
      answer(result, err)
    end
  end
  local function declined()
    done(nil, Questions.error(Questions.declined))
  end
  local function review_answer(result)
    local lines = {
      (" Model: %s · stop reason: %s"):format(Text.one_line(result.model), Text.one_line(result.stopReason or "—")),
      "",
    }
    vim.list_extend(lines, Text.lines(M.content_text(result.content), " "))
    close = approval(
      ("Answer for %s"):format(q.server),
      lines,
      ("Send this answer to %s?"):format(q.server),
      function(ok)
        if ok then
          done(result)
        else
          declined()
        end
      end
    )
  end
  local function run_model()
    local called = false
    local ok, err = pcall(Config.sampling, vim.deepcopy(q.params), function(e, result)
      if called or settled then
        return
      end
      called = true
      vim.schedule(function()
        local normalized, problem = M.normalize_result(result)
        if e or not normalized then
          notify(("Sampling for %s failed: %s"):format(q.server, Text.one_line(e or problem)), vim.log.levels.ERROR)
          return done(nil, Questions.error(Questions.unanswered))
        end
        review_answer(normalized)
      end)
    end)
    if not ok then
      notify(("opts.sampling failed: %s"):format(Text.one_line(err)), vim.log.levels.ERROR)
      done(nil, Questions.error(Questions.unanswered))
    end
  end
  local title = ("%s asks your model"):format(q.server)
  close = approval(title, M.request_lines(q.params), ("Send %s's request to your model?"):format(q.server), function(ok)
    if ok then
      run_model()
    else
      declined()
    end
  end)
  return function()
    declined()
  end
end

return M
