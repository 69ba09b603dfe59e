/**
 * wrk's Lua scripts, kept as strings so `tsc` ships them in dist/ with the rest. Every script
 * ends with `done`, which prints one JSON line of exact numbers (microseconds) instead of
 * wrk's rounded text; nothing in it runs per request.
 */

export const RESULT_MARK = 'BENCH_RESULT ';

const DONE = `
function done(summary, latency, requests)
  local e = summary.errors
  -- A script that counts answers by status defines bench_statuses (a JSON object as text).
  local statuses = ''
  if bench_statuses then statuses = ',"statuses":' .. bench_statuses() end
  io.write(string.format(
    '${RESULT_MARK}{"requests":%d,"durationUs":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latencyUs":{"mean":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.max, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9)) .. statuses .. '}\\n')
end
`;

/** As fast as the connections allow: wrk sends its one pre-built request (no Lua per request). */
export const MAX_RATE = DONE;

/**
 * Counts answers by status in each thread's `response()`; `done` prints the totals (see DONE's
 * bench_statuses). Ends a script, after whatever builds its requests.
 */
const COUNTING = `
local threads = {}
-- A global: done() reads it from each thread with thread:get.
counts = {}
function setup(thread)
  threads[#threads + 1] = thread
end
function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end
function bench_statuses()
  local total = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get('counts')) do total[status] = (total[status] or 0) + n end
  end
  local parts = {}
  for status, n in pairs(total) do parts[#parts + 1] = string.format('"%d":%d', status, n) end
  return '{' .. table.concat(parts, ',') .. '}'
end
${DONE}`;

/**
 * The send schedule FIXED_RATE and FIXED_RATE_FLOOD share: `start_schedule(interval)` in
 * `init`, then wrk calls `delay()` before every request, which waits for the next free slot.
 */
const SCHEDULE = `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clk, bench_timespec *tp);
]]
local ts = ffi.new("bench_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local interval = 1
local next_at = 0
function start_schedule(ms)
  interval = ms
  next_at = now_ms()
end
function delay()
  local now = now_ms()
  next_at = next_at + interval
  -- After a stall, do not burst to catch up more than 100 ms of schedule.
  if next_at < now - 100 then next_at = now end
  local wait = next_at - now
  if wait <= 0 then return 0 end
  return math.floor(wait)
end`;

/**
 * A fixed rate. wrk has no rate option and wrk2 is not packaged, so each thread keeps a
 * schedule of send slots `1000 / rate` ms apart and `delay()` (called before every request)
 * waits for the next free slot. A slow answer holds only its own connection: the others keep
 * the schedule, so the rate stays fixed while connections are free. wrk still times from the
 * actual send, so a request that waited for a busy connection does not count its wait
 * (coordinated omission); with 32 connections at half the maximum rate that wait is rare.
 * Argument: the interval in ms between sends of one thread.
 */
export const FIXED_RATE = `${SCHEDULE}
function init(args)
  start_schedule(tonumber(args[1]))
end
${DONE}`;

/**
 * Cycles through many credentials, one per line of the file given as argument (the whole
 * Authorization value). Requests are built once in `init`, so the per-request cost is one
 * table look-up.
 */
export const ROTATE_CREDENTIALS = `
local requests = {}
local i = 0
function init(args)
  for line in io.lines(args[1]) do
    local headers = {}
    for name, value in pairs(wrk.headers) do headers[name] = value end
    headers["Authorization"] = line
    requests[#requests + 1] = wrk.format(nil, nil, headers)
  end
  i = math.random(#requests)
end
function request()
  i = i % #requests + 1
  return requests[i]
end
${DONE}`;

/**
 * The flood: every request presents the API key id given as argument with a new random secret
 * of the real format (43 characters of base64url), so no two requests share a credential and
 * no decision cache can answer from an earlier one. The request is built once around a
 * placeholder; per request only the secret is drawn and spliced in. Answers are counted by
 * status in `response()` and printed by `done`: the gateway decides what a wrong secret gets
 * (401, 429 once a failure budget is spent, ...), the bench only counts.
 * Arguments: the client id, a random seed.
 */
export const FLOOD = `
local alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
local head, tail
local secret = {}
function init(args)
  math.randomseed(tonumber(args[2]))
  local headers = {}
  for name, value in pairs(wrk.headers) do headers[name] = value end
  headers['Authorization'] = 'apk ' .. args[1] .. '.@SECRET@'
  local request = wrk.format(nil, nil, headers)
  local at = request:find('@SECRET@', 1, true)
  head = request:sub(1, at - 1)
  tail = request:sub(at + 8)
end
function request()
  for i = 1, 43 do secret[i] = alphabet:byte(math.random(64)) end
  return head .. string.char(unpack(secret)) .. tail
end
${COUNTING}`;

/**
 * As fast as the connections allow, counting answers by status (the rate-limit accuracy row:
 * how many 200s a client hammering its limit gets). The request is wrk's pre-built one.
 */
export const COUNT_STATUSES = COUNTING;

