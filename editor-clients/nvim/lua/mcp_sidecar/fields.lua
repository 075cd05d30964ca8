--- The fields of a form, from a JSON object schema (a server's `requestedSchema`, a tool's
--- `inputSchema`): what each asks, the rules its value must meet, and how a value reads. Pure
--- logic, no UI: ui/form.lua asks the person.
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
function M.option_of(f, value)
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
    if not M.option_of(f, value) then
      return "not one of the choices"
    end
  elseif f.kind == "multi" then
    if type(value) ~= "table" then
      return "must be a list of choices"
    end
    for _, v in ipairs(value) do
      if not M.option_of(f, v) then
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
    local o = M.option_of(f, value)
    return o and o.label or Text.one_line(value)
  elseif f.kind == "multi" then
    local labels = {}
    for _, v in ipairs(value) do
      local o = M.option_of(f, v)
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

return M
