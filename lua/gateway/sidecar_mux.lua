-- The one hop, shared: each worker keeps one connection to the sidecar's own socket, and every
-- request of that worker that asks the sidecar goes through it. Questions that wait at the same
-- time go out in one write; the sidecar decides them together (one PostgreSQL batch) and sends
-- their answers back in the order asked, in one write (sidecar/frames/frame-listener.ts).
-- With a connection per request, each question cost a write, a read and a wake-up on both
-- sides, and under load those, not the decision, were most of nginx's and the sidecar's time
-- (docs/decisions/20261127-shared-sidecar-connection.md).
--
-- Shape: the link's runner is a timer (a cosocket belongs to the context that made it, and a
-- timer outlives the requests): it writes what the queue holds and a light thread of its own
-- reads the answers, first in first out. A request puts its question on the queue and waits on
-- a semaphore of its own, at most its timeout; one that gave up stays in line (so the answers
-- stay matched) and its answer is dropped. When the connection fails, every question on it is
-- failed back to its request, which asks once more on the link made anew: nothing is answered
-- that the sidecar did not answer, and a sidecar that is gone is a 503. An idle link is closed
-- after LINK_IDLE_S, so the sidecar's own idle timeout never cuts one under a question.
local semaphore = require("ngx.semaphore")
local sidecar = require("gateway.sidecar_client")

local M = {}

local sub = string.sub

-- How often an idle link looks up: a worker that is exiting (reload, quit) is not held.
local IDLE_S = 1
local CONNECT_TIMEOUT_MS = 2000
-- A sidecar that answers frames in HTTP predates frames: this worker asks it on connections
-- of its own (ask_direct, which speaks HTTP to it) for this long, then tries again.
local HTTP_ONLY_S = 60

-- Why a question was not asked on the link: no timer could be started for it (the worker's
-- timers are all taken); it is asked on a connection of its own.
local NO_TIMER = "no timer for the sidecar link"
-- A link with nothing to carry for this long is closed by nginx, before the sidecar's own idle
-- timeout (75 s) closes it under a question that is being sent.
local LINK_IDLE_S = 30

-- address -> link: { queue, inflight (first..last), running, sleeping, wake, http_until }
local links = {}

local function link_for(address)
  local link = links[address]
  if not link then
    link = {
      address = address,
      queue = {},
      inflight = {},
      first = 1,
      last = 0,
      running = false,
      sleeping = false,
      wake = semaphore.new(),
      reader_sleeping = false,
      answers = semaphore.new(),
      writer_done = false,
      http_until = 0,
      reader_error = nil,
    }
    links[address] = link
  end
  return link
end

-- Fails every question on the link and in its queue back to its request.
local function fail_all(link, why)
  local inflight = link.inflight
  for i = link.first, link.last do
    local q = inflight[i]
    inflight[i] = nil
    if not q.abandoned then
      q.err = why
      q.sema:post(1)
    end
  end
  link.first, link.last = 1, 0
  local queue = link.queue
  link.queue = {}
  for i = 1, #queue do
    queue[i].err = why
    queue[i].sema:post(1)
  end
end

-- The reader: answers, in order, to the questions in flight. Returns why it stopped. It reads
-- only while a question is in flight (an idle link is not read, so it logs no read timeouts);
-- no answer for `read_ms` while one is means the sidecar is stuck, and the link ends.
local function read_answers(link, sock)
  while true do
    if link.first > link.last then
      link.reader_sleeping = true
      link.answers:wait(IDLE_S)
      link.reader_sleeping = false
      if link.writer_done then
        return "link closed"
      end
    else
      local line, err = sock:receive("*l")
      if not line then
        return "answer line: " .. tostring(err)
      end
      local status, head, body = sidecar.parse_frame_line(line)
      if not status then
        if sub(line, 1, 5) == "HTTP/" then
          link.http_until = ngx.now() + HTTP_ONLY_S
          ngx.log(ngx.WARN, "the sidecar at ", link.address, " answers HTTP only; asking it in HTTP")
          return "http"
        end
        return "answer line: " .. line
      end
      local data = ""
      if head + body > 0 then
        data, err = sock:receive(head + body)
        if not data then
          return "answer: " .. tostring(err)
        end
      end
      local at = link.first
      local q = link.inflight[at]
      link.inflight[at] = nil
      link.first = at + 1
      if not q.abandoned then
        q.res = {
          status = status,
          header = sidecar.parse_frame_headers(sub(data, 1, head)),
          body = sub(data, head + 1),
        }
        q.sema:post(1)
      end
    end
  end
