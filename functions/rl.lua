#!lua name=rl
--[[
rl, the function edition: rl's limiters as one server-function library, for
servers that cannot load the module (managed services) but run functions
(Redis 7+, Valkey). Same keys, same stored state, same replies, same errors
as the module's commands, so a key written by one edition is continued by
the other. docs/functions.md says how to load it, what it costs and where
it differs.

    FUNCTION LOAD REPLACE "$(cat functions/rl.lua)"
    FCALL rl_slide 1 user:42 100 60000

A function per command, named after it (RL.SLIDE: rl_slide). The arguments
after the keys are the command's arguments without its keys:
    FCALL rl_slide 1 key limit window [COST cost]
    FCALL rl_peek 1 key SLIDE limit window        (RL.PEEK SLIDE key ...)
    FCALL rl_all 2 k1 k2 SLIDE 10 1000 FIXED 5 60000
                                                  (RL.ALL 2 k1 k2 SLIDE ...)

Numbers: Lua's are doubles, exact up to 2^53. Every time, limit, count and
window rl accepts is below that, but two things are not: RL.SLIDE's members
(score_ms * 1,000,000 + n, about 1.8e18) and RL.COUNT's totals (up to
999,999,999,999,999,999). Both are handled as decimal strings here
(`member`, `dec_*`), never as numbers.

Layout: shared helpers (errors, argument parsing, decimal strings, the
clock, keys), then one section per limiter, each a table registered in
LIMITERS under its token with the same interface (see `LIMITERS`), then the
commands that dispatch over limiters (rl_peek, rl_refund, rl_all), then the
registrations.
]]

local VERSION = '0.1.0'

-- ---------------------------------------------------------------- errors

-- An error reply raised from anywhere below; `command` turns it into the
-- reply. Anything else raised (a bug, or an error from redis.call) goes on
-- as the server's own error.
local Fail = {}

local function fail(text)
  error(setmetatable({ text = text }, Fail), 0)
end

-- `%d` for every integer in an error or a stored value: tostring() would
-- write 1e+12.
local function int(n)
  return string.format('%d', n)
end

-- The texts of src/core/error.rs, one function per RlError variant used by
-- more than one limiter.
local E = {}

function E.arity(command)
  fail("ERR wrong number of arguments for '" .. command .. "' command")
end

function E.out_of_range(arg, max)
  fail('ERR ' .. arg .. ' must be an integer from 1 to ' .. int(max))
end

function E.not_in_range(arg, min, max)
  fail('ERR ' .. arg .. ' must be an integer from ' .. int(min) .. ' to ' .. int(max))
end

function E.wrong_type()
  fail('WRONGTYPE Operation against a key holding the wrong kind of value')
end

function E.cost_above_limit()
  fail('ERR COST must not exceed limit')
end

function E.unknown_option(token)
  fail("ERR unknown option '" .. E.token_text(token) .. "'")
end

function E.missing_value(option)
  fail('ERR ' .. option .. ' needs a value')
end

function E.duplicate_option(option)
  fail('ERR ' .. option .. ' given more than once')
end

function E.foreign_zset()
  fail('ERR key holds a sorted set that rl did not write')
end

function E.foreign_hash()
  fail('ERR key holds a hash that rl did not write')
end

function E.foreign_string(expected)
  fail('ERR key holds a string that is not ' .. expected)
end

-- A user's token as an error may echo it (error.rs `token_text`): at most
-- 32 bytes, control characters as '?', '...' when cut.
function E.token_text(bytes)
  local shown = bytes:sub(1, 32):gsub('[%c]', '?')
  if #bytes > 32 then
    shown = shown .. '...'
  end
  return shown
end