/**
 * Callers spread uniformly over many keys (issue 38): the file given as first argument holds one
 * whole Authorization value per line; every request draws one of them at random (uniform, with
 * replacement), so with 10^5 keys nearly every request is another caller's. The request is built
 * once around a placeholder; per request only the credential is spliced in (one random draw,
 * one concatenation). Arguments: the file, a random seed.
 *
 * The credentials are kept outside Lua's heap (malloc'd through LuaJIT's ffi: the file's bytes
 * and where each line starts and ends). Kept as a Lua table of strings, or as one Lua string of
 * 60 MB, 10^6 of them stalled wrk itself: against a static nginx with no gateway, wrk's p99 rose
 * from 0.8 to 15 ms and its rate fell from 53k to 36k r/s (the collector's cycles over a heap that
 * size, started by the strings every request makes); from C memory, 0.9-1.1 ms and 44-47k r/s
 * (53k with 100 keys, whose per-request strings are found interned).
 */
export const RANDOM_CREDENTIAL = `
local ffi = require('ffi')
ffi.cdef[[
void *malloc(size_t size);
void *fopen(const char *path, const char *mode);
size_t fread(void *to, size_t size, size_t n, void *file);
int fclose(void *file);
]]
local bytes, starts, ends, count
local head, tail
function init(args)
  math.randomseed(tonumber(args[2]))
  local file = assert(io.open(args[1], 'rb'))
  local size = file:seek('end')
  file:close()
  -- Read by C too: read into a Lua string first, even one freed at once, wrk then ran 15 % slower.
  bytes = ffi.cast('uint8_t *', assert(ffi.C.malloc(size + 1)))
  local c = ffi.C.fopen(args[1], 'rb')
  assert(c ~= nil, 'cannot open ' .. args[1])
  assert(ffi.C.fread(bytes, 1, size, c) == size, 'cannot read ' .. args[1])
  ffi.C.fclose(c)
  -- One pass counts the lines, one records them.
  local lines = 1
  for at = 0, size - 1 do
    if bytes[at] == 10 then lines = lines + 1 end
  end
  starts = ffi.cast('int32_t *', assert(ffi.C.malloc(4 * lines)))
  ends = ffi.cast('int32_t *', assert(ffi.C.malloc(4 * lines)))
  count = 0
  local from = 0
  for at = 0, size do
    if at == size or bytes[at] == 10 then
      if at > from then
        starts[count] = from
        ends[count] = at
        count = count + 1
      end
      from = at + 1
    end
  end
  assert(count > 0, 'no credential in ' .. args[1])
  local headers = {}
  for name, value in pairs(wrk.headers) do headers[name] = value end
  headers['Authorization'] = '@CREDENTIAL@'
  local request = wrk.format(nil, nil, headers)
  local at = request:find('@CREDENTIAL@', 1, true)
  head = request:sub(1, at - 1)
  tail = request:sub(at + 12)
end
function request()
  local i = math.random(count) - 1
  return head .. ffi.string(bytes + starts[i], ends[i] - starts[i]) .. tail
end
${DONE}`;

/**
 * A flood at a fixed rate, the attacker behind a balancer (issue 38), counting answers by
 * status. Mode 'random-id': every request presents 'apk <random id>.<random secret>', a 12-digit
 * id no client has (the table's ids are far smaller) and 43 random base64url characters; mode
 * 'none': the same request with no Authorization header at all. The random-id requests are
 * built in `init` (FLOOD_POOL of them, cycled), so that both modes cost wrk the same per
 * request: built per request, their 55 random draws took about 2 µs of wrk's CPU each, on the
 * cores the gateway shares, counted against the gateway. A repeat within a run costs the gateway
 * what a fresh id does: nothing is remembered of a refused id. The rate is held as FIXED_RATE
 * holds it (a schedule of send slots per thread), so both modes offer the same load whatever
 * each answer costs. Arguments: the interval in ms between sends of one thread, a random seed,
 * the mode.
 */
export const FIXED_RATE_FLOOD = `${SCHEDULE}
local alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
local FLOOD_POOL = 16384
local pool = {}
local at = 0
function init(args)
  math.randomseed(tonumber(args[2]))
  local headers = {}
  for name, value in pairs(wrk.headers) do headers[name] = value end
  if args[3] == 'random-id' then
    headers['Authorization'] = 'apk @ID@.@SECRET@'
    local request = wrk.format(nil, nil, headers)
    local mark = request:find('@ID@.@SECRET@', 1, true)
    local head, tail = request:sub(1, mark - 1), request:sub(mark + 13)
    local id, secret = {}, {}
    for n = 1, FLOOD_POOL do
      id[1] = 48 + math.random(9)
      for i = 2, 12 do id[i] = 47 + math.random(10) end
      for i = 1, 43 do secret[i] = alphabet:byte(math.random(64)) end
      pool[n] = head .. string.char(unpack(id)) .. '.' .. string.char(unpack(secret)) .. tail
    end
  else
    headers['Authorization'] = nil
    pool[1] = wrk.format(nil, nil, headers)
  end
  start_schedule(tonumber(args[1]))
end
function request()
  at = at + 1
  if at > #pool then at = 1 end
  return pool[at]
end
${COUNTING}`;
