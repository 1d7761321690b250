-- wrk script for the benchmark: replays the requests of a file and counts status classes.
--
-- wrk -t T -s bench/requests.lua URL -- FILE DELAY_MS T HOLD_MS HELD
-- FILE holds tab-separated lines: "H<TAB>name<TAB>value" (a header sent on every request)
-- and "R<TAB>method<TAB>path<TAB>body". Thread n of t takes the requests n, n+t, n+2t ...
-- so no two threads touch the same record. DELAY_MS > 0 paces each connection.
-- HOLD_MS holds the first HELD requests of each thread (one per connection): the benchmark
-- checks meanwhile how the connections are spread over the server's workers, and stops
-- wrk before it has sent anything when they are not (bench/wrk.py, _start_balanced).
-- done() prints one line: BENCH_JSON {...}.

local threads = {}
local counter = 0

function setup(thread)
  thread:set("thread_index", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local requests = {}
local position = 0
local pause = 0
local hold, held = 0, 0
s2, s3, s4, s5 = 0, 0, 0, 0

function init(args)
  local path, delay_ms = args[1], tonumber(args[2] or "0")
  pause = delay_ms
  hold, held = tonumber(args[4] or "0"), tonumber(args[5] or "0")
  local headers = {}
  local rows = {}
  for line in io.lines(path) do
    local kind, a, b, c = line:match("^(%u)\t([^\t]*)\t([^\t]*)\t?(.*)$")
    if kind == "H" then
      headers[a] = b
    elseif kind == "R" then
      table.insert(rows, {a, b, c})
    end
  end
  local n, total = thread_index, tonumber(args[3] or "1")
  for i = 1 + n, #rows, total do
    local row = rows[i]
    local body = nil
    if row[3] ~= "" then body = row[3] end
    table.insert(requests, wrk.format(row[1], row[2], headers, body))
  end
end

function request()
  position = position % #requests + 1
  return requests[position]
end

function delay()
  if held > 0 then
    held = held - 1
    return hold
  end
  return pause
end

function response(status, headers, body)
  if status < 300 then s2 = s2 + 1
  elseif status < 400 then s3 = s3 + 1
  elseif status < 500 then s4 = s4 + 1
  else s5 = s5 + 1 end
end

function done(summary, latency, requests)
  local c = {s2 = 0, s3 = 0, s4 = 0, s5 = 0}
  for _, t in ipairs(threads) do
    for k, _ in pairs(c) do c[k] = c[k] + (t:get(k) or 0) end
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d,'
    .. ' "max_us": %d, "socket_errors": %d, "timeouts": %d, "s2xx": %d, "s3xx": %d,'
    .. ' "s4xx": %d, "s5xx": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, e.connect + e.read + e.write, e.timeout, c.s2, c.s3, c.s4, c.s5))
end
