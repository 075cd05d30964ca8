-- A small busted-style runner inside headless Neovim: `nvim --headless --clean -l tests/minit.lua SPEC...`.
-- describe/it/before_each/after_each, assert helpers, and wait_for() (the only blocking waits
-- in the plugin's world). Prints one line per test and "N passed, N failed"; exits 1 on failure.
local plugin = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
vim.opt.rtp:prepend(plugin)
vim.cmd("runtime plugin/mcp_sidecar.lua")
vim.o.showmode = false

local tests, stack, befores, afters = {}, {}, {}, {}

function _G.describe(name, fn)
  table.insert(stack, name)
  local saved_b, saved_a = #befores, #afters
  fn()
  for i = #befores, saved_b + 1, -1 do
    befores[i] = nil
  end
  for i = #afters, saved_a + 1, -1 do
    afters[i] = nil
  end
  table.remove(stack)
end

function _G.it(name, fn)
  table.insert(tests, {
    name = table.concat(stack, " › ") .. " › " .. name,
    fn = fn,
    before = vim.list_slice(befores, 1),
    after = vim.list_slice(afters, 1),
  })
end

function _G.before_each(fn)
  table.insert(befores, fn)
end

function _G.after_each(fn)
  table.insert(afters, fn)
end

--- Wait (blocking, tests only) until fn() returns a truthy value; fails after timeout_ms.
function _G.wait_for(fn, timeout_ms, what)
  local value
  local done = vim.wait(timeout_ms or 15000, function()
    value = fn()
    return value ~= nil and value ~= false
  end, 20)
  if not done then
    error("timed out waiting for " .. (what or "a condition"), 2)
  end
  return value
end

local A = {}
function A.eq(expected, actual, msg)
  if not vim.deep_equal(expected, actual) then
    error(("%sexpected %s, got %s"):format(msg and (msg .. ": ") or "", vim.inspect(expected), vim.inspect(actual)), 2)
  end
end
function A.truthy(value, msg)
  if not value then
    error(msg or "expected a truthy value", 2)
  end
  return value
end
function A.matches(pattern, text, msg)
  if type(text) ~= "string" or not text:find(pattern) then
    error(("%sexpected %q to match %q"):format(msg and (msg .. ": ") or "", tostring(text), pattern), 2)
  end
end
function A.contains(list, item, msg)
  if not vim.tbl_contains(list or {}, item) then
    error(("%sexpected %s in %s"):format(msg and (msg .. ": ") or "", vim.inspect(item), vim.inspect(list)), 2)
  end
end
_G.check = A

-- Capture notifications so specs can assert on them.
_G.notes = {}
vim.notify = function(msg, level)
  table.insert(_G.notes, { msg = msg, level = level })
end
function _G.find_note(pattern)
  for _, n in ipairs(_G.notes) do
    if n.msg:find(pattern) then
      return n
    end
  end
end

--- The person, scripted: replace vim.ui.input / vim.ui.select with answers taken in order. Each
--- answer is a plain value (input: the text; select: the label of the item to pick, matched with
--- or without a leading "● ", "✔ " or "[x] " mark; nil: <Esc>) or
--- `function(kind, prompt, items_or_default, opts) return answer end`.
--- Returns the list of what was asked ({kind, prompt, arg}) and a function that restores vim.ui.
function _G.script_ui(answers)
  local asked = {}
  local real_input, real_select = vim.ui.input, vim.ui.select
  local function next_answer(kind, prompt, arg, opts)
    local entry = table.remove(answers, 1)
    table.insert(asked, { kind = kind, prompt = prompt, arg = arg })
    if type(entry) == "function" then
      return entry(kind, prompt, arg, opts)
    end
    return entry
  end
  vim.ui.input = function(opts, on_confirm)
    on_confirm(next_answer("input", opts.prompt, opts.default, opts))
  end
  vim.ui.select = function(items, opts, on_choice)
    local want = next_answer("select", opts.prompt, items, opts)
    local format = opts.format_item or tostring
    for i, item in ipairs(items) do
      local label = format(item)
      local bare = label:gsub("^● ", ""):gsub("^✔ ", ""):gsub("^%[.%] ", ""):gsub("^  ", "")
      if want ~= nil and (label == want or bare == want) then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  return asked, function()
    vim.ui.input, vim.ui.select = real_input, real_select
  end
end

--- The review float (ui/review.lua: a sampling request or a model's answer), if one is open.
function _G.review_float()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.api.nvim_win_get_config(win).relative ~= "" and vim.bo[buf].filetype == "mcp_sidecar_review" then
      return win
    end
  end
end

--- Type keys (`<CR>` notation) in a window, as the person would.
function _G.press(win, keys)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

--- Read a review float to its end with `<CR>` (a page at a time) until its choice is asked (one
--- more entry in `asked`, from script_ui) or it closes; returns how many `<CR>` it took.
function _G.read_review(win, asked)
  local before, presses = #asked, 0
  while #asked == before and vim.api.nvim_win_is_valid(win) do
    presses = presses + 1
    if presses > 500 then
      error("the review float never asked", 2)
    end
    press(win, "<CR>")
  end
  return presses
end

local files = {}
for _, arg in ipairs(_G.arg) do
  if vim.fn.isdirectory(arg) == 1 then
    vim.list_extend(files, vim.fn.globpath(arg, "**/*_spec.lua", false, true))
  else
    table.insert(files, arg)
  end
end
table.sort(files)
for _, file in ipairs(files) do
  dofile(file)
end

local passed, failed = 0, 0
local started = vim.uv.hrtime()
for _, t in ipairs(tests) do
  local t0 = vim.uv.hrtime()
  local ok, err = xpcall(function()
    for _, b in ipairs(t.before) do
      b()
    end
    t.fn()
  end, debug.traceback)
  for _, a in ipairs(t.after) do
    pcall(a)
  end
  local ms = (vim.uv.hrtime() - t0) / 1e6
  if ok then
    passed = passed + 1
    io.stdout:write(("  ✔ %s (%d ms)\n"):format(t.name, ms))
  else
    failed = failed + 1
    io.stdout:write(("  ✘ %s (%d ms)\n%s\n"):format(t.name, ms, tostring(err):gsub("\n", "\n      ")))
  end
end
io.stdout:write(("%d passed, %d failed (%.1f s)\n"):format(passed, failed, (vim.uv.hrtime() - started) / 1e9))
vim.lsp.stop_client(vim.lsp.get_clients(), true)
os.exit(failed == 0 and 0 or 1)
