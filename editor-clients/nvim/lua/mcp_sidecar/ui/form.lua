--- A form built once from a JSON schema, used for a server's `mcp/elicit` (form mode) and for a
--- tool's arguments (`:Mcp call` without JSON). Each field is asked in turn, with its current value
--- pre-filled: `vim.ui.input` for text and numbers (validated, asked again with the problem on a
--- bad value), `vim.ui.select` for enums and booleans (multi-select: repeated picks, then "Done").
--- A float shows every value throughout; nothing is sent before Submit there (`s`), `e` edits a
--- value, `d` declines (elicitation), `q` cancels. A field the form cannot ask as one value (a
--- nested object or a free-form array in a tool schema) is asked as JSON.
local Config = require("mcp_sidecar.config")
local Text = require("mcp_sidecar.text")

local M = {}

---@class mcp_sidecar.FormOption
---@field value string|number|boolean
---@field label string

---@class mcp_sidecar.FormField
---@field name string the property name (the key in the answer)
---@field label string its title, else its name (one line)
---@field description? string
---@field kind "string"|"number"|"integer"|"boolean"|"enum"|"multi"|"json"
---@field required boolean
---@field default? any
---@field options? mcp_sidecar.FormOption[] enum, boolean and multi fields
---@field format? string string fields: email, uri, date, date-time (others are not checked)
---@field minLength? integer
---@field maxLength? integer
---@field minimum? number
---@field maximum? number
---@field minItems? integer
---@field maxItems? integer
---@field json_type? "object"|"array" what a JSON field must decode to

local function is_scalar(v)
  local t = type(v)
  return t == "string" or t == "number" or t == "boolean"
end

--- `enum` (with `enumNames` as labels when they match one for one), or nil.
local function enum_options(enum, names)
  if type(enum) ~= "table" or #enum == 0 then
    return nil
  end
  local titled = type(names) == "table" and #names == #enum
  local out = {}
  for i, v in ipairs(enum) do
    if not is_scalar(v) then
      return nil
    end
    local label = titled and is_scalar(names[i]) and tostring(names[i]) or tostring(v)
    table.insert(out, { value = v, label = Text.one_line(label) })
  end
  return out
end

--- `oneOf` / `anyOf` of `{const, title}`, or nil.
local function const_options(list)
  if type(list) ~= "table" or #list == 0 then
    return nil
  end
  local out = {}
  for _, entry in ipairs(list) do
    if type(entry) ~= "table" or not is_scalar(entry.const) then
      return nil
    end
    local label = type(entry.title) == "string" and entry.title or tostring(entry.const)
    table.insert(out, { value = entry.const, label = Text.one_line(label) })
  end
  return out
end

--- The property's one type other than "null", or nil.
local function type_of(p)
  local t = p.type
  if type(t) == "table" then
    local others = vim.tbl_filter(function(x)
      return x ~= "null"
    end, t)
    return #others == 1 and others[1] or nil
  end
  return type(t) == "string" and t or nil
end

local function number_or_nil(v)
  return type(v) == "number" and v or nil
end

---@param p table
---@return string kind, mcp_sidecar.FormOption[]? options
local function kind_of(p)
  local t = type_of(p)
  local options = enum_options(p.enum, p.enumNames) or const_options(p.oneOf)
  if t ~= "array" then
    options = options or const_options(p.anyOf)
  end
  if options and (t == nil or t == "string" or t == "number" or t == "integer" or t == "boolean") then
    return "enum", options
  end
  if t == "array" and type(p.items) == "table" then
    local items = p.items
    options = enum_options(items.enum, items.enumNames) or const_options(items.anyOf) or const_options(items.oneOf)
    if options then
      return "multi", options
    end
  end
  if t == "boolean" then
    return "boolean", { { value = true, label = "yes" }, { value = false, label = "no" } }
  end
  if t == "string" or t == "number" or t == "integer" then
    return t
  end
  return "json"
end

