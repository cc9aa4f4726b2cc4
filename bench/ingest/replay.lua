-- wrk script: replays a file of pre-signed requests, one per request() call (no crypto here).
-- Run with `wrk -t1`: counters are per thread and done() reads thread 1.
-- env: BENCH_REQUESTS = slice file (see requests.ts), BENCH_ACKS = file for eventIds of 2xx.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  local f = assert(io.open(os.getenv("BENCH_REQUESTS"), "r"))
  prefix = f:read("*l")
  suffix = f:read("*l")
  sigs, ids, lines = {}, {}, 0
  for line in f:lines() do
    local tab = line:find("\t", 1, true)
    if tab then
      lines = lines + 1
      sigs[lines] = line:sub(1, tab - 1)
      ids[lines] = line:sub(tab + 1)
    end
  end
  f:close()
  acks = assert(io.open(os.getenv("BENCH_ACKS"), "w"))
  head = "POST " .. wrk.path .. " HTTP/1.1\r\nHost: " .. wrk.host .. ":" .. wrk.port ..
    "\r\nContent-Type: application/json; charset=utf-8\r\nStripe-Signature: "
  i, sent, ok, bad, wraps = 0, 0, 0, 0, 0
end

function request()
  i = i + 1
  if i > lines then
    -- Out of unique requests: ids repeat from here. ingest.ts sizes slices so this stays 0.
    i, wraps = 1, wraps + 1
  end
  sent = sent + 1
  -- One concatenation per request: building the body first and then the request cost ~10%
  -- of bare's throughput here (34k vs 38k req/s; a static wrk request also gives 38k).
  return head .. sigs[i] .. "\r\nContent-Length: " .. (#prefix + #ids[i] + #suffix) ..
    "\r\n\r\n" .. prefix .. ids[i] .. suffix
end

function response(status, headers, body)
  if status >= 200 and status < 300 then
    ok = ok + 1
    local id = body:match('"eventId":"([^"]+)"')
    if id then acks:write(id, "\n") end
  else
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local t = threads[1]
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"completed":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d,' ..
    '"socketErrors":%d,"sent":%d,"ok":%d,"non2xx":%d,"wraps":%d,"lines":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, e.connect + e.read + e.write + e.timeout,
    t:get("sent"), t:get("ok"), t:get("bad"), t:get("wraps"), t:get("lines")))
end
