-- rl's INFO counters for redis_exporter's -script option (checked with
-- Debian's prometheus-redis-exporter 1.45). The exporter EVALs this on every
-- scrape and exports each returned pair as
--   redis_script_values{key="rl_slide_admitted"} 3
-- The exporter's own module-metrics support passes on only the modules it
-- knows, so without this script no rl_* field reaches Prometheus.
--
-- Reads INFO rl only: no keys, no writes, so it is safe on replicas and
-- costs one INFO section per scrape. Text fields (rl_skipped_commands) are
-- left out: the exporter takes numbers only.
local pairs_out = {}
for line in string.gmatch(redis.call('INFO', 'rl'), '[^\r\n]+') do
    local field, value = string.match(line, '^(rl_[%w_]+):(%d+)$')
    if field then
        pairs_out[#pairs_out + 1] = field
        pairs_out[#pairs_out + 1] = value
    end
end
return pairs_out
