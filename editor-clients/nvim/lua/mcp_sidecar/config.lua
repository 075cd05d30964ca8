--- Configuration: annotated defaults merged with the user's `setup(opts)`.
local M = {}

---@class mcp_sidecar.Config
---@field cmd? string|string[] the sidecar command; nil looks for <root>/.venv/bin/mcp-sidecar (trusted workspaces only), then absolute PATH directories
---@field args? string[]
---@field env? table<string, string>
---@field root_markers? string[]
---@field trust? "ask"|boolean
---@field session? string
---@field profile? string a profile of mcp.json to start with (initializationOptions.profile)
---@field session_budget? { maxTools?: integer, maxTokens?: integer } the session budget over mcp.json's sessionBudget (initializationOptions.sessionBudget)
---@field restart? { max: integer, window_ms: integer, delay_ms: integer }
---@field notify? { failures: boolean, resource_updates: boolean, server_errors: boolean }
---@field elicitation? false|{ form: boolean, url: boolean }
---@field sampling? fun(request: table, done: fun(err: any, result: table|string|nil))
---@field apps? boolean
---@field workspace_folders? string[]|fun(root: string): string[]
---@field search? { picker: "auto"|"builtin"|"select", limit: integer, debounce_ms: integer }
---@field prompt? { register: string }
---@field float? { border: string, width: number, height: number }
---@field background_after? number
---@field icons? { connected: string, failed: string, idle: string, loaded: string, approval: string, login: string, running: string }
local defaults = {
  cmd = nil, -- string or list: how to start the sidecar (nil: <root>/.venv/bin/mcp-sidecar when the workspace is trusted, then `mcp-sidecar` in an absolute PATH directory; a bare name is looked up there too)
  args = {}, -- extra arguments for the sidecar, e.g. { "-v", "--log-file", vim.fn.stdpath("log") .. "/mcp-sidecar.log" }
  env = nil, -- extra environment for the sidecar, e.g. { MCP_SIDECAR_HOME = "~/.config/my-mcp" }
  root_markers = { ".mcp.json", ".git" }, -- the workspace root is the nearest directory holding one (else the cwd)
  trust = "ask", -- the project's .mcp.json: "ask" (Neovim's trust database, :h vim.secure), true (always), false (never)
  session = "default", -- the sidecar session tools are activated and called in
  background_after = 120, -- seconds: a tool call still running then goes to the background (:Mcp calls); 0: never
  profile = nil, -- a profile of mcp.json ("profiles") to start with: only its servers are searched, its tools start active (:Mcp profile NAME switches, :Mcp profile --clear clears)
  session_budget = nil, -- e.g. { maxTools = 12, maxTokens = 6000 }: at most that many tools (or tokens of tool definitions) active in a session; more deactivates the least recently used (nil: mcp.json's "sessionBudget", else none; 0: no limit)
  restart = {
    max = 3, -- restart a sidecar that died at most this many times ...
    window_ms = 60000, -- ... within this window, then wait for the next use
    delay_ms = 300, -- pause before a restart
  },
  notify = {
    failures = true, -- vim.notify when a server fails (diagnostic message and hint)
    resource_updates = true, -- vim.notify "↻ server · uri" when a watched resource changes
    server_errors = true, -- vim.notify (WARN) the first log message at error level or above of each server (all are in :Mcp logs)
  },
  -- What servers may ask you through the sidecar (MCP elicitation): a form (each field asked with
  -- vim.ui.input / vim.ui.select, then a float to submit), and a URL to open (after you consent).
  -- false offers neither; servers only ask what is offered.
  elicitation = { form = true, url = true },
  -- MCP sampling, a server asking for a model's answer: function(request, done) that answers with
  -- your model, `done(err, { content = "text" or a content block, model = "name", stopReason? })`.
  -- The whole request, then the answer, is shown for your approval first (a float you read to its
  -- end; <CR> pages, then asks Approve / Decline). nil: sampling is not offered.
  sampling = nil,
  -- MCP Apps: true offers servers the extension (io.modelcontextprotocol/ui), and :Mcp app SERVER URI
  -- shows an app in your browser (a loopback page; each tool call it makes is asked here first).
  apps = false,
  -- More folders offered to servers as roots, besides the workspace root (a list of paths, or
  -- function(root) returning one); :Mcp folder add DIR adds one while the sidecar runs.
  workspace_folders = nil,
  search = {
    picker = "auto", -- "auto"/"builtin": live floating search; "select": vim.ui.select (snacks, telescope, fzf-lua override it)
    limit = 20, -- candidates per query (1..50)
    debounce_ms = 120, -- wait this long after a keystroke before searching
  },
  prompt = {
    register = '"', -- where an accepted prompt goes when no chat integration takes it
  },
  float = {
    border = "rounded", -- border of the status, search and preview windows
    width = 0.8, -- fraction of the editor's columns
    height = 0.6, -- fraction of the editor's lines
  },
  icons = {
    connected = "●",
    failed = "✘",
    idle = "○",
    loaded = "⚙",
    approval = "⚠",
    login = "⚿",
    running = "⟳",
  }, -- used by status() and the status float (approval: a changed project server waits for :Mcp review; login: a server needs :Mcp login; running: tool calls in flight)
}

---@type mcp_sidecar.Config
M.options = vim.deepcopy(defaults)

---@param opts? mcp_sidecar.Config
function M.setup(opts)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  return M.options
end

---@return mcp_sidecar.Config
function M.defaults()
  return vim.deepcopy(defaults)
end

return setmetatable(M, {
  __index = function(_, key)
    return M.options[key]
  end,
})
