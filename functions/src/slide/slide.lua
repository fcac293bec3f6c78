-- ------------------------------------------------------ SLIDE: the verbs
-- The limiter interface over the log (slide/log.lua): decide, refund,
-- charge, oldest, block and unblock, each as src/core/slide/ has it; then
-- RL.SLIDE itself and its fast path.

-- The limiter interface's decide (RL.PEEK, RL.ALL, RL.REFUND's peek).
function Slide.decide(key, req, call, trim)
  local window = req.window
  local max_evict = call.writes and Slide.budget(req.cost, call.shares) or 0
  local now = call.now.ms
  local allowed, remaining, retry, reset, members, at, evict, expiry, _, unblock =
    Slide.decide_at(key, req.limit, window, req.cost, now, max_evict, call.writes, trim or 0)
  local decision = {
    allowed = allowed,
    remaining = remaining,
    retry_after_ms = retry,
    reset_after_ms = reset,
  }
  if allowed == 0 then
    -- A denial answers the newest entry's score, whether a block holds
    -- and the expiry in the admission's places (Slide.decide_at).
    if evict then
      decision.blocked = true
      return decision, nil
    end
    if req.block == nil then
      return decision, nil
    end
    -- block.rs breached: the breach answers as the block it sets, which
    -- ends past the newest entry.
    local untl = math.max(now + req.block, at and at + 1 or 0)
    decision = { allowed = 0, remaining = 0, retry_after_ms = untl - now, reset_after_ms = untl - now }
    return decision, function()
      Slide.block_set(key, at, expiry, now, req.block)
    end
  end
  if members == nil then
    return decision, nil
  end
  return decision, function()
    Slide.write(key, members, at, evict, expiry, window, nil, unblock)
  end
end

