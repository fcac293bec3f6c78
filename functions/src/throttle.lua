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
  -- Lua's % is a - floor(a / b) * b: the same float quotient, without
  -- math.floor's call (this runs several times on every throttle call).
  local r = a % b
  if r < 0 then
    r = r + b
  elseif r >= b then
    r = r - b
  end
  return (a - r) / b, r
end

-- ceil(a / b) for integers a >= 0, b > 0 (a below 2^53).
local function sf_ceil_div(a, b)
  local q, r = sf_divmod(a, b)
  if r > 0 then
    q = q + 1
  end
  return q
end


-- A decimal string as (hi, lo): value = hi * 10^6 + lo, both exact.
local function sf_split_digits(s)
  if #s <= 6 then
    return 0, s + 0
  end
  return s:sub(1, -7) + 0, s:sub(-6) + 0
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

-- gcra.rs Gcra::new: emission, tolerance, limit; nil and which bound a
-- rate breaks (1: count per period, 2: the tolerance) instead of raising,
-- for the fast paths.
local function sf_rate(max_burst, count, period_us)
  if count > period_us then
    return nil, 1
  end
  local emission = sf_ceil_div(period_us, count)
  local limit = max_burst + 1
  -- limit * emission <= MAX_TOLERANCE_US, without the product.
  if limit > sf_divmod(SF.MAX_TOLERANCE_US, emission) then
    return nil, 2
  end
  return emission, limit * emission, limit
end

local function sf_gcra(max_burst, count, period_us)
  local emission, tolerance, limit = sf_rate(max_burst, count, period_us)
  if emission == nil then
    if tolerance == 1 then
      fail('ERR count per period must not exceed 1 per microsecond (1000000 per second)')
    end
    fail('ERR max_burst too large: (max_burst + 1) * period / count must not exceed 31 years')
  end
  return emission, tolerance, limit
end

-- request.rs ThrottleRequest::parse; cell: CL.THROTTLE's dialect. As
-- values (emission, tolerance, limit, quantity): the commands build no
-- table per call; `sf_parse_throttle` is the limiter interface's form.
-- `up_to` (RL.THROTTLE ... UPTO, the flag taken off): the quantity may
-- pass max_burst + 1.
local function sf_parse_throttle_parts(line, cell, up_to)
  local command = cell and 'cl.throttle' or 'rl.throttle'
  if #line < 5 then
    E.arity(command)
  end
  if line[6] ~= nil and line[6]:upper() == 'UPTO' then
    E.upto_only(command)
  end
  -- RL.THROTTLE: [quantity] [BLOCK ms], the quantity a positional word
  -- (never the token) and nothing after the option (request.rs).
  local function is_block(a)
    return not cell and a:upper() == 'BLOCK'
  end
  -- WAIT: unknown to RL.THROTTLE's parser (request.rs), as to every other.
  local function is_wait(a)
    return not cell and a:upper() == 'WAIT'
  end
  local q_at = nil
  if line[6] ~= nil and not is_block(line[6]) and not is_wait(line[6]) then
    q_at = 6
  end
  local block = nil
  local at = q_at and 7 or 6
  while at <= #line do
    if is_wait(line[at]) then
      E.unknown_option(line[at])
    end
    if not is_block(line[at]) then
      E.arity(command)
    end
    if line[at + 1] == nil then
      E.missing_value('BLOCK')
    end
    local v = positive(line[at + 1], 'BLOCK', MAX_BLOCK_MS)
    if block ~= nil then
      E.duplicate_option('BLOCK')
    end
    block = v
    at = at + 2
  end
  local max_burst = non_negative(line[3], 'max_burst', SF.MAX_UNITS)
  local count = positive(line[4], 'count', SF.MAX_UNITS)
  local period = positive(line[5], 'period', cell and SF.MAX_PERIOD_S or SF.MAX_PERIOD_MS)
  local quantity = 1
  if q_at ~= nil then
    if cell then
      quantity = sf_cell_quantity(line[6])
    else
      quantity = non_negative(line[6], 'quantity', SF.MAX_UNITS)
    end
  end
  local emission, tolerance, limit = sf_gcra(max_burst, count, period * (cell and 1000000 or 1000))
  if not cell and not up_to and quantity > limit then
    fail('ERR quantity must not exceed max_burst + 1')
  end
  return emission, tolerance, limit, quantity, block
