-- ================================================================ SLIDE
-- RL.SLIDE key limit window [COST cost] [BLOCK ms]: src/core/slide/.
--
-- A plain sorted set, one entry per admitted unit: score the admission time
-- in ms, member the integer score * 10^6 + n (n numbers the entries of that
-- ms from 0), kept as a decimal string (it passes 2^53). Every call reads
-- and checks, as the module does (slide/decide.rs `read_ends`), the newest
-- entry, the oldest one, and the stale entries it would remove; an entry
-- rl could not have written among them refuses the key.
--
-- A block (slide/block.rs) is the member 'rl block' at the block's end T:
-- the newest entry (T > now >= every entry's score while it holds), read
-- with the newest. An ended one counts nothing (the reads below skip it)
-- and goes with the next admission (ZREM).

local Slide = {
  token = 'SLIDE',
  usage = 'SLIDE key limit window [COST cost] [BLOCK ms]',
  syntax = syntax('rl.slide', 3, { 'COST', 'BLOCK' }),
  -- slide/log.rs BLOCK_MEMBER_TEXT.
  BLOCK_MEMBER = 'rl block',
  -- log.rs `Entry::is_block`: the latest block end, MAX_NOW_MS + MAX_BLOCK_MS.
  MAX_BLOCK_END = 9223372036853 + 1000000000000,
  MAX_LIMIT = 1000000,
  MAX_COST = 100,
  MAX_WINDOW_MS = 1000000000000,
  -- slide/log.rs MAX_NOW_MS: i64::MAX / 10^6 - 1, the latest score rl
  -- writes (members must fit in an i64).
  MAX_NOW_MS = 9223372036853,
  MEMBERS_PER_MS = 1000000,
  -- slide/decide.rs EVICT_PER_CALL: all of a call's logs together.
  EVICT_PER_CALL = 128,
  ONE = { slides = 1, slide_cost = 0, buckets = 1 },
  -- Six-digit member numbers as strings, kept for the first 1,000.
  SUFFIXES = {},
  SUFFIXES_KEPT = 1000,
}

-- `up_to` (RL.SLIDE ... UPTO, the flag taken off): the cost may pass the
-- limit.
function Slide.parse(line, up_to)
  check_count(Slide.syntax, line)
  local limit = positive(line[3], 'limit', Slide.MAX_LIMIT)
  local window = positive(line[4], 'window', Slide.MAX_WINDOW_MS)
  local cost, block = 1, nil
  if #line > 4 then
    local set = {}
    options(Slide.syntax, line, function(token, value)
      -- The value is checked before a repeat is (args.rs
      -- `cost_block_options`).
      set_once(set, token, positive(value, token, token == 'BLOCK' and MAX_BLOCK_MS or Slide.MAX_COST))
    end)
    cost, block = set.COST or 1, set.BLOCK
  end
  if cost > limit and not up_to then
    E.cost_above_limit()
  end
  return { limit = limit, window = window, cost = cost, block = block }
end

function Slide.units(req)
  return req.cost
end

function Slide.with_units(req, n)
  return { limit = req.limit, window = req.window, cost = n, block = req.block }
end

-- refund.rs unit: one unit, without BLOCK (a report never breaches).
function Slide.unit(req)
  return { limit = req.limit, window = req.window, cost = 1 }
end

-- A stored score as whole ms; nil for one that is not a whole finite
-- number (zset_log.rs `score_ms` reads those as i64::MIN).
function Slide.score(s)
  local v = tonumber(s)
  if v == nil or v ~= v or v == math.huge or v == -math.huge or v % 1 ~= 0 then
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
  if #m <= 6 then
    return score == 0
  end
  -- The digits but the last 6 (no leading zero) spell the score: at most
  -- 13 of them for a score in range, compared as an exact number.
  local q = m:sub(1, #m - 6)
  return #q <= 15 and tonumber(q) == score
end

-- An entry as the server replies it (member m, score text s): its score
-- in whole ms when Slide.is_rl accepts it, else nil. What rl writes in
-- this era, a score's digits then 6 more, is told by one pattern and one
-- comparison (the server writes a whole score as its digits); anything
-- else goes through the full test.
function Slide.entry(m, s)
  local n = #s
  if #m == n + 6 and n <= 13 and m:find(s, 1, true) == 1 and m:find('^[1-9]%d*$') then
    -- Digits without a leading zero: s is the whole number they spell.
    local v = s + 0
    if v <= Slide.MAX_NOW_MS then
      return v
    end
    return nil
  end
  local score = Slide.score(s)
  if Slide.is_rl(score, m) then
    return score
  end
  return nil
end

-- Slide.entry's test without the score's value, for the entries a call
-- only checks (the stale ones it walks): a 13-digit score below 9 * 10^12
-- is in range without converting it.
function Slide.is_entry(m, s)
  if #s == 13 and #m == 19 and s:byte(1) < 57 and m:find(s, 1, true) == 1
    and m:find('^[1-9]%d*$') then
    return true
  end
  return Slide.entry(m, s) ~= nil
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
-- Also answers the newest entry as ZRANGE key -1 -1 WITHSCORES replies it
-- (`Slide.ends` reads it from there): that read tells WRONGTYPE as TYPE
-- would, so TYPE is not sent.
-- A block's member at the newest rank (block.rs `SkipBlock`): `last` is
-- then the newest entry under it, and the third answer the block's end
-- (nil: none); `trim` counts entries under the block.
function Slide.open(key, trim)
  local at = expire_at(key)
  if at == -2 then
    return nil
  end
  -- Constants as strings: a number argument costs the server a
  -- conversion (Redis 7.0 formats it with snprintf).
  local last = typed_read('ZRANGE', key, '-1', '-1', 'WITHSCORES')
  if at == -1 then
    E.foreign_zset()
  end
  local block
  if last[1] == Slide.BLOCK_MEMBER then
    block = Slide.score(last[2])
    if block == nil or block < 0 or block > Slide.MAX_BLOCK_END then
      E.foreign_zset()
    end
    local r = int(-2 - trim)
    last = redis.call('ZRANGE', key, r, r, 'WITHSCORES')
  elseif trim > 0 then
    local r = int(-1 - trim)
    last = redis.call('ZRANGE', key, r, r, 'WITHSCORES')
  end
  return at, last, block
end

-- The reply fields of a block that holds at `now` (block.rs `holds`), or nil.
function Slide.held(block, now)
  return block_left(block, now)
end

-- block.rs `block_write`: the block's member at now + ms, and past the
-- newest entry (a clock that stepped back); the key kept until then.
-- Answers the block's end.
function Slide.block_set(key, newest, expiry, now, ms)
  local untl = now + ms
  if newest ~= nil and newest + 1 > untl then
    untl = newest + 1
  end
  redis.call('ZADD', key, int(untl), Slide.BLOCK_MEMBER)
  if expiry == nil or expiry < untl then
    redis.call('PEXPIREAT', key, int(untl))
  end
  return untl
end

-- decide.rs `read_ends` at `now`: the newest entry's score and member, how
-- many entries have left the window (score <= cutoff) and how many still
-- count, the oldest entries read (a WITHSCORES reply from rank 0, or nil)
-- and the oldest one's score when read, which a denial's wait may reuse. Checks the clock, the newest
-- entry, the oldest, and the first min(stale, max_read) stale ones (those
-- an admission would remove); the module walks them and counts a longer
-- backlog with ZCOUNT, so the counts are the server's. Multiple values,
-- not a table: this runs on every call.
function Slide.ends(key, last, now, cutoff, max_read, trim, block)
  if now < 0 or now > Slide.MAX_NOW_MS then
    fail('ERR rl internal error: server clock out of range')
  end
  if last == nil or #last == 0 then
    return nil, nil, 0, 0, nil, nil
  end
  local member = last[1]
  local score = Slide.entry(member, last[2])
  if score == nil then
    E.foreign_zset()
  end
  -- The block's member (the newest rank) is no entry.
  local total = redis.call('ZCARD', key) - trim - (block and 1 or 0)
  if total == 1 then
    -- The newest is the oldest, already checked.
    local stale = score <= cutoff and 1 or 0
    return score, member, stale, 1 - stale, last, score
  end
  local read = math.max(max_read, 1)
  if score <= cutoff then
    -- Every entry has left: the oldest `read` by rank are the stale ones
    -- the module walks, and the count is the log's.
    local old = redis.call('ZRANGE', key, '0', int(math.min(read, total) - 1), 'WITHSCORES')
    for i = 1, #old, 2 do
      if not Slide.is_entry(old[i], old[i + 1]) then
        E.foreign_zset()
      end
    end
    return score, member, total, 0, old
  end
  -- The oldest tells whether any entry has left (none: a key at its limit,
  -- or called less often than its window); only then are the stale ones
  -- walked. (Each entry a read returns costs the server a score to
  -- format: the walk reads no more than it must.)
  local low = redis.call('ZRANGE', key, '0', '0', 'WITHSCORES')
  local first = Slide.entry(low[1], low[2])
  if first == nil then
    E.foreign_zset()
  end
  if first > cutoff then
    return score, member, 0, total, low, first
  end
  local old = redis.call('ZRANGE', key, '-inf', int(cutoff), 'BYSCORE', 'LIMIT', '0', int(read),
    'WITHSCORES')
  for i = 1, #old, 2 do
    if not Slide.is_entry(old[i], old[i + 1]) then
      E.foreign_zset()
    end
  end
  local stale = #old / 2
  if stale == read then
    -- A backlog longer than the walk: the server's rank lookup counts it.
    stale = redis.call('ZCOUNT', key, '-inf', int(cutoff))
  end
  return score, member, stale, total - stale, old, nil
end

-- decide.rs `evict_budget`: the stale entries one admission may remove,
-- when the call decides `shares.slides` sliding logs costing
-- `shares.slide_cost` together (RL.ALL): cost + 1, and an equal part of
-- what EVICT_PER_CALL leaves beyond the clauses' cost + 1 each. One log
-- alone (`shares` nil): EVICT_PER_CALL.
function Slide.budget(cost, shares)
  if shares == nil or shares.slides <= 1 then
    return Slide.EVICT_PER_CALL
  end
  local slides = shares.slides
  local spare = Slide.EVICT_PER_CALL - math.max(shares.slide_cost or 0, cost) - slides
  return cost + 1 + math.floor(math.max(spare, 0) / slides)
end

-- The wait until an entry at score `s` leaves (decide.rs): at least 1 ms.
-- The entry is read like every other, so a score rl could not have written
-- (a fraction, +inf, out of range) is refused.
function Slide.wait_after(s, window, now)
  if s == nil or s < 0 or s > Slide.MAX_NOW_MS then
    E.foreign_zset()
  end
  return math.max(s + window - now, 1)
end

-- The members an admission of `cost` at `at` adds: the next free numbers
-- of `at` from `taken` (zset_log.rs `apply` skips members that exist, at
-- any score, and refuses the key when they run past the ms). Checked here,
-- before anything is written; a new key (no expiry) holds none. One
-- member's string, or a list for a cost above 1.
function Slide.members(key, expiry, at, taken, cost)
  if cost == 1 and taken < Slide.MEMBERS_PER_MS
    and (expiry == nil or not redis.call('ZSCORE', key, Slide.member(at, taken))) then
    return Slide.member(at, taken)
  end
  local members, n = {}, taken
  -- The score's digits once, then each number's six (Slide.member's
  -- string, without a format per member).
  local prefix = at > 0 and int(at)
  local suffixes = Slide.SUFFIXES
  while #members < cost do
    local batch = {}
    for i = n, math.min(n + cost - #members, Slide.MEMBERS_PER_MS) - 1 do
      if prefix then
        local suffix = suffixes[i]
        if suffix == nil then
          suffix = string.format('%06d', i)
          if i < Slide.SUFFIXES_KEPT then
            suffixes[i] = suffix
          end
        end
        batch[#batch + 1] = prefix .. suffix
      else
        batch[#batch + 1] = Slide.member(at, i)
      end
    end
    if #batch == 0 then
      E.foreign_zset()
    end
    local found = expiry and redis.call('ZMSCORE', key, unpack(batch)) or {}
    for i = 1, #batch do local m = batch[i]
      if not found[i] then
        members[#members + 1] = m
      end
    end
    n = n + #batch
  end
  if cost == 1 then
    return members[1]
  end
  return members
end

-- Applies an admission: the members at `at`, the `evict` oldest removed,
-- the expiry moved where core/expiry.rs moves it (only when it falls short
-- of `at + window`, then a quarter window past it).
-- `taken`: one member not yet checked (RL.SLIDE alone, where nothing is
-- written between the decision and here): ZADD NX is the check, and a
-- member that exists (only ever another writer's) sends the search on from
-- the next number; a search that runs past the ms refuses the key with
-- nothing written (a ZADD NX that adds nothing is no write: not
-- replicated, no event).
function Slide.write(key, members, at, evict, expiry, window, taken, unblock)
  -- The score as the member's leading digits: a number argument costs the
  -- server a conversion (snprintf on Redis 7.0); the same value.
  local score = at
  if at > 0 then
    score = (type(members) == 'string' and members or members[1]):sub(1, -7)
  end
  if type(members) == 'string' then
    if taken ~= nil and redis.call('ZADD', key, 'NX', score, members) == 0 then
      members = Slide.members(key, expiry, at, taken + 1, 1)
      taken = nil
    end
    if taken == nil then
      redis.call('ZADD', key, score, members)
    end
  else
    local args = {}
    for i = 1, #members do
      args[2 * i - 1] = score
      args[2 * i] = members[i]
    end
    redis.call('ZADD', key, unpack(args))
  end
  if evict > 0 then
    redis.call('ZREMRANGEBYRANK', key, '0', int(evict - 1))
  end
  if unblock then
    -- An ended block goes with the admission (zset_log.rs `admit`).
    redis.call('ZREM', key, Slide.BLOCK_MEMBER)
  end
  local needed = at + window
  if expiry == nil or expiry < needed then
    redis.call('PEXPIREAT', key, int(needed + math.max(math.floor(window / 4), 1)))
  end
end

-- decide.rs `admission`: where `cost` new entries go, at `now` or at the
-- newest entry's time if the clock stepped back, and the first number
-- they may take there.
function Slide.place(newest, newest_member, now, cost)
  local at = newest and math.max(newest, now) or now
  local taken = 0
  if newest == at then
    taken = Slide.number(newest_member) + 1
  end
  if taken + cost > Slide.MEMBERS_PER_MS then
    -- error.rs MillisecondFull: rl's own writes reach it (charges, a
    -- clock stepped back); the next millisecond numbers from 0 again.
    fail("ERR the key's millisecond " .. int(at) .. ' has ' .. int(Slide.MEMBERS_PER_MS - taken)
      .. ' of its 1000000 entries left, fewer than COST ' .. int(cost)
      .. ': nothing written, retry in ' .. int(at + 1 - now) .. ' ms')
  end
  return at, taken
end

-- decide.rs `nth_leaves`: the wait until the entry at `rank` leaves the
-- window (often among the oldest already read: `oldest`, `low`); `default`
-- when the rank holds none.
function Slide.wait_at_rank(key, low, oldest, rank, window, now, default)
  if rank == 0 and oldest ~= nil then
    return Slide.wait_after(oldest, window, now)
  end
  local s = low and low[2 * rank + 2]
  if s == nil then
    local r = int(rank)
    local at_rank = redis.call('ZRANGE', key, r, r, 'WITHSCORES')
    s = at_rank[2]
  end
  if s ~= nil then
    return Slide.wait_after(Slide.score(s), window, now)
  end
  return default
end

-- slide/mod.rs + decide.rs `decide_within`, as multiple values: allowed,
-- remaining, retry_after_ms, reset_after_ms, then for an admission that
-- writes the members to add, their score, the stale entries to remove and
-- the key's expiry (and, when `writes` is 'unchecked', the number of a
-- member left for the write to check). `trim` (a read only, RL.REFUND): decided over the log
-- without its `trim` newest entries (refund.rs `Trimmed`), all of which
-- still count; the ranks below them are the same.
-- A denial answers, after the four reply fields, nil, the newest entry's
-- score (where a block it sets must end past), true for a denial by a
-- block that holds, and the key's expiry (in the places of an admission's
-- score, removals and expiry). An admission's last answer
-- is true when an ended block's member goes with it.
function Slide.decide_at(key, limit, window, cost, now, max_evict, writes, trim)
  local cutoff = now - window
  local expiry, last, block = Slide.open(key, trim)
  local newest, newest_member, stale, held, low, oldest =
    Slide.ends(key, last, now, cutoff, max_evict, trim, block)
  local left = Slide.held(block, now)
  if left ~= nil then
    return 0, 0, left, left, nil, newest, true, expiry
  end
  local unblock = block ~= nil

  if held + cost <= limit then
    local at, taken = Slide.place(newest, newest_member, now, cost)
    local reset = at + window - now
    if not writes then
      return 1, limit - held - cost, 0, reset
    end
    if writes == 'unchecked' and cost == 1 and expiry ~= nil then
      -- Checked by the write (Slide.write's `taken`).
      return 1, limit - held - cost, 0, reset, Slide.member(at, taken), at,
        math.min(stale, max_evict), expiry, taken, unblock
    end
    return 1, limit - held - cost, 0, reset, Slide.members(key, expiry, at, taken, cost), at,
      math.min(stale, max_evict), expiry, nil, unblock
  end

  -- Denied: the request fits once the `need` oldest entries still in the
  -- window have left; the need-th of them is at rank stale + need - 1
  -- (often among the oldest already read).
  local need = held + cost - limit
  local reset = newest and math.max(newest + window - now, 0) or 0
  local retry = Slide.wait_at_rank(key, low, oldest, stale + need - 1, window, now, reset)
  return 0, math.max(limit - held, 0), math.max(retry, 1), reset, nil, newest, false, expiry
end

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
