-- End-to-end specs: the real mcp-sidecar ($MCP_TEST_SIDECAR) with MCP_SIDECAR_HOME holding the
-- fixture servers `basic` (tests/fixtures/servers/basic.py --resources --prompts --watchable) and `broken`
-- (crash_on_start.py); the cwd is a workspace whose .mcp.json defines `proj`. Tests run in order
-- and share one sidecar, as a user's session would.
local mcp = require("mcp_sidecar")
local Client = require("mcp_sidecar.client")
local Locate = require("mcp_sidecar.locate")
local Notifications = require("mcp_sidecar.notifications")
local Trust = require("mcp_sidecar.trust")
local State = require("mcp_sidecar.state")
local Search = require("mcp_sidecar.ui.search")
local Actions = require("mcp_sidecar.ui.actions")

local SIDECAR = assert(os.getenv("MCP_TEST_SIDECAR"), "MCP_TEST_SIDECAR is not set")
local ROOT = vim.fs.normalize(vim.fn.getcwd())

local function status_sync()
  local err, result = Client.request_sync("mcp/status", nil, 15000)
  check.eq(nil, err)
  return result
end

local function names(result)
  local out = {}
  for _, row in ipairs(result.servers) do
    table.insert(out, row.name)
  end
  table.sort(out)
  return out
end

