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
--
-- Every value below 2^53 is a plain number; where one can pass it (a
-- stored TAT: redis-cell's nanoseconds read as µs reach 1.8e16, and the
-- waits derived from it; CL.THROTTLE's quantity up to 2^63 - 1) it is
-- kept as a decimal string or as two parts (hi * 10^6 + lo), never as a
-- rounded double.

-- The limits and texts of src/core/throttle/ and src/core/fixed/ (one
-- table: the main chunk's locals are limited).
local SF = {
  MAX_UNITS = 1000000000000000, -- throttle/request.rs MAX_UNITS
  MAX_PERIOD_MS = 1000000000000, -- MAX_PERIOD_MS
  MAX_PERIOD_S = 1000000000, -- MAX_PERIOD_S
  MAX_TOLERANCE_US = 1000000000000000, -- gcra.rs MAX_TOLERANCE_US
  I64_MAX = '9223372036854775807',
  U64_MAX = '18446744073709551615',
  MIN_STORED_TAT = '1000000000000000', -- gcra.rs MIN_STORED_TAT_US
  NANOS_FROM = '100000000000000000', -- gcra.rs NANOS_FROM
  MAX_LIMIT = 1000000000000000, -- fixed/request.rs MAX_LIMIT
  MAX_WINDOW_MS = 1000000000000, -- args.rs MAX_WINDOW_MS
  EXACT = 9007199254740992, -- 2^53
  THROTTLE_STATE = 'an rl throttle state (a TAT in microseconds)',
  -- sf_ahead: past this many 10^6 µs ahead, a distance is kept in two parts.
  AHEAD_BIG = 4000000000,
  FIXED_STATE = 'an rl fixed-window counter',
}

-- floor(a / b) and a - floor(a / b) * b, exact for integers a (|a| below
-- 2^53) and b > 0: the float quotient is corrected by its remainder.
local function sf_divmod(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then
    q, r = q - 1, r + b
  elseif r >= b then
    q, r = q + 1, r - b
  end
  return q, r
end

-- ceil(a / b) for integers a >= 0, b > 0 (a below 2^53).
local function sf_ceil_div(a, b)
  local q, r = sf_divmod(a, b)
  if r > 0 then
    q = q + 1
  end
  return q
end

-- args.rs `unsigned`: 1 to 20 digits (leading zeros allowed), at most
-- u64::MAX; the value as a decimal string without leading zeros, or nil.
local function sf_unsigned(s)
  if s == nil or #s == 0 or #s > 20 or s:find('[^0-9]') then
    return nil
  end
  local digits = dec_norm(s)
  if dec_cmp(digits, SF.U64_MAX) > 0 then
    return nil
  end
  return digits
end

-- A decimal string as (hi, lo): value = hi * 10^6 + lo, both exact.
local function sf_split_digits(s)
  if #s <= 6 then
    return 0, tonumber(s)
  end
  return tonumber(s:sub(1, -7)), tonumber(s:sub(-6))
end

-- ceil(s / 1000) of a decimal string, as a number (s below 2^63).
local function sf_ceil_ms_of_digits(s)
  local hi, lo = sf_split_digits(s)
  return hi * 1000 + sf_ceil_div(lo, 1000)
end

-- CL.THROTTLE's quantity: 0 to 2^63 - 1 (args.rs `non_negative` with
-- i64::MAX). A number: exact up to 2^53; above, only compared with limits
-- far below it, which rounding cannot cross.
local function sf_cell_quantity(s)
  local bad = #s == 0 or s:find('[^0-9]') or (#s > 1 and s:byte(1) == 48)
    or #s > 19 or (#s == 19 and s > SF.I64_MAX)
  if bad then
    fail('ERR quantity must be an integer from 0 to ' .. SF.I64_MAX)
  end
  return tonumber(s)
end

-- gcra.rs Gcra::new: { emission, tolerance, limit }.
local function sf_gcra(max_burst, count, period_us)
  if count > period_us then
    fail('ERR count per period must not exceed 1 per microsecond (1000000 per second)')
  end
  local emission = sf_ceil_div(period_us, count)
  local limit = max_burst + 1
  -- limit * emission <= MAX_TOLERANCE_US, without the product.
  if limit > sf_divmod(SF.MAX_TOLERANCE_US, emission) then
    fail('ERR max_burst too large: (max_burst + 1) * period / count must not exceed 31 years')
  end
  return { emission = emission, tolerance = limit * emission, limit = limit }
end

-- request.rs ThrottleRequest::parse; cell: CL.THROTTLE's dialect.
local function sf_parse_throttle(line, cell)
  local command = cell and 'cl.throttle' or 'rl.throttle'
  if #line < 5 or #line > 6 then
    E.arity(command)
  end
  local max_burst = non_negative(line[3], 'max_burst', SF.MAX_UNITS)
  local count = positive(line[4], 'count', SF.MAX_UNITS)
  local period = positive(line[5], 'period', cell and SF.MAX_PERIOD_S or SF.MAX_PERIOD_MS)
  local quantity = 1
  if line[6] ~= nil then
    if cell then
      quantity = sf_cell_quantity(line[6])
    else
      quantity = non_negative(line[6], 'quantity', SF.MAX_UNITS)
    end
  end
  local rate = sf_gcra(max_burst, count, period * (cell and 1000000 or 1000))
  if not cell and quantity > rate.limit then
    fail('ERR quantity must not exceed max_burst + 1')
  end
  return { rate = rate, quantity = quantity }
end

-- The key as a string state: its bytes and absolute expiry (-1: none), nil
-- when absent; WRONGTYPE for another type (key.rs OpenKey::open).
local function sf_string_key(key)
  local kind = key_type(key)
  if kind == 'none' then
    return nil
  end
  if kind ~= 'string' then
    E.wrong_type()
  end
  return redis.call('GET', key), expire_at(key)
end

-- gcra.rs stored_state: the stored TAT in µs as a decimal string (ns as
-- redis-cell writes them rounded up), refused unless rl could have written
-- it; nil for no key.
local function sf_stored_tat(key)
  local bytes, at = sf_string_key(key)
  if bytes == nil then
    return nil
  end
  local v = sf_unsigned(bytes)
  if v == nil then
    E.foreign_string(SF.THROTTLE_STATE)
  end
  if dec_cmp(v, SF.NANOS_FROM) >= 0 then
    local us = v:sub(1, -4)
    if v:sub(-3) ~= '000' then
      us = dec_add(us, '1')
    end
    v = us
  elseif dec_cmp(v, SF.MIN_STORED_TAT) <= 0 then
    E.foreign_string(SF.THROTTLE_STATE)
  end
  if at == -1 then
    E.foreign_string(SF.THROTTLE_STATE)
  end
  return v
end

-- How far the TAT `tat` (decimal µs) is ahead of `now_us`, never below 0:
-- a number when below 2^52, else (hi, lo) with the distance
-- hi * 10^6 + lo, hi >= 4 * 10^9 (far beyond any tolerance).
local function sf_ahead(tat, now_us)
  local th, tl = sf_split_digits(tat)
  local nh, nl = sf_divmod(now_us, 1000000)
  local hi, lo = th - nh, tl - nl
  if lo < 0 then
    hi, lo = hi - 1, lo + 1000000
  end
  if hi < 0 then
    return 0
  end
  if hi < SF.AHEAD_BIG then
    return hi * 1000000 + lo
  end
  return nil, hi, lo
end

-- ceil((hi * 10^6 + lo + delta) / 1000) for a big distance and
-- |delta| <= 2 * 10^15: the result is below 2^53.
local function sf_big_ms(hi, lo, delta)
  local dh, dl = sf_divmod(delta, 1000000)
  return (hi + dh) * 1000 + sf_ceil_div(lo + dl, 1000)
end

-- gcra.rs decide + to_decision, at call.now.us. The decision carries
-- `retry_never` (retry_after_us None: CL.THROTTLE's oversized quantity).
local function sf_throttle_decide(key, req, call)
  local rate, q = req.rate, req.quantity
  local t, tau = rate.emission, rate.tolerance
  local now_us = call.now.us
  local tat = sf_stored_tat(key)
  local d, bh, bl = 0, nil, nil
  if tat ~= nil then
    d, bh, bl = sf_ahead(tat, now_us)
  end
  local oversized = q > rate.limit
  -- increment = q * T, exact when not oversized (q * T <= tau).
  if d ~= nil and not oversized and d <= tau - q * t then
    local inc = q * t
    local ahead = d + inc
    local decision = {
      allowed = 1,
      remaining = sf_divmod(tau - ahead, t),
      retry_after_ms = 0,
      reset_after_ms = sf_ceil_div(ahead, 1000),
    }
    local write = nil
    if q > 0 then
      local new_tat = now_us + ahead
      write = function()
        redis.call('SET', key, int(new_tat), 'PXAT', int(sf_ceil_div(new_tat, 1000)))
      end
    end
    return decision, write
  end
  local decision = { allowed = 0 }
  if d ~= nil then
    decision.remaining = sf_divmod(math.max(0, tau - d), t)
    decision.reset_after_ms = sf_ceil_div(d, 1000)
    if not oversized then
      decision.retry_after_ms = sf_ceil_div(d - (tau - q * t), 1000)
    end
  else
    decision.remaining = 0
    decision.reset_after_ms = sf_big_ms(bh, bl, 0)
    if not oversized then
      decision.retry_after_ms = sf_big_ms(bh, bl, q * t - tau)
    end
  end
  if oversized then
    decision.retry_never = true
    -- u64::MAX ms, as the reply saturates it (i64::MAX; unreachable for
    -- RL.THROTTLE, which refuses such a quantity).
    decision.retry_after_ms = 9223372036854775807
  end
  return decision, nil
end

-- refund.rs: the TAT moved back by quantity intervals, never before now.
local function sf_throttle_refund(key, req, call)
  local t, q = req.rate.emission, req.quantity
  local now_us = call.now.us
  local tat = sf_stored_tat(key)
  if tat == nil or q == 0 then
    return 0
  end
  local ahead = sf_ahead(tat, now_us)
  local refunded
  if ahead == nil or ahead > (q - 1) * t then
    refunded = q
  else
    refunded = sf_ceil_div(ahead, t)
  end
  if refunded == 0 then
    return 0
  end
  local back = q * t
  local value, at
  if ahead ~= nil then
    local new_tat = math.max(now_us + ahead - back, now_us)
    value, at = int(new_tat), sf_ceil_div(new_tat, 1000)
  else
    -- Far ahead: tat - q * T stays far ahead of now.
    value = dec_sub(tat, int(back))
    at = sf_ceil_ms_of_digits(value)
  end
  -- (A TAT refunded to now on a whole-ms clock expires at now: SET PXAT
  -- deletes the key there, where the module keeps it for that ms; both
  -- read as idle.)
  redis.call('SET', key, value, 'PXAT', int(at))
  return refunded
end

LIMITERS.THROTTLE = {
  token = 'THROTTLE',
  usage = 'THROTTLE key max_burst count period [quantity]',
  parse = function(line)
    return sf_parse_throttle(line, false)
  end,
  decide = sf_throttle_decide,
  units = function(req)
    return req.quantity
  end,
  unit = function(req)
    return { rate = req.rate, quantity = 1 }
  end,
  refund = sf_throttle_refund,
}

local function sf_run(lim, key, req)
  local decision, write = lim.decide(key, req, { now = now(), shares = { slides = 1, buckets = 1 }, writes = true })
  if write then
    write()
  end
  return decision
end

COMMANDS['rl.throttle'] = function(key, line)
  local d = sf_run(LIMITERS.THROTTLE, key, sf_parse_throttle(line, false))
  return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- gcra.rs CellReply: [limited, limit, remaining, retry_after_s, reset_after_s].
COMMANDS['cl.throttle'] = function(key, line)
  local req = sf_parse_throttle(line, true)
  local d = sf_run(LIMITERS.THROTTLE, key, req)
  local retry = -1
  if d.allowed == 0 and not d.retry_never then
    retry = sf_ceil_div(d.retry_after_ms, 1000)
  end
  return { 1 - d.allowed, req.rate.limit, d.remaining, retry, sf_ceil_div(d.reset_after_ms, 1000) }
end

-- fixed/request.rs: limit window [COST cost].
local FIXED_SYNTAX = syntax('rl.fixed', 3, { 'COST' })

local function sf_parse_fixed(line)
  check_count(FIXED_SYNTAX, line)
  local limit = positive(line[3], 'limit', SF.MAX_LIMIT)
  local window = positive(line[4], 'window', SF.MAX_WINDOW_MS)
  local set = {}
  options(FIXED_SYNTAX, line, function(token, value)
    set_once(set, token, positive(value, token, SF.MAX_LIMIT))
  end)
  local cost = set.COST or 1
  if cost > limit then
    E.cost_above_limit()
  end
  return { limit = limit, window = window, cost = cost }
end

-- fixed/decide.rs stored_state + FixedState::current: the count and end of
-- the window running at now_ms, or nil.
local function sf_fixed_current(key, now_ms)
  local bytes, at = sf_string_key(key)
  if bytes == nil then
    return nil
  end
  local v = sf_unsigned(bytes)
  if v == nil or dec_cmp(v, int(SF.MAX_LIMIT)) > 0 or at == -1 then
    E.foreign_string(SF.FIXED_STATE)
  end
  if at > now_ms then
    return tonumber(v), at
  end
  return nil
end

-- SET key count with the window's end. An end at or past 2^53 ms (a
-- user's far PXAT) is kept as it is: a double cannot spell it.
local function sf_fixed_set(key, count, at)
  if at >= SF.EXACT then
    redis.call('SET', key, int(count), 'KEEPTTL')
  else
    redis.call('SET', key, int(count), 'PXAT', int(at))
  end
end

-- fixed/decide.rs decide, at call.now.ms.
local function sf_fixed_decide(key, req, call)
  local now_ms = call.now.ms
  local count, at = sf_fixed_current(key, now_ms)
  if count == nil then
    count, at = 0, now_ms + req.window
  end
  local reset = math.max(at - now_ms, 0)
  if count + req.cost <= req.limit then
    local after = count + req.cost
    return {
      allowed = 1,
      remaining = req.limit - after,
      retry_after_ms = 0,
      reset_after_ms = reset,
    }, function()
      sf_fixed_set(key, after, at)
    end
  end
  return {
    allowed = 0,
    remaining = math.max(req.limit - count, 0),
    retry_after_ms = math.max(reset, 1),
    reset_after_ms = reset,
  }, nil
end

-- fixed/refund.rs: the current window's count lowered by COST, never
-- below zero; its end stays.
local function sf_fixed_refund(key, req, call)
  local count, at = sf_fixed_current(key, call.now.ms)
  if count == nil then
    return 0
  end
  local refunded = math.min(count, req.cost)
  if refunded > 0 then
    sf_fixed_set(key, count - refunded, at)
  end
  return refunded
end

LIMITERS.FIXED = {
  token = 'FIXED',
  usage = 'FIXED key limit window [COST cost]',
  parse = sf_parse_fixed,
  decide = sf_fixed_decide,
  units = function(req)
    return req.cost
  end,
  unit = function(req)
    return { limit = req.limit, window = req.window, cost = 1 }
  end,
  refund = sf_fixed_refund,
}

COMMANDS['rl.fixed'] = function(key, line)
  local d = sf_run(LIMITERS.FIXED, key, sf_parse_fixed(line))
  return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

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