-- The function was called with another number of keys than its command
-- takes (the module's command cannot be called so: its keys are arguments).
local function wrong_keys(name, want)
  fail("ERR wrong number of keys for '" .. name .. "' (numkeys must be " .. want .. ')')
end

-- ------------------------------------------------------ integer arguments

-- A decimal integer written as the server writes integers: digits only, no
-- sign, no leading zero ('0' alone is fine); nil for anything else. Every
-- maximum rl accepts is below 10^16, so longer strings are out of range and
-- shorter ones are exact doubles.
local function argument(s)
  if #s == 0 or #s > 16 or s:find('[^0-9]') or (#s > 1 and s:byte(1) == 48) then
    return nil
  end
  return tonumber(s)
end

-- An integer in 1..max, else the error naming `arg`.
local function positive(s, arg, max)
  local v = argument(s)
  if v == nil or v < 1 or v > max then
    E.out_of_range(arg, max)
  end
  return v
end

-- An integer in 0..max, else the error naming `arg`.
local function non_negative(s, arg, max)
  local v = argument(s)
  if v == nil or v > max then
    E.not_in_range(arg, 0, max)
  end
  return v
end

-- A stored unsigned decimal (leading zeros allowed, as earlier releases
-- wrote them) as a number, if it is at most 2^53; nil otherwise. Larger
-- stored values (RL.COUNT totals) are read with the dec_* helpers.
local function stored_unsigned(s)
  if s == nil or #s == 0 or s:find('[^0-9]') then
    return nil
  end
  local digits = s:gsub('^0+(%d)', '%1')
  if #digits > 16 then
    return nil
  end
  local v = tonumber(digits)
  if v > 9007199254740992 then
    return nil
  end
  return v
end

-- A command's declaration, as syntax.rs has it: its name (lower case, as
-- errors give it), how many arguments it needs at least (name included),
-- and its option tokens. `check_count` and `options` are syntax.rs's.
local function syntax(command, positional, options)
  return { command = command, positional = positional, options = options or {} }
end

-- `line` (name included) has too few arguments, or more than the command
-- can spell when it has no options.
local function check_count(syn, line)
  local n = #line
  if n < 1 + syn.positional or (#syn.options == 0 and not syn.open and n > 1 + syn.positional) then
    E.arity(syn.command)
  end
end

-- Walks the `TOKEN value` pairs after the positional arguments, calling
-- on_option(TOKEN, value) with the declared spelling.
local function options(syn, line, on_option)
  local at = 2 + syn.positional
  while at <= #line do
    local given = line[at]:upper()
    local token = nil
    for _, t in ipairs(syn.options) do
      if t == given then
        token = t
      end
    end
    if token == nil then
      E.unknown_option(line[at])
    end
    if line[at + 1] == nil then
      E.missing_value(token)
    end
    on_option(token, line[at + 1])
    at = at + 2
  end
end

-- `set[option] = value` once; a second time is an error.
local function set_once(set, option, value)
  if set[option] ~= nil then
    E.duplicate_option(option)
  end
  set[option] = value
end

-- ------------------------------------------------ decimal string integers

-- Non-negative integers of any size as decimal strings without leading
-- zeros, for the values that pass 2^53.

local function dec_norm(a)
  a = a:gsub('^0+', '')
  if a == '' then
    return '0'
  end
  return a
end

-- -1, 0 or 1 as a < b, a == b, a > b.
local function dec_cmp(a, b)
  a, b = dec_norm(a), dec_norm(b)
  if #a ~= #b then
    return #a < #b and -1 or 1
  end
  if a == b then
    return 0
  end
  return a < b and -1 or 1
end

-- a + b, in 7-digit limbs (each sum stays far below 2^53).
local function dec_add(a, b)
  local out, carry = {}, 0
  local i, j = #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local x = i > 0 and tonumber(a:sub(math.max(1, i - 6), i)) or 0
    local y = j > 0 and tonumber(b:sub(math.max(1, j - 6), j)) or 0
    local s = x + y + carry
    carry = s >= 10000000 and 1 or 0
    table.insert(out, 1, string.format('%07d', s % 10000000))
    i, j = i - 7, j - 7
  end
  return dec_norm(table.concat(out))
end

-- a - b for a >= b.
local function dec_sub(a, b)
  local out, borrow = {}, 0
  local i, j = #a, #b
  while i > 0 do
    local x = tonumber(a:sub(math.max(1, i - 6), i))
    local y = j > 0 and tonumber(b:sub(math.max(1, j - 6), j)) or 0
    local d = x - y - borrow
    borrow = 0
    if d < 0 then
      d = d + 10000000
      borrow = 1
    end
    table.insert(out, 1, string.format('%07d', d))
    i, j = i - 7, j - 7
  end
  return dec_norm(table.concat(out))
end

-- --------------------------------------------------------------- the clock

-- The server's clock, read once per call: ms and µs (TIME has µs on every
-- server; the module on Redis 7.0 has only ms, so its µs end in 000).
local function now()
  local t = redis.call('TIME')
  local s, us = tonumber(t[1]), tonumber(t[2])
  return { ms = s * 1000 + math.floor(us / 1000), us = s * 1000000 + us }
