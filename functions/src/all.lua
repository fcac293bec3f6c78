-- =============================================== PEEK, REFUND, CHARGE, ALL

local function unknown_limiter(token)
  fail("ERR unknown limiter '" .. E.token_text(token)
    .. "' (expected SLIDE, BUCKETS, THROTTLE, FIXED or ACQUIRE)")
end

local function limiter_of(token)
  -- Every token starts with a letter: a number (most words of a line)
  -- is told apart without building its upper-case copy.
  local first = token:byte(1)
  if first == nil or first < 65 then
    return nil
  end
  return LIMITERS[token] or LIMITERS[token:upper()]
end

-- The error `req` that `lim`'s parser raised, restated for `called`:
-- OLDEST, UPTO and a wrong count of parameters become `called`'s errors
-- (with_key false drops ' key' from the usage: an RL.ALL clause lists
-- its key apart; `usage`, when given, spells the limiter as `called`
-- takes it: RL.CHARGE); any other is raised as it is.
local function restate_parse_error(lim, req, called, with_key, usage)
  if getmetatable(req) == Fail and req.text:find('^ERR OLDEST is an option of') then
    E.oldest_only_in_peek(called)
  end
  if getmetatable(req) == Fail and req.text:find('^ERR UPTO is an option of') then
    E.upto_only(called)
  end
  if getmetatable(req) == Fail and req.text:find("^ERR wrong number of arguments for '") then
    usage = usage and usage(lim) or lim.usage
    if not with_key then
      usage = usage:gsub(' key', '', 1)
    end
    fail("ERR wrong number of arguments for '" .. called .. "' command (expected " .. usage .. ')')
  end
  reraise(req)
end

-- Parses `line` (token, key, parameters) with the limiter's parser; its
-- errors restated for `called` (restate_parse_error).
local function parse_limited(line, called, with_key, usage)
  local lim = limiter_of(line[1])
  if lim == nil then
    unknown_limiter(line[1])
  end
  local ok, req = pcall(lim.parse, line)
  if ok then
    return lim, req
  end
  restate_parse_error(lim, req, called, with_key, usage)
end

-- core/dispatch/mod.rs refuse_block: BLOCK anywhere after the key of a settling
-- command (RL.REFUND, RL.CHARGE, which never deny), refused by name
-- before the limiter's parser runs. RL.PEEK takes it (a peek answers what
-- the call with that very line would).
local function refuse_block(clause, command)
  for i = 3, #clause do
    if clause[i]:upper() == 'BLOCK' then
      E.block_only(command)
    end
  end
end

-- `<limiter> key <parameters>` (RL.PEEK, RL.REFUND), as `clause`: the
-- limiter's token first, then the key and its parameters (the shape its
-- parser takes). The named limiter and its request, parsed by its own
-- parser; a wrong count of parameters is restated for `command` with the
-- limiter's usage.
local function parse_named(clause, command)
  if clause[1] == nil then
    E.arity(command)
  end
  return parse_limited(clause, command, true)
end

local ONE = { slides = 1, buckets = 1 }

local function reply4(d)
  return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- RL.PEEK's OLDEST, anywhere after the key (core/peek.rs `parse_peek`):
-- the clause without it, and whether it was there.
local function take_oldest(clause)
  local flags = 0
  for i = 3, #clause do
    if clause[i]:upper() == 'OLDEST' then
      flags = flags + 1
    end
  end
  if flags == 0 then
    return clause, false
  end
  local lim = limiter_of(clause[1])
  if lim == nil then
    unknown_limiter(clause[1])
  end
  if flags > 1 then
    E.duplicate_option('OLDEST')
  end
  if lim.oldest_wait == nil then
    E.oldest_only_in_peek('rl.peek ' .. lim.token)
  end
  local line = { clause[1], clause[2] }
  for i = 3, #clause do
    if clause[i]:upper() ~= 'OLDEST' then
      line[#line + 1] = clause[i]
    end
  end
  return line, true
end

-- RL.PEEK <limiter> key <parameters> [OLDEST]
local function peek(key, clause)
  local line, oldest = take_oldest(clause)
  local lim, req = parse_named(line, 'rl.peek')
  local t = now()
  local d = lim.decide(key, req, { now = t, shares = ONE, writes = false })
  if oldest then
    return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms,
      lim.oldest_wait(key, req, t.ms) }
  end
  return reply4(d)
end

local function refund_usage(lim)
  return (lim.usage:gsub(' %[BLOCK ms%]', ''))
