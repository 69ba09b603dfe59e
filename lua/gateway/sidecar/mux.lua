-- The one hop, shared: each worker keeps one connection to the sidecar's own socket, and every
-- request of that worker that asks the sidecar goes through it. Questions that wait at the same
-- time go out in one write, each with a number; the sidecar decides them together (one
-- PostgreSQL batch) and sends each answer back, with its question's number, as soon as it is
-- decided, the answers ready together in one write (sidecar/frames/frame-listener.ts). With a
-- connection per request, each question cost a write, a read and a wake-up on both sides, and
-- under load those, not the decision, were most of nginx's and the sidecar's time
-- (docs/decisions/20261127-shared-sidecar-connection.md).
--
-- Shape: the link's runner is a timer (a cosocket belongs to the context that made it, and a
-- timer outlives the requests): it writes what the queue holds and a light thread of its own
-- reads the answers, handing each to the question whose number it carries. A request puts its
-- question on the queue and waits on a semaphore of its own, at most its timeout; one that gave
-- up stays in flight until its answer comes, which is then dropped. When the connection fails,
-- every question on it is failed back to its request, which asks once more on the link made
-- anew: nothing is answered that the sidecar did not answer, and a sidecar that is gone is a
-- 503. An idle link is closed after LINK_IDLE_S, so the sidecar's own idle timeout never cuts
-- one under a question.
local semaphore = require("ngx.semaphore")
local contract = require("gateway.contract")
local frame_codec = require("gateway.sidecar.auth_frame")
local direct = require("gateway.sidecar.direct")
local http = require("gateway.sidecar.http")

local M = {}

-- How often an idle link looks up: a worker that is exiting (reload, quit) is not held.
local IDLE_S = 1
local CONNECT_TIMEOUT_MS = http.CONNECT_TIMEOUT_MS
-- A sidecar that answers frames in HTTP predates frames: this worker asks it on connections
-- of its own (sidecar_direct.ask, which speaks HTTP to it) for as long as sidecar_direct would,
-- then tries the link again.
local HTTP_ONLY_S = direct.HTTP_ONLY_S

-- Why a question was not asked on the link: no timer could be started for it (the worker's
-- timers are all taken); it is asked on a connection of its own.
local NO_TIMER = "no timer for the sidecar link"
-- A link with nothing to carry for this long is closed by nginx, before the sidecar's own idle
-- timeout (75 s) closes it under a question that is being sent.
local LINK_IDLE_S = 30

-- Each question on a link carries a number (contract.frame_question_header), which the sidecar
-- sends back with its answer: a question decided sooner is answered sooner, and a slow one (a
-- token whose key set is being fetched) holds up no other. An answer without a number (a
-- sidecar older than numbers, which answers in order) belongs to the oldest question in flight.
-- The codec writes the number into the question (auth_frame.number).
local QUESTION_KEY = contract.frame_question_header:lower()
local MAX_NUMBER = 2 ^ 30

-- Semaphores whose question was answered (its wait consumed the post: count 0, no waiter),
-- kept for the next questions: a new one per question was an FFI allocation and a finaliser
-- on every request that asks. An abandoned question's is never kept (its answer may still post).
local spare, MAX_SPARE = {}, 256

local function sema_for_question()
  local n = #spare
  if n > 0 then
    local sema = spare[n]
    spare[n] = nil
    return sema
  end
  return semaphore.new()
end

-- address -> link: the queue, the questions in flight (by number, and in the order sent), the
-- runner's state, the writer's and the reader's semaphores, and until when it speaks HTTP only.
local links = {}