local function lines(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

local function async(fn)
  local done, a, b = false, nil, nil
  fn(function(x, y)
    done, a, b = true, x, y
  end)
  wait_for(function()
    return done
  end, 20000, "callback")
  return a, b
end

local function close_extra_windows()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
  vim.cmd("silent! only")
end

describe("setup", function()
  it("merges options over the annotated defaults and defines :Mcp", function()
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
    local Config = require("mcp_sidecar.config")
    check.eq(10, Config.search.limit)
    check.eq(120, Config.search.debounce_ms)
    check.eq(2, vim.fn.exists(":Mcp"))
  end)

  it("explains a missing sidecar", function()
    mcp.setup({ cmd = "/nonexistent/mcp-sidecar" })
    local cmd, err = Locate.resolve_cmd(ROOT)
    check.eq(nil, cmd)
    check.matches("not executable", err)
    mcp.setup({ cmd = nil })
    local Config = require("mcp_sidecar.config")
    Config.options.cmd = nil
    local saved = vim.env.PATH
    vim.env.PATH = "/nonexistent"
    cmd, err = Locate.resolve_cmd("/nonexistent-root")
    vim.env.PATH = saved
    check.eq(nil, cmd)
    check.matches("mcp%-sidecar not found", err)
    check.matches("setup%(", err)
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
  end)

  it("looks in the workspace's .venv only when the workspace is trusted", function()
    local root = vim.fs.normalize(vim.fn.tempname())
    local venv_sidecar = root .. "/.venv/bin/mcp-sidecar"
    vim.fn.mkdir(root .. "/.venv/bin", "p")
    vim.fn.writefile({ "#!/bin/sh", "exit 0" }, venv_sidecar)
    vim.fn.setfperm(venv_sidecar, "rwxr-xr-x")
    mcp.setup({ cmd = nil })
    local saved = vim.env.PATH
    vim.env.PATH = "/nonexistent"
    local ok, err = pcall(function()
      local cmd, why = Locate.resolve_cmd(root, false)
      check.eq(nil, cmd, "an untrusted workspace's own binary is not run")
      check.matches("only once it is trusted", why)
      check.eq(nil, (Locate.resolve_cmd(root)), "not trusted in vim.secure: not run")
      check.eq({ venv_sidecar }, (Locate.resolve_cmd(root, true)))
      mcp.setup({ cmd = nil, trust = true })
      check.eq({ venv_sidecar }, (Locate.resolve_cmd(root)), "trust = true trusts every workspace")
    end)
    vim.env.PATH = saved
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
    vim.fn.delete(root, "rf")
    check.truthy(ok, err)
  end)

  it("never starts an untrusted workspace's .venv/bin/mcp-sidecar", function()
    -- A cloned repository that commits an executable .venv/bin/mcp-sidecar; no .mcp.json, so
    -- nothing asks about trust: the sidecar must come from PATH.
    local root = vim.fs.normalize(vim.fn.tempname())
    local marker = root .. "/ran"
    vim.fn.mkdir(root .. "/.venv/bin", "p")
    vim.fn.mkdir(root .. "/.git", "p")
    vim.fn.writefile(
      { "#!/bin/sh", "echo ran > '" .. marker .. "'", 'exec "' .. SIDECAR .. '" "$@"' },
      root .. "/.venv/bin/mcp-sidecar"
    )
    vim.fn.setfperm(root .. "/.venv/bin/mcp-sidecar", "rwxr-xr-x")
    mcp.setup({ cmd = nil })
    local saved = vim.env.PATH
    vim.env.PATH = vim.fs.dirname(SIDECAR) .. ":" .. saved
    local ok, err = pcall(function()
      local client = check.truthy(Client.ensure(root))
      check.eq({ SIDECAR }, client.config.cmd)
      check.eq(false, client.config.init_options.trustedWorkspace)
      local e, result = Client.request_sync("mcp/status", nil, 30000, { root = root })
      check.eq(nil, e)
      check.eq(false, result.trustedWorkspace)
      check.eq(0, vim.fn.filereadable(marker), "the workspace's binary never ran")
    end)
    vim.env.PATH = saved
    Client.stop(root)
    vim.wait(10000, function()
      return not (Client.roots[root] and Client.roots[root].id)
    end, 20)
    Client.last_root = ROOT
    State.set_sidecar("stopped")
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
    vim.fn.delete(root, "rf")
    check.truthy(ok, err)
  end)

  it("skips relative PATH entries, which resolve against the workspace", function()
    local repo = vim.fs.normalize(vim.fn.tempname())
    local real = vim.fs.normalize(vim.fn.tempname())
    for _, dir in ipairs({ repo, repo .. "/node_modules/.bin", real }) do
      vim.fn.mkdir(dir, "p")
      vim.fn.writefile({ "#!/bin/sh", "exit 0" }, dir .. "/mcp-sidecar")
      vim.fn.setfperm(dir .. "/mcp-sidecar", "rwxr-xr-x")
    end
    local saved, cwd = vim.env.PATH, vim.fn.getcwd()
    vim.fn.chdir(repo)
    local ok, err = pcall(function()
      for _, path in ipairs({ ".", "node_modules/.bin", "::", ".:node_modules/.bin:" }) do
        vim.env.PATH = path
        if path ~= "::" then
          check.truthy(
            vim.fn.exepath("mcp-sidecar") ~= "",
            "exepath() would take the workspace's binary with PATH=" .. path
          )
        end
        check.eq(nil, Locate.path_executable("mcp-sidecar"), path)
        mcp.setup({ cmd = nil })
        check.eq(nil, (Locate.resolve_cmd("/nonexistent-root", false)), path)
        mcp.setup({ cmd = "mcp-sidecar" })
        check.eq(nil, (Locate.resolve_cmd("/nonexistent-root", false)), "opts.cmd by name, PATH=" .. path)
      end
      vim.env.PATH = ".:node_modules/.bin:" .. real
      check.eq(real .. "/mcp-sidecar", Locate.path_executable("mcp-sidecar"))
      mcp.setup({ cmd = nil })
      check.eq({ real .. "/mcp-sidecar" }, (Locate.resolve_cmd("/nonexistent-root", false)))
      mcp.setup({ cmd = { "mcp-sidecar", "-v" } })
      check.eq({ real .. "/mcp-sidecar", "-v" }, (Locate.resolve_cmd("/nonexistent-root", false)))
    end)
    vim.env.PATH = saved
    vim.fn.chdir(cwd)
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
    vim.fn.delete(repo, "rf")
    vim.fn.delete(real, "rf")
    check.truthy(ok, err)
  end)
end)

describe("sidecar", function()
  it("starts on first use through vim.lsp, untrusted project not read", function()
    local result = status_sync()
    check.eq(false, result.trustedWorkspace)
    check.eq({ "basic", "broken" }, names(result))
    local clients = vim.lsp.get_clients({ name = "mcp_sidecar" })
    check.eq(1, #clients)
    check.eq(ROOT, clients[1].root_dir)
    check.eq(0, #vim.lsp.get_buffers_by_client_id(clients[1].id), "attached to no buffer")
  end)

  it(
    ":Mcp trust trusts .mcp.json with vim.secure and restarts the sidecar with trustGranted: nothing is pending",
    function()
      check.eq("unknown", Trust.trust_state(ROOT .. "/.mcp.json"))
      local asked = {}
      local real_select = vim.ui.select
      vim.ui.select = function(items, opts, on_choice)
        table.insert(asked, opts.prompt)
        on_choice(nil, nil)
      end
      local ok, err = pcall(function()
        vim.cmd("Mcp trust")
        wait_for(function()
          return find_note("Trusted")
        end, 15000, "trust")
        check.eq("allowed", Trust.trust_state(ROOT .. "/.mcp.json"))
        local result = status_sync()
        local client = check.truthy(vim.lsp.get_client_by_id(Client.roots[ROOT].id))
        check.eq(true, client.config.init_options.trustedWorkspace)
        check.eq(true, client.config.init_options.trustGranted, "the restart after :Mcp trust says trust was granted")
        check.eq(true, result.trustedWorkspace)
        check.eq({ "basic", "broken", "proj" }, names(result))
        check.eq({}, result.pendingApprovals, "the definitions present when trust was granted are approved")
        for _, row in ipairs(result.servers) do
          check.eq(false, row.approvalRequired == true, row.name)
        end
        vim.wait(300)
        check.eq({}, asked, "nothing is asked")
      end)
      vim.ui.select = real_select
      check.truthy(ok, err)
    end
  )

  it("drives the statusline component", function()
    status_sync()
    wait_for(function()
      return State.servers.basic
    end, 5000, "status rows")
    check.eq("MCP ●0", mcp.status())
  end)
end)

describe(":Mcp completion", function()
  it("completes subcommands, options, option values, server names and tool ids", function()
    local subs = vim.fn.getcompletion("Mcp ", "cmdline")
    for _, name in ipairs({
      "add",
      "list",
      "search",
      "activate",
      "call",
      "read",
      "tools",
      "reconnect",
      "review",
      "help",
      "logs",
      "folder",
      "retry",
    }) do
      check.contains(subs, name)
    end
    check.eq(
      { "reconnect", "refresh", "reload", "remove", "read", "restart", "retry", "review" },
      (function()
        local r = vim.fn.getcompletion("Mcp re", "cmdline")
        table.sort(r, function(a, b)
          local order =
            { reconnect = 1, refresh = 2, reload = 3, remove = 4, read = 5, restart = 6, retry = 7, review = 8 }
          return order[a] < order[b]
        end)
        return r
      end)()
    )
    check.contains(vim.fn.getcompletion("Mcp add --", "cmdline"), "--scope")
    check.eq({ "global", "project" }, vim.fn.getcompletion("Mcp add --scope ", "cmdline"))
    check.eq({ "basic", "broken", "proj" }, vim.fn.getcompletion("Mcp get ", "cmdline"))
    -- all from the sidecar's mcp/commandSpec: option values, positionals after them, help's topics
    check.eq({ "global", "project" }, vim.fn.getcompletion("Mcp remove --scope ", "cmdline"))
    check.eq({ "basic", "broken", "proj" }, vim.fn.getcompletion("Mcp remove --scope global ", "cmdline"))
    check.eq({ "--no-browser" }, vim.fn.getcompletion("Mcp login basic --", "cmdline"))
    check.eq({ "reconnect", "refresh", "reload", "remove" }, vim.fn.getcompletion("Mcp help re", "cmdline"))
    check.eq({}, vim.fn.getcompletion("Mcp add --scope global x -- ", "cmdline"))
    check.eq("config", require("mcp_sidecar.commands").command("disable").changes)
    vim.fn.getcompletion("Mcp activate ", "cmdline") -- starts filling tool ids
    local ids = wait_for(function()
      local r = vim.fn.getcompletion("Mcp activate basic.", "cmdline")
      return #r > 0 and r
    end, 20000, "tool ids")
    check.contains(ids, "basic.add")
    check.contains(ids, "basic.echo")
    -- `tools SERVER TOOL`: the TOOL positional completes that server's tool names
    local names = vim.fn.getcompletion("Mcp tools basic ", "cmdline")
    check.contains(names, "add")
    check.contains(names, "echo")
    check.eq({ "add" }, vim.fn.getcompletion("Mcp tools basic ad", "cmdline"))
    check.eq({}, vim.fn.getcompletion("Mcp tools broken ad", "cmdline"), "only the named server's tools")
  end)
end)

describe("status float", function()
  after_each(close_extra_windows)

  it(":Mcp opens the server matrix with files and trust", function()
    vim.cmd("Mcp")
    local view = require("mcp_sidecar.ui.status").view
    check.truthy(view, "status view")
    local text = wait_for(function()
      local t = lines(view.buf)
      return t:find("basic") and t
    end, 10000, "status float")
    check.matches("Server%s+State", text)
    check.matches("project config trusted", text)
    check.matches("global%s+.-mcp%.json · read", text)
    check.matches("q close", text)
    check.eq(
      "basic",
      view.rows[vim.iter(pairs(view.rows)):find(function(_, v)
        return v == "basic"
      end)]
    )
  end)
end)

describe("profiles", function()
  after_each(close_extra_windows)

  local function active_ids()
    local err, result = Client.request_sync("mcp/activeTools", {}, 15000)
    check.eq(nil, err)
    local ids = {}
    for _, tool in ipairs(result.tools) do
      table.insert(ids, tool.id)
    end
    return ids
  end

  it(":Mcp profile completes, chooses, shows in the statusline, float and health, and clears", function()
    check.eq({ "review" }, vim.fn.getcompletion("Mcp profile ", "cmdline"))
    check.eq({ "--clear" }, vim.fn.getcompletion("Mcp profile --", "cmdline"))
    local err, result = async(function(cb)
      require("mcp_sidecar.commands").execute("profile review", cb)
    end)
    check.eq(nil, err)
    check.eq("review", result.data.profile.name)
    check.eq("review", State.profile)
    check.matches("^MCP%[review%] ", mcp.status())
    check.eq("review", status_sync().profile)
    check.eq({ "basic.echo" }, active_ids())
    vim.cmd("Mcp")
    local view = require("mcp_sidecar.ui.status").view
    local text = wait_for(function()
      local t = lines(view.buf)
      return t:find("Profile: review") and t
    end, 10000, "the profile in the status float")
    check.matches("basic", text)
    close_extra_windows()
    vim.cmd("checkhealth mcp_sidecar")
    check.matches("Profile: review %(profiles: review%)", lines(0))
    vim.cmd("bwipeout!")
    err, result = async(function(cb)
      require("mcp_sidecar.commands").execute("profile --clear", cb)
    end)
    check.eq(nil, err)
    check.eq(nil, result.data.profile) -- JSON null
    check.eq(nil, State.profile)
    check.matches("^MCP ", mcp.status())
    -- What the later specs expect of the default session: nothing active.
    check.eq(nil, (Client.request_sync("mcp/session/end", { session = "default" }, 15000)))
    check.eq({}, active_ids())
  end)

  it("starts with opts.profile (initializationOptions.profile) and its tools active", function()
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 }, profile = "review" })
    local old = vim.lsp.get_clients({ name = "mcp_sidecar" })[1]
    vim.cmd("Mcp restart")
    local new = wait_for(function()
      local c = vim.lsp.get_clients({ name = "mcp_sidecar" })[1]
      return c and c.id ~= old.id and c.initialized and c
    end, 15000, "the restarted sidecar")
    check.eq("review", new.config.init_options.profile)
    check.eq("review", status_sync().profile)
    wait_for(function()
      return vim.tbl_contains(active_ids(), "basic.echo")
    end, 20000, "the profile's tool active")
    wait_for(function()
      return State.profile == "review"
    end, 5000, "the statusline's profile")
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
    old = new
    vim.cmd("Mcp restart")
    new = wait_for(function()
      local c = vim.lsp.get_clients({ name = "mcp_sidecar" })[1]
      return c and c.id ~= old.id and c.initialized and c
    end, 15000, "the sidecar restarted without a profile")
    check.eq(nil, new.config.init_options.profile)
    check.eq(nil, status_sync().profile) -- JSON null
    check.eq({}, active_ids())
  end)
end)

