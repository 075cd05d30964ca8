--- A form built once from a JSON schema (fields.lua), used for a server's `mcp/elicit` (form
--- mode) and for a tool's arguments (`:Mcp call` without JSON). Each field is asked in turn, with
--- its current value pre-filled: `vim.ui.input` for text and numbers (validated, asked again with
--- the problem on a bad value), `vim.ui.select` for enums and booleans (multi-select: repeated
--- picks, then "Done"). A float shows every value throughout; nothing is sent before Submit there
--- (`s`), `e` edits a value, `d` declines (elicitation), `q` cancels. A field the form cannot ask
--- as one value (a nested object or a free-form array in a tool schema) is asked as JSON.
local Config = require("mcp_sidecar.config")
local Fields = require("mcp_sidecar.fields")
local Text = require("mcp_sidecar.text")

local M = {}

---@class mcp_sidecar.FormOpts
---@field title string the float's title
---@field message? string server text shown above the fields (plain text)
---@field decline? boolean offer `d` decline (elicitation)
---@field empty? string what the float says when there are no fields
---@field initial? table values to start from instead of the defaults

--- The float's lines: the message, a row (and a description line) per field, the keys.
---@param fields mcp_sidecar.FormField[]
---@param values table
---@param opts mcp_sidecar.FormOpts
---@param state {current?: integer, problem?: string}
---@return string[] lines, table<integer, integer> rows line -> field index, integer[] dim lines shown dimmed
function M.render(fields, values, opts, state)
  local lines, rows, dim = {}, {}, {}
  if opts.message and opts.message ~= "" then
    vim.list_extend(lines, Text.lines(opts.message, " "))
    table.insert(lines, "")
  end
  local width = 0
  for _, f in ipairs(fields) do
    width = math.max(width, vim.fn.strdisplaywidth(f.label) + (f.required and 2 or 0))
  end
  width = math.min(width, 32)
  if #fields == 0 then
    table.insert(lines, " " .. (opts.empty or "(nothing to fill in)"))
  end
  for i, f in ipairs(fields) do
    local label = Text.clip(f.label .. (f.required and " *" or ""), width)
    local pad = string.rep(" ", width - vim.fn.strdisplaywidth(label))
    local mark = state.current == i and "▸" or " "
    table.insert(lines, (" %s %s%s  %s"):format(mark, label, pad, Fields.display(f, values[f.name])))
    rows[#lines] = i
    if f.description and f.description ~= "" then
      table.insert(lines, "     " .. Text.one_line(f.description))
      rows[#lines] = i
      table.insert(dim, #lines)
    end
  end
  table.insert(lines, "")
  if state.problem then
    table.insert(lines, " ✘ " .. state.problem)
  end
  local keys = { "s submit", "e edit" }
  if opts.decline then
    table.insert(keys, "d decline")
  end
  table.insert(keys, "q cancel")
  table.insert(lines, (#fields > 0 and " * required · " or " ") .. table.concat(keys, " · "))
  table.insert(dim, #lines)
  return lines, rows, dim
end

-- The interactive form ---------------------------------------------------------------------

local ns = vim.api.nvim_create_namespace("mcp_sidecar_form")

---@class mcp_sidecar.FormView
---@field fields mcp_sidecar.FormField[]
---@field values table
---@field opts mcp_sidecar.FormOpts
---@field buf integer
---@field win integer
---@field rows table<integer, integer>
---@field current? integer the field being asked
---@field problem? string
---@field asking boolean a field's prompt is open
---@field settled boolean
---@field done fun(action: "accept"|"decline"|"cancel", content: table?)

---@param view mcp_sidecar.FormView
local function draw(view)
  if not vim.api.nvim_buf_is_valid(view.buf) then
    return
  end
  local lines, rows, dim = M.render(view.fields, view.values, view.opts, view)
  view.rows = rows
  vim.bo[view.buf].modifiable = true
  vim.api.nvim_buf_set_lines(view.buf, 0, -1, false, lines)
  vim.bo[view.buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(view.buf, ns, 0, -1)
  for _, l in ipairs(dim) do
    vim.api.nvim_buf_set_extmark(view.buf, ns, l - 1, 0, { end_row = l, hl_group = "Comment", hl_eol = false })
  end
  if not vim.api.nvim_win_is_valid(view.win) then
    return
  end
  local widest = 0
  for _, l in ipairs(lines) do
    widest = math.max(widest, vim.fn.strdisplaywidth(l))
  end
  local width = math.min(math.max(widest + 1, 50), vim.o.columns - 4)
  local height = 0
  for _, l in ipairs(lines) do
    height = height + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  vim.api.nvim_win_set_config(view.win, {
    relative = "editor",
    row = 1,
    col = math.floor((vim.o.columns - width) / 2),
    width = width,
    height = math.max(1, math.min(height, vim.o.lines - 6)),
  })
  if view.current then
    for line, index in pairs(rows) do
      if index == view.current and (rows[line - 1] ~= index) then
        pcall(vim.api.nvim_win_set_cursor, view.win, { line, 0 })
      end
    end
  end
end

---@param view mcp_sidecar.FormView
---@param action "accept"|"decline"|"cancel"
local function finish(view, action)
  if view.settled then
    return
  end
  view.settled = true
  if vim.api.nvim_win_is_valid(view.win) then
    vim.api.nvim_win_close(view.win, true)
  end
  view.done(action, action == "accept" and Fields.content(view.fields, view.values) or nil)
end

--- Ask one text field; on a bad value ask again with the problem and what was typed.
local function ask_input(f, current, cb, problem, typed)
  local prompt = (problem and ("✘ " .. problem .. " · ") or "") .. Fields.prompt(f)
  vim.ui.input({ prompt = prompt, default = typed or Fields.text_of(f, current) }, function(input)
    if input == nil then
      return cb(false)
    end
    local value, err = Fields.parse(f, input)
    if err then
      return vim.schedule(function()
        ask_input(f, current, cb, err, input)
      end)
    end
    cb(true, value)
  end)
end

--- Ask an enum or a boolean: the current value first (what most pickers preselect), then the
--- others in the schema's order, and "(no value)" for a field that may stay empty.
local function ask_select(f, current, cb)
  local items, first = {}, Fields.option_of(f, current)
  if first then
    table.insert(items, { option = first, current = true })
  elseif not f.required then
    table.insert(items, { none = true, current = true })
  end
  for _, o in ipairs(f.options) do
    if o ~= first then
      table.insert(items, { option = o })
    end
  end
  if first and not f.required then
    table.insert(items, { none = true })
  end
  vim.ui.select(items, {
    prompt = Fields.prompt(f),
    kind = "mcp_sidecar.form",
    format_item = function(item)
      return (item.current and "● " or "  ") .. (item.none and "(no value)" or item.option.label)
    end,
  }, function(choice)
    if choice == nil then
      return cb(false)
    end
    cb(true, (not choice.none) and choice.option.value or nil)
  end)
end

--- Ask a multi-select: pick options to toggle them, then "Done" (checked against min/maxItems).
local function ask_multi(f, current, cb)
  local chosen = {}
  for i, o in ipairs(f.options) do
    chosen[i] = vim.tbl_contains(current or {}, o.value) or nil
  end
  local function selected()
    local out = {}
    for i, o in ipairs(f.options) do
      if chosen[i] then
        table.insert(out, o.value)
      end
    end
    return out
  end
  local function loop(problem)
    local items = { { done = true } }
    for i in ipairs(f.options) do
      table.insert(items, { index = i })
    end
    vim.ui.select(items, {
      prompt = (problem and ("✘ " .. problem .. " · ") or "") .. Fields.prompt(f),
      kind = "mcp_sidecar.form",
      format_item = function(item)
        if item.done then
          return ("✔ Done (%d selected)"):format(#selected())
        end
        return (chosen[item.index] and "[x] " or "[ ] ") .. f.options[item.index].label
      end,
    }, function(choice)
      if choice == nil then
        return cb(false)
      end
      if choice.done then
        local value = selected()
        if #value == 0 and not f.required and not f.minItems then
          return cb(true, nil)
        end
        local err = Fields.check(f, value)
        if err then
          return vim.schedule(function()
            loop(err)
          end)
        end
        return cb(true, value)
      end
      chosen[choice.index] = (not chosen[choice.index]) or nil
      vim.schedule(function()
        loop()
      end)
    end)
  end
  loop()
end

---@param view mcp_sidecar.FormView
---@param index integer
---@param after fun(asked: boolean) asked: false when the person left the prompt (<Esc>)
local function ask(view, index, after)
  local f = view.fields[index]
  view.current, view.asking, view.problem = index, true, nil
  draw(view)
  -- Paint the float before the prompt: Neovim's own input() and inputlist() block the screen
  -- (and the previous inputlist would still cover it).
  vim.cmd("redraw")
  local asker = (f.kind == "multi" and ask_multi)
    or ((f.kind == "enum" or f.kind == "boolean") and ask_select)
    or ask_input
  asker(f, view.values[f.name], function(ok, value)
    if view.settled then
      return
    end
    view.asking = false
    if ok then
      view.values[f.name] = value
    end
    vim.schedule(function()
      after(ok)
    end)
  end)
end

--- Every field in turn; <Esc> on one stops there and shows the values so far.
---@param view mcp_sidecar.FormView
---@param index integer
local function walk(view, index)
  if view.settled then
    return
  end
  if index > #view.fields then
    view.current = nil
    draw(view)
    return vim.cmd("redraw")
  end
  ask(view, index, function(ok)
    if ok then
      return walk(view, index + 1)
    end
    view.current = nil
    draw(view)
    vim.cmd("redraw")
  end)
end

---@param view mcp_sidecar.FormView
local function edit(view)
  if view.asking or view.settled then
    return
  end
  local line = vim.api.nvim_win_get_cursor(view.win)[1]
  local index = view.rows[line]
  local function go(i)
    ask(view, i, function()
      view.current = nil
      draw(view)
      vim.cmd("redraw")
    end)
  end
  if index then
    return go(index)
  end
  if #view.fields == 0 then
    return
  end
  vim.ui.select(view.fields, {
    prompt = "Edit which value?",
    format_item = function(f)
      return f.label .. ": " .. Fields.display(f, view.values[f.name])
    end,
  }, function(f)
    if f then
      go(vim.fn.index(view.fields, f) + 1)
    end
  end)
end

---@param view mcp_sidecar.FormView
local function submit(view)
  if view.asking or view.settled then
    return
  end
  local problems = Fields.problems(view.fields, view.values)
  if #problems > 0 then
    local parts = {}
    for _, p in ipairs(problems) do
      table.insert(parts, ("%s: %s"):format(p.field.label, p.problem))
    end
    view.problem = "Not sent. " .. table.concat(parts, "; ")
    return draw(view)
  end
  finish(view, "accept")
end

---@param view mcp_sidecar.FormView
local function map_keys(view)
  local function map(key, fn, desc)
    vim.keymap.set("n", key, fn, { buffer = view.buf, nowait = true, desc = desc })
  end
  map("s", function()
    submit(view)
  end, "Submit")
  map("e", function()
    edit(view)
  end, "Edit the value under the cursor")
  map("<CR>", function()
    edit(view)
  end, "Edit the value under the cursor")
  if view.opts.decline then
    map("d", function()
      if not view.asking then
        finish(view, "decline")
      end
    end, "Decline")
  end
  for _, key in ipairs({ "q", "<Esc>" }) do
    map(key, function()
      finish(view, "cancel")
    end, "Cancel")
  end
end

--- Open the form: ask each field, then wait for Submit, Decline or Cancel in the float.
---@param schema table the object schema (`requestedSchema`, a tool's `inputSchema`)
---@param opts mcp_sidecar.FormOpts
---@param done fun(action: "accept"|"decline"|"cancel", content: table?) once, with the values on accept
---@return mcp_sidecar.FormView view `M.cancel(view)` withdraws it
function M.open(schema, opts, done)
  local fields = Fields.fields(schema)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "mcp_sidecar_form"
  local win = vim.api.nvim_open_win(buf, true, {
    relative = "editor",
    row = 1,
    col = 2,
    width = 50,
    height = 3,
    style = "minimal",
    border = Config.float.border,
    title = " " .. Text.one_line(opts.title) .. " ",
    title_pos = "center",
  })
  vim.wo[win].wrap = true
  vim.wo[win].cursorline = true
  ---@type mcp_sidecar.FormView
  local view = {
    fields = fields,
    values = Fields.initial_values(fields, opts.initial),
    opts = opts,
    buf = buf,
    win = win,
    rows = {},
    asking = false,
    settled = false,
    done = done,
  }
  map_keys(view)
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      finish(view, "cancel")
    end,
  })
  draw(view)
  vim.schedule(function()
    walk(view, 1)
  end)
  return view
end

--- Withdraw an open form (the question was cancelled): close it and answer `cancel`.
---@param view mcp_sidecar.FormView
function M.cancel(view)
  finish(view, "cancel")
end

return M
