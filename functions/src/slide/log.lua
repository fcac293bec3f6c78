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
-- A block (slide/block_member.rs) is the member 'rl block' at the block's end T:
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
-- `shares.slide_cost` together (RL.ALL): cost + 1, so removal outpaces
-- insertion, and an equal part of what EVICT_PER_CALL leaves beyond the
-- clauses' cost + 1 each. One log alone (`shares` nil): EVICT_PER_CALL,
-- and never less than cost + 1 (the same formula as the module's, for any
-- EVICT_PER_CALL a measurement builds with).
function Slide.budget(cost, shares)
  local slides = shares and math.max(shares.slides, 1) or 1
  local owed = math.max(shares and shares.slide_cost or 0, cost) + slides
  return cost + 1 + math.floor(math.max(Slide.EVICT_PER_CALL - owed, 0) / slides)
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
