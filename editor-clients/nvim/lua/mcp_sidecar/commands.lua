--- `:Mcp [line]`: alone it opens the status float; a few subcommands are the plugin's own
--- (search, activate, call, calls, read, app, trust, review, restart, health, logs, folder, retry); every other line is sent to the
--- sidecar's `mcp/command`, so each documented `/mcp` command works exactly as documented. A login
--- line's result is carried to its end by login.lua.
local Client = require("mcp_sidecar.client")
local Login = require("mcp_sidecar.login")
local P = require("mcp_sidecar.protocol")
local State = require("mcp_sidecar.state")
local Trust = require("mcp_sidecar.trust")

local M = {}

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "mcp" })
end

--- The sidecar's `/mcp` commands with their options and completions (`mcp/commandSpec`, the
--- table its parser reads), fetched when the sidecar starts. Nil until it answers.
---@return table? spec
---@param wait? boolean wait (at most a second) when it is not there yet
function M.spec(wait)
  if not State.command_spec and wait then
    local _, result = Client.request_sync(P.m.command_spec, nil, 1000)
    State.command_spec = State.command_spec or result
  end
  return State.command_spec
end

--- One sidecar command's entry in the spec.
---@param name string
---@param wait? boolean
---@return table?
function M.command(name, wait)
  for _, entry in ipairs((M.spec(wait) or {}).commands or {}) do
    if entry.name == name then
      return entry
    end
  end
end

--- The plugin's own subcommands.
---@type table<string, {run: fun(args: string[], line: string), complete?: "tools"|"server"|"folder"}>
M.local_commands = {
  search = {
    run = function(_, line)
      require("mcp_sidecar.ui.search").open(vim.trim(line:gsub("^%s*search", "", 1)))
    end,
  },
  activate = {
    complete = "tools",
    run = function(args)
      if #args == 0 then
        return notify("Usage: :Mcp activate SERVER.TOOL...", vim.log.levels.ERROR)
      end
      require("mcp_sidecar").activate(args, function(err, result)
        if err then
          return notify(Client.format_error(err), vim.log.levels.ERROR)
        end
        M.show(result.text or "")
      end)
    end,
  },
  call = {
    complete = "tools",
    run = function(args, line)
      local id = args[1]
      if not id then
        return notify("Usage: :Mcp call SERVER.TOOL [JSON-ARGUMENTS]", vim.log.levels.ERROR)
      end
      local json = vim.trim(line:gsub("^%s*call%s+%S+", "", 1))
      local arguments
      if json ~= "" then
        local ok, decoded = pcall(vim.json.decode, json)
        if not ok or type(decoded) ~= "table" then
          return notify("Arguments must be a JSON object", vim.log.levels.ERROR)
        end
        arguments = decoded
      end
      local server = id:match("^mcp__(.-)__") or id:match("^([^.]+)%.")
      require("mcp_sidecar.ui.actions").actions.call({ id = id, server = server }, { arguments = arguments })
    end,
  },
  read = {
    complete = "server",
    run = function(args)
      if #args ~= 2 then
        return notify("Usage: :Mcp read SERVER URI", vim.log.levels.ERROR)
      end
      require("mcp_sidecar.ui.actions").actions.read({ kind = "resource", server = args[1], uri = args[2] })
    end,
  },
  app = {
    complete = "server",
    run = function(args)
      if #args ~= 2 then
        return notify("Usage: :Mcp app SERVER UI-URI", vim.log.levels.ERROR)
      end
      require("mcp_sidecar.apps").open(args[1], args[2])
    end,
  },
  trust = {
    run = function()
      M.trust()
    end,
  },
  calls = {
    run = function(args)
      require("mcp_sidecar.calls").run(args)
    end,
  },
  logs = {
    complete = "server",
    run = function(args)
      require("mcp_sidecar.logs").show(args[1])
    end,
  },
  folder = {
    complete = "folder",
    run = function(args)
      M.folder(args[1], args[2])
    end,
  },
  retry = {
    run = function()
      require("mcp_sidecar.retry").retry_last()
    end,
  },
  review = {
    complete = "server",
    run = function(args)
      require("mcp_sidecar.approvals").review(args[1])
    end,
  },
  restart = {
    run = function()
      Client.restart(nil, function()
        notify("mcp-sidecar restarted")
      end)
    end,
  },
  health = {
    run = function()
      vim.cmd.checkhealth("mcp_sidecar")
    end,
  },
}