-- refund.rs: the `cost` newest entries that still count (never one that
-- left the window) are removed, each checked to be rl's. The expiry
-- stays. The reply's peek is decided over the log without them, before
-- they are removed.
function Slide.refund(key, req, call)
  local now = call.now.ms
  local cutoff = now - req.window
  local _, last, block = Slide.open(key, 0)
  -- What RL.PEEK SLIDE reads and checks.
  local _, _, _, held = Slide.ends(key, last, now, cutoff, 0, 0, block)
  local n = math.min(req.cost, held)
  if n == 0 then
    return 0
  end
  -- A block's member is the newest (and > cutoff: an entry is): read past
  -- it, then dropped. A block that holds stays: a refund moves units.
  local skip = block and 1 or 0
  local newest = redis.call('ZRANGE', key, '+inf', '(' .. int(cutoff), 'BYSCORE', 'REV',
    'LIMIT', int(skip), int(n + 1), 'WITHSCORES')
  for i = 1, #newest, 2 do
    if Slide.entry(newest[i], newest[i + 1]) == nil then
      E.foreign_zset()
    end
  end
  local members = {}
  for i = 1, math.min(n, #newest / 2) do
    members[i] = newest[2 * i - 1]
  end
  local after = Slide.decide(key, Slide.unit(req), { now = call.now, shares = Slide.ONE,
    writes = false }, #members)
  redis.call('ZREM', key, unpack(members))
  return #members, after
end

-- charge.rs: `cost` entries at now whether or not they fit, with the
-- removals an admission of that cost makes. The reply's peek from what
-- the charge reads, before the write: the new entries are the newest, so
-- its wait is an entry in the window now or the new ones' leaving.
function Slide.charge(key, req, call)
  local now, window, limit, cost = call.now.ms, req.window, req.limit, req.cost
  local cutoff = now - window
  local max_evict = Slide.budget(cost, call.shares)
  local expiry, last, block = Slide.open(key, 0)
  local newest, newest_member, stale, held, low, oldest =
    Slide.ends(key, last, now, cutoff, max_evict, 0, block)
  local at, taken = Slide.place(newest, newest_member, now, cost)
  -- A block that holds stays (a charge grants no access) and answers the
  -- peek after; an ended one goes as with an admission.
  local left = Slide.held(block, now)
  local members = Slide.members(key, expiry, at, taken, cost)
  local counted = held + cost
  local reset = at + window - now
  local after
  if counted < limit then
    after = { allowed = 1, remaining = limit - counted - 1, retry_after_ms = 0, reset_after_ms = reset }
  else
    local need = counted + 1 - limit
    local retry = reset
    if need <= held then
      retry = Slide.wait_at_rank(key, low, oldest, stale + need - 1, window, now, reset)
    end
    after = { allowed = 0, remaining = 0, retry_after_ms = math.max(retry, 1), reset_after_ms = reset }
  end
  if left ~= nil then
    after = { allowed = 0, remaining = 0, retry_after_ms = left, reset_after_ms = left, blocked = true }
  end
  Slide.write(key, members, at, math.min(stale, max_evict), expiry, window, nil, block ~= nil and left == nil)
  return cost, after
end

-- oldest.rs `oldest_wait`: the wait until the oldest entry still in the
-- window leaves (RL.PEEK SLIDE ... OLDEST), 0 when it counts nothing.
function Slide.oldest_wait(key, req, now)
  local window = req.window
  local cutoff = now - window
  local _, last, block = Slide.open(key, 0)
  local _, _, stale, held, _, first = Slide.ends(key, last, now, cutoff, 0, 0, block)
  if held == 0 then
    return 0
  end
  if first == nil then
    local r = int(stale)
    first = Slide.score(redis.call('ZRANGE', key, r, r, 'WITHSCORES')[2])
  end
  return Slide.wait_after(first, window, now)
end

-- slide/block.rs `block` (RL.BLOCK SLIDE): the log read and checked as
-- RL.PEEK SLIDE reads it, the block's member past its newest entry; the
-- block's end.
function Slide.block(key, t, ms)
  local expiry, last, block = Slide.open(key, 0)
  local newest = Slide.ends(key, last, t.ms, t.ms, 0, 0, block)
  return Slide.block_set(key, newest, expiry, t.ms, ms)
end

-- slide/block.rs `unblock` (RL.UNBLOCK SLIDE): the block's member removed
-- if it holds (an ended one goes with the next admission); 1 if removed.
function Slide.unblock(key, t)
  local _, last, block = Slide.open(key, 0)
  Slide.ends(key, last, t.ms, t.ms, 0, 0, block)
  if Slide.held(block, t.ms) == nil then
    return 0
  end
  redis.call('ZREM', key, Slide.BLOCK_MEMBER)
  return 1
end

LIMITERS.SLIDE = Slide

-- RL.SLIDE at limit, window and cost: the decision, and the admission
-- written.
-- `block`: BLOCK ms, the block a denial sets (none for one by a block
-- that holds).
function Slide.admit(key, limit, window, cost, block)
  local now = clock()
  local allowed, remaining, retry, reset, members, at, evict, expiry, taken, unblock =
    Slide.decide_at(key, limit, window, cost, now, Slide.budget(cost), 'unchecked', 0)
  -- A denial by the limit, not by a block (PLAIN's hint for Slide.full).
  Slide.denied_full = allowed == 0 and not evict
  if members ~= nil then
    Slide.write(key, members, at, evict, expiry, window, taken, unblock)
  elseif allowed == 0 and block ~= nil and not evict then
    -- block.rs breached: the breach answers as the block it sets.
    local left = Slide.block_set(key, at, expiry, now, block) - now
    return { 0, 0, left, left }
  end
  return { allowed, remaining, retry, reset }
end

COMMANDS['rl.slide'] = function(key, line)
  local up = take_upto(line, 5)
  if up ~= nil then
    return grant_up_to(Slide, key, Slide.parse(up, true))
  end
  local req = Slide.parse(line)
  return Slide.admit(key, req.limit, req.window, req.cost, req.block)
end

-- The plain `key limit window` line with both in range, without the line
-- and the option parser. An rl error gives nil: every one is raised
-- before anything is written, and the full path then raises it again
-- (its reads are the same). A server error goes on as it is.
-- Keys whose last plain call was denied (a key at its limit is called
-- again and again): their next call tries Slide.full first. Only a choice
-- of reads, never a decision; bounded as ARGUMENTS is.
Slide.FULL, Slide.FULL_N, Slide.FULL_KEPT = {}, 0, 512

-- The plain call's denial on a key holding exactly `limit` entries, none
-- left the window and no block: the reply, else nil (the full path then
-- reads and decides; nothing is written here). It reads what
-- Slide.decide_at reads for it, but ZCARD and the oldest in one range:
-- ranks -(limit + 1) to -limit hold one entry exactly when the log holds
-- `limit`, and that entry is the oldest, the one whose leaving ends the
-- wait. The same checks: the expiry, the newest entry, the oldest.
function Slide.full(key, limit, window)
  local time = redis.call('TIME')
  local now = time[1] * 1000 + (time[2] - time[2] % 1000) / 1000
  if now > Slide.MAX_NOW_MS or redis.call('PEXPIRETIME', key) < 0 then
    return nil
  end
  local last = redis.pcall('ZRANGE', key, '-1', '-1', 'WITHSCORES')
  if last[1] == nil or last[1] == Slide.BLOCK_MEMBER then
    return nil
  end
  local newest = Slide.entry(last[1], last[2])
  local r = redis.call('ZRANGE', key, int(-1 - limit), int(-limit), 'WITHSCORES')
  if newest == nil or #r ~= 2 then
    return nil
  end
  local first = Slide.entry(r[1], r[2])
  if first == nil or first <= now - window then
    return nil
  end
  return { 0, 0, math.max(first + window - now, 1), math.max(newest + window - now, 0) }
end

PLAIN['rl.slide'] = function(key, args)
  if #args ~= 2 then
    return nil
  end
  local limit, window = argument(args[1]), argument(args[2])
  if limit == nil or limit < 1 or limit > Slide.MAX_LIMIT or window == nil or window < 1
    or window > Slide.MAX_WINDOW_MS then
    return nil
  end
  if Slide.FULL[key] then
    local reply = Slide.full(key, limit, window)
    if reply ~= nil then
      return reply
    end
    Slide.FULL[key] = nil
  end
  local ok, reply = pcall(Slide.admit, key, limit, window, 1)
  if ok then
    if Slide.denied_full and not Slide.FULL[key] then
      if Slide.FULL_N >= Slide.FULL_KEPT then
        Slide.FULL, Slide.FULL_N = {}, 0
      end
      Slide.FULL[key], Slide.FULL_N = true, Slide.FULL_N + 1
    end
    return reply
  end
  if getmetatable(reply) == Fail then
    return nil
  end
  reraise(reply)
end

-- ============================================================ end SLIDE