describe("search", function()
  after_each(function()
    Search.close()
    close_extra_windows()
  end)

  it("lists candidates live as the query changes, with prefix matching", function()
    local got = 0
    local view = Search.open_builtin("echo", {
      on_results = function()
        got = got + 1
      end,
    })
    wait_for(function()
      return got >= 1
    end, 20000, "first results")
    check.eq("basic.echo", view.candidates[1].id)
    check.matches("○ basic%.echo%(text%)", lines(view.list_buf))
    -- typing: replace the query and let the debounced TextChangedI search again
    vim.api.nvim_buf_set_lines(view.input_buf, 0, -1, false, { "summ" })
    vim.api.nvim_exec_autocmds("TextChangedI", { buffer = view.input_buf })
    wait_for(function()
      return got >= 2
    end, 20000, "second results")
    local kinds = {}
    for _, c in ipairs(view.candidates) do
      kinds[c.kind .. ":" .. (c.name or "")] = true
    end
    check.truthy(kinds["prompt:summarize_notes"], vim.inspect(kinds))
  end)

  it("marks a weak candidate, which neither keywords nor meaning vouch for", function()
    local weak =
      { kind = "tool", id = "shop.create_order", required = {}, description = "Create an order.", weak = true }
    check.eq("○ shop.create_order() [weak match] — Create an order.", Actions.format(weak))
    weak.weak = nil
    check.eq("○ shop.create_order() — Create an order.", Actions.format(weak))
  end)

  it("finds resources and templates", function()
    local err, result = async(function(cb)
      mcp.discover("notes", { kind = "resources" }, cb)
    end)
    check.eq(nil, err)
    local seen = {}
    for _, c in ipairs(result.candidates) do
      seen[c.kind] = true
    end
    check.truthy(seen.resource and seen.template, vim.inspect(seen))
  end)
end)