end

-- The reader's light thread: records why it stopped and wakes the writer to end the link.
local function reader(link, sock)
  link.reader_error = read_answers(link, sock)
  if link.sleeping then
    link.sleeping = false
    link.wake:post(1)
  end
end

-- The writer: sends whatever the queue holds, all of it in one write, until the link fails.
local function write_questions(link, sock)
  local last_sent = ngx.now()
  while true do
    if link.reader_error then
      return link.reader_error
    end
    local queue = link.queue
    if #queue == 0 then
      link.sleeping = true
      link.wake:wait(IDLE_S)
      link.sleeping = false
      if #link.queue == 0 and link.first > link.last then
        if ngx.worker.exiting() then
          return "worker exiting"
        end
        if ngx.now() - last_sent >= LINK_IDLE_S then
          return "idle"
        end
      end
    else
      last_sent = ngx.now()
      link.queue = {}
      local frames = {}
      local last = link.last
      for i = 1, #queue do
        last = last + 1
        link.inflight[last] = queue[i]
        frames[i] = queue[i].frame
      end
      link.last = last
      local ok, err = sock:send(frames)
      if not ok then
        return "send: " .. tostring(err)
      end
      if link.reader_sleeping then
        link.reader_sleeping = false
        link.answers:post(1)
      end
    end
  end
end

-- The link's runner (a timer). `timeout_ms` (the auth timeout) bounds a write, and the wait for
-- the next answer while questions are in flight.
local function run(premature, link, timeout_ms)
  if premature then
    link.running = false
    fail_all(link, "worker exiting")
    return
  end
  local host, port = sidecar.parse_address(link.address)
  local sock = ngx.socket.tcp()
  sock:settimeouts(CONNECT_TIMEOUT_MS, timeout_ms, timeout_ms)
  local ok, err
  if port then
    ok, err = sock:connect(host, port)
  else
    ok, err = sock:connect(host)
  end
  local why
  if ok then
    link.reader_error = nil
    link.writer_done = false
    local thread = ngx.thread.spawn(reader, link, sock)
    why = write_questions(link, sock)
    link.writer_done = true
    ngx.thread.kill(thread)
    sock:close()
  else
    why = "connect: " .. tostring(err)
  end
  link.running = false
  fail_all(link, why)
end

-- One question on the worker's link. Returns the answer ({ status, header, body }), or nil and
-- why; `retry` is true when the link failed under the question (not a timeout), so asking again
-- on a connection of its own may still get an answer.
local function ask_linked(link, frame, timeout_ms)
  if not link.running then
    local ok, err = ngx.timer.at(0, run, link, timeout_ms)
    if not ok then
      ngx.log(ngx.WARN, "cannot start the sidecar link: ", err)
      return nil, NO_TIMER, true
    end
    link.running = true
  end
  local q = { frame = frame, sema = semaphore.new() }
  local queue = link.queue
  queue[#queue + 1] = q
  if link.sleeping then
    link.sleeping = false
    link.wake:post(1)
  end
  local ok, err = q.sema:wait(timeout_ms / 1000)
  if not ok then
    q.abandoned = true
    return nil, "sidecar answer: " .. tostring(err)
  end
  if q.res then
    return q.res
  end
  return nil, q.err, true
end

-- The one hop: asks /auth at `address` with `frame` (sidecar_client.build_frame); the answer is
-- shaped as sidecar_client.ask()'s. A question the link could not carry (the sidecar restarted,
-- or closed the connection) is asked once more on the link made anew, with what is left of its
-- time: a connection per request only for a sidecar that speaks HTTP alone.
function M.ask(address, frame, timeout_ms)
  local link = link_for(address)
  if ngx.now() < link.http_until then
    return sidecar.ask_direct(address, frame, timeout_ms)
  end
  local started = ngx.now()
  local res, err, retry = ask_linked(link, frame, timeout_ms)
  if res or not retry then
    return res, err
  end
  ngx.update_time()
  local left = math.floor(timeout_ms - (ngx.now() - started) * 1000)
  if left < 1 then
    return nil, err
  end
  if ngx.now() < link.http_until or err == NO_TIMER then
    return sidecar.ask_direct(address, frame, left)
  end
  res, err = ask_linked(link, frame, left)
  return res, err
end

return M