--- `:Mcp folder [add|remove DIR]`: the workspace folders offered to servers as roots.
---@param action? string
---@param dir? string
function M.folder(action, dir)
  if action == nil or action == "list" then
    return M.show(
      "Workspace folders (roots offered to servers):\n  " .. table.concat(require("mcp_sidecar").folders(), "\n  ")
    )
  end
  if (action ~= "add" and action ~= "remove") or (action == "remove" and not dir) then
    return notify("Usage: :Mcp folder [list | add [DIR] | remove DIR]", vim.log.levels.ERROR)
  end
  dir = dir or vim.fn.getcwd()
  local ok, problem = require("mcp_sidecar.offer")[action .. "_folder"](dir)
  if not ok then
    return notify(problem or "failed", vim.log.levels.WARN)
  end
  notify(
    (action == "add" and "Added workspace folder " or "Removed workspace folder ") .. vim.fn.fnamemodify(dir, ":p")
  )
end

--- Trust the project's .mcp.json with vim.secure.trust and restart the sidecar with it,
--- telling it that trust was granted just now (`initializationOptions.trustGranted`).
function M.trust()
  local root = Client.root()
  local path = root .. "/.mcp.json"
  if vim.fn.filereadable(path) == 0 then
    return notify("No .mcp.json in " .. root, vim.log.levels.WARN)
  end
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  local ok, err = vim.secure.trust({ action = "allow", bufnr = buf })
  if not ok then
    return notify("Could not trust " .. path .. ": " .. tostring(err), vim.log.levels.ERROR)
  end
  Trust.note_trusted(path)
  -- The person granted trust just now: the restarted sidecar approves the definitions the
  -- file has (trustGranted); a later start asks about any it has not seen approved.
  Client.restart(root, function()
    notify("Trusted " .. path)
  end, { trust_granted = true })
end

--- Show command output: short text as a message, long text in a scratch buffer.
---@param text string
---@param name? string
function M.show(text, name)
  local lines = vim.split(text, "\n", { plain = true })
  if #lines > 12 then
    require("mcp_sidecar.ui.scratch").open("mcp://" .. (name or "output"), text, { filetype = "mcp_sidecar_output" })
  else
    vim.api.nvim_echo({ { text } }, true, {})
  end
end

--- Send one line to `mcp/command`.
---@param line string
---@param cb? fun(err: mcp_sidecar.Error?, result: table?)
function M.execute(line, cb)
  local root = Client.root()
  Client.request(P.m.command, { line = line }, function(err, result)
    if err then
      local text = Client.format_error(err)
      if err.data and err.data.usage then
        text = text .. "\n" .. err.data.usage
      end
      notify(text, Client.unsupported(err) and vim.log.levels.WARN or vim.log.levels.ERROR)
    else
      M.after_edit(root, result)
      if result.command == "profile" and type(result.data) == "table" then
        local chosen = result.data.profile
        State.profile = type(chosen) == "table" and chosen.name or nil
        State.changed()
      end
      local login = result.command == "login" and type(result.data) == "table" and result.data or nil
      if login and login.status == "needs_approval" then
        -- The question shows what the text says; the login goes on as the person answers.
        local no_browser = vim.tbl_contains(vim.split(line, "%s+", { trimempty = true }), "--no-browser")
        return Login.approve_scopes(login, no_browser, cb)
      end
      M.show(result.text or "", result.command)
      if login and login.status == "pending" then
        return Login.complete_login(login, cb)
      end
    end
    if cb then
      cb(err, result)
    end
  end)
end

--- A project file the sidecar just wrote stays trusted.
---@private
function M.after_edit(root, result)
  local entry = M.command(result.command)
  if not (entry and entry.changes == "config") then
    return
  end
  Trust.keep_trusted(root)
  if result.data and result.data.server then
    State.changed()
  end
end

