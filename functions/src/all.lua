-- =============================================== PEEK, REFUND, CHARGE, ALL

local function unknown_limiter(token)
  fail("ERR unknown limiter '" .. E.token_text(token)
    .. "' (expected SLIDE, BUCKETS, THROTTLE, FIXED or ACQUIRE)")
end

local function limiter_of(token)
  return LIMITERS[token:upper()]
end

-- Parses `line` (token, key, parameters) with the limiter's parser; a
-- wrong count becomes the usage error for `called`. with_key false drops
-- ' key' from the usage (an RL.ALL clause lists its key apart); `usage`,
-- when given, spells the limiter as `called` takes it (RL.CHARGE).
local function parse_limited(line, called, with_key, usage)
  local lim = limiter_of(line[1])
  if lim == nil then
    unknown_limiter(line[1])
  end
  local ok, req = pcall(lim.parse, line)
  if ok then
    return lim, req
  end
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

-- RL.ALL numkeys key [key ...] clause [clause ...] (src/core/dispatch/all/).
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
  local shares = { slides = 0, slide_cost = 0, buckets = 0 }
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
  shares.slide_cost = slide_cost
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
  -- An admitted call records every clause; a denied one only the blocks
  -- its denying clauses' BLOCK sets.
  for _, c in ipairs(clauses) do
    if c.write and (allowed == 1 or c.decision.allowed == 0) then
      c.write()
    end
  end
  return reply
end
