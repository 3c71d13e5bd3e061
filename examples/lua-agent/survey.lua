-- survey.lua — an agent written in Lua: it explores the repository it is
-- given, runs the repository's tests, and writes a report.
--
--   box lua --config box.toml survey.lua [REPORT]      (default SURVEY.md)
--
-- It runs inside the box's Shell (`lua`), so everything it touches is
-- decided by the box's policy: box.run hands a command line to the Shell
-- (one shell:exec / shell:spawn decision per command it runs), io.open
-- reads and writes through the box's mount (fs:read / fs:write).
-- Exit status: 0 when every test passed, 1 otherwise, 2 when the box
-- refused what the survey needs.

local report_path = arg[1] or "SURVEY.md"

local function run(cmd, opts)
  local status, out, err = box.run(cmd, opts)
  box.log(string.format("ran %q: status %d", cmd, status))
  return status, out, err
end

local function lines(text)
  local t = {}
  for l in text:gmatch("[^\n]+") do t[#t + 1] = l end
  return t
end

-- 1. What is in the repository: the files git knows about.
local status, out, err = run("git ls-files")
if status ~= 0 then
  io.stderr:write("survey: cannot list the repository: ", err)
  os.exit(2)
end
local files = lines(out)
table.sort(files)

-- 2. Each file: its size in lines, and its TODO notes (read through the
-- mount by Lua itself).
local by_ext, todos, total_lines = {}, {}, 0
for _, name in ipairs(files) do
  local ext = name:match("%.([%w_]+)$") or "(none)"
  by_ext[ext] = (by_ext[ext] or 0) + 1
  local f, why = io.open(name, "r")
  if f then
    local n = 0
    for l in f:lines() do
      n = n + 1
      local note = l:match("TODO:?%s*(.-)%s*$")
      if note then todos[#todos + 1] = string.format("%s:%d: %s", name, n, note) end
    end
    f:close()
    total_lines = total_lines + n
  else
    box.log("unreadable: " .. why)
  end
end

-- 3. The tests: every Lua file under test/ or tests/, or named *_test.lua,
-- run through the Shell one by one.
local results, failed = {}, 0
for _, name in ipairs(files) do
  if name:match("^tests?/.*%.lua$") or name:match("_test%.lua$") then
    local st, o, e = run("lua " .. name)
    results[#results + 1] = { name = name, status = st, output = o .. e }
    if st ~= 0 then failed = failed + 1 end
  end
end

-- 4. The report.
local r = {}
local function say(fmt, ...) r[#r + 1] = string.format(fmt, ...) end
say("# Survey of %s", os.getenv("PWD") or ".")
say("")
say("%d files, %d lines.", #files, total_lines)
say("")
say("## Files by extension")
local exts = {}
for ext in pairs(by_ext) do exts[#exts + 1] = ext end
table.sort(exts)
for _, ext in ipairs(exts) do say("- %s: %d", ext, by_ext[ext]) end
say("")
say("## TODO notes (%d)", #todos)
for _, t in ipairs(todos) do say("- %s", t) end
say("")
say("## Tests: %d run, %d failed", #results, failed)
for _, t in ipairs(results) do
  say("- %s: %s (status %d)", t.name, t.status == 0 and "passed" or "FAILED", t.status)
  if t.status ~= 0 then
    for _, l in ipairs(lines(t.output)) do say("    %s", l) end
  end
end

local f, why = io.open(report_path, "w")
if not f then
  io.stderr:write("survey: cannot write the report: ", why, "\n")
  os.exit(2)
end
f:write(table.concat(r, "\n"), "\n")
f:close()
print(string.format("survey: %d files, %d TODO notes, %d/%d tests passed; report in %s",
                    #files, #todos, #results - failed, #results, report_path))
os.exit(failed == 0 and 0 or 1)
