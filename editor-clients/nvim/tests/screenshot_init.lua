-- For the tmux screenshot: load the plugin from this checkout, nothing else. Failure
-- notifications are off so that `broken` cannot raise a hit-enter prompt over the search;
-- the statusline shows the failure instead.
vim.opt.rtp:prepend(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h"))
vim.o.laststatus = 2
vim.o.statusline = "%f %= %{v:lua.require'mcp_sidecar'.status()} "
-- MCP_TEST_SAMPLING=1: sampling offered, answered by a stand-in model (the sampling screenshot)
local sampling = os.getenv("MCP_TEST_SAMPLING") == "1"
    and function(_, done)
      done(nil, { content = "Hello from the screenshot's model", model = "screenshot-model", stopReason = "endTurn" })
    end
  or nil
require("mcp_sidecar").setup({
  cmd = os.getenv("MCP_TEST_SIDECAR"),
  trust = true,
  notify = { failures = false },
  sampling = sampling,
})
