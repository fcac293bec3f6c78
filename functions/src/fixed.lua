-- ---- RL.FIXED (src/core/fixed/). Shares SF, sf_divmod, sf_clock and
-- sf_string_key with throttle.lua, which comes first.

-- fixed/request.rs: limit window [COST cost] [BLOCK ms].
local FIXED_SYNTAX = syntax('rl.fixed', 3, { 'COST', 'BLOCK' })

-- As values (limit, window, cost, block ms or nil); `sf_parse_fixed` is
-- the limiter interface's form.
local function sf_parse_fixed_parts(line, up_to)
  check_count(FIXED_SYNTAX, line)
  local limit = positive(line[3], 'limit', SF.MAX_LIMIT)
  local window = positive(line[4], 'window', SF.MAX_WINDOW_MS)
  local cost, block = 1, nil
  if #line > 4 then
    local set = {}
    options(FIXED_SYNTAX, line, function(token, value)
      set_once(set, token, positive(value, token, token == 'BLOCK' and MAX_BLOCK_MS or SF.MAX_LIMIT))
    end)
    cost, block = set.COST or 1, set.BLOCK
  end
  if cost > limit and not up_to then
    E.cost_above_limit()
  end
  return limit, window, cost, block
end

-- `up_to` (RL.FIXED ... UPTO, the flag taken off): the cost may pass the
-- limit.
local function sf_parse_fixed(line, up_to)
  local limit, window, cost, block = sf_parse_fixed_parts(line, up_to)
  return { limit = limit, window = window, cost = cost, block = block }
end

-- fixed/decide.rs stored_count: the counter, or nil if `bytes` is none.
local function sf_fixed_count(bytes)
  if #bytes >= 1 and #bytes <= 15 and not bytes:find('[^0-9]') then
    -- 1 to 15 digits: below MAX_LIMIT (10^15), an exact number.
    return bytes + 0
  end
  local v = stored_unsigned(bytes)
  if v == nil or dec_cmp(v, int(SF.MAX_LIMIT)) > 0 then
    return nil
  end
  return tonumber(v)
end

-- fixed/decide.rs stored_state: the count, the window's end (the key's
-- expiry, or the one a blocked value keeps) and the block's end (nil:
-- none); nil for no key.
local function sf_fixed_read(key)
  local bytes, at = sf_string_key(key)
  if bytes == nil then
    return nil
  end
  local n, untl = sf_fixed_count(bytes), nil
  if n == nil then
    local state, own, u = split_blocked(bytes)
    n = state and sf_fixed_count(state)
    if n == nil then
      E.foreign_string(SF.FIXED_STATE)
    end
    at, untl = own, u
  end
  if at == -1 then
    E.foreign_string(SF.FIXED_STATE)
  end
  return n, at, untl
end

-- FixedState::current: the count and end of the window running at
-- now_ms, or nil; and the block's end.
local function sf_fixed_current(key, now_ms)
  local n, at, untl = sf_fixed_read(key)
  if n ~= nil and at > now_ms then
    return n, at, untl
  end
  return nil, nil, untl
end

-- SET key count with the window's end. An end at or past 2^53 ms (a
-- user's far PXAT) is kept as it is: a double cannot spell it.
local function sf_fixed_set(key, count, at)
  if at >= SF.EXACT then
    redis.call('SET', key, count, 'KEEPTTL')
  else
    redis.call('SET', key, int(count), 'PXAT', int(at))
  end
end

-- fixed/decide.rs decide at now_ms, as values (no table, no closure per
-- call): allowed, remaining, retry_after_ms, reset_after_ms, the count and
-- window end to store (an admission) or as they are (a denial), and true
-- for a denial by a block that holds (then nothing else).
local function sf_fixed_core(key, limit, window, cost, now_ms)
  local count, at, untl = sf_fixed_current(key, now_ms)
  local left = block_left(untl, now_ms)
  if left ~= nil then
    return 0, 0, left, left, nil, nil, true
  end
  if count == nil then
    count, at = 0, now_ms + window
  end
  local reset = at - now_ms
  if reset < 0 then
    reset = 0
  end
  if count + cost <= limit then
    local after = count + cost
    return 1, limit - after, 0, reset, after, at
  end
  return 0, math.max(limit - count, 0), reset > 1 and reset or 1, reset, count, at
