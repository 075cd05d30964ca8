-- What servers ask through the sidecar, without a sidecar: the handlers are called the way
-- vim.lsp.rpc calls a server request's handler (inside coroutine.wrap), the person is scripted
-- through vim.ui.input / vim.ui.select, and vim.ui.open is replaced to see what would be opened.
-- The same paths run against the real sidecar and server-everything in server_requests_spec.lua.
local Config = require("mcp_sidecar.config")
local Logs = require("mcp_sidecar.logs")
local Offer = require("mcp_sidecar.offer")
local Progress = require("mcp_sidecar.progress")
local Questions = require("mcp_sidecar.questions")
local Retry = require("mcp_sidecar.retry")
local State = require("mcp_sidecar.state")

--- Call a handler as vim.lsp.rpc does: in a coroutine, answering when it returns.
local function serve(kind, params)
  local handler = Questions.handler(kind)
  local out = { done = false }
  coroutine.wrap(function()
    out.result, out.err = handler(nil, params, { method = "mcp/" .. kind, client_id = 0 })
    out.done = true
  end)()
  return out
end

local function answered(out, what)
  wait_for(function()
    return out.done
  end, 5000, what or "the answer")
  return out.result, out.err
end

local function floats()
  local out = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      table.insert(out, win)
    end
  end
  return out
end

local function float_text()
  local parts = {}
  for _, win in ipairs(floats()) do
    table.insert(parts, table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), "\n"))
  end
  return table.concat(parts, "\n")
end

local function close_floats()
  for _, win in ipairs(floats()) do
    pcall(vim.api.nvim_win_close, win, true)
  end
end

local function form_view()
  for _, win in ipairs(floats()) do
    if vim.bo[vim.api.nvim_win_get_buf(win)].filetype == "mcp_sidecar_form" then
      return win
    end
  end
end

local URL = {
  server = "billing",
  mode = "url",
  message = "Authorize payment access",
  url = "https://billing.example.com/connect?session=1f2e",
  host = "billing.example.com",
  elicitationId = "e-7c1",
}

