-- ---- RL.BUCKETS (src/core/buckets/): the limiter over the hash layout of
-- buckets/state.lua.

local BUCKETS = {
  token = 'BUCKETS',
  usage = 'BUCKETS key limit window [PRECISION ms] [COST cost] [BLOCK ms]',
}

-- `up_to` (RL.BUCKETS ... UPTO, the flag taken off): the cost may pass
-- the limit.
function BUCKETS.parse(line, up_to)
  check_count(BK.BUCKETS_SYNTAX, line)
  local limit = positive(line[3], 'limit', BK.MAX_LIMIT)
  local window = positive(line[4], 'window', BK.MAX_WINDOW)
  local set = {}
  if #line > 4 then
    options(BK.BUCKETS_SYNTAX, line, function(token, value)
      if token == 'COST' then
        set_once(set, token, positive(value, token, BK.MAX_LIMIT))
      elseif token == 'BLOCK' then
        set_once(set, token, positive(value, token, MAX_BLOCK_MS))
      else
        bk.precision_option(value, window, set)
      end
    end)
  end
  local cost = set.COST or 1
  if cost > limit and not up_to then
    E.cost_above_limit()
  end
  return { limit = limit, window = window, precision = set.PRECISION, cost = cost, block = set.BLOCK }
end

function BUCKETS.with_units(req, n)
  return { limit = req.limit, window = req.window, precision = req.precision, cost = n, block = req.block }
end

function BUCKETS.units(req)
  return req.cost
end

-- refund.rs unit: one unit, without BLOCK (a report never breaches).
function BUCKETS.unit(req)
  return { limit = req.limit, window = req.window, precision = req.precision, cost = 1 }
end

-- decide.rs `block_write`: HSET the header as stored (the kind alone for
-- a missing key) with the block's item replaced, the key kept at least
-- until the block's end.
function bk.block_set(key, h, at, untl)
  local base = h and (h:match('^(.*),b[^,]*$') or h) or 'b'
  redis.call('HSET', key, 'h', base .. ',b' .. int(untl))
  if at == nil or at < untl then
    redis.call('PEXPIREAT', key, int(untl))
  end
end

-- decide.rs `keep_block`: the write `w` keeping a block that holds at
-- now_ms (a charge or a refund moves units, it grants no access).
function bk.keep_block(w, untl, now_ms)
  if block_left(untl, now_ms) then
    w.header = w.header .. ',b' .. int(untl)
    w.needed = math.max(w.needed, untl)
  end
end