---@param name string
---@param p table
---@param required boolean
---@return mcp_sidecar.FormField
local function field(name, p, required)
  local kind, options = kind_of(p)
  local label = type(p.title) == "string" and Text.one_line(p.title) or ""
  local t = type_of(p)
  return {
    name = name,
    label = label ~= "" and label or Text.one_line(name),
    description = type(p.description) == "string" and p.description or nil,
    kind = kind,
    required = required,
    default = p.default ~= vim.NIL and p.default or nil,
    options = options,
    format = type(p.format) == "string" and p.format or nil,
    minLength = number_or_nil(p.minLength),
    maxLength = number_or_nil(p.maxLength),
    minimum = number_or_nil(p.minimum),
    maximum = number_or_nil(p.maximum),
    minItems = number_or_nil(p.minItems),
    maxItems = number_or_nil(p.maxItems),
    json_type = kind == "json" and (t == "object" or t == "array") and t or nil,
  }
end

--- The fields of an object schema: the required ones in the order `required` lists them, then the
--- others by name (a decoded JSON object keeps no order of its own).
---@param schema table?
---@return mcp_sidecar.FormField[]
function M.fields(schema)
  local props = type(schema) == "table" and type(schema.properties) == "table" and schema.properties or {}
  local required, order = {}, {}
  for _, name in ipairs(type(schema) == "table" and type(schema.required) == "table" and schema.required or {}) do
    if type(name) == "string" and type(props[name]) == "table" and not required[name] then
      required[name] = true
      table.insert(order, name)
    end
  end
  local rest = {}
  for name, p in pairs(props) do
    if type(name) == "string" and type(p) == "table" and not required[name] then
      table.insert(rest, name)
    end
  end
  table.sort(rest)
  vim.list_extend(order, rest)
  local out = {}
  for _, name in ipairs(order) do
    table.insert(out, field(name, props[name], required[name] == true))
  end
  return out
end

local function leap(y)
  return (y % 4 == 0 and y % 100 ~= 0) or y % 400 == 0
end

local function valid_date(text)
  local y, m, d = text:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)$")
  if not y then
    return false
  end
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  local days = { 31, leap(y) and 29 or 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }
  return m >= 1 and m <= 12 and d >= 1 and d <= days[m]
end

