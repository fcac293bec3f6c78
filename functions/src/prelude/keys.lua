-- --------------------------------------------------------------- the clock

-- The server's clock, read once per call: ms and µs. The module reads
-- the server's µs clock where it has one for modules (Redis 7.2+, every
-- Valkey) and only ms before (Redis 7.0, 7.1: µs = ms * 1000); so do we,
-- so that both editions store the same values on every server.
-- As two values (ms, µs), for the paths that build no table per call.
-- (`+ 0`, not tonumber(): one string conversion instead of two.)
local function clock()
  local t = redis.call('TIME')
  local s, us = t[1] + 0, t[2] + 0
  local ms = s * 1000 + (us - us % 1000) / 1000
  if redis.REDIS_VERSION_NUM < 0x070200 then
    return ms, ms * 1000
  end
  return ms, s * 1000000 + us
end

local function now()
  local ms, us = clock()
  return { ms = ms, us = us }
end

-- ---------------------------------------------------------------- UPTO

-- core/upto.rs take_upto: the line without its UPTO (anywhere from word
-- `from` on, after the required positional arguments), nil when it has
-- none. UPTO twice is an error.
local function take_upto(line, from)
  local found = 0
  for i = from, #line do
    if line[i]:upper() == 'UPTO' then
      found = found + 1
    end
  end
  if found == 0 then
    return nil
  end
  if found > 1 then
    E.duplicate_option('UPTO')
  end
  local out = {}
  for i = 1, #line do
    if i < from or line[i]:upper() ~= 'UPTO' then
      out[#out + 1] = line[i]
    end
  end
  return out
end

-- core/upto.rs UpTo: the whole cost when it fits; else the limiter's
-- decision for what fits (its denial's remaining, at least 1): an
-- admission of that many, or the denial of one unit. The reply gains the
-- units granted.
local function grant_up_to(lim, key, req)
  local call = { now = now(), shares = { slides = 1, buckets = 1 }, writes = true }
  -- The whole cost asked without BLOCK first (upto.rs without_block): a
  -- breach would hide what fits (its remaining is 0).
  local whole = req
  if req.block ~= nil then
    whole = lim.with_units(req, lim.units(req))
    whole.block = nil
  end
  local d, write = lim.decide(key, whole, call)
  local granted = lim.units(req)
  if d.allowed ~= 1 then
    local fits = math.max(math.min(d.remaining, granted), 1)
    d, write = lim.decide(key, lim.with_units(req, fits), call)
    granted = d.allowed == 1 and fits or 0
  end
  if write ~= nil then
    write()
  end
  return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms, granted }
end

-- ---------------------------------------------------------------- keys

-- The key's absolute expiry in ms; -1 without one, -2 when absent.
local function expire_at(key)
  return redis.call('PEXPIRETIME', key)
end

-- redis.pcall(...) of a read that fails only on another type: its reply,
-- or WRONGTYPE (what TYPE would have told) raised as rl's error. Saves the
-- TYPE round trip before a typed read.
local function typed_read(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err ~= nil then
    if r.err:find('^WRONGTYPE') then
      E.wrong_type()
    end
    error(r, 0)
  end
  return r
end

-- string_key.rs split_blocked: a blocked string state,
-- `<state>e<expiry>b<until>`, as (state bytes, expiry ms, block end ms);
-- nil for any other shape. Both times 1 to 15 digits, an optional '-'.
local function split_blocked(bytes)
  local state, own, untl = bytes:match('^([^e]*)e(%-?%d+)b(%-?%d+)$')
  if state == nil or #own:match('%d+') > 15 or #untl:match('%d+') > 15 then
    return nil
  end
  return state, own + 0, untl + 0
end

-- block.rs holds: the reply fields of a block that holds at now_ms
-- (remaining 0, both waits its time left), or nil.
local function block_left(untl, now_ms)
  if untl ~= nil and untl > now_ms then
    return untl - now_ms
  end
  return nil
end

-- options/block.rs MAX_BLOCK_MS.
local MAX_BLOCK_MS = 1000000000000

-- SET key <count>e<end>b<until> with the later end (string_key.rs
-- StringWrite::blocked_bytes).
local function sf_blocked_set(key, value, own, untl)
  redis.call('SET', key, value .. 'e' .. int(own) .. 'b' .. int(untl), 'PXAT', int(math.max(own, untl)))
end

-- RL.UNBLOCK on a string key (THROTTLE, FIXED: dispatch/block.rs
-- `string::unblock`), its state read as `value`, `own` (its own expiry)
-- and `untl` (nil: no key): the state written back plain, or the key
-- deleted when its own expiry has come; 1 if a block held.
local function string_unblock(key, value, own, untl, t)
  if value == nil or block_left(untl, t.ms) == nil then
    return 0
  end
  if own <= t.ms then
    redis.call('DEL', key)
  else
    redis.call('SET', key, value, 'PXAT', int(own))
  end
  return 1
end

-- ------------------------------------------------------------- limiters
--[[
LIMITERS[TOKEN] is one limiter, as the module's core::limiter::Limiter:

  token   'SLIDE', 'BUCKETS', 'THROTTLE', 'FIXED' or 'ACQUIRE'
  usage   its command's synopsis without 'RL.', e.g.
          'SLIDE key limit window [COST cost]' (error texts restate it)
  parse(line) -> req
          line = { name, key, parameters... } shaped like the limiter's own
          command line (name: its command, 'rl.slide', or the token when
          RL.PEEK / RL.ALL hand it over); raises the command's errors,
          E.arity(...) for a wrong count.
  decide(key, req, call) -> decision, write
          call = { now = now(), shares = { slides = n, slide_cost = c,
                   buckets = n }, writes = bool }: writes false for RL.PEEK
                   (slide_cost: RL.ALL's SLIDE clauses' costs together).
          decision = { allowed (0|1), remaining, retry_after_ms,
                       reset_after_ms, lease = id or nil }
          write = nil, or a function that applies the admission (writes,
          expiry); called only if the whole call admits. Every check that
          can refuse (type, foreign state) runs in decide, before any write.
          A denial's write is the block its BLOCK option sets (decision
          blocked = nil); a denial by a block that holds has decision
          blocked = true and no write.
  units(req) -> n, unit(req) -> req
          (RL.REFUND) the units the request charges, and the same request
          for one unit.
  refund(key, req, call) -> refunded[, decision after]
          gives back up to units(req), writes it, answers how many.
  charge(key, req, call) -> charged[, decision after]
          (RL.CHARGE) records units(req) whether or not they fit.
  oldest_wait(key, req, now_ms) -> ms
          (RL.PEEK ... OLDEST; SLIDE only) the wait until the oldest
          entry still in the window leaves.
  block(key, t, ms) -> until_ms, unblock(key, t) -> 0|1
          (RL.BLOCK, RL.UNBLOCK; SLIDE, BUCKETS, THROTTLE, FIXED) the
          key's block set, or lifted if one holds.
Each limiter's file defines its own; block.lua and all.lua only find the
limiter by its token and call these.
]]
local LIMITERS = {}

-- Single-key commands: name -> function(key, line) -> reply.
local COMMANDS = {}

-- Fast paths of single-key commands: name -> function(key, args) -> reply,
-- or nil when FCALL's arguments are not the common form they read, or the
-- key is anything but the plain case (then COMMANDS[name] reads the line
-- and the key again, errors included). No line is built. A fast path runs
-- outside the pcall that turns rl errors into replies (dispatch.lua
-- `single`), so it never raises one, and it returns nil only before it
-- has written anything.
local PLAIN = {}