end

-- ---------------------------------------------------------------- keys

-- The key's type as TYPE names it ('none' when absent).
local function key_type(key)
  return redis.call('TYPE', key).ok
end

-- The key's absolute expiry in ms; -1 without one, -2 when absent.
local function expire_at(key)
  return redis.call('PEXPIRETIME', key)
end

-- ------------------------------------------------------------- limiters
--[[
LIMITERS[TOKEN] is one limiter, as the module's core::limiter::Limiter:

  token   'SLIDE', 'BUCKETS', 'THROTTLE', 'FIXED' or 'ACQUIRE'
  usage   its command's synopsis without 'RL.', e.g.
          'SLIDE key limit window [COST cost]' (error texts restate it)
  parse(line) -> req
          line = { name, key, parameters... } shaped like the limiter's own
          command line (name: its command, 'rl.slide', or the token when
          RL.PEEK / RL.ALL hand it over); raises the command's errors,
          E.arity(...) for a wrong count.
  decide(key, req, call) -> decision, write
          call = { now = now(), shares = { slides = n, buckets = n },
                   writes = bool }: writes false for RL.PEEK.
          decision = { allowed (0|1), remaining, retry_after_ms,
                       reset_after_ms, lease = id or nil }
          write = nil, or a function that applies the admission (writes,
          expiry); called only if the whole call admits. Every check that
          can refuse (type, foreign state) runs in decide, before any write.
  units(req) -> n, unit(req) -> req
          (RL.REFUND) the units the request charges, and the same request
          for one unit.
  refund(key, req, call) -> refunded
          gives back up to units(req), writes it, answers how many.
]]
local LIMITERS = {}

-- Single-key commands: name -> function(key, line) -> reply.
local COMMANDS = {}

-- ================================================================ SLIDE
-- RL.SLIDE key limit window [COST cost]: src/core/slide/.
--
-- A plain sorted set, one entry per admitted unit: score the admission time
-- in ms, member the integer score * 10^6 + n (n numbers the entries of that
-- ms from 0), kept as a decimal string (it passes 2^53). Every call reads
-- and checks, as the module does (slide/decide.rs `read_ends`), the newest
-- entry, the oldest one, and the stale entries it would remove; an entry
-- rl could not have written among them refuses the key.

local Slide = {
  token = 'SLIDE',
  usage = 'SLIDE key limit window [COST cost]',
  syntax = syntax('rl.slide', 3, { 'COST' }),
  MAX_LIMIT = 1000000,
  MAX_COST = 100,
  MAX_WINDOW_MS = 1000000000000,
  -- slide/log.rs MAX_NOW_MS: i64::MAX / 10^6 - 1, the latest score rl
  -- writes (members must fit in an i64).
  MAX_NOW_MS = 9223372036853,
  MEMBERS_PER_MS = 1000000,
  -- slide/decide.rs EVICT_PER_CALL.
  EVICT_PER_CALL = 256,
}

