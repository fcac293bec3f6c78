-- ================================================== RL.BLOCK, RL.UNBLOCK
-- RL.BLOCK <limiter> key ms, RL.UNBLOCK <limiter> key (src/core/block.rs):
-- FCALL rl_block 1 key FIXED ms, FCALL rl_unblock 1 key FIXED.

-- The named limiter, if a block applies to it (block.rs `blockable`).
local function blockable(token, command)
  local lim = limiter_of(token)
  if lim == nil then
    unknown_limiter(token)
  end
  if lim.token ~= 'BUCKETS' and lim.token ~= 'THROTTLE' and lim.token ~= 'FIXED' then
    fail('ERR ' .. command .. ' does not apply to ' .. lim.token .. ' (it blocks BUCKETS, THROTTLE or FIXED)')
  end
  return lim
end

-- The key's state as block.rs `string::read` reads it: the value to keep,
-- its own expiry, and the block's end (nil: none); nil for no key.
local function string_state(token, key, t)
  if token == 'THROTTLE' then
    local tat, untl = sf_stored_tat(key)
    if tat == nil then
      return nil
    end
    return tat, sf_ceil_ms_of_digits(tat), untl
  end
  local count, at, untl = sf_fixed_read(key)
  if count == nil then
    return nil
  end
  if at <= t.ms then
    -- A window over counts nothing: it ends now.
    count, at = 0, t.ms
  end
  return int(count), at, untl
end

local function rl_block(key, clause)
  if clause[1] == nil or #clause ~= 3 then
    E.arity('rl.block')
  end
  local lim = blockable(clause[1], 'RL.BLOCK')
  local ms = positive(clause[3], 'ms', MAX_BLOCK_MS)
  local t = now()
  local untl = t.ms + ms
  if lim.token == 'BUCKETS' then
    -- block.rs `hash::block`: checked as RL.BUCKETS checks the key.
    local exists, at, h = bk.open(key)
    bk.load(key, exists, 'b', h)
    bk.block_set(key, h, at, untl)
    return untl
  end
  local value, own = string_state(lim.token, key, t)
  if value == nil and lim.token == 'THROTTLE' then
    value = int(t.us)
    own = sf_ceil_ms_of_digits(value)
  elseif value == nil then
    value, own = '0', t.ms
  end
  sf_blocked_set(key, value, own, untl)
  return untl
end

local function rl_unblock(key, clause)
  if clause[1] == nil or #clause ~= 2 then
    E.arity('rl.unblock')
  end
  local lim = blockable(clause[1], 'RL.UNBLOCK')
  local t = now()
  if lim.token == 'BUCKETS' then
    -- block.rs `hash::unblock`: the header without its block (the expiry
    -- kept), or the key deleted when the block was all it held.
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
  local value, own, untl = string_state(lim.token, key, t)
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