describe("server questions", function()
  local saved_open
  before_each(function()
    Questions._reset()
    saved_open = vim.ui.open
  end)
  after_each(function()
    vim.ui.open = saved_open
    close_floats()
    Questions._reset()
  end)

  describe("mcp/elicit: form mode", function()
    it("answers from vim.lsp's coroutine only after Submit, with the values", function()
      local asked, restore = script_ui({ "octo/app", "private" })
      local ok, err = pcall(function()
        local out = serve("elicit", {
          server = "github",
          mode = "form",
          message = "Which repository?",
          requestedSchema = {
            type = "object",
            required = { "repo" },
            properties = {
              repo = { type = "string", title = "Repository", default = "octo/app" },
              visibility = { type = "string", enum = { "public", "private" } },
            },
          },
        })
        local win = wait_for(function()
          return #asked == 2 and form_view()
        end, 5000, "the form")
        check.eq("octo/app", asked[1].arg, "the default pre-filled")
        check.eq(false, out.done, "nothing answered before Submit")
        check.matches("Which repository%?", float_text())
        check.matches(" github asks ", vim.api.nvim_win_get_config(win).title[1][1])
        vim.api.nvim_set_current_win(win)
        vim.api.nvim_feedkeys("s", "x", false)
        local result = answered(out)
        check.eq({ action = "accept", content = { repo = "octo/app", visibility = "private" } }, result)
        check.eq(nil, Questions.active)
      end)
      restore()
      check.truthy(ok, err)
    end)

    it("answers decline and cancel as the person chose", function()
      for _, case in ipairs({ { "d", "decline" }, { "q", "cancel" } }) do
        local _, restore = script_ui({})
        local out = serve("elicit", {
          server = "s",
          mode = "form",
          message = "m",
          requestedSchema = { type = "object", properties = { a = { type = "string" } } },
        })
        local win = wait_for(form_view, 5000, "the form")
        vim.api.nvim_set_current_win(win)
        vim.api.nvim_feedkeys(case[1], "x", false)
        check.eq({ action = case[2] }, (answered(out)))
        restore()
      end
    end)

    it("outside a coroutine answers cancel at once", function()
      local handler = Questions.handler("elicit")
      check.eq({ action = "cancel" }, (handler(nil, { server = "s", mode = "form" }, {})))
    end)

    it("shows one question at a time, the next after the answer", function()
      local _, restore = script_ui({ "one", "two" })
      local schema = { type = "object", properties = { a = { type = "string" } } }
      local first = serve("elicit", { server = "a", mode = "form", message = "first", requestedSchema = schema })
      local second = serve("elicit", { server = "b", mode = "form", message = "second", requestedSchema = schema })
      local win = wait_for(form_view, 5000, "the first form")
      wait_for(function()
        return float_text():find("one")
      end, 5000, "the first answer shown")
      check.eq(1, #floats(), "only one question is shown")
      check.eq("a", Questions.active.server)
      vim.api.nvim_set_current_win(win)
      vim.api.nvim_feedkeys("s", "x", false)
      check.eq({ action = "accept", content = { a = "one" } }, (answered(first)))
      win = wait_for(function()
        return Questions.active and Questions.active.server == "b" and form_view()
      end, 5000, "the second form")
      wait_for(function()
        return float_text():find("two")
      end, 5000, "the second answer shown")
      vim.api.nvim_set_current_win(win)
      vim.api.nvim_feedkeys("s", "x", false)
      check.eq({ action = "accept", content = { a = "two" } }, (answered(second)))
      restore()
    end)
  end)

  describe("mcp/elicit: URL mode", function()
    it("shows the message, the whole URL and the host; opens it only after consent", function()
      local opened = {}
      vim.ui.open = function(url)
        table.insert(opened, url)
        return {}, nil
      end
      local seen
      local asked, restore = script_ui({
        function(_, _, items, opts)
          seen = vim.tbl_map(opts.format_item, items)
          check.eq({}, opened, "nothing opened before the choice")
          local text = float_text()
          check.matches("Authorize payment access", text)
          check.matches("URL:  https://billing%.example%.com/connect%?session=1f2e", text)
          check.matches("Host: billing%.example%.com", text)
          return "Open billing.example.com"
        end,
      })
      local out = serve("elicit", URL)
      local result = answered(out)
      restore()
      check.eq("billing asks you to open billing.example.com:", asked[1].prompt)
      check.eq({ "Open billing.example.com", "Copy URL (I'll open it myself)", "Decline" }, seen)
      check.eq({ action = "accept" }, result)
      check.eq({ URL.url }, opened)
      check.eq(0, #floats(), "the consent float closed")
    end)

    it("copies the URL instead (I'll open it myself), declines, cancels", function()
      local opened = {}
      vim.ui.open = function(url)
        table.insert(opened, url)
        return {}, nil
      end
      vim.fn.setreg('"', "")
      local _, restore = script_ui({ "Copy URL (I'll open it myself)", "Decline", nil })
      check.eq({ action = "accept" }, (answered(serve("elicit", URL))))
      check.eq(URL.url, vim.fn.getreg('"'))
      check.truthy(find_note("URL copied"))
      check.eq({ action = "decline" }, (answered(serve("elicit", URL))))
      check.eq({ action = "cancel" }, (answered(serve("elicit", URL))), "<Esc>")
      restore()
      check.eq({}, opened)
    end)

    it("never opens a URL with hidden characters, nor one that is not http(s)", function()
      local seen = {}
      local _, restore = script_ui({
        function(_, _, items, opts)
          table.insert(seen, vim.tbl_map(opts.format_item, items))
          return "Decline"
        end,
        function(_, _, items, opts)
          table.insert(seen, vim.tbl_map(opts.format_item, items))
          return "Decline"
        end,
      })
      local hidden = vim.tbl_extend("force", URL, { url = "https://billing.example.com\226\128\174/x" })
      check.eq({ action = "decline" }, (answered(serve("elicit", hidden))))
      local file = vim.tbl_extend("force", URL, { url = "file:///etc/passwd", host = "" })
      check.eq({ action = "decline" }, (answered(serve("elicit", file))))
      restore()
      check.eq({ { "Decline" }, { "Copy URL (I'll open it myself)", "Decline" } }, seen)
    end)

    it("shows server text as plain text: no escape sequence, no command, no filetype", function()
      local text, filetype
      local _, restore = script_ui({
        function()
          text = float_text()
          filetype = vim.bo[vim.api.nvim_win_get_buf(floats()[1])].filetype
          return "Decline"
        end,
      })
      local evil = vim.tbl_extend("force", URL, { message = ":qa!\n\27]52;c;aGk=\7\27[2J**bold**" })
      answered(serve("elicit", evil))
      restore()
      check.eq(nil, text:find("[\27\7]"), "no ESC or BEL in the buffer")
      check.matches(" :qa!\n  ]52;c;aGk=  %[2J%*%*bold%*%*", text)
      check.eq("", filetype, "no filetype: nothing is highlighted from server text")
    end)

    it("names the sidecar's host, never one read from the URL; opens and copies exactly the URL", function()
      -- as the sidecar sends it: `url` rebuilt from its parts, `host` as a browser resolves it.
      -- Read naively, this URL's host would be "xn--bcher-kva.example:8443" (up to the first /)
      -- or "x" (after the last @).
      local params = vim.tbl_extend("force", URL, {
        url = "https://xn--bcher-kva.example:8443/login?next=https://other.example/@x",
        host = "xn--bcher-kva.example",
      })
      local opened, seen, text = {}, nil, nil
      vim.ui.open = function(url)
        table.insert(opened, url)
        return {}, nil
      end
      local asked, restore = script_ui({
        function(_, _, items, opts)
          seen = vim.tbl_map(opts.format_item, items)
          text = float_text()
          return "Open xn--bcher-kva.example"
        end,
        "Copy URL (I'll open it myself)",
      })
      check.eq({ action = "accept" }, (answered(serve("elicit", params))))
      vim.fn.setreg('"', "")
      check.eq({ action = "accept" }, (answered(serve("elicit", params))))
      restore()
      check.eq("billing asks you to open xn--bcher-kva.example:", asked[1].prompt)
      check.eq("Open xn--bcher-kva.example", seen[1])
      check.matches("^ Host: xn%-%-bcher%-kva%.example\n", text, "the host first, as sent")
      check.matches("\n URL:  https://xn%-%-bcher%-kva%.example:8443/login%?next=https://other%.example/@x\n", text)
      check.eq({ params.url }, opened, "exactly params.url")
      check.eq(params.url, vim.fn.getreg('"'), "exactly params.url copied")
    end)

    it("a URL parsers read differently (a backslash, a space) is neither opened nor copied", function()
      -- the reviewer's case, as an older sidecar sent it: browsers open evil.example
      local seen = {}
      local _, restore = script_ui({
        function(_, prompt, items, opts)
          table.insert(seen, { prompt = prompt, items = vim.tbl_map(opts.format_item, items), text = float_text() })
          return "Decline"
        end,
        function(_, prompt, items, opts)
          table.insert(seen, { prompt = prompt, items = vim.tbl_map(opts.format_item, items), text = float_text() })
          return "Decline"
        end,
      })
      local backslash =
        vim.tbl_extend("force", URL, { url = "https://evil.example\\@github.com/login/oauth", host = "github.com" })
      local space = vim.tbl_extend("force", URL, { url = "https://billing.example.com /x" })
      check.eq({ action = "decline" }, (answered(serve("elicit", backslash))))
      check.eq({ action = "decline" }, (answered(serve("elicit", space))))
      restore()
      for _, s in ipairs(seen) do
        check.eq("billing asks you to open a URL:", s.prompt, "no host named for it")
        check.eq({ "Decline" }, s.items)
        check.matches("neither opened nor copied", s.text)
      end
    end)

    it("without a host from the sidecar the URL can be copied, not opened", function()
      local seen, prompt
      local _, restore = script_ui({
        function(_, p, items, opts)
          seen, prompt = vim.tbl_map(opts.format_item, items), p
          return "Decline"
        end,
      })
      local params = vim.tbl_extend("force", URL, { host = "" })
      check.eq({ action = "decline" }, (answered(serve("elicit", params))))
      restore()
      check.eq({ "Copy URL (I'll open it myself)", "Decline" }, seen)
      check.eq("billing asks you to open a URL:", prompt)
    end)

    it("a message longer than the float leaves the host and the URL in view", function()
      local text, height
      local _, restore = script_ui({
        function()
          local win = floats()[1]
          height = vim.api.nvim_win_get_height(win)
          text = float_text()
          return "Decline"
        end,
      })
      local long = vim.tbl_extend("force", URL, { message = "Sign in\n" .. string.rep("\n", 200) .. "then this" })
      answered(serve("elicit", long))
      restore()
      local lines = vim.split(text, "\n")
      check.eq(" Host: billing.example.com", lines[1])
      check.matches("^ URL:  https://billing", lines[2])
      check.truthy(#lines <= height, "the blank lines are folded: all of it fits")
      check.matches(" %[200 blank lines%]\n then this", text)
    end)
  end)

  describe("withdrawn questions ($/cancelRequest)", function()
    it("closes the only open question and answers it cancelled", function()
      local _, restore = script_ui({ "x" })
      local out = serve("elicit", {
        server = "s",
        mode = "form",
        message = "m",
        requestedSchema = { type = "object", properties = { a = { type = "string" } } },
      })
      wait_for(form_view, 5000, "the form")
      Questions.on_cancel()
      check.eq({ action = "cancel" }, (answered(out)))
      check.eq(nil, form_view(), "the form closed")
      restore()
    end)

    it("with several open, withdraws the one whose server is no longer connected", function()
      local _, restore = script_ui({ "x", "y" })
      local saved = State.servers
      State.servers = { a = { name = "a", state = "connected" }, b = { name = "b", state = "connecting" } }
      local schema = { type = "object", properties = { v = { type = "string" } } }
      local first = serve("elicit", { server = "a", mode = "form", message = "m", requestedSchema = schema })
      local second = serve("elicit", { server = "b", mode = "form", message = "m", requestedSchema = schema })
      wait_for(form_view, 5000, "the first form")
      Questions.on_cancel()
      check.eq({ action = "cancel" }, (answered(second)), "b's question, waiting in the queue")
      check.eq(false, first.done, "a's question stays open")
      check.eq("a", Questions.active.server)
      Questions.on_cancel()
      check.eq({ action = "cancel" }, (answered(first)))
      State.servers = saved
      restore()
    end)
  end)

  describe("withdrawn by request id", function()
    it("a cancel naming a requestId closes exactly that question, wherever it waits", function()
      local _, restore = script_ui({ "x", "y" })
      local schema = { type = "object", properties = { v = { type = "string" } } }
      local params = { server = "a", mode = "form", message = "m", requestedSchema = schema }
      local first = serve("elicit", vim.tbl_extend("force", params, { requestId = "sidecar-1" }))
      local second = serve("elicit", vim.tbl_extend("force", params, { requestId = "sidecar-2" }))
      wait_for(form_view, 5000, "the first form")
      Questions.on_cancel({ id = "sidecar-2" })
      check.eq({ action = "cancel" }, (answered(second)), "the waiting one, named by its id")
      check.eq(false, first.done, "the shown one stays open")
      Questions.on_cancel({ id = "sidecar-9" }) -- a question already answered: nothing else closes
      check.eq(false, first.done)
      Questions.server_closed("a")
      check.eq({ action = "cancel" }, (answered(first)))
      Questions.on_cancel({ id = "sidecar-1" }) -- its cancel, after the close
      check.eq(0, Questions.unclaimed, "the close's cancel was claimed by id")
      restore()
    end)
  end)

  describe("withdrawn with their server", function()
    it("a server leaving connected closes its questions; the cancel that follows closes nothing else", function()
      local _, restore = script_ui({ "x", "y" })
      local schema = { type = "object", properties = { v = { type = "string" } } }
      local a = serve("elicit", { server = "a", mode = "form", message = "m", requestedSchema = schema })
      local b = serve("elicit", { server = "b", mode = "form", message = "m", requestedSchema = schema })
      wait_for(form_view, 5000, "the first form")
      Questions.server_closed("a")
      check.eq({ action = "cancel" }, (answered(a)))
      check.truthy(find_note("a's question was withdrawn: the server closed"))
      Questions.on_cancel() -- the sidecar's cancel for a's question
      wait_for(function()
        return Questions.active and Questions.active.server == "b"
      end, 5000, "b's question shown")
      check.eq(false, b.done, "b's question stays open")
      Questions.on_cancel()
      check.eq({ action = "cancel" }, (answered(b)))
      restore()
    end)
  end)

  describe("mcp/serverLog", function()
    before_each(Logs._reset)

    it("keeps messages per server and notifies the first error of each server once", function()
      local before = #notes
      Logs.add({ server = "a", level = "warning", data = "careful", text = "careful" })
      Logs.add({ server = "a", level = "error", logger = "db", data = { code = 1 }, text = 'db: {"code": 1}' })
      Logs.add({ server = "a", level = "critical", data = "again", text = "again" })
      Logs.add({ server = "b", level = "emergency", data = "down\27[31m", text = "down" })
      vim.wait(50)
      local fresh = vim.list_slice(notes, before + 1)
      local warnings = vim.tbl_filter(function(n)
        return n.msg:find("logged")
      end, fresh)
      check.eq(2, #warnings, vim.inspect(fresh))
      check.matches('^a logged error: db: {"code": 1}\n:Mcp logs a shows its log$', warnings[1].msg)
      check.eq(vim.log.levels.WARN, warnings[1].level)
      check.matches("^b logged emergency: down", warnings[2].msg)
      check.eq(3, #Logs.servers.a.entries)
      local lines = table.concat(Logs.lines("a"), "\n")
      check.matches("%[warning%] careful", lines)
      check.matches('%[error%] db: db: {"code": 1}', lines)
      check.matches("%[critical%] again", lines)
      check.eq(nil, lines:find("down"), "only a's messages")
    end)

    it("keeps at most the last 200 per server", function()
      for i = 1, 205 do
        Logs.add({ server = "c", level = "warning", data = i, text = tostring(i) })
      end
      check.eq(200, #Logs.servers.c.entries)
      check.eq(5, Logs.servers.c.dropped)
      check.matches("%(5 older ones dropped%)", table.concat(Logs.lines("c"), "\n"))
    end)

    it(":Mcp logs shows every server's kept messages", function()
      Logs.add({ server = "a", level = "warning", data = "w", text = "first warning" })
      vim.cmd("Mcp logs")
      local buf = wait_for(function()
        local b = vim.fn.bufnr("mcp://logs")
        return b ~= -1 and b
      end, 5000, "the logs buffer")
      local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
      check.matches("a: log messages %(warning and above%)", text)
      check.matches("%[warning%] first warning", text)
      vim.cmd("bwipeout! " .. buf)
    end)
  end)

  describe("a tool call that needs a browser step (elicitation_required)", function()
    before_each(Retry._reset)

    local function result(elicitations)
      return {
        id = "everything.trigger-url-elicitation",
        server = "everything",
        isError = true,
        diagnostic = { code = "elicitation_required", message = "Finish the step in the browser, then call again." },
        elicitations = elicitations,
      }
    end

    it("offers Retry once the completion arrives, and calls again only on Retry", function()
      local runs = 0
      local function run()
        runs = runs + 1
      end
      local asked, restore = script_ui({ "Retry" })
      check.eq(
        true,
        Retry.after_call(
          "everything.t",
          result({ { elicitationId = "e1", action = "accept", completed = false } }),
          run
        )
      )
      check.eq(0, #asked, "nothing offered before the completion")
      check.truthy(find_note("You are offered a retry when the server says the step is done"))
      Retry.complete({ server = "everything", elicitationId = "e1" })
      restore()
      check.eq(1, #asked)
      check.eq("everything: the browser step is done. Call everything.t again?", asked[1].prompt)
      check.eq(1, runs)
      check.eq(nil, next(Retry.pending))
    end)

    it("a completion notice counts only for the server that asked: another's, same id, offers nothing", function()
      local runs = 0
      local asked, restore = script_ui({ "Retry" })
      Retry.after_call(
        "everything.t",
        result({ { elicitationId = "e1", action = "accept", completed = false } }),
        function()
          runs = runs + 1
        end
      )
      check.truthy(Retry.pending.everything.e1, "kept under its server")
      Retry.complete({ server = "evil", elicitationId = "e1" })
      check.eq(0, #asked, "another server's notice offers no retry")
      check.eq(0, runs)
      check.truthy(Retry.pending.everything.e1, "still waiting for everything's notice")
      check.eq(nil, Retry.pending.evil)
      Retry.complete({ elicitationId = "e1" })
      check.eq(0, #asked, "nor a notice without a server")
      Retry.complete({ server = "everything", elicitationId = "e1" })
      restore()
      check.eq(1, #asked)
      check.eq("everything: the browser step is done. Call everything.t again?", asked[1].prompt)
      check.eq(1, runs)
      check.eq(nil, next(Retry.pending))
    end)

    it("two servers waiting on the same id: each notice offers its own server's call", function()
      local runs = {}
      local asked, restore = script_ui({ "Retry", "Retry" })
      for _, server in ipairs({ "a", "b" }) do
        local r = result({ { elicitationId = "same", action = "accept", completed = false } })
        r.server = server
        Retry.after_call(server .. ".t", r, function()
          table.insert(runs, server)
        end)
      end
      Retry.complete({ server = "b", elicitationId = "same" })
      check.eq({ "b" }, runs)
      check.eq("b: the browser step is done. Call b.t again?", asked[1].prompt)
      check.truthy(Retry.pending.a.same, "a's call still waits")
      Retry.complete({ server = "a", elicitationId = "same" })
      restore()
      check.eq({ "b", "a" }, runs)
      check.eq(nil, next(Retry.pending))
    end)

    it("offers Retry at once when the completion came already; Cancel calls nothing", function()
      local runs = 0
      local asked, restore = script_ui({ "Cancel" })
      Retry.after_call(
        "everything.t",
        result({ { elicitationId = "e2", action = "accept", completed = true } }),
        function()
          runs = runs + 1
        end
      )
      restore()
      check.eq("The browser step is done. Call everything.t again?", asked[1].prompt)
      check.eq(0, runs)
      check.eq(nil, Retry.last)
    end)

    it("after a decline only says so; :Mcp retry runs the waiting call when no completion comes", function()
      local runs = 0
      local asked, restore = script_ui({})
      Retry.after_call(
        "everything.t",
        result({ { elicitationId = "e3", action = "decline", completed = false } }),
        function()
          runs = runs + 1
        end
      )
      check.eq(0, #asked)
      check.truthy(find_note("Nothing was opened"))
      Retry.after_call(
        "everything.t",
        result({ { elicitationId = "e4", action = "accept", completed = false } }),
        function()
          runs = runs + 1
        end
      )
      check.eq(0, runs, "never called again by itself")
      vim.cmd("Mcp retry")
      check.eq(1, runs)
      vim.cmd("Mcp retry")
      check.eq(1, runs, "once")
      check.truthy(find_note("No tool call waits for a browser step"))
      restore()
      check.eq(false, Retry.after_call("x.y", { isError = false }, function() end), "other results are left alone")
    end)
  end)

  describe("progress of a tool call", function()
    it("follows $/progress begin, report and end, for :Mcp and the statusline", function()
      local saved, saved_active = State.sidecar, State.active
      State.sidecar = "running"
      State.active = nil -- the running glyph ends the statusline when no tool is active
      local token = Progress.token()
      check.matches("^mcp_sidecar/%d+/%d+$", token)
      check.truthy(token ~= Progress.token(), "a fresh token per call")
      Progress.track({ token = token, value = { kind = "begin", title = "everything.trigger-long-running-operation" } })
      Progress.track({ token = token, value = { kind = "report", percentage = 40, message = "step 2\nof 5" } })
      local running = Progress.list()
      check.eq(1, #running)
      check.eq("everything.trigger-long-running-operation 40% · step 2 of 5", Progress.describe(running[1]))
      check.matches(" ⟳1$", require("mcp_sidecar").status())
      Progress.track({ token = token, value = { kind = "end" } })
      check.eq(0, #Progress.list())
      check.eq(nil, require("mcp_sidecar").status():find("⟳"))
      State.sidecar, State.active = saved, saved_active
    end)
  end)

  describe("what the plugin offers servers", function()
    after_each(function()
      Config.options.sampling = nil
      Config.options.elicitation = { form = true, url = true }
    end)

    it("elicitation form and URL by default, sampling only with opts.sampling", function()
      local encoded = vim.json.encode(Offer.mcp_capabilities())
      check.eq({ elicitation = { form = vim.empty_dict(), url = vim.empty_dict() } }, vim.json.decode(encoded))
      check.matches('"form":{}', encoded, "a JSON object, not an array")
      check.matches('"url":{}', encoded)
      Config.options.sampling = function() end
      local caps = Offer.mcp_capabilities()
      local keys = vim.tbl_keys(caps)
      table.sort(keys)
      check.eq({ "elicitation", "sampling" }, keys)
      check.eq("{}", vim.json.encode(caps.sampling))
      Config.options.elicitation = { form = true, url = false }
      check.eq('{"form":{}}', vim.json.encode(Offer.mcp_capabilities().elicitation))
      Config.options.elicitation = false
      Config.options.sampling = nil
      check.eq("{}", vim.json.encode(Offer.mcp_capabilities()))
      check.eq(true, Offer.capabilities().window.workDoneProgress)
    end)

    it("a question of a mode not offered is declined without showing anything", function()
      Config.options.elicitation = { form = true, url = false }
      local asked, restore = script_ui({ "Open billing.example.com" })
      local result = answered(serve("elicit", URL))
      restore()
      check.eq({ action = "decline" }, result)
      check.eq(0, #asked)
      check.eq(0, #floats())
    end)

    it("workspace folders: the root, then opts.workspace_folders", function()
      local a, b = vim.fn.tempname(), vim.fn.tempname()
      Config.options.workspace_folders = function(root)
        return { root, a, b .. "/" }
      end
      local folders = Offer.workspace_folders("/some/root")
      Config.options.workspace_folders = nil
      check.eq(
        { "/some/root", a, b },
        vim.tbl_map(function(f)
          return f.name
        end, folders)
      )
      check.eq(vim.uri_from_fname(a), folders[2].uri)
    end)
  end)
end)
