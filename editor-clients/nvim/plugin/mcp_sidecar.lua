-- Load guard and the one :Mcp command; everything else is required on first use.
if vim.g.loaded_mcp_sidecar then
  return
end
vim.g.loaded_mcp_sidecar = true

vim.api.nvim_create_user_command("Mcp", function(args)
  require("mcp_sidecar.commands").run(args)
end, {
  nargs = "*",
  desc = "MCP servers through mcp-sidecar (:Mcp alone opens the status)",
  complete = function(arglead, line, pos)
    return require("mcp_sidecar.commands").complete(arglead, line, pos)
  end,
})
