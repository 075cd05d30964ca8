-- MCP Apps in the browser end to end: the real sidecar ($MCP_TEST_SIDECAR) in a workspace of its own
-- with the fixture server `weather` (tests/fixtures/servers/apps.py: the app ui://apps/dashboard
-- and its app-only tool `refresh`), `opts.apps = true`. `:Mcp app` opens the loopback page
-- (vim.ui.open replaced: curl plays the browser), the page's calls are asked through vim.ui.select,
-- and the page is gone once the sidecar stops. Puts the default setup back at the end.
local mcp = require("mcp_sidecar")
local Client = require("mcp_sidecar.client")
local Offer = require("mcp_sidecar.offer")

local SIDECAR = assert(os.getenv("MCP_TEST_SIDECAR"), "MCP_TEST_SIDECAR is not set")
local PYTHON = vim.fs.dirname(SIDECAR) .. "/python"
local PLUGIN = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local APPS = vim.fs.normalize(PLUGIN .. "/../../tests/fixtures/servers/apps.py")
local ROOT = vim.fs.normalize(vim.fn.getcwd())

local WS = vim.fs.normalize(vim.fn.tempname())
local HOME = vim.fs.normalize(vim.fn.tempname())
vim.fn.mkdir(WS .. "/.git", "p")
vim.fn.mkdir(HOME, "p")
vim.fn.writefile({
  vim.json.encode({ mcpServers = { weather = { command = PYTHON, args = { APPS, "stdio" } } } }),
}, HOME .. "/mcp.json")

--- curl, run without blocking the loop (the sidecar's question to the plugin needs it):
--- `{code, body}` of one request.
local function curl(args)
  local done
  vim.system(vim.list_extend({ "curl", "-s", "-o", "-", "-w", "\n%{http_code}" }, args), { text = true }, function(out)
    done = out
  end)
  wait_for(function()
    return done
  end, 60000, "curl")
  local body, code = done.stdout:match("^(.*)\n(%d+)$")
  return { code = tonumber(code), body = body or "" }
end

local function origin_of(url)
  return url:match("^(http://127%.0%.0%.1:%d+)/")
end

describe("MCP Apps", function()
  local real_open, real_select = vim.ui.open, vim.ui.select
  local opened, asked, choice = {}, {}, "Allow"
  local url

  after_each(function()
    vim.ui.open, vim.ui.select = real_open, real_select
  end)

  before_each(function()
    vim.ui.open = function(u)
      table.insert(opened, u)
    end
    vim.ui.select = function(items, opts, on_choice)
      table.insert(asked, opts.prompt)
      check.eq({ "Allow", "Deny" }, items)
      on_choice(choice)
    end
  end)

  it("offers servers the extension only with opts.apps", function()
    mcp.setup({ cmd = SIDECAR, env = { MCP_SIDECAR_HOME = HOME } })
    check.eq(nil, Offer.mcp_capabilities().extensions)
    mcp.setup({ cmd = SIDECAR, env = { MCP_SIDECAR_HOME = HOME }, apps = true })
    check.eq(
      { ["io.modelcontextprotocol/ui"] = { mimeTypes = { "text/html;profile=mcp-app" } } },
      Offer.mcp_capabilities().extensions
    )
  end)

  it(":Mcp app opens the app's loopback page in the browser", function()
    vim.cmd.cd(WS)
    vim.cmd("enew")
    vim.cmd("Mcp app weather ui://apps/dashboard")
    wait_for(function()
      return opened[1]
    end, 60000, "vim.ui.open")
    url = opened[1]
    check.matches("^http://127%.0%.0%.1:%d+/[%w_-]+/$", url)
    local page = curl({ url })
    check.eq(200, page.code)
    check.matches('<iframe id="app" sandbox="allow%-scripts" src="app"', page.body)
    local app = curl({ url .. "app" })
    check.eq(200, app.code)
    check.matches("<h1>Dashboard</h1>", app.body)
    check.eq(403, curl({ origin_of(url) .. "/" .. string.rep("A", 43) .. "/app" }).code)
  end)

  it("asks before each call the app makes, and makes it only when allowed", function()
    local function call()
      return curl({
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-H",
        "Origin: " .. origin_of(url),
        "--data",
        vim.json.encode({ name = "refresh", arguments = vim.empty_dict() }),
        url .. "call",
      })
    end
    choice = "Allow"
    local allowed = call()
    check.eq(200, allowed.code)
    local result = vim.json.decode(allowed.body).result
    check.eq("refreshed", result.content[1].text)
    check.matches("^The app ui://apps/dashboard of weather calls the tool refresh with {}%. Allow%?$", asked[1])
    choice = "Deny"
    local denied = vim.json.decode(call().body)
    check.eq(nil, denied.result)
    check.matches("was not allowed", denied.error.message)
    check.eq(2, #asked)
  end)

  it("closes the page when the sidecar stops", function()
    Client.stop(WS)
    wait_for(function()
      return not (Client.roots[WS] and Client.roots[WS].id)
    end, 15000, "the sidecar stopped")
    wait_for(function()
      return curl({ url }).code ~= 200
    end, 30000, "the page gone")
    vim.cmd.cd(ROOT)
    Client.last_root = ROOT
    mcp.setup({ cmd = SIDECAR, search = { limit = 10 } })
    vim.fn.delete(WS, "rf")
    vim.fn.delete(HOME, "rf")
  end)
end)
