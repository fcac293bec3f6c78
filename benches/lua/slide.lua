-- The sorted-set sliding-window log as the usual Lua script does it, with
-- unique members (server time in microseconds plus an index), as the
-- reference RL.SLIDE is measured against.
-- KEYS[1] key; ARGV: limit, window_ms, cost
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local held = redis.call('ZCARD', key)
if held + cost <= limit then
  for i = 1, cost do
    redis.call('ZADD', key, now, t[1] .. t[2] .. '-' .. i)
  end
  redis.call('PEXPIRE', key, window)
  return {1, limit - held - cost}
end
return {0, limit - held}