--- RFC 3339 date-time (JSON Schema's `date-time`): a date, `T`, a time and an offset.
local function valid_date_time(text)
  local date, h, mi, s, rest = text:match("^(%d%d%d%d%-%d%d%-%d%d)[Tt](%d%d):(%d%d):(%d%d)(.*)$")
  if not date or not valid_date(date) then
    return false
  end
  if tonumber(h) > 23 or tonumber(mi) > 59 or tonumber(s) > 60 then
    return false
  end
  rest = rest:gsub("^%.%d+", "")
  if rest == "Z" or rest == "z" then
    return true
  end
  local oh, om = rest:match("^[+-](%d%d):(%d%d)$")
  return oh ~= nil and tonumber(oh) <= 23 and tonumber(om) <= 59
end

--- The checked formats: a check and the words of its problem.
M.formats = {
  email = {
    check = function(s)
      local domain = s:match("^[^%s@]+@([%w-]+%.[%w.-]+)$")
      return domain ~= nil and not domain:find("%.%.") and not domain:find("%.$") and not domain:find("^%-")
    end,
    problem = "an email address (name@example.com)",
  },
  uri = {
    check = function(s)
      return s:match("^%a[%w+.-]*:[^%s]+$") ~= nil
    end,
    problem = "a URI with a scheme (https://example.com)",
  },
  date = { check = valid_date, problem = "a date (YYYY-MM-DD)" },
  ["date-time"] = { check = valid_date_time, problem = "a date and time (2026-12-01T09:30:00Z)" },
}

---@param f mcp_sidecar.FormField
---@param value any
---@return mcp_sidecar.FormOption?
local function option_of(f, value)
  for _, o in ipairs(f.options or {}) do
    if o.value == value then
      return o
    end
  end
end

local function num(n)
  return ("%.14g"):format(n)
end

--- The problem with a value of a field, or nil when it fits (nil: no value).
---@param f mcp_sidecar.FormField
---@param value any
---@return string? problem
function M.check(f, value)
  if value == nil then
    return f.required and "required" or nil
  end
  if f.kind == "string" then
    if type(value) ~= "string" then
      return "must be text"
    end
    local n = vim.fn.strchars(value)
    if f.minLength and n < f.minLength then
      return ("at least %d characters"):format(f.minLength)
    elseif f.maxLength and n > f.maxLength then
      return ("at most %d characters"):format(f.maxLength)
    end
    local format = f.format and M.formats[f.format]
    if format and not format.check(value) then
      return "must be " .. format.problem
    end
  elseif f.kind == "number" or f.kind == "integer" then
    if type(value) ~= "number" then
      return "must be a number"
    elseif f.kind == "integer" and value ~= math.floor(value) then
      return "must be a whole number"
    elseif f.minimum and value < f.minimum then
      return "at least " .. num(f.minimum)
    elseif f.maximum and value > f.maximum then
      return "at most " .. num(f.maximum)
    end
  elseif f.kind == "enum" or f.kind == "boolean" then
    if not option_of(f, value) then
      return "not one of the choices"
    end
  elseif f.kind == "multi" then
    if type(value) ~= "table" then
      return "must be a list of choices"
    end
    for _, v in ipairs(value) do
      if not option_of(f, v) then
        return "not one of the choices"
      end
    end
    if f.minItems and #value < f.minItems then
      return ("choose at least %d"):format(f.minItems)
    elseif f.maxItems and #value > f.maxItems then
      return ("choose at most %d"):format(f.maxItems)
    end
  end
  return nil
end

--- A typed answer as the field's value: `value, nil`, or `nil, problem`. Empty means no value.
---@param f mcp_sidecar.FormField
---@param text string
---@return any value
---@return string? problem
function M.parse(f, text)
  if text == "" then
    return nil, f.required and "required" or nil
  end
  local value = text
  if f.kind == "number" or f.kind == "integer" then
    local trimmed = vim.trim(text)
    -- tonumber also reads hex, inf and nan, which JSON has no number for
    local n = not trimmed:find("[xXnN]") and tonumber(trimmed) or nil
    if not n or n ~= n then
      return nil, f.kind == "integer" and "must be a whole number" or "must be a number"
    end
    value = n
  elseif f.kind == "json" then
    local ok, decoded = pcall(vim.json.decode, text)
    if not ok or decoded == vim.NIL then
      return nil, "must be JSON"
    end
    local is_list = type(decoded) == "table" and vim.islist(decoded) and getmetatable(decoded) == nil
    if f.json_type == "object" and (type(decoded) ~= "table" or (is_list and next(decoded) ~= nil)) then
      return nil, "must be a JSON object"
    elseif f.json_type == "array" and not (type(decoded) == "table" and is_list) then
      return nil, "must be a JSON array"
    end
    value = decoded
  end
  local problem = M.check(f, value)
  if problem then
    return nil, problem
  end
  return value, nil
end

--- A value as the form shows it (one line; "—" for no value).
---@param f mcp_sidecar.FormField
---@param value any
---@return string
function M.display(f, value)
  if value == nil then
    return "—"
  elseif f.kind == "enum" or f.kind == "boolean" then
    local o = option_of(f, value)
    return o and o.label or Text.one_line(value)
  elseif f.kind == "multi" then
    local labels = {}
    for _, v in ipairs(value) do
      local o = option_of(f, v)
      table.insert(labels, o and o.label or Text.one_line(v))
    end
    return #labels > 0 and table.concat(labels, ", ") or "(none)"
  elseif f.kind == "json" then
    return Text.one_line(vim.json.encode(value))
  elseif type(value) == "number" then
    return num(value)
  end
  return Text.one_line(value)
end

--- A value as the text an input starts with.
---@param f mcp_sidecar.FormField
---@param value any
---@return string
function M.text_of(f, value)
  if value == nil then
    return ""
  elseif f.kind == "json" then
    return vim.json.encode(value)
  elseif type(value) == "number" then
    return num(value)
  end
  return tostring(value)
end

--- What an input or a pick asks: the label, `*` when required, and the rules it checks.
---@param f mcp_sidecar.FormField
---@return string
function M.prompt(f)
  local rules = {}
  if f.kind == "integer" or f.kind == "number" then
    local what = f.kind == "integer" and "whole number" or "number"
    if f.minimum and f.maximum then
      what = ("%s %s–%s"):format(what, num(f.minimum), num(f.maximum))
    elseif f.minimum then
      what = ("%s ≥ %s"):format(what, num(f.minimum))
    elseif f.maximum then
      what = ("%s ≤ %s"):format(what, num(f.maximum))
    end
    table.insert(rules, what)
  elseif f.kind == "string" then
    if f.format then
      table.insert(rules, Text.one_line(f.format))
    end
    if f.minLength or f.maxLength then
      table.insert(rules, ("%s–%s characters"):format(f.minLength or 0, f.maxLength or "…"))
    end
  elseif f.kind == "json" then
    table.insert(rules, "JSON" .. (f.json_type and (" " .. f.json_type) or ""))
  elseif f.kind == "multi" then
    if f.minItems or f.maxItems then
      table.insert(rules, ("choose %s–%s"):format(f.minItems or 0, f.maxItems or "…"))
    end
  end
  local text = f.label .. (f.required and " *" or "")
  if #rules > 0 then
    text = text .. " (" .. table.concat(rules, ", ") .. ")"
  end
  return text .. ": "
end

--- The values a form starts with: each field's default when it fits the field.
---@param fields mcp_sidecar.FormField[]
---@param initial? table values to start from instead (a call's previous arguments)
---@return table<string, any>
function M.initial_values(fields, initial)
  local values = {}
  for _, f in ipairs(fields) do
    local v = initial and initial[f.name]
    if v == nil then
      v = f.default
    end
    if v ~= nil and f.kind ~= "json" and M.check(f, v) then
      v = nil -- a default that does not fit is not offered as the answer
    end
    values[f.name] = v
  end
  return values
end

--- Each field without a value that needs one, or with a value that does not fit.
---@param fields mcp_sidecar.FormField[]
---@param values table
---@return {field: mcp_sidecar.FormField, problem: string}[]
function M.problems(fields, values)
  local out = {}
  for _, f in ipairs(fields) do
    local problem = M.check(f, values[f.name])
    if problem then
      table.insert(out, { field = f, problem = problem })
    end
  end
  return out
end

--- The answer: the values keyed by property name (an empty JSON object when there are none).
---@param fields mcp_sidecar.FormField[]
---@param values table
---@return table
function M.content(fields, values)
  local out = {}
  for _, f in ipairs(fields) do
    if values[f.name] ~= nil then
      out[f.name] = values[f.name]
    end
  end
  return next(out) and out or vim.empty_dict()
end

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
    table.insert(lines, (" %s %s%s  %s"):format(mark, label, pad, M.display(f, values[f.name])))
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
  view.done(action, action == "accept" and M.content(view.fields, view.values) or nil)
end

--- Ask one text field; on a bad value ask again with the problem and what was typed.
local function ask_input(f, current, cb, problem, typed)
  local prompt = (problem and ("✘ " .. problem .. " · ") or "") .. M.prompt(f)
  vim.ui.input({ prompt = prompt, default = typed or M.text_of(f, current) }, function(input)
    if input == nil then
      return cb(false)
    end
    local value, err = M.parse(f, input)
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
  local items, first = {}, option_of(f, current)
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
    prompt = M.prompt(f),
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
      prompt = (problem and ("✘ " .. problem .. " · ") or "") .. M.prompt(f),
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
        local err = M.check(f, value)
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
      return f.label .. ": " .. M.display(f, view.values[f.name])
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
  local problems = M.problems(view.fields, view.values)
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
  local fields = M.fields(schema)
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
    values = M.initial_values(fields, opts.initial),
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
