-- ================================================== RL.BLOCK, RL.UNBLOCK
-- RL.BLOCK <limiter> key ms, RL.UNBLOCK <limiter> key
-- (src/core/dispatch/block.rs): FCALL rl_block 1 key FIXED ms, FCALL
-- rl_unblock 1 key FIXED. Each limiter blocks its own key (its block and
-- unblock, in its file); here only the limiter is found by its token.

-- The named limiter, if a block applies to it (block.rs `blockable`).
local function blockable(token, command)
  local lim = limiter_of(token)
  if lim == nil then
    unknown_limiter(token)
  end
  if lim.block == nil then
    fail('ERR ' .. command .. ' does not apply to ' .. lim.token .. ' (it blocks SLIDE, BUCKETS, THROTTLE or FIXED)')
  end
  return lim
end

local function rl_block(key, clause)
  if clause[1] == nil or #clause ~= 3 then
    E.arity('rl.block')
  end
  local lim = blockable(clause[1], 'RL.BLOCK')
  local ms = positive(clause[3], 'ms', MAX_BLOCK_MS)
  return lim.block(key, now(), ms)
end

local function rl_unblock(key, clause)
  if clause[1] == nil or #clause ~= 2 then
    E.arity('rl.unblock')
  end
  local lim = blockable(clause[1], 'RL.UNBLOCK')
  return lim.unblock(key, now())
end