end

-- The limiter interface's decide: sf_fixed_core at call.now.ms. A denial
-- with BLOCK writes the block, the count and end as they are, and answers
-- as the block does.
local function sf_fixed_decide(key, req, call)
  local now_ms = call.now.ms
  local allowed, remaining, retry, reset, after, at, blocked =
    sf_fixed_core(key, req.limit, req.window, req.cost, now_ms)
  local decision = { allowed = allowed, remaining = remaining, retry_after_ms = retry, reset_after_ms = reset,
    blocked = blocked }
  if allowed == 0 then
    if blocked or req.block == nil then
      return decision, nil
    end
    -- block.rs breached: the breach answers as the block it sets.
    decision = { allowed = 0, remaining = 0, retry_after_ms = req.block, reset_after_ms = req.block }
    return decision, function()
      sf_blocked_set(key, int(after), at, now_ms + req.block)
    end
  end
  return decision, function()
    sf_fixed_set(key, after, at)
  end
end

-- fixed/refund.rs: the current window's count lowered by COST, never
-- below zero; its end stays, and so does a block that holds.
local function sf_fixed_refund(key, req, call)
  local now_ms = call.now.ms
  local count, at, untl = sf_fixed_current(key, now_ms)
  if count == nil then
    return 0
  end
  local refunded = math.min(count, req.cost)
  if refunded > 0 then
    if block_left(untl, now_ms) then
      sf_blocked_set(key, int(count - refunded), at, untl)
    else
      sf_fixed_set(key, count - refunded, at)
    end
  end
  return refunded
end

-- fixed/charge.rs: cost added to the current window's count (a new
-- window's, if none runs) whether or not it fits, up to MAX_LIMIT; its end
-- stays, and so does a block that holds. The peek after reads back the count written.
local function sf_fixed_charge(key, req, call)
  local now_ms = call.now.ms
  local count, at, untl = sf_fixed_current(key, now_ms)
  if count == nil then
    count, at = 0, now_ms + req.window
  end
  local charged = math.min(req.cost, SF.MAX_LIMIT - count)
  if charged > 0 then
    -- A block that holds stays: a charge records units, it grants nothing.
    if block_left(untl, now_ms) then
      sf_blocked_set(key, int(count + charged), at, untl)
    else
      sf_fixed_set(key, count + charged, at)
    end
  end
  return charged
end

LIMITERS.FIXED = {
  token = 'FIXED',
  usage = 'FIXED key limit window [COST cost] [BLOCK ms]',
  parse = sf_parse_fixed,
  decide = sf_fixed_decide,
  units = function(req)
    return req.cost
  end,
  unit = function(req)
    return { limit = req.limit, window = req.window, cost = 1 }
  end,
  -- The same request for n units, its BLOCK kept (UPTO's denial of one
  -- unit blocks as the whole call would: core's `..*self`).
  with_units = function(req, n)
    return { limit = req.limit, window = req.window, cost = n, block = req.block }
  end,
  refund = sf_fixed_refund,
  charge = sf_fixed_charge,
}

-- fixed/block.rs: the count and the window's end to keep (a window over
-- counts nothing: it ends now), and the block's end; nil for no key.
local function sf_fixed_state(key, t)
  local count, at, untl = sf_fixed_read(key)
  if count == nil then
    return nil
  end
  if at <= t.ms then
    count, at = 0, t.ms
  end
  return int(count), at, untl
end

-- fixed/block.rs `block` (RL.BLOCK FIXED): the count as it is (0 for no
-- key), blocked; the block's end.
function LIMITERS.FIXED.block(key, t, ms)
  local untl = t.ms + ms
  local value, own = sf_fixed_state(key, t)
  if value == nil then
    value, own = '0', t.ms
  end
  sf_blocked_set(key, value, own, untl)
  return untl
end

-- fixed/block.rs `unblock` (RL.UNBLOCK FIXED).
function LIMITERS.FIXED.unblock(key, t)
  local value, own, untl = sf_fixed_state(key, t)
  return string_unblock(key, value, own, untl, t)
end

