-- wrk script for the row cache measurement (run.sh): requests over a realistic hot set. HOT_MODE is
-- get (GET /docs/{id}) or query (GET /indexes/orders/query?...&include=docs: search, then fetch the
-- hits' documents). HOT_SHARE of the requests (0.9) go to the hottest HOT_FRACTION (0.1) of the
-- keys, the rest anywhere; hot keys are scattered over the key space, not one contiguous range.
-- done() prints one line "HOT-RESULT {json}" that run.sh parses.

local mode = os.getenv("HOT_MODE") or "get"
local ids = tonumber(os.getenv("HOT_IDS") or "100000")
local share = tonumber(os.getenv("HOT_SHARE") or "0.9")
local fraction = tonumber(os.getenv("HOT_FRACTION") or "0.1")
local names = { "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi" }
local customers = #names * 5000 -- the generator's customer names: "<name> <0..4999>"
local threads = {}

function setup(thread)
  thread:set("number", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() * 1000 + number)
end

-- A key in 1..n: with probability `share` one of the hottest `fraction` of them, else any.
local function pick(n)
  if math.random() < share then
    local hot = math.max(1, math.floor(n * fraction))
    return ((math.random(hot) * 7919) % n) + 1
  end
  return math.random(n)
end

request = function()
  if mode == "get" then
    return wrk.format("GET", string.format("/docs/orders/%08d", pick(ids)))
  end
  local k = pick(customers) - 1
  local name = names[(k % #names) + 1] .. "%20" .. math.floor(k / #names)
  return wrk.format("GET", "/indexes/orders/query?q=customer:%22" .. name .. "%22&include=docs&take=10")
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "HOT-RESULT {\"requests\": %d, \"seconds\": %.3f, \"errors\": %d, \"p50_ms\": %.3f, \"p90_ms\": %.3f, \"p99_ms\": %.3f}\n",
    summary.requests, summary.duration / 1e6, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000))
end