describe("tools", function()
  after_each(close_extra_windows)

  it("activates through the candidate action", function()
    local result = async(function(cb)
      Actions.actions.activate({ id = "basic.echo", server = "basic", kind = "tool" }, { done = cb })
    end)
    check.eq("loaded", result.results[1].status)
    check.truthy(find_note("basic%.echo · loaded"))
  end)

  it("calls a tool with JSON arguments into a scratch buffer", function()
    local buf = async(function(cb)
      Actions.actions.call(
        { id = "basic.add", server = "basic", kind = "tool" },
        { arguments = { a = 2, b = 3 }, done = cb }
      )
    end)
    check.eq("5", lines(buf))
    check.eq(false, vim.bo[buf].modifiable)
    check.eq("nofile", vim.bo[buf].buftype)
    wait_for(function()
      return State.servers.basic.state == "connected"
    end, 5000, "mcp/serverStatus")
    -- the completion test's discovery connected proj and failed broken already; basic.echo and
    -- basic.add are active in the default session, with the sidecar's estimate of their definitions
    local err, active = Client.request_sync("mcp/activeTools", { session = "default" }, 15000)
    check.eq(nil, err)
    check.eq(2, #active.tools)
    check.truthy(type(active.tokens) == "number" and active.tokens > 0, "counted")
    local expected = ("MCP ●2 ✘1 ⚙2 %s tok"):format(require("mcp_sidecar.context").thousands(active.tokens))
    wait_for(function()
      return mcp.status() == expected
    end, 5000, "the statusline " .. expected .. " (it reads " .. mcp.status() .. ")")
  end)

  it("calls through mcp/callTool with activate: an unknown tool fails with the activation's reason", function()
    local err = async(function(cb)
      mcp.call("basic.ad", { a = 1 }, cb)
    end)
    check.eq("tool_not_found", err.data.code)
    check.eq({ "basic.add" }, err.data.nearby)
    check.eq("Server 'basic' has no tool named 'ad'. Did you mean: basic.add?", err.message)
    local e, result = async(function(cb)
      mcp.call("basic.echo", { text = "x" }, cb, { session = "fresh" })
    end)
    check.eq(nil, e)
    check.eq({ id = "basic.echo", status = "loaded" }, result.activation)
  end)

  it(":Mcp call runs a tool from the command line", function()
    vim.cmd([[Mcp call basic.echo {"text": "hi there"}]])
    local buf = wait_for(function()
      local b = vim.fn.bufnr("mcp://call/basic.echo")
      return b ~= -1 and b
    end, 15000, "call buffer")
    check.eq("hi there", lines(buf))
  end)

  it(":checkhealth shows the tokenizer and what the servers, mcp_tools and the active tools cost", function()
    local _, active = Client.request_sync("mcp/activeTools", { session = "default" }, 15000)
    local _, status = Client.request_sync("mcp/status", nil, 15000)
    local Context = require("mcp_sidecar.context")
    check.eq("1,234,567", Context.thousands(1234567))
    check.eq("999", Context.thousands(999))
    vim.cmd("checkhealth mcp_sidecar")
    local text = lines(0)
    vim.cmd("bwipeout!")
    check.matches("Token estimates with llama%-2%-bpe", text)
    check.matches(
      ("Every server's tools, as a host connected to each directly lists them: %s tokens %%(%d of %d enabled servers counted%%)"):format(
        Context.thousands(status.tokens.allTools),
        status.tokens.counted,
        status.tokens.enabled
      ),
      text
    )
    check.truthy(status.tokens.counted >= 1, "basic was counted")
    check.matches(("mcp_tools itself: %s tokens"):format(Context.thousands(status.tokens.modelTool)), text)
    check.matches(
      ("Active tools %%(session default%%): %d, %s tokens"):format(#active.tools, Context.thousands(active.tokens)),
      text
    )
    -- Without the tokenizer (`tokens: null`) health says so, and the statusline has no figure.
    local none = Context.health_lines(vim.NIL, active)
    check.eq(1, #none)
    check.eq("warn", none[1][1])
    check.matches("tokenizer .* is not installed", none[1][2])
    local saved = State.active
    State.active = { session = "default", count = 2 }
    check.eq("⚙2", mcp.context())
    State.active = { session = "default", count = 0, tokens = 0 }
    check.eq("", mcp.context(), "nothing active: nothing shown")
    State.active = saved
  end)

  it("shows a tool's schema as JSON", function()
    local buf = async(function(cb)
      Actions.actions.schema({ id = "basic.add", server = "basic", kind = "tool" }, { done = cb })
    end)
    check.eq("json", vim.bo[buf].filetype)
    check.matches('"inputSchema"', lines(buf))
    check.truthy(vim.json.decode(lines(buf)).inputSchema)
  end)
end)

describe("read and prompts", function()
  after_each(close_extra_windows)

  it("reads a resource, or says mcp/read is not there yet", function()
    local opened
    Actions.actions.read({ kind = "resource", server = "basic", uri = "config://settings" }, {
      done = function(buf)
        opened = buf
      end,
    })
    local outcome = wait_for(function()
      return opened or find_note("not supported")
    end, 20000, "read")
    if type(outcome) == "number" then
      check.eq("json", vim.bo[outcome].filetype, "application/json content")
      check.eq("contents of config://settings", lines(outcome))
      check.eq(false, vim.bo[outcome].modifiable)
    else
      check.matches("Reading resources %(mcp/read%) is not supported by this mcp%-sidecar yet", outcome.msg)
      io.stdout:write("    (mcp/read not served: degrade message checked)\n")
    end
  end)

  it("previews a prompt (use, discard), or says previews are not there yet", function()
    local shown
    local c = { kind = "prompt", server = "basic", name = "summarize_notes", arguments = { { name = "folder" } } }
    Actions.actions.preview(c, {
      arguments = { folder = "inbox" },
      done = function(buf, win)
        shown = { buf = buf, win = win }
      end,
    })
    local outcome = wait_for(function()
      return shown or find_note("Prompt previews")
    end, 20000, "preview")
    if outcome.buf then
      check.matches("inbox", lines(outcome.buf))
      vim.api.nvim_set_current_win(outcome.win)
      vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
      wait_for(function()
        return find_note("Prompt copied to register")
      end, 15000, "use")
      check.matches("inbox", vim.fn.getreg('"'))
    else
      check.matches("Prompt previews %(mcp/prompt/preview%) is not supported by this mcp%-sidecar yet", outcome.msg)
      io.stdout:write("    (mcp/prompt/preview not served: degrade message checked)\n")
    end
  end)
end)

describe("notifications", function()
  it("shows a real watch update as ↻ server · uri, then the cleared watch", function()
    -- a successful command answer is echoed, not notified: capture the echo
    local echoed
    local echo = vim.api.nvim_echo
    vim.api.nvim_echo = function(chunks, ...)
      echoed = chunks[1] and chunks[1][1]
      return echo(chunks, ...)
    end
    local ok, answer = pcall(function()
      vim.cmd("Mcp subscribe basic notes://readme")
      return wait_for(function()
        return find_note("notes://readme") or (echoed and echoed:find("notes://readme", 1, true) and echoed)
      end, 15000, "subscribe answer")
    end)
    vim.api.nvim_echo = echo
    check.truthy(ok, answer)
    check.eq(nil, type(answer) == "table" and answer.msg or nil, "subscribe succeeded (no error note)")
    -- basic runs with --watchable: its touch tool makes the server announce an update of the
    -- uri, which the sidecar turns into mcp/resourceUpdated
    local err, result = async(function(cb)
      mcp.call("basic.touch", { uri = "notes://readme" }, cb)
    end)
    check.eq(nil, err)
    check.truthy(result)
    local note = wait_for(function()
      return find_note("↻ basic · notes://readme")
    end, 10000, "watch note")
    check.eq(vim.log.levels.INFO, note.level)
    check.truthy(State.watched["basic notes://readme"], "watch marked")
    -- a reconnect clears the watch: mcp/watchesCleared
    vim.cmd("Mcp reconnect basic")
    note = wait_for(function()
      return find_note("Watches on basic ended")
    end, 15000, "watches cleared note")
    check.matches("notes://readme", note.msg)
    check.eq(nil, State.watched["basic notes://readme"], "watch forgotten")
  end)

  it("reports a failing server with its diagnostic and hint", function()
    local _, result = async(function(cb)
      mcp.activate("broken.anything", cb)
    end)
    check.eq("not loaded", result.results[1].status)
    local note = wait_for(function()
      return find_note("✘ broken:")
    end, 15000, "failure note")
    check.eq(vim.log.levels.ERROR, note.level)
    check.matches("\n", note.msg, "hint on its own line")
    wait_for(function()
      return mcp.status():find("✘1")
    end, 5000, "statusline counts the failure")
  end)

  it("sends other lines to mcp/command and shows command errors with usage", function()
    vim.cmd("Mcp bogus")
    local note = wait_for(function()
      return find_note("bogus")
    end, 10000, "error")
    check.eq(vim.log.levels.ERROR, note.level)
    check.matches("tools", note.msg, "usage of every command")
    vim.cmd("Mcp tools basic")
    wait_for(function()
      local b = vim.fn.bufnr("mcp://tools")
      if b ~= -1 then
        return lines(b):find("basic%.add") and true
      end
      local msgs = vim.api.nvim_exec2("messages", { output = true }).output
      return msgs:find("basic%.add")
    end, 15000, "tools output")
    vim.cmd("Mcp tools basic add")
    local shown = wait_for(function()
      local b = vim.fn.bufnr("mcp://tools")
      local text = b ~= -1 and lines(b) or vim.api.nvim_exec2("messages", { output = true }).output
      return text:find("Parameters\n  a  integer · required", 1, true) and text
    end, 15000, "one tool's multiline signature")
    check.matches("basic%.add", shown)
    check.matches("b  integer · required", shown)
    vim.cmd("Mcp tools basic ad")
    local missing = wait_for(function()
      return find_note("Nearby: basic%.add")
    end, 15000, "unknown tool")
    check.eq(vim.log.levels.ERROR, missing.level)
    check.matches('^The server\'s tool "ad" is not in its catalog%.', missing.msg)
  end)
end)

local REPO = vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h:h:h"))
local PYTHON = vim.fs.joinpath(vim.fs.dirname(SIDECAR), "python")

local function free_port()
  local tcp = assert(vim.uv.new_tcp())
  tcp:bind("127.0.0.1", 0)
  local port = tcp:getsockname().port
  tcp:close()
  return port
end

local function listening(port)
  local done, ok = false, false
  local tcp = assert(vim.uv.new_tcp())
  tcp:connect("127.0.0.1", port, function(err)
    ok, done = err == nil, true
    tcp:close()
  end)
  wait_for(function()
    return done
  end, 2000, "connect")
  return ok
end

--- The in-repo OAuth fixture (tests/fixtures/servers/oauth_server.py) on a free port, listening.
local function oauth_fixture(...)
  local port = free_port()
  local proc =
    vim.system({ PYTHON, REPO .. "/tests/fixtures/servers/oauth_server.py", "http", "--port", tostring(port), ... })
  wait_for(function()
    return listening(port)
  end, 20000, "the OAuth fixture listens")
  return proc, port
end

describe("a server that needs a login", function()
  -- The in-repo OAuth fixture answers 401 until a login; test.sh gives the sidecar an empty
  -- keyring (no Secret Service here), so the refusal is authentication_required.
  local proc

  after_each(function()
    if proc then
      proc:kill(15)
      proc = nil
    end
  end)

  it("shows ⚿ in the statusline, is not counted as failed, and offers :Mcp login", function()
    local port
    proc, port = oauth_fixture()
    -- The session's active tools end the statusline; the login glyph comes before them.
    local function servers_part()
      return (mcp.status():gsub(" " .. vim.pesc(require("mcp_sidecar.config").icons.loaded) .. ".*$", ""))
    end
    local before = servers_part()
    local added = async(function(cb)
      require("mcp_sidecar.commands").execute(
        ("add --scope global secure http://127.0.0.1:%d/mcp"):format(port),
        function()
          cb(true)
        end
      )
    end)
    check.eq(true, added)
    local err = async(function(cb)
      Client.request("mcp/server/tools", { server = "secure" }, cb)
    end)
    check.eq("authentication_required", err.data.code)
    wait_for(function()
      return State.servers.secure and State.servers.secure.state == "needs_login"
    end, 10000, "needs_login row")
    check.eq(before .. " ⚿1", servers_part(), "its own glyph; the failed count is unchanged")
    local note = wait_for(function()
      return find_note("⚿ secure needs a login")
    end, 5000, "login note")
    check.eq("⚿ secure needs a login: :Mcp login secure", note.msg)
    check.eq(vim.log.levels.WARN, note.level)
    async(function(cb)
      require("mcp_sidecar.ui.status").open(cb)
    end)
    local float = lines(0)
    check.matches("⚿%s+secure%s+needs login", float)
    check.matches("secure: %[authentication_required%] .- /mcp login secure", float)
    check.matches("L log in", float)
    close_extra_windows()
    async(function(cb)
      require("mcp_sidecar.commands").execute("remove --scope global secure", function()
        cb(true)
      end)
    end)
    async(function(cb) -- the status float reads the rows again
      require("mcp_sidecar.ui.status").open(cb)
    end)
    close_extra_windows()
    check.eq(before, servers_part(), "the removed server leaves the statusline")
  end)
end)

describe("a login that needs more scopes", function()
  -- The OAuth fixture with --step-up: its tool admin_report needs the scope admin, which a login
  -- does not ask for until the person approves it. A workspace and sidecar of their own, whose
  -- tokens go to the private gnome-keyring test.sh starts ($MCP_TEST_DBUS). The browser is
  -- curl (vim.ui.open replaced), the person is scripted through vim.fn.confirm and vim.ui.input.
  local Commands = require("mcp_sidecar.commands")
  local WS = vim.fs.normalize(vim.fn.tempname())
  local HOME = vim.fs.normalize(vim.fn.tempname())
  local proc
  local real_open, real_confirm = vim.ui.open, vim.fn.confirm

  local function login(line)
    local err, result = async(function(cb)
      Commands.execute(line, cb)
    end)
    check.eq(nil, err)
    return result
  end

  local function admin_report()
    return async(function(cb)
      mcp.call("secure.admin_report", {}, cb)
    end)
  end

  --- vim.fn.confirm answering `choice` (nil: Cancel, for a login that must not ask), recording what it was asked.
  local function confirm_with(choice, asked)
    vim.fn.confirm = function(msg, choices, default, kind)
      table.insert(asked, { msg = msg, choices = choices, default = default, kind = kind })
      return choice or 3
    end
  end

  after_each(function()
    vim.ui.open, vim.fn.confirm = real_open, real_confirm
  end)

  it("fails a call refused for want of a scope, then asks before the next login asks for it", function()
    local bus =
      assert(os.getenv("MCP_TEST_DBUS"), "MCP_TEST_DBUS is not set (scripts/test.sh starts a private keyring)")
    local port
    proc, port = oauth_fixture("--step-up")
    vim.fn.mkdir(WS .. "/.git", "p")
    vim.fn.mkdir(HOME, "p")
    vim.fn.writefile({
      vim.json.encode({
        mcpServers = { secure = { url = ("http://127.0.0.1:%d/mcp"):format(port), oauthCallbackPort = free_port() } },
      }),
    }, HOME .. "/mcp.json")
    mcp.setup({
      cmd = SIDECAR,
      env = {
        MCP_SIDECAR_HOME = HOME,
        DBUS_SESSION_BUS_ADDRESS = bus,
        PYTHON_KEYRING_BACKEND = "keyring.backends.SecretService.Keyring",
      },
    })
    check.truthy(Client.ensure(WS))
    check.eq(WS, Client.root(), "the commands below go to this workspace's sidecar")
    local opened = {}
    vim.ui.open = function(url) -- the browser: the fixture's /authorize redirects to the sidecar's callback
      table.insert(opened, url)
      vim.system({ "curl", "-sL", "-o", "/dev/null", url })
      return {
        wait = function()
          return { code = 0 }
        end,
      }
    end
    local asked = {}
    confirm_with(nil, asked)

    local first = login("login secure")
    check.eq("completed", first.data.status)
    check.eq({ "mcp" }, first.data.scopes)
    check.eq(1, #opened)
    local err = admin_report()
    check.eq("permission_denied", err.data.code)
    check.matches("^The server asks for more OAuth scopes than it granted", err.data.message)

    -- Cancel: nothing is sent, nothing opened, and the request stays.
    confirm_with(3, asked)
    local cancelled = login("login secure")
    check.eq("needs_approval", cancelled.status)
    check.eq({ "admin" }, cancelled.extraScopes)
    check.eq({ "mcp", "admin" }, cancelled.scopes)
    check.eq(1, #asked)
    check.eq("&Approve and log in\nLog in &without them\n&Cancel", asked[1].choices)
    check.eq(3, asked[1].default, "Enter cancels")
    local lines = vim.split(asked[1].msg, "\n")
    check.eq("secure asks for more access: admin", lines[1])
    check.eq("secure asks for a scope it was not granted: admin.", lines[2])
    check.eq("Logging in with it gives secure more access than it has now.", lines[3])
    check.eq("The login would ask for: mcp, admin.", lines[4])
    check.matches(
      "^Without them: log in with the access it has and forget the request%. Cancel: nothing is sent; the request is kept for %d+ more minutes%.$",
      lines[5]
    )
    check.eq(1, #opened, "asking opened nothing")

    -- Without them: logged in with what it had; the request is dropped.
    confirm_with(2, asked)
    local without = login("login secure")
    check.eq(2, #asked)
    check.eq("completed", without.status)
    check.eq({ "mcp" }, without.scopes)
    check.truthy(find_note("secure: logged in"), "the completed login is told")
    confirm_with(nil, asked)
    check.eq("completed", login("login secure").data.status, "nothing pending")
    check.eq(2, #asked, "nothing pending: not asked")
    check.eq("permission_denied", admin_report().data.code)

    -- Approved, without a browser: the login asks for admin too; the callback address is pasted.
    confirm_with(1, asked)
    local _, restore = script_ui({
      function(_, prompt)
        check.matches("^Paste the callback address", prompt)
        -- The person reads the address in the message the login showed, and opens it.
        local url = vim.fn.execute("messages"):match("Open this address in a browser and authorize secure:%s*(%S+)")
        local location = vim.system({ "curl", "-s", "-o", "/dev/null", "-w", "%{redirect_url}", url }):wait().stdout
        return location
      end,
    })
    local ok, approved = pcall(login, "login secure --no-browser")
    restore()
    check.truthy(ok, approved)
    check.eq(3, #asked)
    check.eq("completed", approved.status)
    local granted = vim.deepcopy(approved.scopes)
    table.sort(granted)
    check.eq({ "admin", "mcp" }, granted)
    local err2, report = admin_report()
    check.eq(nil, err2)
    check.eq("admin report", Actions.content_text(report.content))
    confirm_with(nil, asked)
    check.eq("completed", login("login secure").data.status)
    check.eq(3, #asked, "an approved and granted scope is not asked again")
    check.eq("accepted", login("logout secure").data.revocation)
  end)

  it("stops its sidecar", function()
    if proc then
      proc:kill(15)
    end
    Client.stop(WS)
    wait_for(function()
      return not (Client.roots[WS] and Client.roots[WS].id)
    end, 15000, "the sidecar stopped")
    Client.last_root = ROOT
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
    -- The plugin's state follows one sidecar: the one stopped cleared it; the workspace's is back.
    local result = status_sync()
    check.eq({}, result.pendingApprovals)
    State.set_sidecar("running")
    State.set_servers(result.servers, true)
    check.eq(names(result), State.server_names())
    vim.fn.delete(WS, "rf")
    vim.fn.delete(HOME, "rf")
  end)
end)

describe("chat integrations", function()
  it("exposes mcp_tools for CodeCompanion and avante.nvim", function()
    local cc = mcp.tools.codecompanion()
    check.eq("mcp_tools", cc.schema["function"].name)
    check.eq("object", cc.schema["function"].parameters.type)
    local av = mcp.tools.avante()
    check.eq("mcp_tools", av.name)
    local fields = vim.tbl_map(function(f)
      return f.name
    end, av.param.fields)
    check.contains(fields, "query")
    check.contains(fields, "activate")
    local text, err = async(function(cb)
      av.func({ query = "add numbers" }, { on_complete = cb })
    end)
    check.eq(nil, err)
    check.matches("basic%.add", text)
    local output
    cc.cmds[1](cc, { activate = { "basic.count_words" } }, nil, function(o)
      output = o
    end)
    wait_for(function()
      return output
    end, 15000, "codecompanion output")
    check.eq("error", output.status, "basic has no count_words: the model is told")
    -- CodeCompanion v20+ passes an opts table with output_cb instead of a fourth argument.
    local v20
    cc.cmds[1](cc, { query = "add numbers" }, {
      output_cb = function(o)
        v20 = o
      end,
    })
    wait_for(function()
      return v20
    end, 15000, "codecompanion v20 output")
    check.eq("success", v20.status)
    check.matches("basic%.add", v20.data)
  end)

  it("passes activation's signatures to the chat, follows a changed definition, ends the session", function()
    local cc = mcp.tools.codecompanion()
    local output
    cc.cmds[1](cc, { activate = { "basic.add" } }, nil, function(o)
      output = o
    end)
    wait_for(function()
      return output
    end, 15000, "activation output")
    check.eq("success", output.status)
    -- The model reads every parameter of what it activated, as the sidecar wrote it.
    check.matches("\n   basic%.add%(a: integer, b: integer%) — Add two integers%.", output.data)
    check.matches("Call each loaded tool by its exact id", output.data)
    -- The directory of servers is in the registered description; a reload's new one replaces it.
    check.matches("Servers %(for `server`", cc.schema["function"].description)
    local def = vim.deepcopy(require("mcp_sidecar.tools").definition())
    def.description = def.description .. "\n- docs: Team documentation"
    Notifications.handlers()["mcp/modelToolChanged"](nil, { definition = def })
    check.matches("%- docs: Team documentation$", cc.schema["function"].description)
    check.matches("%- docs: Team documentation$", cc.system_prompt)
    -- mcp_call calls what was activated, once the person says yes; declined, nothing runs.
    local av_call = mcp.tools.avante_call()
    check.eq("mcp_call", av_call.name)
    check.eq(
      { "arguments", "id" },
      vim.tbl_map(function(f)
        return f.name
      end, av_call.param.fields)
    )
    local call = mcp.tools.codecompanion_call()
    check.eq("mcp_call", call.schema["function"].name)
    check.matches("signature its activation showed", call.schema["function"].description)
    local real_select, asked = vim.ui.select, {}
    local answer = "Call it"
    vim.ui.select = function(items, o, on_choice)
      table.insert(asked, o.prompt)
      on_choice(answer)
    end
    local called
    call.cmds[1](call, { id = "basic.add", arguments = { a = 2, b = 3 } }, nil, function(o)
      called = o
    end)
    wait_for(function()
      return called
    end, 15000, "mcp_call output")
    check.eq({ status = "success", data = "5" }, called)
    check.matches("^The assistant wants to call the MCP tool basic%.add with {", asked[1])
    check.matches('"a":2', asked[1])
    check.matches('"b":3', asked[1])
    answer = "Do not call it"
    local declined
    call.cmds[1](call, { id = "basic.add", arguments = { a = 1, b = 1 } }, nil, function(o)
      declined = o
    end)
    check.eq("error", declined.status)
    check.matches("declined", declined.data)
    local inactive
    answer = "Call it"
    call.cmds[1](call, { id = "basic.no_such_tool", arguments = { text = "x" } }, nil, function(o)
      inactive = o
    end)
    wait_for(function()
      return inactive
    end, 15000, "mcp_call of an inactive tool")
    vim.ui.select = real_select
    check.eq("error", inactive.status)
    check.matches("not active", inactive.data)
    check.matches('Retry after activating the tool: mcp_tools%({"activate"', inactive.data)
    -- A cleared chat ends the session: its activated tools go.
    local err, before = Client.request_sync("mcp/activeTools", nil, 15000)
    check.eq(nil, err)
    check.contains(
      vim.tbl_map(function(t)
        return t.id
      end, before.tools),
      "basic.add"
    )
    vim.api.nvim_exec_autocmds("User", { pattern = "CodeCompanionChatCleared" })
    local active = wait_for(function()
      local err, result = Client.request_sync("mcp/activeTools", nil, 15000)
      check.eq(nil, err)
      return #result.tools == 0 and result
    end, 15000, "the session's tools dropped")
    check.eq(0, #active.tools)
  end)
end)

describe("approvals of changed project servers", function()
  local path = ROOT .. "/.mcp.json"
  local original -- the proj definition scripts/test.sh wrote
  local calls, answer = {}, nil
  local real_select = vim.ui.select

  before_each(function()
    if not original then
      original = vim.json.decode(table.concat(vim.fn.readfile(path), "\n")).mcpServers.proj
    end
    calls = {}
    _G.notes = {}
    -- A person at vim.ui.select: record what was asked, pick `answer`.
    vim.ui.select = function(items, opts, on_choice)
      table.insert(calls, { items = items, prompt = opts.prompt, kind = opts.kind })
      local index = answer and vim.fn.index(items, answer) + 1 or nil
      vim.schedule(function()
        on_choice(answer, index)
      end)
    end
  end)
  after_each(function()
    vim.ui.select = real_select
  end)

  --- Rewrite .mcp.json on disk (as a `git pull` would) with proj's args plus `extra`; returns
  --- the summary the sidecar shows for it (the command line, then the changed field).
  local function rewrite(extra)
    local args = vim.list_extend(vim.deepcopy(original.args), extra)
    vim.fn.writefile({ vim.json.encode({ mcpServers = { proj = { command = original.command, args = args } } }) }, path)
    return table.concat(vim.list_extend({ original.command }, args), " ") .. " (changed: args)"
  end

  local function question(summary)
    return "The project's .mcp.json changed the MCP server 'proj' (changed: args). It would run: "
      .. summary
      .. ". Start it?"
  end

  local function proj_row()
    for _, row in ipairs(status_sync().servers) do
      if row.name == "proj" then
        return row
      end
    end
  end

  it("asks with vim.ui.select showing the new command line; approving starts the server", function()
    answer = "Approve and start"
    local line = rewrite({ "--resources" })
    wait_for(function()
      return #calls >= 1
    end, 20000, "vim.ui.select")
    check.eq({ "Approve and start", "Keep disabled" }, calls[1].items)
    check.eq("mcp_sidecar.approval", calls[1].kind)
    check.eq(question(line), calls[1].prompt)
    local note = wait_for(function()
      return find_note("Approved 'proj'")
    end, 20000, "approval")
    check.eq("Approved 'proj'; it runs: " .. line, note.msg)
    check.eq("connected", proj_row().state)
    local err, tools = Client.request_sync("mcp/server/tools", { server = "proj" }, 15000)
    check.eq(nil, err)
    local names_ = vim.tbl_map(function(t)
      return t.name
    end, tools.tools)
    check.contains(names_, "notify_changes", "the approved --resources definition runs")
    check.eq("allowed", Trust.trust_state(path), "Neovim's trust follows the approved file")
    check.eq(1, #calls, "asked once")
  end)

  it("declining keeps it disabled with trust_required, asks once per change, and :Mcp review asks again", function()
    answer = "Keep disabled"
    local line = rewrite({ "--resources", "--prompts" })
    wait_for(function()
      return #calls >= 1
    end, 20000, "vim.ui.select")
    check.eq(question(line), calls[1].prompt)
    wait_for(function()
      return find_note("Kept 'proj' disabled")
    end, 10000, "declined")
    local result = status_sync()
    local row
    for _, r in ipairs(result.servers) do
      row = r.name == "proj" and r or row
    end
    check.eq("disabled", row.state)
    check.eq(true, row.approvalRequired)
    check.eq("trust_required", row.lastDiagnostic.code)
    check.eq(1, #result.pendingApprovals)
    local pending = result.pendingApprovals[1]
    check.eq(
      { "proj", "changed", "stdio", line },
      { pending.server, pending.change, pending.transport, pending.summary }
    )
    check.eq({ "args" }, pending.changedFields)
    wait_for(function()
      return mcp.status():find("⚠1", 1, true)
    end, 5000, "statusline marks the server")
    check.eq("changed", Trust.trust_state(path), "a declined change does not become trusted")
    vim.cmd("Mcp")
    local view = require("mcp_sidecar.ui.status").view
    local float = wait_for(function()
      local t = lines(view.buf)
      return t:find("⚠ proj", 1, true) and t
    end, 10000, "status float")
    check.truthy(
      float:find(" ⚠ proj: changed in .mcp.json, needs approval (a); it would run: " .. line, 1, true),
      float
    )
    check.matches("a review change", float)
    close_extra_windows()
    -- Once per (server, hash): the same pending set again asks nothing.
    check.eq(0, require("mcp_sidecar.approvals").offer(result.pendingApprovals))
    check.eq(1, #calls)

    answer = "Approve and start"
    vim.cmd("Mcp review")
    wait_for(function()
      return #calls >= 2
    end, 15000, "asked again")
    check.eq(calls[1].prompt, calls[2].prompt)
    wait_for(function()
      return find_note("Approved 'proj'")
    end, 20000, "approval")
    check.eq("connected", proj_row().state)
    local err, found = async(function(cb)
      mcp.discover("", { kind = "prompts", server = "proj" }, cb)
    end)
    check.eq(nil, err)
    check.eq(
      "summarize_notes",
      vim.iter(found.candidates):find(function(c)
        return c.name == "summarize_notes"
      end).name,
      "the approved --prompts definition runs"
    )
    check.eq("allowed", Trust.trust_state(path))
  end)

  it("restoring the file is a change too; approving runs the original definition again", function()
    answer = "Approve and start"
    local line = rewrite({})
    wait_for(function()
      return find_note("Approved 'proj'")
    end, 20000, "approval")
    check.eq(question(line), calls[1].prompt)
    check.eq(nil, next(State.pending))
    check.eq("allowed", Trust.trust_state(path))
    check.eq(nil, mcp.status():find("⚠", 1, true))
  end)
end)

describe("first sight of a trusted workspace", function()
  local real_select = vim.ui.select
  after_each(function()
    vim.ui.select = real_select
  end)

  it("asks about each project server before it runs; approving starts it", function()
    -- A trusted copy of a project (a clone under a trusted folder, a worktree) whose
    -- definitions were never approved: nothing runs unasked. Its own trusted .venv sidecar runs.
    local project = vim.json.decode(table.concat(vim.fn.readfile(ROOT .. "/.mcp.json"), "\n")).mcpServers.proj
    local root = vim.fs.normalize(vim.fn.tempname())
    local marker = root .. "/ran"
    vim.fn.mkdir(root .. "/.venv/bin", "p")
    vim.fn.writefile(
      { "#!/bin/sh", "echo ran > '" .. marker .. "'", 'exec "' .. SIDECAR .. '" "$@"' },
      root .. "/.venv/bin/mcp-sidecar"
    )
    vim.fn.setfperm(root .. "/.venv/bin/mcp-sidecar", "rwxr-xr-x")
    vim.fn.writefile(
      { vim.json.encode({ mcpServers = { fresh = { command = project.command, args = project.args } } }) },
      root .. "/.mcp.json"
    )
    local buf = vim.fn.bufadd(root .. "/.mcp.json")
    vim.fn.bufload(buf)
    check.truthy(vim.secure.trust({ action = "allow", bufnr = buf }))
    vim.api.nvim_buf_delete(buf, { force = true })
    local calls = {}
    vim.ui.select = function(items, opts, on_choice)
      table.insert(calls, { items = items, prompt = opts.prompt, kind = opts.kind })
      vim.schedule(function()
        on_choice("Approve and start", 1)
      end)
    end
    _G.notes = {}
    mcp.setup({ cmd = nil, search = { limit = 10 } })
    local ok, err = pcall(function()
      local client = check.truthy(Client.ensure(root))
      check.eq({ root .. "/.venv/bin/mcp-sidecar" }, client.config.cmd, "a trusted workspace's own .venv sidecar")
      check.eq(true, client.config.init_options.trustedWorkspace)
      check.eq(false, client.config.init_options.trustGranted, "no grant: this start did not follow :Mcp trust")
      wait_for(function()
        return #calls >= 1
      end, 20000, "vim.ui.select")
      local line = table.concat(vim.list_extend({ project.command }, vim.deepcopy(project.args)), " ")
      check.eq(
        "The project's .mcp.json defines a new MCP server 'fresh'. It would run: " .. line .. ". Start it?",
        calls[1].prompt
      )
      check.eq({ "Approve and start", "Keep disabled" }, calls[1].items)
      check.eq("mcp_sidecar.approval", calls[1].kind)
      wait_for(function()
        return find_note("Approved 'fresh'")
      end, 20000, "approval")
      local e, result = Client.request_sync("mcp/status", nil, 30000, { root = root })
      check.eq(nil, e)
      check.eq({}, result.pendingApprovals)
      local row
      for _, r in ipairs(result.servers) do
        row = r.name == "fresh" and r or row
      end
      check.eq("connected", row.state)
      check.eq(1, #calls, "asked once")
      check.eq(1, vim.fn.filereadable(marker), "the trusted workspace's own sidecar ran")

      -- Approved A, then B arrives and is approved, then A comes back: A is asked about again.
      local function approvals_noted()
        return #vim.tbl_filter(function(n)
          return n.msg:find("Approved 'fresh'", 1, true) ~= nil
        end, _G.notes)
      end
      local function write(args)
        vim.fn.writefile(
          { vim.json.encode({ mcpServers = { fresh = { command = project.command, args = args } } }) },
          root .. "/.mcp.json"
        )
      end
      write(vim.list_extend(vim.deepcopy(project.args), { "--prompts" }))
      wait_for(function()
        return approvals_noted() >= 2
      end, 20000, "the change to be asked about and approved")
      write(project.args)
      wait_for(function()
        return approvals_noted() >= 3
      end, 20000, "the first definition, back again, to be asked about and approved")
      check.eq(3, #calls)
      check.eq(
        "The project's .mcp.json changed the MCP server 'fresh' (changed: args). It would run: "
          .. line
          .. " (changed: args). Start it?",
        calls[3].prompt
      )
    end)
    Client.stop(root)
    vim.wait(10000, function()
      return not (Client.roots[root] and Client.roots[root].id)
    end, 20)
    Client.last_root = ROOT
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
    State.set_sidecar("running")
    State.set_servers(status_sync().servers)
    require("mcp_sidecar.approvals").set_pending(status_sync().pendingApprovals, ROOT)
    vim.fn.delete(root, "rf")
    check.truthy(ok, err)
  end)
end)

describe("the engine", function()
  -- Two workspaces of their own, each with its sidecar started with MCP_SIDECAR_ENGINE=on and one
  -- private runtime directory: two fronts of one engine, sharing the global servers (neither
  -- workspace is trusted, so both run them in the configuration directory).
  it(":Mcp and :checkhealth show the engine, its clients and each server's sharers", function()
    local run = vim.fs.normalize(vim.fn.tempname())
    vim.fn.mkdir(run, "p", tonumber("700", 8))
    local one, two = vim.fs.normalize(vim.fn.tempname()), vim.fs.normalize(vim.fn.tempname())
    vim.fn.mkdir(one, "p")
    vim.fn.mkdir(two, "p")
    local env = { MCP_SIDECAR_ENGINE = "on", XDG_RUNTIME_DIR = run, MCP_SIDECAR_ENGINE_GRACE = "1" }
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 }, env = env })
    local ok, err = pcall(function()
      for _, root in ipairs({ two, one }) do -- `one` last: the status float and the health read it
        check.truthy(Client.ensure(root))
        local e, result = Client.request_sync("mcp/status", nil, 30000, { root = root })
        check.eq(nil, e)
        check.truthy(result.engine ~= vim.NIL and result.engine, "an engine serves " .. root)
      end
      local _, status = Client.request_sync("mcp/status", nil, 30000, { root = one })
      local kinds = {}
      for _, client in ipairs(status.engine.clients) do
        table.insert(kinds, { client.kind, client.workspace, client.thisClient })
      end
      check.eq({ { "lsp", two, false }, { "lsp", one, true } }, kinds)
      local shared = {}
      for _, row in ipairs(status.servers) do
        shared[row.name] = row.sharedBy
      end
      check.eq(2, shared.basic, "both workspaces use one basic")

      async(function(cb)
        require("mcp_sidecar.ui.status").open(cb)
      end)
      local view = require("mcp_sidecar.ui.status").view
      local float = lines(view.buf)
      check.matches("Loaded%s+Shared", float)
      local basic_row = vim.iter(vim.split(float, "\n")):find(function(l)
        return l:find("^ %S+%s+basic%s")
      end)
      check.eq("2", basic_row:match("(%S+)$"), "basic's Shared column")
      check.matches(("Engine pid %d · mcp%%-sidecar %%S+ · up .- · 2 clients:"):format(status.engine.pid), float)
      check.matches("lsp  " .. vim.pesc(two) .. "\n", float)
      check.matches("lsp  " .. vim.pesc(one) .. " %(this client%)", float)
      for line, server in pairs(view.rows) do
        check.truthy(not vim.api.nvim_buf_get_lines(view.buf, line - 1, line, false)[1]:find("Engine"), server)
      end
      close_extra_windows()

      vim.cmd("checkhealth mcp_sidecar")
      local health = lines(0)
      check.matches(("Engine pid %d · mcp%%-sidecar %%S+ · up .- · 2 clients"):format(status.engine.pid), health)
      check.matches("lsp " .. vim.pesc(one) .. " %(this Neovim%)", health)
      check.matches("basic: %S+ %(global, stdio, shared by 2%)", health)
      vim.cmd("bwipeout!")
    end)
    for _, root in ipairs({ one, two }) do
      Client.stop(root)
      vim.wait(10000, function()
        return not (Client.roots[root] and Client.roots[root].id)
      end, 20)
    end
    Client.last_root = ROOT
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
    State.set_sidecar("running")
    State.set_servers(status_sync().servers)
    vim.fn.delete(one, "rf")
    vim.fn.delete(two, "rf")
    check.truthy(ok, err)
  end)

  it("the health says so when no engine serves this Neovim", function()
    check.eq({}, require("mcp_sidecar.health").engine_lines(vim.NIL))
    local root = vim.fs.normalize(vim.fn.tempname())
    vim.fn.mkdir(root, "p")
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 }, env = { MCP_SIDECAR_ENGINE = "off" } })
    local ok, err = pcall(function()
      check.truthy(Client.ensure(root))
      local _, status = Client.request_sync("mcp/status", nil, 30000, { root = root })
      check.truthy(status.engine == nil or status.engine == vim.NIL, "engine is null")
      vim.cmd("checkhealth mcp_sidecar")
      local health = lines(0)
      check.matches("No engine: this sidecar serves this Neovim alone", health)
      check.matches("basic: %S+ %(global, stdio%)", health)
      check.truthy(not health:find("shared by"), "no server is shared")
      vim.cmd("bwipeout!")
    end)
    Client.stop(root)
    vim.wait(10000, function()
      return not (Client.roots[root] and Client.roots[root].id)
    end, 20)
    Client.last_root = ROOT
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
    State.set_sidecar("running")
    State.set_servers(status_sync().servers)
    vim.fn.delete(root, "rf")
    check.truthy(ok, err)
  end)
end)

describe("health", function()
  it(":checkhealth mcp_sidecar reports Neovim, the sidecar, files, trust and servers", function()
    vim.cmd("checkhealth mcp_sidecar")
    local text = lines(0)
    check.matches("Neovim 0%.1%d", text)
    check.matches("mcp%-sidecar %d+%.%d+", text)
    check.matches("is trusted %(vim%.secure%)", text)
    check.matches("global config: .-mcp%.json %(read%)", text)
    check.matches("[Kk]eyring", text)
    check.matches("basic: connected", text)
    check.matches("broken: failed", text)
    check.matches("Elicitation offered: form, url", text)
    check.matches("Sampling not offered %(set opts%.sampling", text)
    check.matches("Workspace folders %(roots for servers, when the workspace is trusted%): " .. vim.pesc(ROOT), text)
    check.matches("No tool call running", text)
    vim.cmd("bwipeout!")
  end)
end)

describe("restart", function()
  it("starts a new sidecar when the process is killed", function()
    local old = vim.lsp.get_clients({ name = "mcp_sidecar" })[1]
    local pid
    for _, child in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
      local info = vim.api.nvim_get_proc(child)
      if info and (info.name or ""):find("mcp%-sidecar") then
        pid = child
      end
    end
    check.truthy(pid, "sidecar pid")
    vim.uv.kill(pid, "sigkill")
    wait_for(function()
      return find_note("restarting")
    end, 10000, "restart note")
    local new = wait_for(function()
      local c = vim.lsp.get_clients({ name = "mcp_sidecar" })[1]
      return c and c.id ~= old.id and c
    end, 10000, "new client")
    check.truthy(new.initialized ~= nil)
    check.eq(false, new.config.init_options.trustGranted, "only the start after :Mcp trust says trust was granted")
    local result = status_sync()
    check.eq(true, result.trustedWorkspace)
    check.eq({ "basic", "broken", "proj" }, names(result))
    check.eq({}, result.pendingApprovals)
  end)
end)
