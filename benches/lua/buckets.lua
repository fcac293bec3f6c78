-- The bucketed sliding window as a Lua script would do it, with a running
-- total, as the reference RL.BUCKETS is measured against. Same algorithm
-- (bucket b counts while any of its ms is inside the window; evict from the
-- oldest end; admit when total + cost <= limit) and a comparable hash
-- layout: one field per bucket index, `t` total, `o` oldest, `n` newest.
-- KEYS[1] key; ARGV: limit, window_ms, precision_ms, cost
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local p = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live_from = math.floor((now - window + 1) / p)
local current = math.floor(now / p)
local meta = redis.call('HMGET', key, 'o', 'n', 't')
local oldest, newest, total = tonumber(meta[1]), tonumber(meta[2]), tonumber(meta[3]) or 0
local target = current
local stale = {}
if oldest then
  for b = oldest, math.min(live_from, newest + 1) - 1 do
    local c = redis.call('HGET', key, b)
    if c then
      total = total - tonumber(c)
      stale[#stale + 1] = b
    end
  end
  if live_from > newest then total = 0 end
  if newest > current then target = newest end
  oldest = math.min(math.max(oldest, live_from), target)
else
  oldest = current
end
if total + cost > limit then
  return {0, limit - total}
end
if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
redis.call('HINCRBY', key, target, cost)
redis.call('HSET', key, 't', total + cost, 'o', oldest, 'n', target)
redis.call('PEXPIREAT', key, (target + 1) * p - 1 + window)
return {1, limit - total - cost}
