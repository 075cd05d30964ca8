-- The schema form: its fields and rules (lua/mcp_sidecar/fields.lua), then the interactive form
-- (lua/mcp_sidecar/ui/form.lua) with the person's answers scripted through vim.ui.input /
-- vim.ui.select and the float's keys typed. No sidecar is needed.
local Fields = require("mcp_sidecar.fields")
local Form = require("mcp_sidecar.ui.form")

-- The form schema of server-everything's trigger-elicitation-request (2026.8.31), as sent.
local EVERYTHING = {
  type = "object",
  required = { "name" },
  properties = {
    name = { title = "String", type = "string", description = "Your full, legal name" },
    check = { title = "Boolean", type = "boolean", description = "Agree to the terms and conditions" },
    firstLine = {
      title = "String with default",
      type = "string",
      description = "Favorite first line of a story",
      default = "It was a dark and stormy night.",
    },
    email = { title = "String with email format", type = "string", format = "email" },
    homepage = { type = "string", format = "uri", title = "String with uri format" },
    birthdate = { title = "String with date format", type = "string", format = "date" },
    integer = { title = "Integer", type = "integer", minimum = 1, maximum = 100, default = 42 },
    number = { title = "Number in range 1-1000", type = "number", minimum = 0, maximum = 1000, default = 3.14 },
    untitledSingleSelectEnum = {
      type = "string",
      title = "Untitled Single Select Enum",
      enum = { "Monica", "Rachel", "Joey", "Chandler", "Ross", "Phoebe" },
      default = "Monica",
    },
    untitledMultipleSelectEnum = {
      type = "array",
      title = "Untitled Multiple Select Enum",
      minItems = 1,
      maxItems = 3,
      items = { type = "string", enum = { "Guitar", "Piano", "Violin", "Drums", "Bass" } },
      default = { "Guitar" },
    },
    titledSingleSelectEnum = {
      type = "string",
      title = "Titled Single Select Enum",
      oneOf = {
        { const = "hero-1", title = "Superman" },
        { const = "hero-2", title = "Green Lantern" },
        { const = "hero-3", title = "Wonder Woman" },
      },
      default = "hero-1",
    },
    titledMultipleSelectEnum = {
      type = "array",
      title = "Titled Multiple Select Enum",
      minItems = 1,
      maxItems = 3,
      items = {
        anyOf = {
          { const = "fish-1", title = "Tuna" },
          { const = "fish-2", title = "Salmon" },
          { const = "fish-3", title = "Trout" },
        },
      },
      default = { "fish-1" },
    },
    legacyTitledEnum = {
      type = "string",
      title = "Legacy Titled Single Select Enum",
      enum = { "pet-1", "pet-2", "pet-3", "pet-4", "pet-5" },
      enumNames = { "Cats", "Dogs", "Birds", "Fish", "Reptiles" },
      default = "pet-1",
    },
  },
}

local function by_name(fields)
  local out = {}
  for _, f in ipairs(fields) do
    out[f.name] = f
  end
  return out
end

local function labels(options)
  return vim.tbl_map(function(o)
    return o.label
  end, options)
end

local function form_windows()
  local out = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.bo[buf].filetype == "mcp_sidecar_form" then
      table.insert(out, win)
    end
  end
  return out
end

local function text_of(view)
  return table.concat(vim.api.nvim_buf_get_lines(view.buf, 0, -1, false), "\n")
end

local function press(view, keys)
  vim.api.nvim_set_current_win(view.win)
  vim.api.nvim_feedkeys(vim.keycode(keys), "x", false)
end

