--- The person's consent to what a server asks: a URL to open (`mcp/elicit` in URL mode: a float
--- beside `vim.ui.select`) and a sampling request to send to the model of `opts.sampling`
--- (`mcp/sample`: the whole request, then the model's answer, each read in a focused review
--- float before Approve / Decline). Server text is shown as plain text: nothing interpreted, no
--- highlighting from it.
local Config = require("mcp_sidecar.config")
local Float = require("mcp_sidecar.ui.float")
local Review = require("mcp_sidecar.ui.review")
local Sampling = require("mcp_sidecar.ui.sampling")
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

--- Copy to the clipboard register (when there is a clipboard) and the unnamed register.
---@param text string
---@return boolean clipboard whether `+` took it
function M.copy(text)
  vim.fn.setreg('"', text)
  return vim.fn.has("clipboard") == 1 and pcall(vim.fn.setreg, "+", text) and vim.fn.getreg("+") == text
end

M.url_choices = { open = "Open %s", copy = "Copy URL (I'll open it myself)", decline = "Decline" }

--- Why a URL may not be opened: `hidden` (a hidden or control character, a space or a backslash:
--- neither opened nor copied), `web` (not http or https: copied only), `host` (no usable host to
--- name: copied only), or nil. The sidecar rebuilt `url` from the parts it parsed and sent `host`
--- as a browser resolves it (docs/protocol.md, `mcp/elicit`), and declines what parsers disagree
--- on; nothing here reads a host out of the URL, which could disagree with it. These checks are a
--- second line of defence.
---@param url string
---@param host string
---@return "hidden"|"web"|"host"|nil
function M.url_problem(url, host)
  if url == "" or Text.one_line(url) ~= url or url:find("[%s\\]") then
    return "hidden"
  elseif not url:match("^[Hh][Tt][Tt][Pp][Ss]?://") then
    return "web"
  elseif host == "" or Text.one_line(host) ~= host or host:find("[%s\\/@]") then
    return "host"
  end
end

M.url_problems = {
  hidden = " ✘ The URL holds a hidden or control character, a space or a backslash: it is neither opened nor copied.",
  web = " Not a web address: it can be copied, not opened.",
  host = " The sidecar named no usable host for it: it can be copied, not opened.",
}

--- URL mode: show the host and the whole URL exactly as the sidecar sent them, then the message;
--- open exactly `params.url` (or copy it) only after consent.
---@param q mcp_sidecar.Question
---@param answer fun(result: table)
---@return fun() withdraw
function M.url(q, answer)
  local p = q.params
  local url = type(p.url) == "string" and p.url or ""
  local host = type(p.host) == "string" and p.host or ""
  local problem = M.url_problem(url, host)
  local named = Text.one_line(host)
  local lines = { " Host: " .. (named ~= "" and named or "(none given)"), " URL:  " .. Text.one_line(url) }
  if problem then
    table.insert(lines, M.url_problems[problem])
  end
  table.insert(lines, "")
  vim.list_extend(lines, Text.folded_lines(type(p.message) == "string" and p.message or "", " "))
  local win = M.show(("%s asks you to open a URL"):format(q.server), lines)
  local items = {}
  if not problem then
    table.insert(items, { key = "open", label = M.url_choices.open:format(host) })
  end
  if problem ~= "hidden" then
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
    prompt = ("%s asks you to open %s:"):format(q.server, problem and "a URL" or host),
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

--- Sampling: approve the request, run `opts.sampling(request, done)`, approve its answer. Each
--- is read whole in a review float (ui/review.lua) before Approve / Decline is asked.
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
    done(nil, Questions.declined_error())
  end
  local function review(title, lines, prompt, approved)
    table.insert(lines, "")
    table.insert(lines, " — end —")
    local _, closer = Review.open(
      { title = title, lines = lines, prompt = prompt, kind = "mcp_sidecar.sampling" },
      function(ok)
        if ok then
          approved()
        else
          declined()
        end
      end
    )
    close = closer
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
        review(
          ("Answer for %s"):format(q.server),
          Sampling.answer_lines(normalized),
          ("Send this answer to %s?"):format(q.server),
          function()
            done(normalized)
          end
        )
      end)
    end)
    if not ok then
      notify(("opts.sampling failed: %s"):format(Text.one_line(err)), vim.log.levels.ERROR)
      done(nil, Questions.error(Questions.unanswered))
    end
  end
  review(
    ("%s asks your model"):format(q.server),
    Sampling.request_lines(q.params),
    ("Send %s's request to your model?"):format(q.server),
    run_model
  )
  return declined
end

return M