local function sf_rl_fixed(key, limit, window, cost, block)
  local now_ms = sf_clock()
  local allowed, remaining, retry, reset, after, at, blocked = sf_fixed_core(key, limit, window, cost, now_ms)
  if allowed == 1 then
    sf_fixed_set(key, after, at)
  elseif block ~= nil and not blocked then
    sf_blocked_set(key, int(after), at, now_ms + block)
    -- block.rs breached: the breach answers as the block it sets.
    return { 0, 0, block, block }
  end
  return { allowed, remaining, retry, reset }
end

COMMANDS['rl.fixed'] = function(key, line)
  local up = take_upto(line, 5)
  if up ~= nil then
    return grant_up_to(LIMITERS.FIXED, key, sf_parse_fixed(up, true))
  end
  return sf_rl_fixed(key, sf_parse_fixed_parts(line))
end

-- The plain paths' reading of a FIXED key (rl_fixed's and rl_all's): its
-- count and the ms its window has left; 0 and nil for no key; nil when it
-- is anything but a running window as rl writes it (the full path then
-- reads it again and answers, errors included). It reads no clock: PTTL
-- is the window's end less the server's now, and a new window's SET PX
-- puts its end at the server's now plus window, the instant the call
-- runs, as the module reads it; both replicate as absolute times (SET
-- PXAT), and INCRBY keeps the end. It builds nothing (no table, no
-- string): on this path every allocation is paid again in the collector.
local function sf_fixed_plain_read(key)
  local ttl = redis.call('PTTL', key)
  if ttl == -2 then
    return 0, nil
  end
  -- No expiry (not rl's, or another type), a window that ends at this ms,
  -- or one too far out for a double: the full path.
  if ttl < 1 or ttl >= SF.EXACT then
    return nil
  end
  -- Another type answers an error table: the full path refuses it.
  local bytes = redis.pcall('GET', key)
  -- What rl writes: 1 to 15 digits without a leading zero (below
  -- MAX_LIMIT); INCRBY reads them as the same integer.
  if type(bytes) ~= 'string' or #bytes > 15 or not (bytes == '0' or bytes:find('^[1-9]%d*$')) then
    return nil
  end
  return bytes + 0, ttl
end

-- `limit` and `window` (the text FCALL sent) in range, as numbers; nil
-- otherwise (the full path answers the error).
local function sf_fixed_plain_params(limit_text, window_text)
  if limit_text == nil or window_text == nil then
    return nil
  end
  local limit, window = argument(limit_text), argument(window_text)
  if limit == nil or limit < 1 or limit > SF.MAX_LIMIT or window == nil or window < 1 or window > SF.MAX_WINDOW_MS then
    return nil
  end
  return limit, window
end

-- The common line `limit window` (no COST) with both in range, on a key
-- that is absent or holds a running window as rl writes it; nil for any
-- other, before anything is written (the full path then answers, errors
-- included). It is sf_fixed_plain_params and sf_fixed_plain_read
-- (above) inlined: those two Lua calls would be 3% of this path's
-- instructions.
PLAIN['rl.fixed'] = function(key, args)
  if #args ~= 2 then
    return nil
  end
  local window_text = args[2]
  local limit, window = argument(args[1]), argument(window_text)
  if limit == nil or limit < 1 or limit > SF.MAX_LIMIT or window == nil or window < 1 or window > SF.MAX_WINDOW_MS then
    return nil
  end
  local ttl = redis.call('PTTL', key)
  if ttl == -2 then
    redis.call('SET', key, '1', 'PX', window_text)
    return { 1, limit - 1, 0, window }
  end
  -- No expiry (not rl's, or another type), a window that ends at this ms,
  -- or one too far out for a double: the full path.
  if ttl < 1 or ttl >= SF.EXACT then
    return nil
  end
  -- Another type answers an error table: the full path refuses it.
  local bytes = redis.pcall('GET', key)
  -- What rl writes: 1 to 15 digits without a leading zero (below
  -- MAX_LIMIT); INCRBY reads them as the same integer.
  if type(bytes) ~= 'string' or #bytes > 15 or not (bytes == '0' or bytes:find('^[1-9]%d*$')) then
    return nil
  end
  local count = bytes + 0
  if count < limit then
    redis.call('INCRBY', key, '1')
    return { 1, limit - count - 1, 0, ttl }
  end
  return { 0, math.max(limit - count, 0), ttl, ttl }
end

-- ================================================== end THROTTLE, FIXED