-- decide.rs `decide_within`, with RL.ALL's shared bound. A block that
-- holds denies before any bucket is read (but for RL.CHARGE, `counting`:
-- decide_state, the block left aside); a denial with BLOCK writes the
-- block. Returns the decision, the write's function, and for RL.CHARGE
-- the write as data, the key's expiry and the block's end.
function BUCKETS.decide(key, req, call, counting)
  local exists, at, h = bk.open(key)
  local state, untl = bk.load(key, exists, 'b', h)
  local left = block_left(untl, call.now.ms)
  if left ~= nil and not counting then
    return { allowed = 0, remaining = 0, retry_after_ms = left, reset_after_ms = left, blocked = true }, nil
  end
  local precision = bk.resolve_precision(req.window, req.precision, state)
  local shares = math.max(call.shares.buckets or 1, 1)
  local max_buckets = math.floor(BK.MAX_BUCKETS / shares)
  if max_buckets < BK.MAX_BUCKETS and bk.ceil_div(req.window, precision) > max_buckets then
    fail('ERR PRECISION too small: the window would need more than ' .. int(max_buckets)
      .. " buckets (RL.ALL's BUCKETS clauses share " .. BK.MAX_BUCKETS .. ')')
  end
  local now = call.now.ms
  local win = bk.slide(key, state, req.window, precision, now)
  local held = win.totals[1] or '0'
  local cost = int(req.cost)
  local limit = int(req.limit)
  if dec_cmp_digits(bk.sat_add(held, cost), limit) <= 0 then
    local bucket = bk.target_counts(win, 1)
    bucket[1] = bk.sat_add(bucket[1], cost)
    local w = bk.write(win, 'b', bucket, { bk.add(held, cost) }, nil)
    local d = {
      allowed = 1,
      remaining = req.limit - tonumber(held) - req.cost,
      retry_after_ms = 0,
      reset_after_ms = math.max(w.needed - now, 0),
    }
    -- The write as data too, for RL.CHARGE.
    return d, function()
      bk.record(key, w, at)
    end, w, at, untl
  end
  -- Denied: the oldest counted buckets first, until enough leaves.
  local newest = win.newest or win.target
  local need = bk.sat_sub(bk.sat_add(held, cost), limit)
  local freed = '0'
  local retry_at = nil
  local order = {}
  for j = #win.held, 1, -1 do
    order[#order + 1] = newest - 1 - win.held[j]
  end
  -- Summed as numbers while exact (need below 10^16, counts of 15 digits).
  local short = #need <= 15
  local need_n, freed_n = short and need + 0, 0
  local walked = false
  if short and type(key) ~= 'table' and #order > 0 then
    -- Every count read as a number first (bk.fetch_digits); anything
    -- else is walked below from the start, as before.
    local got = bk.fetch_digits(key, order, 1, win.ring)
    local last = win.newest_counts[1] or '0'
    if got ~= nil and #last <= 15 then
      got[#got + 1] = last
      walked = true
      for k_ = 1, #got do
        local n = #got[k_]
        if n == 0 or n > 15 then
          walked, retry_at, freed_n = false, nil, 0
          break
        end
        freed_n = freed_n + got[k_]
        if freed_n >= need_n then
          retry_at = bk.leaves_at(win, k_ < #got and order[k_] or newest)
          break
        end
      end
    end
  else
    bk.fetch(key, order, win.ring)
  end
  order[#order + 1] = newest
  for k_ = 1, walked and 0 or #order do local b = order[k_]
    local c = bk.read_bucket(key, win, b, 1)[1]
    local enough
    if short and #c <= 15 then
      freed_n = freed_n + c
      enough = freed_n >= need_n
    else
      if short then
        freed, short = int(freed_n), false
      end
      freed = bk.sat_add(freed, c)
      enough = dec_cmp_digits(freed, need) >= 0
    end
    if enough then
      retry_at = bk.leaves_at(win, b)
      break
    end
  end
  local reset_at = bk.leaves_at(win, newest)
  retry_at = retry_at or reset_at
  local d = {
    allowed = 0,
    remaining = tonumber(bk.sat_sub(limit, held)),
    retry_after_ms = math.max(retry_at - now, 1),
    reset_after_ms = math.max(reset_at - now, 0),
  }
  if req.block == nil then
    return d, nil, nil, at, untl
  end
  -- block.rs breached: the breach answers as the block it sets.
  d = { allowed = 0, remaining = 0, retry_after_ms = req.block, reset_after_ms = req.block }
  if type(key) == 'table' then
    return d, nil, nil, at, untl
  end
  return d, function()
    bk.block_set(key, h, at, now + req.block)
  end, nil, at, untl
end

-- refund.rs: cost back from the buckets that count under the window the
-- refund names, the newest first. Nothing is evicted: a bucket that left
-- this window may count for the key's own (not stored), so only what is
-- reported leaves the hash. The reply's peek is decided over the hash as
-- the write leaves it, before the write.
function BUCKETS.refund(key, req, call)
  local exists, at, h = bk.open(key)
  local state, untl = bk.load(key, exists, 'b', h)
  local precision = bk.resolve_precision(req.window, req.precision, state)
  local win = bk.slide(key, state, req.window, precision, call.now.ms)
  local held = win.totals[1] or '0'
  local n = bk.min(int(req.cost), held)
  if n == '0' or win.newest == nil then
    return 0
  end
  local newest = win.newest
  local left = n
  local current = win.newest_counts[1] or '0'
  local taken = bk.min(left, current)
  current = bk.sat_sub(current, taken)
  left = bk.sat_sub(left, taken)
  local fields = {}
  local delete = {}
  local removed = {}
  local bs = {}
  for k_ = 1, #win.held do
    bs[k_] = newest - 1 - win.held[k_]
  end
  bk.fetch(key, bs, win.ring)
  for k_ = 1, #win.held do local i = win.held[k_]
    if left == '0' then
      break
    end
    local b = newest - 1 - i
    local count = bk.field_counts(key, b, 1, win.ring)[1]
    taken = bk.min(left, count)
    left = bk.sat_sub(left, taken)
    if count == taken then
      delete[#delete + 1] = bk.field_name(b, win.ring)
      removed[i] = true
    else
      fields[#fields + 1] = { bk.field_name(b, win.ring), bk.sat_sub(count, taken) }
    end
  end
  -- The stored set and totals: buckets outside this window keep theirs.
  local kept = {}
  for k_ = 1, #state.held do local i = state.held[k_]
    if not removed[i] then
      kept[#kept + 1] = i
    end
  end
  local refunded = bk.sat_sub(n, left)
  local totals = { bk.sat_sub(state.totals[1], refunded) }
  local w = {
    header = bk.header('b', win.precision, newest, kept, totals, { current }, win.ring),
    fields = fields,
    delete = delete,
    needed = bk.leaves_at(win, newest),
    window = win.window,
  }
  -- A block that holds stays: a refund gives back units, not access.
  bk.keep_block(w, untl, call.now.ms)
  local after = BUCKETS.decide(bk.written(key, w), BUCKETS.unit(req),
    { now = call.now, shares = BK.ONE, writes = false })
  bk.record(key, w, at)
  return tonumber(refunded), after
end

-- charge.rs: an admission of cost under the ceiling every total stays
-- below (MAX_LIMIT) instead of the request's limit; past that ceiling,
-- what still fits under it. The reply's peek is decided over the hash as
-- the write leaves it, before the write.
function BUCKETS.charge(key, req, call)
  local lifted = { limit = BK.MAX_LIMIT, window = req.window, precision = req.precision, cost = req.cost }
  -- A block the key carries is kept, and counts nothing here.
  local d, _, w, at, untl = BUCKETS.decide(key, lifted, call, true)
  local charged = req.cost
  if w == nil and d.remaining > 0 then
    charged = d.remaining
    lifted.cost = charged
    d, _, w, at, untl = BUCKETS.decide(key, lifted, call, true)
  end
  if w == nil then
    return 0
  end
  bk.keep_block(w, untl, call.now.ms)
  local after = BUCKETS.decide(bk.written(key, w), BUCKETS.unit(req),
    { now = call.now, shares = BK.ONE, writes = false })
  bk.record(key, w, at)
  return charged, after
end

-- oldest.rs `oldest_wait`: the wait until the oldest bucket that still
-- counts and holds a count leaves (RL.PEEK BUCKETS ... OLDEST), 0 when the
-- window counts nothing.
function BUCKETS.oldest_wait(key, req, now)
  local exists, _, h = bk.open(key)
  local state = bk.load(key, exists, 'b', h)
  local precision = bk.resolve_precision(req.window, req.precision, state)
  local win = bk.slide(key, state, req.window, precision, now)
  local newest = win.newest
  if newest == nil then
    return 0
  end
  local b = nil
  if #win.held > 0 then
    -- The highest bit is the oldest bucket held.
    b = newest - 1 - win.held[#win.held]
  elseif newest >= win.live_from then
    for k_ = 1, #win.newest_counts do
      if dec_cmp_digits(win.newest_counts[k_], '0') > 0 then
        b = newest
      end
    end
  end
  if b == nil then
    return 0
  end
  return math.max(bk.leaves_at(win, b) - now, 1)
end

-- buckets/block.rs `block` (RL.BLOCK BUCKETS): checked as RL.BUCKETS
-- checks the key; the block's end.
function BUCKETS.block(key, t, ms)
  local untl = t.ms + ms
  local exists, at, h = bk.open(key)
  bk.load(key, exists, 'b', h)
  bk.block_set(key, h, at, untl)
  return untl
end

-- buckets/block.rs `unblock` (RL.UNBLOCK BUCKETS): the header without its
-- block (the expiry kept), or the key deleted when the block was all it
-- held; 1 if a block held.
function BUCKETS.unblock(key, t)
  local exists, _, h = bk.open(key)
  local state, untl = bk.load(key, exists, 'b', h)
  if block_left(untl, t.ms) == nil then
    return 0
  end
  if state == nil then
    redis.call('DEL', key)
  else
    redis.call('HSET', key, 'h', h:match('^(.*),b[^,]*$'))
  end
  return 1
end

LIMITERS.BUCKETS = BUCKETS

COMMANDS['rl.buckets'] = function(key, line)
  local up = take_upto(line, 5)
  if up ~= nil then
    return grant_up_to(BUCKETS, key, BUCKETS.parse(up, true))
  end
  local req = BUCKETS.parse(line)
  local d, write = BUCKETS.decide(key, req, { now = now(), shares = BK.ONE, writes = true })
  if write then
    write()
  end
  return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- ---- the plain line's fast path
-- `rl_buckets key limit window` on a key that is absent or whose header
-- holds only short numbers: the decision of BUCKETS.decide with plain
-- numbers (every value here is below 2^53, where doubles are exact), the
-- held set as one number (at most 13 hex digits, 52 bits), the bucket
-- fields read in one HMGET. Anything else (an error to raise, a foreign
-- or long value, a held set past 52 bits) answers nil before any write,
-- and the full path decides from the start: its reads are the same. It
-- runs outside the dispatcher's pcall (dispatch.lua `single`), so it
-- raises nothing itself (an error table escaping there crashes Redis 7.0).

-- A stored count as a number, if it is 1 to 15 digits (nil: the full path
-- reads it).
function bk.fast_count(raw)
  if raw == false or raw == nil then
    return 0
  end
  if #raw > 15 or raw:find('[^0-9]') or #raw == 0 then
    return nil
  end
  return raw + 0
end

-- The counts of buckets `bs` (nil: one is not a short count).
function bk.fast_counts(key, bs, ring)
  if #bs == 0 then
    return {}
  end
  local names = {}
  for i = 1, #bs do
    names[i] = bk.field_name(bs[i], ring)
  end
  local got = #bs == 1 and { redis.call('HGET', key, names[1]) }
    or redis.call('HMGET', key, unpack(names))
  local out = {}
  for i = 1, #bs do
    out[i] = bk.fast_count(got[i])
    if out[i] == nil then
      return nil
    end
  end
  return out
end

-- The buckets of the set bits of `v` (a held set shifted right by `from`
-- bits, below 2^53: bit i of the set is bucket newest - 1 - i), oldest
-- (highest bit) first. Halving walks the bits without a power per bit.
function bk.fast_buckets(v, from, newest)
  local out, n, i = {}, 0, from
  while v > 0 do
    local b = v % 2
    if b == 1 then
      n = n + 1
      out[n] = newest - 1 - i
    end
    v = (v - b) / 2
    i = i + 1
  end
  for a = 1, (n - n % 2) / 2 do
    out[a], out[n + 1 - a] = out[n + 1 - a], out[a]
  end
  return out
end

function bk.fast(key, args)
  if #args ~= 2 then
    return nil
  end
  local limit, w = argument(args[1]), argument(args[2])
  if limit == nil or limit < 1 or limit > BK.MAX_LIMIT or w == nil or w < 1 or w > BK.MAX_WINDOW then
    return nil
  end
  local at = expire_at(key)
  local p, newest, hex, total, cur
  local ring = true
  if at ~= -2 then
    -- This path runs outside the dispatcher's pcall and raises nothing:
    -- another type's error table, like every refusal, is the full path's.
    local h = redis.pcall('HGET', key, 'h')
    if at < 0 or type(h) ~= 'string' then
      return nil
    end
    local g_, p_, n_, x_, t_, c_ = h:match('^([bB]),(%d+),(%d+),([0-9a-f]+),(%d+),(%d+)$')
    if p_ == nil or #p_ > 15 or #n_ > 15 or #x_ > 13 or #t_ > 15 or #c_ > 15 then
      return nil
    end
    p, newest, hex, total, cur = p_ + 0, n_ + 0, x_, t_ + 0, c_ + 0
    ring = g_ == 'B'
    if p < 1 or p > w or newest > bk.floor_div(BK.MAX_CLOCK, p) then
      return nil
    end
  else
    p = math.max(bk.ceil_div(w, BK.DEFAULT_BUCKETS), 1)
  end
  if bk.ceil_div(w, p) > BK.MAX_BUCKETS then
    return nil
  end
  local t = now().ms
  if t > BK.MAX_CLOCK or t < -BK.MAX_CLOCK then
    return nil
  end
  local live_from = bk.floor_div(t - w + 1, p)
  local target = bk.floor_div(t, p)
  if newest == nil then
    local needed = (target + 1) * p - 1 + w
    redis.call('HSET', key, 'h', 'B,' .. int(p) .. ',' .. int(target) .. ',0,1,1')
    redis.call('PEXPIREAT', key, needed + math.max(math.floor(w / 4), 1))
    return { 1, limit - 1, 0, math.max(needed - t, 0) }
  end
  -- The held set: bit i is bucket newest - 1 - i; those at or past
  -- first_stale have left the window.
  local held = tonumber(hex, 16)
  local first_stale = math.max(newest - live_from, 0)
  local live, stale = held, {}
  if first_stale < 53 then
    live = held % 2 ^ first_stale
  end
  if live < held then
    -- Oldest first, as the full path lists them.
    stale = bk.fast_buckets((held - live) / 2 ^ first_stale, first_stale, newest)
  end
  -- The live buckets, oldest first: listed only when a sum or a denial
  -- reads them (with nothing stale, the header's total is the window's).
  local lives
  local sum
  if live_from > newest then
    sum = 0
  elseif #stale == 0 then
    sum = total
  else
    lives = bk.fast_buckets(live, 0, newest)
    if #stale <= #lives then
      local cs = bk.fast_counts(key, stale, ring)
      if cs == nil then
        return nil
      end
      sum = total
      for i = 1, #cs do
        sum = sum - cs[i]
      end
      sum = math.max(sum, 0)
    else
      local cs = bk.fast_counts(key, lives, ring)
      if cs == nil then
        return nil
      end
      sum = cur
      for i = 1, #cs do
        sum = sum + cs[i]
      end
    end
  end
  target = math.max(target, newest)
  if sum + 1 <= limit then
    local bucket = (newest == target and cur or 0) + 1
    local flush = nil
    if newest < target then
      -- (0 stays 0: a step past 1023 buckets would make it 0 * inf.)
      if live > 0 then
        live = live * 2 ^ (target - newest)
      end
      if newest >= live_from and cur ~= 0 then
        live = live + 2 ^ (target - newest - 1)
        flush = newest
      end
      if live >= 2 ^ 52 then
        return nil
      end
    end
    -- An earlier build's key takes ring names once no field stays (then
    -- nothing but the header is set: no name to clash with).
    local tag = (ring or live == 0) and 'B,' or 'b,'
    local header = tag .. int(p) .. ',' .. int(target) .. ',' .. string.format('%x', live) .. ','
      .. int(sum + 1) .. ',' .. int(bucket)
    if flush ~= nil then
      redis.call('HSET', key, 'h', header, bk.field_name(flush, ring), int(cur))
    else
      redis.call('HSET', key, 'h', header)
    end
    if #stale > 0 then
      local names = {}
      for i = 1, #stale do
        names[i] = bk.field_name(stale[i], ring)
      end
      redis.call('HDEL', key, unpack(names))
    end
    local needed = (target + 1) * p - 1 + w
    if at < needed then
      redis.call('PEXPIREAT', key, needed + math.max(math.floor(w / 4), 1))
    end
    return { 1, limit - sum - 1, 0, math.max(needed - t, 0) }
  end
  -- Denied: the oldest counted buckets first, until enough leaves.
  local need = sum + 1 - limit
  lives = lives or bk.fast_buckets(live, 0, newest)
  local cs = bk.fast_counts(key, lives, ring)
  if cs == nil then
    return nil
  end
  cs[#cs + 1] = cur
  lives[#lives + 1] = newest
  local reset_at = (newest + 1) * p - 1 + w
  local retry_at = reset_at
  local freed = 0
  for i = 1, #cs do
    freed = freed + cs[i]
    if freed >= need then
      retry_at = (lives[i] + 1) * p - 1 + w
      break
    end
  end
  return { 0, math.max(limit - sum, 0), math.max(retry_at - t, 1), math.max(reset_at - t, 0) }
end

PLAIN['rl.buckets'] = bk.fast