---@param args {args: string, fargs: string[]}
function M.run(args)
  local line = args.args or ""
  local name = args.fargs[1]
  if not name then
    return require("mcp_sidecar.ui.status").open()
  end
  local cmd = M.local_commands[name]
  if cmd then
    return cmd.run(vim.list_slice(args.fargs, 2), line)
  end
  M.execute(line)
end

local function refresh_caches()
  if M._refreshing then
    return
  end
  M._refreshing = true
  Client.request(P.m.command_spec, nil, function(_, spec)
    State.command_spec = spec or State.command_spec
  end)
  Client.request(P.m.status, nil, function(_, result)
    if result then
      State.set_servers(result.servers, true, result.profile)
    end
    require("mcp_sidecar").discover("", { kind = "tools", limit = 50 }, function()
      M._refreshing = false
    end)
  end)
end

local function filter(items, prefix)
  return vim.tbl_filter(function(item)
    return vim.startswith(item, prefix)
  end, items)
end

--- The names of a server's tools among the tool ids seen so far (`tools SERVER <Tab>`).
---@param server string? the server named before
---@param arglead string
---@return string[]
local function tool_names(server, arglead)
  if not server then
    return {}
  end
  local prefix = server .. "."
  local names = {}
  for _, id in ipairs(State.tool_id_list()) do
    if vim.startswith(id, prefix) then
      table.insert(names, id:sub(#prefix + 1))
    end
  end
  return filter(names, arglead)
end

--- Completion of `:Mcp ...`: subcommands, options and their values and server names (from the
--- sidecar's command spec), tool ids and a server's tool names (from results seen so far). Waits only the first time,
--- at most a second, for the spec; it refreshes the lists in the background for the next <Tab>.
---@param arglead string
---@param line string
---@param pos integer
---@return string[]
function M.complete(arglead, line, pos)
  local before = line:sub(1, pos)
  local words = vim.split(vim.trim(before:gsub("^%s*%S+", "", 1)), "%s+", { trimempty = true })
  if arglead ~= "" then
    table.remove(words) -- the word being completed
  end
  local spec = M.spec(true) or {}
  if #words == 0 then
    local names = vim.tbl_keys(M.local_commands)
    for _, entry in ipairs(spec.commands or {}) do
      table.insert(names, entry.name)
    end
    table.sort(names)
    return filter(names, arglead)
  end
  refresh_caches()
  local name = words[1]
  local local_cmd = M.local_commands[name]
  if local_cmd then
    if local_cmd.complete == "tools" then
      return filter(State.tool_id_list(), arglead)
    elseif local_cmd.complete == "folder" then
      if #words == 1 then
        return filter({ "add", "list", "remove" }, arglead)
      end
      return #words == 2 and vim.fn.getcompletion(arglead, "dir") or {}
    elseif local_cmd.complete == "server" and #words == 1 then
      return filter(spec.servers or State.server_names(), arglead)
    end
    return {}
  end
  local entry = M.command(name)
  if not entry then
    return {}
  end
  local options, option_names = {}, {}
  for _, option in ipairs(entry.options) do
    options[option.name] = option
    table.insert(option_names, option.name)
  end
  local previous = options[words[#words]]
  if previous and previous.kind ~= "flag" then
    return filter(previous.values, arglead)
  end
  if vim.startswith(arglead, "-") then
    return filter(option_names, arglead)
  end
  -- Which positional is being completed: option values are not positionals; after `--` (add's
  -- command line) nothing is completed.
  local positionals, i = {}, 2
  while i <= #words do
    local word = words[i]
    if word == "--" then
      return {}
    elseif options[word] then
      i = i + (options[word].kind == "flag" and 0 or 1)
    elseif not vim.startswith(word, "-") then
      table.insert(positionals, word)
    end
    i = i + 1
  end
  local wanted = entry.positionals[#positionals + 1]
  if wanted and wanted.completion == "file" then
    return vim.fn.getcompletion(arglead, "file")
  end
  if wanted and wanted.completion == "tool" then
    return tool_names(positionals[#positionals], arglead)
  end
  if wanted and #wanted.values > 0 then
    local items = filter(wanted.values, arglead)
    table.sort(items)
    return #items > 0 and items or filter(option_names, arglead)
  end
  return filter(option_names, arglead)
end

return M