function Slide.parse(line)
  check_count(Slide.syntax, line)
  local limit = positive(line[3], 'limit', Slide.MAX_LIMIT)
  local window = positive(line[4], 'window', Slide.MAX_WINDOW_MS)
  local set = {}
  options(Slide.syntax, line, function(token, value)
    -- The value is checked before a repeat is (args.rs `cost_option`).
    set_once(set, token, positive(value, token, Slide.MAX_COST))
  end)
  local cost = set.COST or 1
  if cost > limit then
    E.cost_above_limit()
  end
  return { limit = limit, window = window, cost = cost }
end

function Slide.units(req)
  return req.cost
end

function Slide.unit(req)
  return { limit = req.limit, window = req.window, cost = 1 }
end

-- A stored score as whole ms; nil for one that is not a whole finite
-- number (zset_log.rs `score_ms` reads those as i64::MIN).
function Slide.score(s)
  local v = tonumber(s)
  if v == nil or v ~= v or v == math.huge or v == -math.huge or v ~= math.floor(v) then
    return nil
  end
  return v
end

-- log.rs `Entry::is_rl`: a score rl accepts (0..MAX_NOW_MS, whole) and a
-- member that is an integer (as the server's string2ll reads one) numbered
-- from that score: its digits but the last 6 are the score.
function Slide.is_rl(score, m)
  if score == nil or score < 0 or score > Slide.MAX_NOW_MS then
    return false
  end
  if m ~= '0' and not m:find('^[1-9]%d*$') then
    return false
  end
  local q = #m > 6 and m:sub(1, #m - 6) or '0'
  return q == int(score)
end

-- The n (0..999999) of an rl member: its last 6 digits.
function Slide.number(m)
  return tonumber(m:sub(-6))
end

-- The member for the n-th entry at `score`, as a decimal string.
function Slide.member(score, n)
  if score == 0 then
    return int(n)
  end
  return string.format('%d%06d', score, n)
end

-- The key as the module opens it (host/key.rs): nil when missing; another
-- type is WRONGTYPE, a sorted set without a TTL is not rl's. Answers the
-- key's absolute expiry.
function Slide.open(key)
  local t = key_type(key)
  if t == 'none' then
    return nil
  end
  if t ~= 'zset' then
    E.wrong_type()
  end
  local at = expire_at(key)
  if at == -1 then
    E.foreign_zset()
  end
  return at
end

-- decide.rs `read_ends` at `now`: the newest entry (score, member) and how
-- many entries have left the window (score <= cutoff) and how many still
-- count. Checks the clock, the newest entry, the oldest, and the first
-- min(stale, max_read) stale ones (those an admission would remove); the
-- module walks them and counts a longer backlog with ZCOUNT, so the
-- counts are the server's.
function Slide.ends(key, exists, now, cutoff, max_read)
  if now < 0 or now > Slide.MAX_NOW_MS then
    fail('ERR rl internal error: server clock out of range')
  end
  if not exists then
    return { stale = 0, held = 0 }
  end
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if #last == 0 then
    return { stale = 0, held = 0 }
  end
  local newest = { member = last[1], score = Slide.score(last[2]) }
  if not Slide.is_rl(newest.score, newest.member) then
    E.foreign_zset()
  end
  local total = redis.call('ZCARD', key)
  local read = math.max(max_read, 1)
  local old = redis.call('ZRANGE', key, '-inf', int(cutoff), 'BYSCORE', 'LIMIT', 0, read, 'WITHSCORES')
  local stale = #old / 2
  if stale == 0 and total > 1 then
    -- None has left: the oldest is still checked.
    old = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  end
  for i = 1, #old, 2 do
    if not Slide.is_rl(Slide.score(old[i + 1]), old[i]) then
      E.foreign_zset()
    end
  end
  if stale == read then
    -- A backlog longer than the walk: the server's rank lookup counts it.
    stale = redis.call('ZCOUNT', key, '-inf', int(cutoff))
  end
  return { newest = newest, stale = stale, held = total - stale }
end

-- decide.rs `evict_budget`: the stale entries one admission may remove,
-- when the call decides `slides` sliding logs (RL.ALL shares 256).
function Slide.budget(cost, slides)
  return math.max(math.floor(Slide.EVICT_PER_CALL / math.max(slides, 1)), 2 * cost)
end

-- i64 arithmetic where a foreign score makes the module's wrap: a score
-- that is not whole is i64::MIN there, and `score + window - now` wraps
-- to 2^63 + window - now. (A double cannot hold that exactly: the reply
-- is the nearest one the server's integer conversion gives.)
function Slide.wait_after(s, window, now)
  if s == nil then
    local d = window - now
    if d < 0 then
      return 9223372036854775808 + d
    end
    return math.max(-9223372036854775808 + d, 1)
  end
  return math.max(s + window - now, 1)
end

-- slide/mod.rs + decide.rs `decide_within`.
function Slide.decide(key, req, call)
  local now, window = call.now.ms, req.window
  local cutoff = now - window
  local expiry = Slide.open(key)
  local max_evict = call.writes and Slide.budget(req.cost, call.shares.slides) or 0
  local ends = Slide.ends(key, expiry ~= nil, now, cutoff, max_evict)
  local newest, stale, held = ends.newest, ends.stale, ends.held

  if held + req.cost <= req.limit then
    -- At `now`, or at the newest entry's time if the clock stepped back.
    local at = newest and math.max(newest.score, now) or now
    local taken = 0
    if newest and newest.score == at then
      taken = Slide.number(newest.member) + 1
    end
    if taken + req.cost > Slide.MEMBERS_PER_MS then
      E.foreign_zset()
    end
    local decision = {
      allowed = 1,
      remaining = req.limit - held - req.cost,
      retry_after_ms = 0,
      reset_after_ms = at + window - now,
    }
    if not call.writes then
      return decision, nil
    end
    -- The members to add: the next free numbers of `at` (zset_log.rs
    -- `apply` skips members that exist, and refuses the key when they run
    -- past the ms). Checked here, before anything is written.
    local members, n = {}, taken
    while #members < req.cost do
      local batch = {}
      for i = n, math.min(n + req.cost - #members, Slide.MEMBERS_PER_MS) - 1 do
        batch[#batch + 1] = Slide.member(at, i)
      end
      if #batch == 0 then
        E.foreign_zset()
      end
      local found = expiry and redis.call('ZMSCORE', key, unpack(batch)) or {}
      for i, m in ipairs(batch) do
        if not found[i] then
          members[#members + 1] = m
        end
      end
      n = n + #batch
    end
    local evict = math.min(stale, max_evict)
    local needed = at + window
    return decision, function()
      local args = {}
      local score = int(at)
      for _, m in ipairs(members) do
        args[#args + 1] = score
        args[#args + 1] = m
      end
      redis.call('ZADD', key, unpack(args))
      if evict > 0 then
        redis.call('ZREMRANGEBYRANK', key, 0, evict - 1)
      end
      -- core/expiry.rs: moved only when it falls short of `needed`, then
      -- a quarter window past it.
      if expiry == nil or expiry < needed then
        redis.call('PEXPIREAT', key, int(needed + math.max(math.floor(window / 4), 1)))
      end
    end
  end

  -- Denied: the request fits once the `need` oldest entries still in the
  -- window have left; the need-th of them is at rank stale + need - 1.
  local need = held + req.cost - req.limit
  local reset = newest and math.max(newest.score + window - now, 0) or 0
  local retry = reset
  local rank = stale + need - 1
  local at_rank = redis.call('ZRANGE', key, int(rank), int(rank), 'WITHSCORES')
  if #at_rank == 2 then
    retry = Slide.wait_after(Slide.score(at_rank[2]), window, now)
  end
  return {
    allowed = 0,
    remaining = math.max(req.limit - held, 0),
    retry_after_ms = math.max(retry, 1),
    reset_after_ms = reset,
  }, nil
end

-- refund.rs: the `cost` newest entries that still count (never one that
-- left the window) are removed, each checked to be rl's, and the one after
-- them too, which becomes the newest. The expiry stays.
function Slide.refund(key, req, call)
  local now = call.now.ms
  local cutoff = now - req.window
  local expiry = Slide.open(key)
  -- What RL.PEEK SLIDE reads and checks.
  local ends = Slide.ends(key, expiry ~= nil, now, cutoff, 0)
  local n = math.min(req.cost, ends.held)
  if n == 0 then
    return 0
  end
  local newest = redis.call('ZRANGE', key, '+inf', '(' .. int(cutoff), 'BYSCORE', 'REV',
    'LIMIT', 0, n + 1, 'WITHSCORES')
  for i = 1, #newest, 2 do
    if not Slide.is_rl(Slide.score(newest[i + 1]), newest[i]) then
      E.foreign_zset()
    end
  end
  local members = {}
  for i = 1, math.min(n, #newest / 2) do
    members[i] = newest[2 * i - 1]
  end
  redis.call('ZREM', key, unpack(members))
  return #members
end

LIMITERS.SLIDE = Slide

COMMANDS['rl.slide'] = function(key, line)
  local req = Slide.parse(line)
  local call = { now = now(), shares = { slides = 1, buckets = 1 }, writes = true }
  local d, write = Slide.decide(key, req, call)
  if d.allowed == 1 and write then
    write()
  end
  return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- ============================================================ end SLIDE





-- ======================================================= BUCKETS, COUNT
-- RL.BUCKETS key limit window [PRECISION ms] [COST cost],
-- RL.COUNT key window field [BY n] [PRECISION ms],
-- RL.TOTALS key window [PRECISION ms]: src/core/buckets/, src/core/count/.



-- =================================================== end BUCKETS, COUNT





-- ====================================================== THROTTLE, FIXED
-- RL.THROTTLE key max_burst count period [quantity],
-- CL.THROTTLE key max_burst count period [quantity],
-- RL.FIXED key limit window [COST cost]: src/core/throttle/, src/core/fixed/.



-- ================================================== end THROTTLE, FIXED





-- ================================================================ LEASES
-- RL.ACQUIRE key limit lease_ms [ID id], RL.RELEASE key lease,
-- RL.RENEW key lease lease_ms: src/core/lease/.



-- ============================================================ end LEASES





-- ======================================================= PEEK, REFUND, ALL

-- `<limiter> key <parameters>` (RL.PEEK, RL.REFUND): the named limiter and
-- its request, parsed by its own parser; a wrong count of parameters is
-- restated for `command` with the limiter's usage.
local function unknown_limiter(token)
  fail("ERR unknown limiter '" .. E.token_text(token)
    .. "' (expected SLIDE, BUCKETS, THROTTLE, FIXED or ACQUIRE)")
end

local function limiter_of(token)
  return LIMITERS[token:upper()]
end

-- Parses `line` (token, key, parameters) with the limiter's parser; a
-- wrong count becomes the usage error for `called`. with_key false drops
-- ' key' from the usage (an RL.ALL clause lists its key apart).
local function parse_limited(line, called, with_key)
  local lim = limiter_of(line[1])
  if lim == nil then
    unknown_limiter(line[1])
  end
  local ok, req = pcall(lim.parse, line)
  if ok then
    return lim, req
  end
  if getmetatable(req) == Fail and req.text:find("^ERR wrong number of arguments for '") then
    local usage = lim.usage
    if not with_key then
      usage = usage:gsub(' key', '', 1)
    end
    fail("ERR wrong number of arguments for '" .. called .. "' command (expected " .. usage .. ')')
  end
  error(req, 0)
end

local NAMED = { positional = 2, options = {}, open = true }

local function parse_named(line, command)
  NAMED.command = command
  check_count(NAMED, line)
  local rest = {}
  for i = 2, #line do
    rest[#rest + 1] = line[i]
  end
  return parse_limited(rest, command, true)
end

local ONE = { slides = 1, buckets = 1 }

local function reply4(d)
  return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- RL.PEEK <limiter> key <parameters>
local function peek(key, line)
  local lim, req = parse_named(line, 'rl.peek')
  local d = lim.decide(key, req, { now = now(), shares = ONE, writes = false })
  return reply4(d)
end

-- RL.REFUND <limiter> key <parameters>
local function refund(key, line)
  local lim, req = parse_named(line, 'rl.refund')
  if lim.token == 'ACQUIRE' then
    fail('ERR RL.REFUND does not apply to ACQUIRE (a lease is given back with RL.RELEASE)')
  end
  local t = now()
  local refunded = lim.refund(key, req, { now = t, shares = ONE, writes = true })
  local d = lim.decide(key, lim.unit(req), { now = t, shares = ONE, writes = false })
  return { refunded, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- An error raised in RL.ALL clause i: 'ERR clause i: ...'; WRONGTYPE keeps
-- its standard form.
local function in_clause(i, err)
  if getmetatable(err) ~= Fail or err.text:find('^WRONGTYPE') then
    error(err, 0)
  end
  fail('ERR clause ' .. i .. ': ' .. err.text:gsub('^ERR ', '', 1))
end

local MAX_CLAUSES = 16
local MAX_SLIDE_COST = 100

-- RL.ALL numkeys key [key ...] clause [clause ...] (src/core/all/).
local function all(keys, line)
  if #line < 4 then
    E.arity('rl.all')
  end
  local numkeys = positive(line[2], 'numkeys', MAX_CLAUSES)
  local first_clause = 3 + numkeys
  if #line < first_clause + numkeys - 1 then
    E.arity('rl.all')
  end
  for i = 1, numkeys do
    for j = 1, i - 1 do
      if keys[i] == keys[j] then
        fail('ERR each RL.ALL clause needs its own key')
      end
    end
  end
  if limiter_of(line[first_clause]) == nil then
    unknown_limiter(line[first_clause])
  end
  -- A clause runs to the next limiter token, except the word after an
  -- ACQUIRE clause's ID.
  local starts = {}
  for i = first_clause, #line do
    if limiter_of(line[i]) ~= nil and (i == first_clause or line[i - 1]:upper() ~= 'ID') then
      starts[#starts + 1] = i
    end
  end
  if #starts ~= numkeys then
    local given = #starts == 1 and '1 clause was given' or (#starts .. ' clauses were given')
    fail('ERR numkeys is ' .. numkeys .. ' but ' .. given .. ' (one per key)')
  end
  local clauses = {}
  local shares = { slides = 0, buckets = 0 }
  for i, start in ipairs(starts) do
    local stop = (starts[i + 1] or #line + 1) - 1
    local clause = { line[start], keys[i] }
    for a = start + 1, stop do
      clause[#clause + 1] = line[a]
    end
    local ok, lim, req = pcall(parse_limited, clause, 'rl.all', false)
    if not ok then
      in_clause(i, lim)
    end
    clauses[i] = { lim = lim, req = req }
    if lim.token == 'SLIDE' then
      shares.slides = shares.slides + 1
    elseif lim.token == 'BUCKETS' then
      shares.buckets = shares.buckets + 1
    end
  end
  local slide_cost = 0
  for _, c in ipairs(clauses) do
    if c.lim.token == 'SLIDE' then
      slide_cost = slide_cost + c.lim.units(c.req)
    end
  end
  if slide_cost > MAX_SLIDE_COST then
    fail('ERR the SLIDE clauses\' COST must add up to at most ' .. MAX_SLIDE_COST)
  end
  -- Decide every clause first: all keys read, nothing written.
  local call = { now = now(), shares = shares, writes = true }
  local allowed, retry = 1, 0
  local any_lease = false
  for i, c in ipairs(clauses) do
    local ok, d, write = pcall(c.lim.decide, keys[i], c.req, call)
    if not ok then
      in_clause(i, d)
    end
    c.decision, c.write = d, write
    if d.allowed == 0 then
      allowed = 0
      retry = math.max(retry, d.retry_after_ms)
    end
    any_lease = any_lease or c.lim.token == 'ACQUIRE'
  end
  local reply = { allowed, retry }
  for i, c in ipairs(clauses) do
    local r = reply4(c.decision)
    if any_lease and c.lim.token == 'ACQUIRE' then
      -- The lease id only when the call records it; false is a nil reply.
      r[5] = (allowed == 1 and c.decision.lease) or false
    end
    reply[2 + i] = r
  end
  if allowed == 1 then
    for _, c in ipairs(clauses) do
      if c.write then
        c.write()
      end
    end
  end
  return reply
end

-- ============================================================= commands

-- The server callback around `body(keys, args)`: an rl error raised
-- anywhere below becomes its error reply; anything else (a server error
-- from redis.call, a bug) goes on as the server's own error.
local function guarded(body)
  return function(keys, args)
    local ok, res = pcall(body, keys, args)
    if ok then
      return res
    end
    if getmetatable(res) == Fail then
      return redis.error_reply(res.text)
    end
    error(res, 0)
  end
end

-- The command's line: { command, words..., args... }.
local function line_of(command, words, args)
  local line = { command }
  for _, w in ipairs(words) do
    line[#line + 1] = w
  end
  for i = 1, #args do
    line[#line + 1] = args[i]
  end
  return line
end

-- A single-key command (RL.SLIDE key ...): FCALL rl_slide 1 key ...
local function single(name, command)
  return guarded(function(keys, args)
    if #keys ~= 1 then
      wrong_keys(name, 1)
    end
    return COMMANDS[command](keys[1], line_of(command, { keys[1] }, args))
  end)
end

-- RL.PEEK and RL.REFUND name the limiter before the key (RL.PEEK SLIDE key
-- ...); the function takes it first after the key (FCALL rl_peek 1 key
-- SLIDE ...).
local function named(name, command, body)
  return guarded(function(keys, args)
    if #keys ~= 1 then
      wrong_keys(name, 1)
    end
    local rest = {}
    for i = 2, #args do
      rest[#rest + 1] = args[i]
    end
    local words = args[1] and { args[1], keys[1] } or { keys[1] }
    return body(keys[1], line_of(command, words, rest))
  end)
end

local function register(name, callback, flags)
  redis.register_function { function_name = name, callback = callback, flags = flags or {} }
end

-- (At load time the server offers only the registration API, not Lua's
-- base library: no loop over a table here.)
register('rl_slide', single('rl_slide', 'rl.slide'))
register('rl_buckets', single('rl_buckets', 'rl.buckets'))
register('rl_count', single('rl_count', 'rl.count'))
register('rl_throttle', single('rl_throttle', 'rl.throttle'))
register('cl_throttle', single('cl_throttle', 'cl.throttle'))
register('rl_fixed', single('rl_fixed', 'rl.fixed'))
register('rl_acquire', single('rl_acquire', 'rl.acquire'))
register('rl_renew', single('rl_renew', 'rl.renew'))
-- A slot can be given back at maxmemory (the module's RL.RELEASE is not
-- deny-oom either).
register('rl_release', single('rl_release', 'rl.release'), { 'allow-oom' })
-- Read-only: FCALL_RO, replicas.
register('rl_totals', single('rl_totals', 'rl.totals'), { 'no-writes' })
register('rl_peek', named('rl_peek', 'rl.peek', peek), { 'no-writes' })
register('rl_refund', named('rl_refund', 'rl.refund', refund))
register('rl_all', guarded(function(keys, args)
  return all(keys, line_of('rl.all', { tostring(#keys), unpack(keys) }, args))
end))
register('rl_version', function()
  return VERSION
end, { 'no-writes' })