end

local function sf_parse_throttle(line, cell, up_to)
  local emission, tolerance, limit, quantity, block = sf_parse_throttle_parts(line, cell, up_to)
  return { rate = { emission = emission, tolerance = tolerance, limit = limit }, quantity = quantity, block = block }
end

-- The key as a string state: its bytes and absolute expiry (-1: none), nil
-- when absent; WRONGTYPE for another type (key.rs OpenKey::open).
local function sf_string_key(key)
  -- GET answers nil for no key and WRONGTYPE for another type, as TYPE
  -- would have told. typed_read's work inlined: this is on every call.
  local bytes = redis.pcall('GET', key)
  if bytes == false then
    return nil
  end
  if type(bytes) == 'table' and bytes.err ~= nil then
    if bytes.err:find('^WRONGTYPE') then
      E.wrong_type()
    end
    error(bytes, 0)
  end
  return bytes, redis.call('PEXPIRETIME', key)
end

-- gcra.rs stored_tat: the TAT in µs as a decimal string (ns as
-- redis-cell writes them rounded up) if rl could have written `bytes`,
-- else nil.
local function sf_tat_of(bytes)
  if #bytes == 16 and bytes ~= SF.MIN_STORED_TAT and bytes:find('^[1-9]%d*$') then
    -- What rl writes in this era: 16 digits without a leading zero, so
    -- above MIN_STORED_TAT (10^15) once not equal to it, and below
    -- NANOS_FROM (18 digits): the checks below in three tests.
    return bytes
  end
  local v = stored_unsigned(bytes)
  if v == nil then
    return nil
  end
  if dec_cmp(v, SF.NANOS_FROM) >= 0 then
    local us = v:sub(1, -4)
    if v:sub(-3) ~= '000' then
      us = dec_add(us, '1')
    end
    return us
  elseif dec_cmp(v, SF.MIN_STORED_TAT) <= 0 then
    return nil
  end
  return v
end

-- gcra.rs stored_with_block: the stored TAT (see sf_tat_of) and the end of
-- the key's block (nil: none), refused unless rl could have written them;
-- nil for no key.
local function sf_stored_tat(key)
  local bytes, at = sf_string_key(key)
  if bytes == nil then
    return nil
  end
  local v, untl = sf_tat_of(bytes), nil
  if v == nil then
    local state, _, u = split_blocked(bytes)
    v = state and sf_tat_of(state)
    if v == nil then
      E.foreign_string(SF.THROTTLE_STATE)
    end
    untl = u
  end
  if at == -1 then
    E.foreign_string(SF.THROTTLE_STATE)
  end
  return v, untl
end

-- sf_stored_tat's common case for the fast paths, raising nothing: the
-- TAT as rl writes it in this era (16 digits, no leading zero, above
-- MIN_STORED_TAT) on a key with an expiry; nil for no key; false for
-- anything else (the full path then reads it again and answers).
local function sf_quick_tat(key)
  local bytes = redis.pcall('GET', key)
  if bytes == false then
    return nil
  end
  if type(bytes) == 'string' and #bytes == 16 and bytes ~= SF.MIN_STORED_TAT
    and bytes:find('^[1-9]%d*$') and redis.call('PEXPIRETIME', key) ~= -1 then
    return bytes
  end
  return false
end

-- How far the TAT `tat` (decimal µs) is ahead of `now_us`, never below 0:
-- a number when below 2^52, else (hi, lo) with the distance
-- hi * 10^6 + lo, hi >= 4 * 10^9 (far beyond any tolerance).
local function sf_ahead(tat, now_us)
  if #tat == 16 and tat:byte(1) < 57 then
    -- Below 9 * 10^15 < 2^53: one exact number (a TAT rl writes now).
    local d = (tat + 0) - now_us
    if d < 0 then
      return 0
    end
    if d < SF.AHEAD_BIG * 1000000 then
      return d
    end
  end
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

