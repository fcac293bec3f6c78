-- A lease as the usual Lua script takes it over a sorted set (member the
-- lease id, score its expiry in ms), as the reference RL.ACQUIRE is
-- measured against: expired leases removed by score, the held ones
-- counted, a new id from the server time and a counter.
-- KEYS[1] key; ARGV: limit, lease_ms. Returns {allowed, remaining, id}.
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
local held = redis.call('ZCARD', key)
if held < limit then
  local id = t[1] .. t[2] .. '-' .. redis.call('INCR', key .. ':seq')
  redis.call('ZADD', key, now + lease, id)
  redis.call('PEXPIRE', key, lease)
  return {1, limit - held - 1, id}
end
return {0, 0, false}
