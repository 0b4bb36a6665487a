-- wrk script for the HTTP load test (run.sh, and tests/Server.Tests/HttpLoadTests.cs).
-- LOAD_MIX picks the requests: get (GET /docs/{id}), put (PUT /docs/{id}, new and replaced
-- documents), query (GET /indexes/{LOAD_INDEX}/query, four kinds), or mixed (60% get, 20% put,
-- 20% query). LOAD_IDS is how many documents orders/00000001.. exist. Every response's status is
-- counted per thread; done() prints one line "LOAD-RESULT {json}" that the callers parse.

local mix = os.getenv("LOAD_MIX") or "mixed"
local ids = tonumber(os.getenv("LOAD_IDS") or "1000")
local index = os.getenv("LOAD_INDEX") or "orders"
local threads = {}

local queries = {
  "status:shipped",
  "customer:alice",
  "total:%5B100%20TO%20500%5D",
  "status:shipped%20AND%20total:%5B100%20TO%205000%5D&sort=-total&take=20",
}

function setup(thread)
  thread:set("number", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  statuses = {}
  sent = 0
  math.randomseed(os.time() * 1000 + number)
end

local function id(n)
  return string.format("orders/%08d", n)
end

local function get()
  return wrk.format("GET", "/docs/" .. id(math.random(ids)))
end

local function put()
  -- Half replace an existing document, half write a new one in a collection of their own.
  local path
  if math.random(2) == 1 then
    path = "/docs/" .. id(math.random(ids))
  else
    path = string.format("/docs/load/%d-%d", number, sent)
  end
  local body = string.format('{"customer": {"name": "load writer %d"}, "status": "updated", "total": %d, "note": "%s"}',
    number, math.random(10000), string.rep("x", 200))
  return wrk.format("PUT", path, { ["Content-Type"] = "application/json" }, body)
end

local function query()
  return wrk.format("GET", "/indexes/" .. index .. "/query?q=" .. queries[math.random(#queries)])
end

function request()
  sent = sent + 1
  if mix == "get" then return get() end
  if mix == "put" then return put() end
  if mix == "query" then return query() end
  local r = math.random(100)
  if r <= 60 then return get() end
  if r <= 80 then return put() end
  return query()
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      total[status] = (total[status] or 0) + count
    end
  end
  local parts = {}
  for status, count in pairs(total) do
    table.insert(parts, string.format('"%d": %d', status, count))
  end
  local e = summary.errors
  io.write(string.format(
    'LOAD-RESULT {"mix": "%s", "requests": %d, "seconds": %.3f, "p50_ms": %.3f, "p90_ms": %.3f, "p99_ms": %.3f, "max_ms": %.3f, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d, "status": %d}, "statuses": {%s}}\n',
    mix, summary.requests, summary.duration / 1e6, latency:percentile(50) / 1e3, latency:percentile(90) / 1e3,
    latency:percentile(99) / 1e3, latency.max / 1e3, e.connect, e.read, e.write, e.timeout, e.status, table.concat(parts, ", ")))
end