-- gcra.rs decide + to_decision at now_us over the stored TAT `tat` (a
-- decimal string, nil for none), for emission t, tolerance tau,
-- limit and quantity q, as values (no table, no closure per call):
-- allowed, remaining, retry_after_ms (nil: never, CL.THROTTLE's oversized
-- quantity), reset_after_ms, and the TAT an admission stores (nil: none).
local function sf_throttle_core(tat, t, tau, limit, q, now_us)
  local d, bh, bl = 0, nil, nil
  if tat ~= nil then
    d, bh, bl = sf_ahead(tat, now_us)
  end
  local oversized = q > limit
  -- increment = q * T, exact when not oversized (q * T <= tau).
  if d ~= nil and not oversized and d <= tau - q * t then
    local ahead = d + q * t
    local new_tat = nil
    if q > 0 then
      new_tat = now_us + ahead
    end
    return 1, (sf_divmod(tau - ahead, t)), 0, sf_ceil_div(ahead, 1000), new_tat
  end
  local remaining, reset, retry
  if d ~= nil then
    remaining = sf_divmod(math.max(0, tau - d), t)
    reset = sf_ceil_div(d, 1000)
    if not oversized then
      retry = sf_ceil_div(d - (tau - q * t), 1000)
    end
  else
    remaining = 0
    reset = sf_big_ms(bh, bl, 0)
    if not oversized then
      retry = sf_big_ms(bh, bl, q * t - tau)
    end
  end
  return 0, remaining, retry, reset, nil
end

local function sf_throttle_write(key, new_tat)
  local tat = int(new_tat)
  local at
  if #tat > 3 and tat:sub(-3) == '000' then
    -- A whole ms (Redis 7.0's µs clock is ms * 1000): its digits, without
    -- formatting a second number.
    at = tat:sub(1, -4)
  else
    at = int(sf_ceil_div(new_tat, 1000))
  end
  redis.call('SET', key, tat, 'PXAT', at)
end

-- The TAT `tat` (a decimal string) as it is, blocked until `untl`:
-- `<tat>e<tat in ms, rounded up>b<until>`, expiring at the later end.
local function sf_throttle_block(key, tat, untl)
  local own = sf_ceil_ms_of_digits(tat)
  redis.call('SET', key, tat .. 'e' .. int(own) .. 'b' .. int(untl), 'PXAT', int(math.max(own, untl)))
end

-- The limiter interface's decide: sf_throttle_core at call.now.us. The
-- decision carries `retry_never` (retry_after_us None).
local function sf_throttle_decide(key, req, call)
  local rate = req.rate
  local tat, untl = sf_stored_tat(key)
  local left = block_left(untl, call.now.ms)
  if left ~= nil then
    return { allowed = 0, remaining = 0, retry_after_ms = left, reset_after_ms = left, blocked = true }, nil
  end
  local allowed, remaining, retry, reset, new_tat =
    sf_throttle_core(tat, rate.emission, rate.tolerance, rate.limit, req.quantity, call.now.us)
  local decision = { allowed = allowed, remaining = remaining, retry_after_ms = retry, reset_after_ms = reset }
  if retry == nil then
    decision.retry_never = true
    -- u64::MAX ms, as the reply saturates it (i64::MAX; unreachable for
    -- RL.THROTTLE, which refuses such a quantity).
    decision.retry_after_ms = 9223372036854775807
  end
  local write = nil
  if new_tat ~= nil then
    write = function()
      sf_throttle_write(key, new_tat)
    end
  elseif allowed == 0 and req.block ~= nil then
    -- block.rs breached: the breach answers as the block it sets.
    decision = { allowed = 0, remaining = 0, retry_after_ms = req.block, reset_after_ms = req.block }
    write = function()
      sf_throttle_block(key, tat or int(call.now.us), call.now.ms + req.block)
    end
  end
  return decision, write
end

-- refund.rs: the TAT moved back by quantity intervals, never before now.
local function sf_throttle_refund(key, req, call)
  local t, q = req.rate.emission, req.quantity
  local now_us = call.now.us
  local tat, untl = sf_stored_tat(key)
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
  -- read as idle.) A block that holds stays.
  if block_left(untl, call.now.ms) then
    redis.call('SET', key, value .. 'e' .. int(at) .. 'b' .. int(untl), 'PXAT', int(math.max(at, untl)))
  else
    redis.call('SET', key, value, 'PXAT', at)
  end
  return refunded
end

