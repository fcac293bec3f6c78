-- rl's INFO counters for redis_exporter's -script option (checked with
-- Debian's prometheus-redis-exporter 1.45). The exporter EVALs this on every
-- scrape and exports each returned pair as
--   redis_script_values{key="rl_slide_admitted"} 3
-- The exporter's own module-metrics support passes on only the modules it
-- knows, so without this script no rl_* field reaches Prometheus.
--
-- Per-prefix lines (rl.stats-prefixes), e.g.
--   rl_prefix_0:prefix=api:,admitted=3,denied=1,shadow_denied=0
-- become one pair per counter, named by the prefix rather than its place in
-- the list (which changes when the list does):
--   redis_script_values{key="rl_prefix_admitted:api:"} 3
--
-- Reads INFO rl only: no keys, no writes, so it is safe on replicas and
-- costs one INFO section per scrape. Text fields (rl_version, rl_build,
-- rl_skipped_commands) are left out: the exporter takes numbers only;
-- rl_commit too, though a commit can be all decimal digits.
local pairs_out = {}
for line in string.gmatch(redis.call('INFO', 'rl'), '[^\r\n]+') do
    local field, value = string.match(line, '^(rl_[%w_]+):(%d+)$')
    if field and field ~= 'rl_commit' then
        pairs_out[#pairs_out + 1] = field
        pairs_out[#pairs_out + 1] = value
    else
        local prefix, counts = string.match(line, '^rl_prefix_%d+:prefix=([^,]*)(,.*)$')
        if prefix then
            for name, n in string.gmatch(counts, ',([%w_]+)=(%d+)') do
                pairs_out[#pairs_out + 1] = 'rl_prefix_' .. name .. ':' .. prefix
                pairs_out[#pairs_out + 1] = n
            end
        end
    end
end
return pairs_out