end

-- RL.REFUND <limiter> key <parameters>
local function refund(key, clause)
  if clause[1] == nil then
    E.arity('rl.refund')
  end
  -- Refused before ACQUIRE's own parser runs (core/refund.rs): no error
  -- advertises a form that would be refused anyway.
  if clause[1]:upper() == 'ACQUIRE' then
    fail('ERR RL.REFUND does not apply to ACQUIRE (a lease is given back with RL.RELEASE)')
  end
  refuse_block(clause, 'rl.refund')
  -- The usage offers the limiter's parameters without the BLOCK it refuses.
  local lim, req = parse_limited(clause, 'rl.refund', true, refund_usage)
  local t = now()
  -- The peek after: decided before the write where the write leaves
  -- fields or entries it did not read (SLIDE, BUCKETS); a string limiter
  -- reads back only the value it wrote.
  local refunded, d = lim.refund(key, req, { now = t, shares = ONE, writes = true })
  d = d or lim.decide(key, lim.unit(req), { now = t, shares = ONE, writes = false })
  return { refunded, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- core/charge.rs: the most one charge records (SLIDE keeps its cap of a
-- call: a member per unit).
local MAX_CHARGE = { SLIDE = 100, BUCKETS = BK.MAX_LIMIT, THROTTLE = SF.MAX_UNITS, FIXED = SF.MAX_LIMIT }

-- The limiter as RL.CHARGE takes it: its parameters without its units.
local function charge_usage(lim)
  return (lim.usage:gsub(' %[COST cost%]', ''):gsub(' %[quantity%]', ''):gsub(' %[BLOCK ms%]', ''))
    .. ' COST cost'
end

-- RL.CHARGE <limiter> key <parameters> COST n (core/charge.rs): the
-- limiter's line without COST n parsed by its own parser, n its units.
local function charge(key, clause)
  if #clause < 3 then
    E.arity('rl.charge')
  end
  local lim = limiter_of(clause[1])
  if lim == nil then
    unknown_limiter(clause[1])
  end
  if lim.token == 'ACQUIRE' then
    fail('ERR RL.CHARGE does not apply to ACQUIRE (a lease holds a slot, not units)')
  end
  local at = nil
  for i = 3, #clause do
    if clause[i]:upper() == 'COST' then
      if at ~= nil then
        E.duplicate_option('COST')
      end
      at = i
    end
  end
  if at == nil then
    fail('ERR RL.CHARGE needs COST n, the units to charge')
  end
  if clause[at + 1] == nil then
    E.missing_value('COST')
  end
  local units = positive(clause[at + 1], 'COST', MAX_CHARGE[lim.token])
  local line = {}
  for i = 1, #clause do
    if i ~= at and i ~= at + 1 then
      line[#line + 1] = clause[i]
    end
  end
  -- Before THROTTLE's quantity check, which would count BLOCK ms as
  -- parameters and answer with the usage.
  refuse_block(line, 'rl.charge')
  -- THROTTLE's own units (quantity) are the charge's COST: a word after
  -- the period is a quantity too many, unless it is an option the
  -- limiter's parser refuses by name (WAIT, UPTO), as on every other
  -- limiter's charge line.
  local after = line[6] and line[6]:upper()
  if lim.token == 'THROTTLE' and #line > 5 and after ~= 'WAIT' and after ~= 'UPTO' then
    fail("ERR wrong number of arguments for 'rl.charge' command (expected " .. charge_usage(lim) .. ')')
  end
  local _, req = parse_limited(line, 'rl.charge', true, charge_usage)
  if lim.token == 'THROTTLE' then
    req.quantity = units
  else
    req.cost = units
  end
  local t = now()
  -- The peek after: decided before the write where the write leaves
  -- fields or entries it did not read (SLIDE, BUCKETS); a string limiter
  -- reads back only the value it wrote.
  local charged, d = lim.charge(key, req, { now = t, shares = ONE, writes = true })
  d = d or lim.decide(key, lim.unit(req), { now = t, shares = ONE, writes = false })
  return { charged, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- An error raised in RL.ALL clause i: 'ERR clause i: ...'; WRONGTYPE keeps
-- its standard form.
local function in_clause(i, err)
  if getmetatable(err) ~= Fail or err.text:find('^WRONGTYPE') then
    reraise(err)
  end
  fail('ERR clause ' .. i .. ': ' .. err.text:gsub('^ERR ', '', 1))
end

local MAX_CLAUSES = 8
local MAX_SLIDE_COST = 100

-- The clauses of the RL.ALL call being run, by position, kept from one
-- call to the next (each call overwrites what it uses): no table per
-- clause, every allocation being paid again in the collector. `al_at` is
-- the clause the loops below are at, for the error of the one that fails.
local AL_START, AL_LIM, AL_REQ, AL_DEC, AL_WRITE, AL_REPLY = {}, {}, {}, {}, {}, {}
local al_at = 0

-- Each clause parsed by its limiter's parser (its errors raised as the
-- parser raises them: `all` restates them), as { token, key, parameters
-- }; the SLIDE and BUCKETS clauses counted, the SLIDE clauses' costs
-- added up.
local function all_parse(keys, args, n)
  local slides, buckets, slide_cost = 0, 0, 0
  local last = #args
  for i = 1, n do
    al_at = i
    local start = AL_START[i]
    local stop = (i < n and AL_START[i + 1] or last + 1) - 1
    local clause
    if stop - start <= 16 then
      -- One constructor (unpack sizes it); a long clause (an arity error
      -- to come) is copied, unpack's stack being bounded.
      clause = { args[start], keys[i], unpack(args, start + 1, stop) }
    else
      clause = { args[start], keys[i] }
      for a = start + 1, stop do
        clause[#clause + 1] = args[a]
      end
    end
    local lim = limiter_of(args[start])
    AL_LIM[i] = lim
    local req = lim.parse(clause)
    AL_REQ[i] = req
    if lim.token == 'SLIDE' then
      slides = slides + 1
      slide_cost = slide_cost + lim.units(req)
    elseif lim.token == 'BUCKETS' then
      buckets = buckets + 1
    end
  end
  return slides, buckets, slide_cost
end

-- Every clause decided: all keys read, nothing written. Whether all
-- admit, the longest wait of those that deny, and whether a clause is an
-- ACQUIRE.
local function all_decide(keys, n, call)
  local allowed, retry, any_lease = 1, 0, false
  for i = 1, n do
    al_at = i
    local lim = AL_LIM[i]
    local d, write = lim.decide(keys[i], AL_REQ[i], call)
    AL_DEC[i], AL_WRITE[i] = d, write
    if d.allowed == 0 then
      allowed = 0
      if d.retry_after_ms > retry then
        retry = d.retry_after_ms
      end
    end
    any_lease = any_lease or lim.token == 'ACQUIRE'
  end
  return allowed, retry, any_lease
end

-- RL.ALL numkeys key [key ...] clause [clause ...] (src/core/dispatch/all/),
-- as FCALL rl_all gives it: `keys` (numkeys is their count) and `args`,
-- the clauses (the line is not copied).
local function all(keys, args)
  local n, nargs = #keys, #args
  -- The command's line is RL.ALL, numkeys, the keys, the clauses.
  if 2 + n + nargs < 4 then
    E.arity('rl.all')
  end
  if n < 1 then
    positive(tostring(n), 'numkeys', MAX_CLAUSES)
  end
  if nargs < n then
    E.arity('rl.all')
  end
  for i = 1, n do
    for j = 1, i - 1 do
      if keys[i] == keys[j] then
        fail('ERR each RL.ALL clause needs its own key')
      end
    end
  end
  if limiter_of(args[1]) == nil then
    unknown_limiter(args[1])
  end
  -- A clause runs to the next limiter token, except the word after an
  -- ACQUIRE clause's ID.
  local starts = 1
  AL_START[1] = 1
  for j = 2, nargs do
    if limiter_of(args[j]) ~= nil then
      local before = args[j - 1]
      if #before ~= 2 or before:upper() ~= 'ID' then
        starts = starts + 1
        if starts <= n then
          AL_START[starts] = j
        end
      end
    end
  end
  if starts ~= n then
    local given = starts == 1 and '1 clause was given' or (starts .. ' clauses were given')
    fail('ERR numkeys is ' .. n .. ' but ' .. given .. ' (one per key)')
  end
  local ok, slides, buckets, slide_cost = pcall(all_parse, keys, args, n)
  if not ok then
    local _, err = pcall(restate_parse_error, AL_LIM[al_at], slides, 'rl.all', false)
    in_clause(al_at, err)
  end
  if slide_cost > MAX_SLIDE_COST then
    fail('ERR the SLIDE clauses\' COST must add up to at most ' .. MAX_SLIDE_COST)
  end
  local call = { now = now(), shares = { slides = slides, slide_cost = slide_cost, buckets = buckets }, writes = true }
  local ok2, allowed, retry, any_lease = pcall(all_decide, keys, n, call)
  if not ok2 then
    in_clause(al_at, allowed)
  end
  for i = 1, n do
    local d = AL_DEC[i]
    if any_lease and AL_LIM[i].token == 'ACQUIRE' then
      -- The lease id only when the call records it; false is a nil reply.
      AL_REPLY[i] = { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms,
        (allowed == 1 and d.lease) or false }
    else
      AL_REPLY[i] = { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms }
    end
  end
  -- An admitted call records every clause; a denied one only the blocks
  -- its denying clauses' BLOCK sets.
  for i = 1, n do
    local write = AL_WRITE[i]
    if write and (allowed == 1 or AL_DEC[i].allowed == 0) then
      write()
    end
  end
  -- One constructor (unpack sizes it: n is at most MAX_CLAUSES).
  return { allowed, retry, unpack(AL_REPLY, 1, n) }
end

-- rl_all's plain path: every clause `FIXED limit window [COST cost]` as
-- rl-ratelimit sends them (the token and COST in capitals, every number
-- in range, cost at most limit), one distinct key per clause, each key
-- absent or a running window as rl writes it (sf_fixed_plain_read); nil
-- for any other call, before anything is written (`all` then reads the
-- line and the keys again and answers, errors included). A clause costs
-- what rl_fixed's plain path does, PTTL and GET, then SET PX for a new
-- window or INCRBY on a running one (the module's RL.ALL replicates a
-- running window's counter so too); nothing is built but the reply, and
-- no clock is read. The clauses' parameters, read once, are kept in these
-- tables from one call to the next (each call overwrites what it uses):
-- on this path every allocation is paid again in the collector.
local PA_LIMIT, PA_WINDOW, PA_WINDOW_TEXT, PA_COST, PA_COST_TEXT, PA_NEW, PA_REPLY = {}, {}, {}, {}, {}, {}, {}

local function plain_all(keys, args)
  local n = #keys
  if n < 1 or n > MAX_CLAUSES then
    return nil
  end
  -- The shape first: no key is read for a call this path leaves.
  local at, last = 1, #args
  for i = 1, n do
    if args[at] ~= 'FIXED' then
      return nil
    end
    local window_text = args[at + 2]
    local limit, window = sf_fixed_plain_params(args[at + 1], window_text)
    if limit == nil then
      return nil
    end
    local cost, cost_text = 1, '1'
    at = at + 3
    if args[at] == 'COST' then
      cost_text = args[at + 1]
      cost = cost_text and argument(cost_text)
      if cost == nil or cost < 1 or cost > limit then
        return nil
      end
      at = at + 2
    end
    for j = 1, i - 1 do
      if keys[j] == keys[i] then
        return nil
      end
    end
    PA_LIMIT[i], PA_WINDOW[i], PA_WINDOW_TEXT[i], PA_COST[i], PA_COST_TEXT[i] = limit, window, window_text, cost, cost_text
  end
  if at ~= last + 1 then
    return nil
  end
  -- Decide every clause: all keys read, nothing written.
  local allowed, retry = 1, 0
  for i = 1, n do
    local count, ttl = sf_fixed_plain_read(keys[i])
    if count == nil then
      return nil
    end
    PA_NEW[i] = ttl == nil
    -- A new window's reset is the whole window.
    ttl = ttl or PA_WINDOW[i]
    local limit, cost = PA_LIMIT[i], PA_COST[i]
    if count + cost <= limit then
      PA_REPLY[i] = { 1, limit - count - cost, 0, ttl }
    else
      PA_REPLY[i] = { 0, math.max(limit - count, 0), ttl, ttl }
      allowed = 0
      if ttl > retry then
        retry = ttl
      end
    end
  end
  -- An admitted call records every clause; a denied one nothing (no BLOCK
  -- on this path).
  if allowed == 1 then
    for i = 1, n do
      if PA_NEW[i] then
        redis.call('SET', keys[i], PA_COST_TEXT[i], 'PX', PA_WINDOW_TEXT[i])
      else
        redis.call('INCRBY', keys[i], PA_COST_TEXT[i])
      end
    end
  end
  -- One constructor (unpack sizes it); the clauses' replies stay in
  -- PA_REPLY until the next call overwrites them.
  return { allowed, retry, unpack(PA_REPLY, 1, n) }
end