describe("form: from a JSON schema", function()
  it("builds one field per property: required first, then by name; kinds, labels and options", function()
    local fields = Fields.fields(EVERYTHING)
    check.eq("name", fields[1].name, "the required field first")
    check.eq(true, fields[1].required)
    local names = vim.tbl_map(function(f)
      return f.name
    end, fields)
    check.eq({
      "name",
      "birthdate",
      "check",
      "email",
      "firstLine",
      "homepage",
      "integer",
      "legacyTitledEnum",
      "number",
      "titledMultipleSelectEnum",
      "titledSingleSelectEnum",
      "untitledMultipleSelectEnum",
      "untitledSingleSelectEnum",
    }, names)
    local f = by_name(fields)
    check.eq("string", f.name.kind)
    check.eq("String", f.name.label)
    check.eq("boolean", f.check.kind)
    check.eq("email", f.email.format)
    check.eq("integer", f.integer.kind)
    check.eq({ 1, 100, 42 }, { f.integer.minimum, f.integer.maximum, f.integer.default })
    check.eq("enum", f.untitledSingleSelectEnum.kind)
    check.eq({ "Monica", "Rachel", "Joey", "Chandler", "Ross", "Phoebe" }, labels(f.untitledSingleSelectEnum.options))
    check.eq({ "Superman", "Green Lantern", "Wonder Woman" }, labels(f.titledSingleSelectEnum.options))
    check.eq("hero-2", f.titledSingleSelectEnum.options[2].value)
    check.eq({ "Cats", "Dogs", "Birds", "Fish", "Reptiles" }, labels(f.legacyTitledEnum.options))
    check.eq("pet-4", f.legacyTitledEnum.options[4].value)
    check.eq("multi", f.untitledMultipleSelectEnum.kind)
    check.eq({ 1, 3 }, { f.untitledMultipleSelectEnum.minItems, f.untitledMultipleSelectEnum.maxItems })
    check.eq("multi", f.titledMultipleSelectEnum.kind)
    check.eq({ "Tuna", "Salmon", "Trout" }, labels(f.titledMultipleSelectEnum.options))
  end)

  it("falls back to a JSON field for nested objects and free-form arrays (tool schemas)", function()
    local f = by_name(Fields.fields({
      type = "object",
      required = { "filter", "tags" },
      properties = {
        filter = { type = "object", properties = { a = { type = "string" } } },
        tags = { type = "array", items = { type = "string" } },
        anything = {},
        maybe = { type = { "string", "null" }, title = "Maybe" },
      },
    }))
    check.eq({ "json", "object" }, { f.filter.kind, f.filter.json_type })
    check.eq({ "json", "array" }, { f.tags.kind, f.tags.json_type })
    check.eq("json", f.anything.kind)
    check.eq("string", f.maybe.kind, "a nullable string is a string")
    check.eq("filter * (JSON object): ", Fields.prompt(f.filter))
    check.eq({ a = "x" }, (Fields.parse(f.filter, '{"a": "x"}')))
    check.eq("must be a JSON object", select(2, Fields.parse(f.filter, "[1, 2]")))
    check.eq("must be a JSON array", select(2, Fields.parse(f.tags, '{"a": 1}')))
    check.eq("must be JSON", select(2, Fields.parse(f.tags, "[1,")))
    check.eq({ "a", "b" }, (Fields.parse(f.tags, '["a", "b"]')))
  end)

  it("validates types, bounds, lengths and the email, uri, date and date-time formats", function()
    local f = by_name(Fields.fields(EVERYTHING))
    local function problem(field, text)
      return select(2, Fields.parse(field, text))
    end
    check.eq("required", problem(f.name, ""))
    check.eq(nil, problem(f.firstLine, ""), "an optional field may stay empty")
    check.eq(nil, (Fields.parse(f.firstLine, "")), "empty is no value")
    check.eq("must be an email address (name@example.com)", problem(f.email, "ada"))
    check.eq("must be an email address (name@example.com)", problem(f.email, "ada@example"))
    check.eq("must be an email address (name@example.com)", problem(f.email, "a da@example.com"))
    check.eq("ada@example.com", (Fields.parse(f.email, "ada@example.com")))
    check.eq("must be a URI with a scheme (https://example.com)", problem(f.homepage, "example.com"))
    check.eq("https://ada.example/x?y=1", (Fields.parse(f.homepage, "https://ada.example/x?y=1")))
    check.eq("must be a date (YYYY-MM-DD)", problem(f.birthdate, "2023-02-29"))
    check.eq("must be a date (YYYY-MM-DD)", problem(f.birthdate, "1815-13-10"))
    check.eq("2024-02-29", (Fields.parse(f.birthdate, "2024-02-29")))
    local dt = { name = "at", label = "At", kind = "string", required = false, format = "date-time" }
    check.eq("2026-12-01T09:30:00Z", (Fields.parse(dt, "2026-12-01T09:30:00Z")))
    check.eq("2026-12-01T09:30:00.25+01:00", (Fields.parse(dt, "2026-12-01T09:30:00.25+01:00")))
    check.eq("must be a date and time (2026-12-01T09:30:00Z)", problem(dt, "2026-12-01 09:30"))
    check.eq("must be a date and time (2026-12-01T09:30:00Z)", problem(dt, "2026-12-01T25:00:00Z"))
    check.eq(7, (Fields.parse(f.integer, " 7 ")))
    check.eq("must be a whole number", problem(f.integer, "7.5"))
    check.eq("must be a whole number", problem(f.integer, "0x10"), "no hex")
    check.eq("at least 1", problem(f.integer, "0"))
    check.eq("at most 100", problem(f.integer, "101"))
    check.eq(2.5, (Fields.parse(f.number, "2.5")))
    check.eq("must be a number", problem(f.number, "inf"))
    check.eq("must be a number", problem(f.number, "nan"))
    local short = { name = "s", label = "S", kind = "string", required = true, minLength = 2, maxLength = 3 }
    check.eq("at least 2 characters", problem(short, "é"))
    check.eq("éé", (Fields.parse(short, "éé")), "length counts characters, not bytes")
    check.eq("at most 3 characters", problem(short, "abcd"))
    check.eq("choose at least 1", Fields.check(f.untitledMultipleSelectEnum, {}))
    check.eq("choose at most 3", Fields.check(f.untitledMultipleSelectEnum, { "Guitar", "Piano", "Violin", "Drums" }))
    check.eq("not one of the choices", Fields.check(f.untitledMultipleSelectEnum, { "Kazoo" }))
    check.eq("not one of the choices", Fields.check(f.legacyTitledEnum, "pet-9"))
  end)

  it("pre-fills defaults that fit, shows values as labels and answers a JSON object", function()
    local fields = Fields.fields(EVERYTHING)
    local values = Fields.initial_values(fields)
    check.eq("It was a dark and stormy night.", values.firstLine)
    check.eq(42, values.integer)
    check.eq({ "fish-1" }, values.titledMultipleSelectEnum)
    check.eq(nil, values.name)
    local f = by_name(fields)
    check.eq("Superman", Fields.display(f.titledSingleSelectEnum, "hero-1"))
    check.eq("Tuna, Trout", Fields.display(f.titledMultipleSelectEnum, { "fish-1", "fish-3" }))
    check.eq("Cats", Fields.display(f.legacyTitledEnum, "pet-1"))
    check.eq("3.14", Fields.display(f.number, 3.14))
    check.eq("—", Fields.display(f.name, nil))
    check.eq("yes", Fields.display(f.check, true))
    local bad = Fields.initial_values(Fields.fields({
      type = "object",
      properties = { n = { type = "integer", minimum = 5, default = 1 }, c = { enum = { "a" }, default = "z" } },
    }))
    check.eq({}, bad, "a default that does not fit is not offered")
    check.eq("{}", vim.json.encode(Fields.content(fields, {})), "no values: an empty JSON object")
    check.eq(
      { "name" },
      vim.tbl_map(function(p)
        return p.field.name
      end, Fields.problems(fields, values))
    )
  end)

  it("renders the server's message as plain text and marks required fields", function()
    local fields = Fields.fields(EVERYTHING)
    local lines, rows = Form.render(
      fields,
      Fields.initial_values(fields),
      { title = "t", message = "Hello\27[31m red\nsecond\tline", decline = true },
      {}
    )
    check.eq(" Hello [31m red", lines[1], "no escape character reaches the buffer")
    check.eq(" second  line", lines[2])
    check.matches("^   String %*%s+—$", lines[4])
    check.eq(1, rows[4])
    check.eq("     Your full, legal name", lines[5])
    check.eq(" * required · s submit · e edit · d decline · q cancel", lines[#lines])
  end)
end)

describe("form: asking the person", function()
  after_each(function()
    for _, win in ipairs(form_windows()) do
      pcall(vim.api.nvim_win_close, win, true)
    end
  end)

  it("asks each field in turn, re-asks a bad value, and sends nothing before Submit", function()
    local answers = {
      "Ada Lovelace", -- name
      "1815-12-10", -- birthdate
      "yes", -- check
      "ada", -- email: not an email
      "ada@example.com", -- asked again
      "", -- firstLine: emptied (optional)
      "https://ada.example", -- homepage
      "7", -- integer
      "Dogs", -- legacyTitledEnum
      "2.5", -- number
      "Salmon", -- titledMultipleSelectEnum: toggle Salmon on
      "Done (2 selected)",
      "Wonder Woman", -- titledSingleSelectEnum
      "Done (1 selected)", -- untitledMultipleSelectEnum: keep Guitar
      "Joey", -- untitledSingleSelectEnum
    }
    local asked, restore = script_ui(answers)
    local result
    local ok, err = pcall(function()
      local view = Form.open(
        EVERYTHING,
        { title = "everything asks", message = "Please provide inputs", decline = true },
        function(action, content)
          result = { action = action, content = content }
        end
      )
      wait_for(function()
        return #answers == 0 and not view.asking and view.current == nil
      end, 5000, "every field asked")
      check.eq(nil, result, "nothing is answered before Submit")
      check.eq("String *: ", asked[1].prompt)
      check.eq("", asked[1].arg)
      check.eq("String with email format (email): ", asked[4].prompt)
      check.eq("✘ must be an email address (name@example.com) · String with email format (email): ", asked[5].prompt)
      check.eq("ada", asked[5].arg, "the re-ask starts from what was typed")
      check.eq("It was a dark and stormy night.", asked[6].arg, "the default is pre-filled")
      check.eq("Integer (whole number 1–100): ", asked[8].prompt)
      check.eq("42", asked[8].arg)
      local text = text_of(view)
      check.matches("Ada Lovelace", text)
      check.matches("Tuna, Salmon", text)
      check.matches("Wonder Woman", text)
      press(view, "s")
      wait_for(function()
        return result
      end, 2000, "the answer")
      check.eq("accept", result.action)
      check.eq({
        name = "Ada Lovelace",
        birthdate = "1815-12-10",
        check = true,
        email = "ada@example.com",
        homepage = "https://ada.example",
        integer = 7,
        legacyTitledEnum = "pet-2",
        number = 2.5,
        titledMultipleSelectEnum = { "fish-1", "fish-2" },
        titledSingleSelectEnum = "hero-3",
        untitledMultipleSelectEnum = { "Guitar" },
        untitledSingleSelectEnum = "Joey",
      }, result.content)
      check.eq(0, #form_windows(), "the float closed")
    end)
    restore()
    check.truthy(ok, err)
  end)

  it("Esc stops asking; Submit refuses a missing required value; e edits the value under the cursor", function()
    local asked, restore = script_ui({
      function()
        return nil -- <Esc> on the first field
      end,
    })
    local result
    local ok, err = pcall(function()
      local view = Form.open(EVERYTHING, { title = "t" }, function(action, content)
        result = { action = action, content = content }
      end)
      wait_for(function()
        return #asked == 1 and view.current == nil
      end, 5000, "the first question")
      press(view, "s")
      check.eq(nil, result, "not sent without the required value")
      check.matches("Not sent%. String: required", text_of(view))
      -- the cursor to the name row, then e
      for line, index in pairs(view.rows) do
        if index == 1 then
          vim.api.nvim_win_set_cursor(view.win, { line, 0 })
        end
      end
      restore()
      asked, restore = script_ui({ "Grace" })
      press(view, "e")
      wait_for(function()
        return #asked == 1 and not view.asking
      end, 5000, "the edit")
      check.eq("String *: ", asked[1].prompt)
      wait_for(function()
        return text_of(view):find("Grace")
      end, 2000, "the new value shown")
      press(view, "s")
      wait_for(function()
        return result
      end, 2000, "the answer")
      check.eq("accept", result.action)
      check.eq("Grace", result.content.name)
      check.eq(42, result.content.integer, "defaults are sent as pre-filled")
    end)
    restore()
    check.truthy(ok, err)
  end)

  it("d declines, q cancels, closing the float cancels", function()
    for _, case in ipairs({ { "d", "decline" }, { "q", "cancel" }, { "<Cmd>close<CR>", "cancel" } }) do
      local _, restore = script_ui({})
      local result
      local view = Form.open(
        { type = "object", properties = { a = { type = "string" } } },
        { title = "t", decline = true },
        function(action, content)
          result = { action = action, content = content }
        end
      )
      wait_for(function()
        return view.current == nil and not view.asking
      end, 2000, "the form")
      press(view, case[1])
      wait_for(function()
        return result
      end, 2000, case[2])
      restore()
      check.eq({ action = case[2] }, result, case[1])
    end
  end)
end)