-- charge.rs: the TAT moved forward by quantity intervals from max(tat,
-- now), past the burst tolerance or not, at most MAX_TOLERANCE_US past
-- now + tau (a TAT farther ahead, sf_ahead's nil, is past it already).
-- The peek after reads back the TAT written.
local function sf_throttle_charge(key, req, call)
  local t, tau = req.rate.emission, req.rate.tolerance
  local now_us = call.now.us
  local tat, untl = sf_stored_tat(key)
  local ahead = 0
  if tat ~= nil then
    ahead = sf_ahead(tat, now_us)
  end
  if ahead == nil then
    return 0
  end
  -- All below 2^53: ahead, tau and the ceiling are at most 2 * 10^15.
  local room = sf_divmod(math.max(tau + SF.MAX_TOLERANCE_US - ahead, 0), t)
  local charged = math.min(req.quantity, room)
  if charged > 0 then
    local new_tat = now_us + ahead + charged * t
    -- A block that holds stays: a charge records units, it grants nothing.
    if block_left(untl, call.now.ms) then
      local at = sf_ceil_div(new_tat, 1000)
      redis.call('SET', key, int(new_tat) .. 'e' .. int(at) .. 'b' .. int(untl), 'PXAT', int(math.max(at, untl)))
    else
      sf_throttle_write(key, new_tat)
    end
  end
  return charged
end

LIMITERS.THROTTLE = {
  token = 'THROTTLE',
  usage = 'THROTTLE key max_burst count period [quantity] [BLOCK ms]',
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
  -- The same request for n units, its BLOCK kept (UPTO's denial of one
  -- unit blocks as the whole call would: core's `..*self`).
  with_units = function(req, n)
    return { rate = req.rate, quantity = n, block = req.block }
  end,
  refund = sf_throttle_refund,
  charge = sf_throttle_charge,
}

-- throttle/block.rs: the TAT to keep, its own expiry, and the block's
-- end; nil for no key.
local function sf_throttle_state(key)
  local tat, untl = sf_stored_tat(key)
  if tat == nil then
    return nil
  end
  return tat, sf_ceil_ms_of_digits(tat), untl
end

-- throttle/block.rs `block` (RL.BLOCK THROTTLE): the TAT as it is (an
-- idle one at now for no key), blocked; the block's end.
function LIMITERS.THROTTLE.block(key, t, ms)
  local untl = t.ms + ms
  local value, own = sf_throttle_state(key)
  if value == nil then
    value = int(t.us)
    own = sf_ceil_ms_of_digits(value)
  end
  sf_blocked_set(key, value, own, untl)
  return untl
end

-- throttle/block.rs `unblock` (RL.UNBLOCK THROTTLE).
function LIMITERS.THROTTLE.unblock(key, t)
  local value, own, untl = sf_throttle_state(key)
  return string_unblock(key, value, own, untl, t)
end

local sf_clock = clock

-- RL.THROTTLE's reply, or with `cell` CL.THROTTLE's (gcra.rs CellReply:
-- [limited, limit, remaining, retry_after_s, reset_after_s]), for the TAT
-- read at now_us; an admission written first.
local function sf_throttle_reply(key, tat, now_us, t, tau, limit, q, cell)
  -- RL.THROTTLE refuses an oversized quantity: retry is never nil there.
  local allowed, remaining, retry, reset, new_tat = sf_throttle_core(tat, t, tau, limit, q, now_us)
  if new_tat ~= nil then
    sf_throttle_write(key, new_tat)
  end
  if not cell then
    return { allowed, remaining, retry, reset }
  end
  local retry_s = -1
  if allowed == 0 and retry ~= nil then
    retry_s = sf_ceil_div(retry, 1000)
  end
  return { 1 - allowed, limit, remaining, retry_s, sf_ceil_div(reset, 1000) }
end

local function sf_throttle_command(key, line, cell)
  local t, tau, limit, q, block = sf_parse_throttle_parts(line, cell)
  local now_ms, now_us = sf_clock()
  local tat, untl = sf_stored_tat(key)
  local left = block_left(untl, now_ms)
  if left ~= nil then
    -- A block that holds (set by RL.THROTTLE) denies CL.THROTTLE too.
    if cell then
      local s = sf_ceil_div(left, 1000)
      return { 1, limit, 0, s, s }
    end
    return { 0, 0, left, left }
  end
  local reply = sf_throttle_reply(key, tat, now_us, t, tau, limit, q, cell)
  if block ~= nil and reply[1] == 0 then
    sf_throttle_block(key, tat or int(now_us), now_ms + block)
    -- block.rs breached: the breach answers as the block it sets.
    return { 0, 0, block, block }
  end
  return reply
end

COMMANDS['rl.throttle'] = function(key, line)
  local up = take_upto(line, 6)
  if up ~= nil then
    return grant_up_to(LIMITERS.THROTTLE, key, sf_parse_throttle(up, false, true))
  end
  return sf_throttle_command(key, line, false)
end

COMMANDS['cl.throttle'] = function(key, line)
  return sf_throttle_command(key, line, true)
end

-- The common line `max_burst count period` (quantity 1) with every number
-- in range and a rate rl accepts, on a key absent or holding a TAT as rl
-- writes it: the reply, else nil before anything is written (the full
-- path then answers, errors included; quantity 1 never exceeds
-- max_burst + 1).
-- The rates the fast paths computed, by their argument strings
-- (rates[max_burst][count][period] = { emission, tolerance, limit }), one
-- table per dialect: a call's rate is mostly the last call's, and three
-- lookups cost less than reading the three numbers and dividing. Cleared
-- when it holds SF.RATES_KEPT (memory stays bounded whatever the callers
-- send); only rates rl accepts are kept.
SF.RATES, SF.RATES_N, SF.RATES_KEPT = { [false] = {}, [true] = {} }, 0, 512

local function sf_plain_rate(args, cell)
  local a1, a2, a3 = args[1], args[2], args[3]
  local rates = SF.RATES[cell]
  local by_count = rates[a1]
  local by_period = by_count and by_count[a2]
  local rate = by_period and by_period[a3]
  if rate ~= nil then
    return rate[1], rate[2], rate[3]
  end
  local max_burst, count, period = argument(a1), argument(a2), argument(a3)
  if max_burst == nil or max_burst > SF.MAX_UNITS or count == nil or count < 1 or count > SF.MAX_UNITS
    or period == nil or period < 1 or period > (cell and SF.MAX_PERIOD_S or SF.MAX_PERIOD_MS) then
    return nil
  end
  local t, tau, limit = sf_rate(max_burst, count, period * (cell and 1000000 or 1000))
  if t == nil then
    return nil
  end
  if SF.RATES_N >= SF.RATES_KEPT then
    SF.RATES, SF.RATES_N = { [false] = {}, [true] = {} }, 0
    rates = SF.RATES[cell]
  end
  by_count = rates[a1] or {}
  rates[a1] = by_count
  by_period = by_count[a2] or {}
  by_count[a2] = by_period
  by_period[a3], SF.RATES_N = { t, tau, limit }, SF.RATES_N + 1
  return t, tau, limit
end

local function sf_plain_throttle(key, args, cell)
  if #args ~= 3 then
    return nil
  end
  local t, tau, limit = sf_plain_rate(args, cell)
  if t == nil then
    return nil
  end
  -- sf_clock's µs, inlined (one Lua call less on every call).
  local time = redis.call('TIME')
  local us = time[2] + 0
  local now_us = time[1] * 1000000 + us
  if redis.REDIS_VERSION_NUM < 0x070200 then
    now_us = now_us - us % 1000
  end
  local tat = sf_quick_tat(key)
  if tat == false then
    return nil
  end
  if tat ~= nil and not cell and tat:byte(1) < 57 then
    -- The common admission of RL.THROTTLE, inlined from sf_throttle_core
    -- and sf_throttle_write (the same values): a TAT below 9 * 10^15 is
    -- one exact number, and so is every value below.
    local ahead = (tat + 0) - now_us
    if ahead < 0 then
      ahead = 0
    end
    ahead = ahead + t
    if ahead <= tau then
      local new_tat = now_us + ahead
      if new_tat % 1000 == 0 then
        -- A whole ms (Redis 7.0's µs clock is ms * 1000): one number
        -- formatted, its digits the expiry, and with '000' the TAT.
        local at = int(new_tat / 1000)
        redis.call('SET', key, at .. '000', 'PXAT', at)
      else
        redis.call('SET', key, int(new_tat), 'PXAT', int(sf_ceil_div(new_tat, 1000)))
      end
      return { 1, (sf_divmod(tau - ahead, t)), 0, sf_ceil_div(ahead, 1000) }
    end
  end
  return sf_throttle_reply(key, tat, now_us, t, tau, limit, 1, cell)
end

PLAIN['rl.throttle'] = function(key, args)
  return sf_plain_throttle(key, args, false)
end

PLAIN['cl.throttle'] = function(key, args)
  return sf_plain_throttle(key, args, true)
end
