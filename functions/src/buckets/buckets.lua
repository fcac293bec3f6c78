-- ---- RL.BUCKETS (src/core/buckets/): the limiter over the hash layout of
-- buckets/state.lua.

local BUCKETS = {
  token = 'BUCKETS',
  usage = 'BUCKETS key limit window [PRECISION ms] [COST cost]',
}

function BUCKETS.parse(line)
  check_count(BK.BUCKETS_SYNTAX, line)
  local limit = positive(line[3], 'limit', BK.MAX_LIMIT)
  local window = positive(line[4], 'window', BK.MAX_WINDOW)
  local set = {}
  if #line > 4 then
    options(BK.BUCKETS_SYNTAX, line, function(token, value)
      if token == 'COST' then
        set_once(set, token, positive(value, token, BK.MAX_LIMIT))
      else
        bk.precision_option(value, window, set)
      end
    end)
  end
  local cost = set.COST or 1
  if cost > limit then
    E.cost_above_limit()
  end
  return { limit = limit, window = window, precision = set.PRECISION, cost = cost }
end

function BUCKETS.units(req)
  return req.cost
end

function BUCKETS.unit(req)
  return { limit = req.limit, window = req.window, precision = req.precision, cost = 1 }
end

-- decide.rs `decide_within`, with RL.ALL's shared bound.
function BUCKETS.decide(key, req, call)
  local exists, at, h = bk.open(key)
  local state = bk.load(key, exists, 'b', h)
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
    return d, function()
      bk.record(key, w, at)
    end
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
  bk.fetch(key, order)
  order[#order + 1] = newest
  for k_ = 1, #order do local b = order[k_]
    freed = bk.sat_add(freed, bk.read_bucket(key, win, b, 1)[1])
    if dec_cmp_digits(freed, need) >= 0 then
      retry_at = bk.leaves_at(win, b)
      break
    end
  end
  local reset_at = bk.leaves_at(win, newest)
  retry_at = retry_at or reset_at
  return {
    allowed = 0,
    remaining = tonumber(bk.sat_sub(limit, held)),
    retry_after_ms = math.max(retry_at - now, 1),
    reset_after_ms = math.max(reset_at - now, 0),
  }, nil
end

-- refund.rs: cost back from the buckets that count under the window the
-- refund names, the newest first. Nothing is evicted: a bucket that left
-- this window may count for the key's own (not stored), so only what is
-- reported leaves the hash. The reply's peek is decided over the hash as
-- the write leaves it, before the write.
function BUCKETS.refund(key, req, call)
  local exists, at, h = bk.open(key)
  local state = bk.load(key, exists, 'b', h)
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
  bk.fetch(key, bs)
  for k_ = 1, #win.held do local i = win.held[k_]
    if left == '0' then
      break
    end
    local b = newest - 1 - i
    local count = bk.field_counts(key, b, 1)[1]
    taken = bk.min(left, count)
    left = bk.sat_sub(left, taken)
    if count == taken then
      delete[#delete + 1] = bk.field_name(b)
      removed[i] = true
    else
      fields[#fields + 1] = { bk.field_name(b), bk.sat_sub(count, taken) }
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
    header = bk.header('b', win.precision, newest, kept, totals, { current }),
    fields = fields,
    delete = delete,
    needed = bk.leaves_at(win, newest),
    window = win.window,
  }
  local after = BUCKETS.decide(bk.written(key, w), BUCKETS.unit(req),
    { now = call.now, shares = BK.ONE, writes = false })
  bk.record(key, w, at)
  return tonumber(refunded), after
end

LIMITERS.BUCKETS = BUCKETS

COMMANDS['rl.buckets'] = function(key, line)
  local req = BUCKETS.parse(line)
  local d, write = BUCKETS.decide(key, req, { now = now(), shares = BK.ONE, writes = true })
  if write then
    write()
  end
  return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms }
end
