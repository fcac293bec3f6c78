-- Releases a lease taken by acquire.lua. KEYS[1] key; ARGV: the lease id.
-- Returns 1 if it was held.
local key = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if expiry and tonumber(expiry) > now then
  return redis.call('ZREM', key, ARGV[1])
end
return 0