local function link_for(address)
  local link = links[address]
  if not link then
    link = {
      address = address,
      queue = {},
      inflight = {},
      count = 0,
      order = {},
      first = 1,
      last = 0,
      number = 0,
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
  for number, q in pairs(link.inflight) do
    link.inflight[number] = nil
    if not q.abandoned then
      q.err = why
      q.sema:post(1)
    end
  end
  link.count, link.order, link.first, link.last = 0, {}, 1, 0
  local queue = link.queue
  link.queue = {}
  for i = 1, #queue do
    queue[i].err = why
    queue[i].sema:post(1)
  end
end

-- Takes the question an answer belongs to off the link: by the number the answer carries, else
-- the oldest in flight. nil when no such question is in flight.
local function answered(link, number)
  local inflight, order = link.inflight, link.order
  local first, last = link.first, link.last
  -- Numbers answered out of order are dropped from the front as it catches up.
  while first <= last and inflight[order[first]] == nil do
    order[first] = nil
    first = first + 1
  end
  if not number then
    number = order[first]
  end
  local q = number and inflight[number]
  if q then
    inflight[number] = nil
    link.count = link.count - 1
  end
  if link.count == 0 then
    link.order, first, last = {}, 1, 0
  end
  link.first, link.last = first, last
  return q
end

-- The reader: answers to the questions in flight. Returns why it stopped. It reads only while
-- a question is in flight (an idle link is not read, so it logs no read timeouts); no answer
-- for the auth timeout while one is means the sidecar is stuck, and the link ends.
local function read_answers(link, sock)
  while true do
    if link.count == 0 then
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
      local res, why = frame_codec.read_frame_answer(sock, line)
      if not res then
        if why == "http" then
          link.http_until = ngx.now() + HTTP_ONLY_S
          ngx.log(ngx.WARN, "the sidecar at ", link.address, " answers HTTP only; asking it in HTTP")
        end
        return why
      end
      local number = res.header[QUESTION_KEY]
      local q = answered(link, number and tonumber(number))
      if not q then
        return "an answer to no question in flight"
      end
      if not q.abandoned then
        q.res = res
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

-- The question as sent on the link: with its number (a question in one string goes as it is).
local number_frame = frame_codec.number

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
      if #link.queue == 0 and link.count == 0 then
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
      local inflight, order, last, number = link.inflight, link.order, link.last, link.number
      for i = 1, #queue do
        local q = queue[i]
        number = number < MAX_NUMBER and number + 1 or 1
        inflight[number] = q
        last = last + 1
        order[last] = number
        frames[i] = number_frame(q.frame, number)
      end
      link.last, link.number, link.count = last, number, link.count + #queue
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
  local host, port = http.parse_address(link.address)
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
-- why; `retry` is true when the link failed under the question (not a timeout), so asking again,
-- on the link made anew, may still get an answer.
local function ask_linked(link, frame, timeout_ms)
  if not link.running then
    local ok, err = ngx.timer.at(0, run, link, timeout_ms)
    if not ok then
      ngx.log(ngx.WARN, "cannot start the sidecar link: ", err)
      return nil, NO_TIMER, true
    end
    link.running = true
  end
  local q = { frame = frame, sema = sema_for_question() }
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
  if #spare < MAX_SPARE then
    spare[#spare + 1] = q.sema
  end
  if q.res then
    return q.res
  end
  return nil, q.err, true
end

-- The one hop: asks /auth at `address` with `frame` (auth_frame.question's pieces, or
-- auth_frame.build_frame's bytes); the answer is shaped as sidecar_http.ask()'s. A question the
-- link could not carry (the sidecar restarted, or closed the connection) is asked once more on
-- the link made anew, with what is left of its time: a connection per request only for a
-- sidecar that speaks HTTP alone.
function M.ask(address, frame, timeout_ms)
  local link = link_for(address)
  local started = ngx.now()
  local left = timeout_ms
  local err = nil
  for attempt = 1, 3 do
    -- Found out on this link, now or a moment ago: a sidecar older than frames.
    if ngx.now() < link.http_until or err == NO_TIMER then
      return direct.ask(address, frame, left)
    end
    if attempt == 3 then
      break
    end
    local res, retry
    res, err, retry = ask_linked(link, frame, left)
    if res or not retry then
      return res, err
    end
    ngx.update_time()
    left = math.floor(timeout_ms - (ngx.now() - started) * 1000)
    if left < 1 then
      break
    end
  end
  return nil, err
end

return M
