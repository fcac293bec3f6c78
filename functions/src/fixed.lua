-- ---- RL.FIXED (src/core/fixed/). Shares SF, sf_divmod, sf_clock and
-- sf_string_key with throttle.lua, which comes first.

-- fixed/request.rs: limit window [COST cost].
local FIXED_SYNTAX = syntax('rl.fixed', 3, { 'COST' })

-- As values (limit, window, cost); `sf_parse_fixed` is the limiter
-- interface's form.
local function sf_parse_fixed_parts(line, up_to)
  check_count(FIXED_SYNTAX, line)
  local limit = positive(line[3], 'limit', SF.MAX_LIMIT)
  local window = positive(line[4], 'window', SF.MAX_WINDOW_MS)
  local cost = 1
  if #line > 4 then
    local set = {}
    options(FIXED_SYNTAX, line, function(token, value)
      set_once(set, token, positive(value, token, SF.MAX_LIMIT))
    end)
    cost = set.COST or 1
  end
  if cost > limit and not up_to then
    E.cost_above_limit()
  end
  return limit, window, cost
end

-- `up_to` (RL.FIXED ... UPTO, the flag taken off): the cost may pass the
-- limit.
local function sf_parse_fixed(line, up_to)
  local limit, window, cost = sf_parse_fixed_parts(line, up_to)
  return { limit = limit, window = window, cost = cost }
end

-- fixed/decide.rs stored_state + FixedState::current: the count and end of
-- the window running at now_ms, or nil.
local function sf_fixed_current(key, now_ms)
  local bytes, at = sf_string_key(key)
  if bytes == nil then
    return nil
  end
  local n
  if #bytes >= 1 and #bytes <= 15 and not bytes:find('[^0-9]') then
    -- 1 to 15 digits: below MAX_LIMIT (10^15), an exact number.
    n = bytes + 0
  else
    local v = stored_unsigned(bytes)
    if v == nil or dec_cmp(v, int(SF.MAX_LIMIT)) > 0 then
      E.foreign_string(SF.FIXED_STATE)
    end
    n = tonumber(v)
  end
  if at == -1 then
    E.foreign_string(SF.FIXED_STATE)
  end
  if at > now_ms then
    return n, at
  end
  return nil
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
-- call): allowed, remaining, retry_after_ms, reset_after_ms, and for an
-- admission the count and window end to store.
local function sf_fixed_core(key, limit, window, cost, now_ms)
  local count, at = sf_fixed_current(key, now_ms)
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
  return 0, math.max(limit - count, 0), reset > 1 and reset or 1, reset
end

-- The limiter interface's decide: sf_fixed_core at call.now.ms.
local function sf_fixed_decide(key, req, call)
  local allowed, remaining, retry, reset, after, at =
    sf_fixed_core(key, req.limit, req.window, req.cost, call.now.ms)
  local decision = { allowed = allowed, remaining = remaining, retry_after_ms = retry, reset_after_ms = reset }
  if allowed == 0 then
    return decision, nil
  end
  return decision, function()
    sf_fixed_set(key, after, at)
  end
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

-- fixed/charge.rs: cost added to the current window's count (a new
-- window's, if none runs) whether or not it fits, up to MAX_LIMIT; its end
-- stays. The peek after reads back the count written.
local function sf_fixed_charge(key, req, call)
  local now_ms = call.now.ms
  local count, at = sf_fixed_current(key, now_ms)
  if count == nil then
    count, at = 0, now_ms + req.window
  end
  local charged = math.min(req.cost, SF.MAX_LIMIT - count)
  if charged > 0 then
    sf_fixed_set(key, count + charged, at)
  end
  return charged
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
  with_units = function(req, n)
    return { limit = req.limit, window = req.window, cost = n }
  end,
  refund = sf_fixed_refund,
  charge = sf_fixed_charge,
}

local function sf_rl_fixed(key, limit, window, cost)
  local allowed, remaining, retry, reset, after, at = sf_fixed_core(key, limit, window, cost, (sf_clock()))
  if allowed == 1 then
    sf_fixed_set(key, after, at)
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

-- The common line `limit window` (no COST) with both in range, on a key
-- that is absent or holds a running window as rl writes it; nil for any
-- other, before anything is written (the full path then answers, errors
-- included). It reads no clock: PTTL is the window's end less the
-- server's now, and SET PX puts a new window's end at the server's now
-- plus window, the instant the call runs, as the module reads it; both
-- replicate as absolute times (SET PXAT), and INCRBY keeps the end.
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
