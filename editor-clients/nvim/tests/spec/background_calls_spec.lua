-- Background calls end to end: the real sidecar ($MCP_TEST_SIDECAR) in a workspace of its own (its
-- own MCP_SIDECAR_HOME through opts.env) with the fixture server `basic` (its `slow(seconds)` tool),
-- started with `background_after = 0.5`: a call of seconds goes to the background, `:Mcp calls`
-- lists it, `:Mcp calls result ID` shows its result once, `:Mcp calls cancel ID` cancels one.
-- Stops its sidecar at the end and puts the default setup back.
local mcp = require("mcp_sidecar")
local Calls = require("mcp_sidecar.calls")
local Client = require("mcp_sidecar.client")

local SIDECAR = assert(os.getenv("MCP_TEST_SIDECAR"), "MCP_TEST_SIDECAR is not set")
local PYTHON = vim.fs.dirname(SIDECAR) .. "/python"
local PLUGIN = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local BASIC = vim.fs.normalize(PLUGIN .. "/../../tests/fixtures/servers/basic.py")
local ROOT = vim.fs.normalize(vim.fn.getcwd())

local WS = vim.fs.normalize(vim.fn.tempname())
local HOME = vim.fs.normalize(vim.fn.tempname())
vim.fn.mkdir(WS .. "/.git", "p")
vim.fn.mkdir(HOME, "p")
vim.fn.writefile({
  vim.json.encode({ mcpServers = { basic = { command = PYTHON, args = { BASIC, "stdio" } } } }),
}, HOME .. "/mcp.json")

local function async(fn, timeout)
  local done, a, b = false, nil, nil
  fn(function(x, y)
    done, a, b = true, x, y
  end)
  wait_for(function()
    return done
  end, timeout or 30000, "callback")
  return a, b
end

--- Call basic.slow for `seconds`: the answer's background call.
local function backgrounded(seconds)
  local err, result = async(function(cb)
    Client.request(
      "mcp/callTool",
      { id = "basic.slow", arguments = { seconds = seconds }, activate = true },
      cb,
      { root = WS }
    )
  end)
  check.eq(nil, err)
  return check.truthy(result.background, "the call went to the background")
end

describe("background calls", function()
  it("lists a call that outlived the threshold", function()
    mcp.setup({ cmd = SIDECAR, env = { MCP_SIDECAR_HOME = HOME }, background_after = 0.5 })
    vim.cmd.cd(WS)
    vim.cmd("enew")
    local call = backgrounded(3)
    check.matches("^call%-%x+$", call.callId)
    check.eq("running", call.status)
    wait_for(function()
      return Calls.known[call.callId]
    end, 15000, "mcp/call/background")
    wait_for(function()
      return find_note(vim.pesc("went to the background as " .. call.callId))
    end, 5000, "the notice")
    local err, listed = async(function(cb)
      Calls.run({}, cb)
    end)
    check.eq(nil, err)
    check.eq(call.callId, listed.calls[1].callId)
    check.matches("basic%.slow  running", Calls.format(listed.calls[1]))
  end)

  it("shows a result once with :Mcp calls result", function()
    local id = next(Calls.known)
    wait_for(function()
      return Calls.known[id] and Calls.known[id].status == "completed"
    end, 30000, "mcp/call/finished")
    local err, fetched = async(function(cb)
      Calls.run({ "result", id }, cb)
    end)
    check.eq(nil, err)
    check.eq("done", fetched.result.content[1].text)
    check.matches("done", table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n"))
    check.eq("mcp://calls/" .. id, vim.api.nvim_buf_get_name(0))
    check.eq(nil, Calls.known[id])
    local again = async(function(cb)
      Calls.run({ "result", id }, cb)
    end)
    check.eq("call_not_found", again.data.code)
  end)

  it("cancels a running call with :Mcp calls cancel", function()
    local call = backgrounded(60)
    local err = async(function(cb)
      Calls.run({ "cancel", call.callId }, cb)
    end)
    check.eq(nil, err)
    wait_for(function()
      return Calls.known[call.callId] and Calls.known[call.callId].status == "cancelled"
    end, 15000, "the call cancelled")
  end)

  it("stops its sidecar", function()
    Client.stop(WS)
    wait_for(function()
      return not (Client.roots[WS] and Client.roots[WS].id)
    end, 15000, "the sidecar stopped")
    vim.cmd.cd(ROOT)
    Client.last_root = ROOT
    Calls._reset()
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
    vim.fn.delete(WS, "rf")
    vim.fn.delete(HOME, "rf")
  end)
end)
