-- ================================================================ LEASES
-- RL.ACQUIRE key limit lease_ms [ID id], RL.RELEASE key lease,
-- RL.RENEW key lease lease_ms: src/core/lease/.
--
-- A plain sorted set: member the lease id, score its absolute expiry in ms,
-- and the header `rl leases` at score 0, without which a sorted set is not
-- a lease set (src/core/lease/set.rs). A lease counts while now < expiry.
-- Every entry a call reads is checked (`lease_entry`), in the order the
-- module reads them, so the first bad entry names the same error.
--
-- In a do-block: its locals end with it (a Lua function holds at most 200
-- locals at once, and the library's main chunk is one function).

do
  local LEASE_MAX_LIMIT = 1000000
  local LEASE_MAX_MS = 1000000000000
  -- Latest expiry rl writes (2^53 ms).
  local LEASE_MAX_SCORE = 9007199254740992
  -- Expired leases one admission removes at most (decide.rs EVICT_PER_CALL).
  local LEASE_EVICT = 16
  -- Held leases walked before counting with ZCOUNT (lease_set.rs WALK_MAX).
  local LEASE_WALK = 64
  -- Ids drawn before giving up (decide.rs ID_DRAWS).
  local LEASE_DRAWS = 4
  -- The header every lease set holds at score 0 (set.rs HEADER).
  local LEASE_HEADER = 'rl leases'

  local LEASE_ACQUIRE = syntax('rl.acquire', 3, { 'ID' })
  local LEASE_RELEASE = syntax('rl.release', 2)
  local LEASE_RENEW = syntax('rl.renew', 3)

  -- `-?[0-9]+`: what could be an RL.SLIDE member.
  local function lease_integer(s)
    return s:find('^%-?%d+$') ~= nil
  end

  -- 1 to 64 printable ASCII bytes without spaces, not an integer.
  local function lease_valid(s)
    return #s >= 1 and #s <= 64 and not s:find('[^\33-\126]') and not lease_integer(s)
  end

  -- An id the caller named; the error names `arg` (LeaseId::named).
  local function lease_id(s, arg)
    if not lease_valid(s) then
      fail('ERR ' .. arg
        .. ' must be 1 to 64 printable ASCII characters without spaces, and not an integer')
    end
    return s
  end

  -- An integer member's value divided (floored) by 1,000,000, as Rust's
  -- i64::div_euclid; nil when the member is not an i64. Exact: the quotient
  -- has at most 13 digits.
  local function lease_slide_quotient(member)
    local sign, digits = member:match('^(%-?)(%d+)$')
    digits = digits:gsub('^0+', '')
    if #digits > 19 then
      return nil
    end
    if #digits == 19 then
      local max = sign == '-' and '9223372036854775808' or '9223372036854775807'
      if digits > max then
        return nil
      end
    end
    local high = #digits > 6 and tonumber(digits:sub(1, #digits - 6)) or 0
    if sign ~= '-' then
      return high
    end
    local low = tonumber(digits:sub(-6)) or 0
    return -high - (low ~= 0 and 1 or 0)
  end

  -- One stored entry, checked as set.rs `classify` checks it: its expiry, or
  -- the refusal (an RL.SLIDE log's entry: an integer member numbered from
  -- its score; anything else rl could not have written: foreign).
  local LEASE_IS_SLIDE = 'ERR key holds RL.SLIDE state, not lease state'

  local function lease_entry(member, score_text)
    local score = tonumber(score_text)
    local whole = score ~= nil and score == score and score ~= math.huge and score ~= -math.huge
      and score == math.floor(score)
    if lease_integer(member) then
      local q = lease_slide_quotient(member)
      if whole and q ~= nil and q == score then
        fail(LEASE_IS_SLIDE)
      end
      E.foreign_zset()
    end
    if not (lease_valid(member) and whole and score >= 1 and score <= LEASE_MAX_SCORE) then
      E.foreign_zset()
    end
    return score
  end

  -- A flat WITHSCORES reply as checked entries { id, expiry }, in its order.
  local function lease_entries(reply)
    local out = {}
    for i = 1, #reply, 2 do
      out[#out + 1] = { id = reply[i], expiry = lease_entry(reply[i], reply[i + 1]) }
    end
    return out
  end

  -- The counts the ranges below are called with, as the strings redis.call
  -- takes without formatting a number.
  local LEASE_COUNTS = { [1] = '1', [2] = '2', [LEASE_EVICT] = '16', [LEASE_WALK] = '64' }

  -- The first n held leases (expiry > now), earliest first.
  local function lease_first_held(key, now, n)
    return lease_entries(redis.call('ZRANGEBYSCORE', key, '(' .. int(now), '+inf',
      'WITHSCORES', 'LIMIT', '0', LEASE_COUNTS[n] or int(n)))
  end

  -- The first n expired entries (expiry <= now), oldest first; past the
  -- header's score 0, as every range below.
  local function lease_expired(key, now, n)
    return lease_entries(redis.call('ZRANGEBYSCORE', key, '(0', int(now),
      'WITHSCORES', 'LIMIT', '0', LEASE_COUNTS[n] or int(n)))
  end

  -- The last n entries, latest expiry first.
  local function lease_newest(key, n)
    return lease_entries(redis.call('ZREVRANGEBYSCORE', key, '+inf', '(0',
      'WITHSCORES', 'LIMIT', '0', LEASE_COUNTS[n] or int(n)))
  end

  -- Leases held at now: walked (each checked) in a set of at most 64
  -- entries, else counted by score.
  -- `total`: the set's ZCARD, as lease_open read it.
  local function lease_held(key, now, total)
    if total == 0 then
      return 0
    end
    if total <= LEASE_WALK then
      return #lease_first_held(key, now, LEASE_WALK)
    end
    return math.max(total - redis.call('ZCOUNT', key, '-inf', int(now)), 0)
  end

  -- The k-th held lease (k >= 2; the first is lease_first_held's) when
  -- `held` are held of the set's `total` entries: by rank, past those up to
  -- now (the header among them), checked (lease_set.rs nth_held).
  local function lease_nth_held(key, now, held, total, k)
    if k > held then
      return nil
    end
    local rank = int(total - held + k - 1)
    local e = lease_entries(redis.call('ZRANGE', key, rank, rank, 'WITHSCORES'))[1]
    if e == nil or e.expiry <= now then
      fail('ERR rl internal error: could not read a lease by rank')
    end
    return e
  end

  -- The stored expiry of id, checked; nil when the set lacks it.
  local function lease_expiry_of(key, id)
    local s = redis.call('ZSCORE', key, id)
    if not s then
      return nil
    end
    return lease_entry(id, s)
  end

  -- The key as a lease set (host/key.rs): its expiry when it exists (nil
  -- when missing); WRONGTYPE for another type, foreign without a TTL. Also
  -- answers its ZCARD (0 when missing) for `lease_held`: that read tells
  -- WRONGTYPE as TYPE would, so TYPE is not sent.
  -- An existing set must hold the header at score 0; without it, an
  -- RL.SLIDE log's refusal when its first entry is one, else the refusal
  -- that names the header (lease_set.rs check_header).
  local function lease_open(key)
    local at = expire_at(key)
    if at == -2 then
      return nil, 0
    end
    local total = typed_read('ZCARD', key)
    if at < 0 then
      E.foreign_zset()
    end
    local header = redis.call('ZSCORE', key, LEASE_HEADER)
    if not header or tonumber(header) ~= 0 then
      local first = redis.call('ZRANGE', key, '0', '0', 'WITHSCORES')
      if first[1] ~= nil then
        -- The first entry checked as any entry is: only a log's refusal
        -- is kept.
        local ok, err = pcall(lease_entry, first[1], first[2])
        if not ok and getmetatable(err) == Fail and err.text == LEASE_IS_SLIDE then
          error(err, 0)
        end
      end
      fail('ERR key holds a sorted set that rl did not write (no lease header;'
        .. ' a lease set of an earlier rl build ends with its last lease)')
    end
    return at, total
  end

  local function lease_until(at, now)
    return math.max(at - now, 0)
  end

  -- now + lease_ms, refused when the clock is out of range (check_now).
  local function lease_end(now, lease_ms)
    local fin = now + lease_ms
    if now < 0 or fin > LEASE_MAX_SCORE then
      fail('ERR rl internal error: server clock out of range')
    end
    return fin
  end

  -- Moves the key's expiry past `needed` when the one it had when opened
  -- (`current`, nil for a new key) falls short (core/expiry.rs).
  local function lease_keep_alive(key, current, needed, lease_ms)
    if current ~= nil and current >= needed then
      return
    end
    redis.call('PEXPIREAT', key, int(needed + math.max(math.floor(lease_ms / 4), 1)))
  end

  -- The nonce of a generated id: 64 bits (two 32-bit halves) of
  -- SHA-1(secret : counter : TIME µs), the module's design (a keyed hash of
  -- a per-process counter, host/lease_set.rs) with what Lua has:
  --  * the counter lives in this table, an upvalue of the loaded library: it
  --    only grows while the library stays loaded, so no two draws of one
  --    library instance hash the same input;
  --  * the secret is drawn once per library instance (a load, a restart, a
  --    promoted replica) from the server's INFO (its run_id: 160 random bits
  --    the server draws from /dev/urandom at start; uptime, command counts),
  --    the heap addresses of two tables (ASLR) and TIME µs at the first draw.
  --    Scripts' math.random is no entropy: on Redis 7.0, 8.2 and Valkey 9.1
  --    it starts every process from the same seed (and EVAL resets it to a
  --    fixed one), so it is not used.
  -- Two ids differ then as the module's do: in their first part at different
  -- ms; at the same ms in one library instance unless SHA-1 maps two inputs
  -- to the same 64 bits (2^-64 per pair); at the same ms in two instances
  -- (a failover onto a clock behind, a reload) unless their secrets and
  -- inputs collide in 64 bits likewise, the secret being unknowable (run_id)
  -- even when INFO is refused (ACL) as long as the heap addresses or the
  -- µs differ. And the id is checked absent before use (ZSCORE), as the
  -- module checks it.
  local LEASE_NONCE = { n = 0 }

  local function lease_nonce(t)
    local st = LEASE_NONCE
    if st.secret == nil then
      local info = redis.pcall('INFO')
      if type(info) ~= 'string' then
        info = 'no INFO: ' .. tostring(type(info) == 'table' and info.err)
      end
      st.secret = redis.sha1hex(info .. '|' .. tostring(st) .. '|' .. tostring({})
        .. '|' .. int(t.us))
    end
    st.n = st.n + 1
    local h = redis.sha1hex(st.secret .. ':' .. int(st.n) .. ':' .. int(t.us))
    return tonumber(h:sub(1, 8), 16), tonumber(h:sub(9, 16), 16)
  end

  local LEASE_DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz'

  -- hi * 2^32 + lo in base 36 (hi < 2^32, hi * 2^32 + lo exact; each step
  -- stays below 36 * 2^32, exact in a double).
  local function lease_base36(hi, lo)
    local out = {}
    repeat
      local r = hi % 36
      hi = (hi - r) / 36
      local x = r * 4294967296 + lo
      r = x % 36
      lo = (x - r) / 36
      out[#out + 1] = LEASE_DIGITS:sub(r + 1, r + 1)
    until hi == 0 and lo == 0
    return string.reverse(table.concat(out))
  end

  -- An id not in the set: `<now_ms base 36>-<nonce base 36>` (set.rs
  -- LeaseId::generated), drawn again when it is (decide.rs fresh_id).
  local function lease_fresh_id(key, t)
    for _ = 1, LEASE_DRAWS do
      local hi, lo = lease_nonce(t)
      local id = lease_base36(0, math.max(t.ms, 0)) .. '-' .. lease_base36(hi, lo)
      if lease_expiry_of(key, id) == nil then
        return id
      end
    end
    fail('ERR rl internal error: could not make a lease id')
  end

  -- An admitted acquire: the lease set to expiry_at (with the header, in
  -- one ZADD, for a new set), the expired ones read removed (never the one
  -- set), the key kept alive to its latest lease. `stored`: the expiry a
  -- retried id holds; when it is expiry_at already nothing is set, so a
  -- call that changes nothing writes nothing.
  local function lease_admitted(key, d, id, expiry_at, stored, expired, reset_at, req, call,
                                current, total)
    if not call.writes then
      return d, nil
    end
    d.lease = id
    local remove = {}
    for k_ = 1, #expired do local e = expired[k_]
      if e.id ~= id then
        remove[#remove + 1] = e.id
      end
    end
    local set = stored ~= expiry_at
    if not set and #remove == 0 then
      return d, nil
    end
    return d, function()
      if set then
        if total == 0 then
          redis.call('ZADD', key, '0', LEASE_HEADER, int(expiry_at), id)
        else
          redis.call('ZADD', key, int(expiry_at), id)
        end
      end
      if #remove > 0 then
        redis.call('ZREM', key, unpack(remove))
      end
      if set then
        lease_keep_alive(key, current, math.max(reset_at, expiry_at), req.lease_ms)
      end
    end
  end

  -- RL.ACQUIRE (decide.rs `acquire`); call.writes false (RL.PEEK ACQUIRE)
  -- removes nothing and makes no id.
  local function acquire_decide(key, req, call)
    local current, total = lease_open(key)
    local now = call.now.ms
    local fin = lease_end(now, req.lease_ms)
    local expired = {}
    if call.writes then
      expired = lease_expired(key, now, LEASE_EVICT)
    end
    local first = lease_first_held(key, now, 1)[1]
    local newest = lease_newest(key, 1)[1]
    local latest = newest and newest.expiry
    local held = lease_held(key, now, total)
    local own = nil
    if req.id ~= nil then
      own = lease_expiry_of(key, req.id)
    end
    local reset_at = math.max(latest or now, fin)
    if own ~= nil and own > now then
      -- A retried acquire of a held id: renewed, counted once, never
      -- shortened.
      local expiry_at = math.max(own, fin)
      local d = {
        allowed = 1,
        remaining = math.max(req.limit - held, 0),
        retry_after_ms = 0,
        reset_after_ms = lease_until(math.max(reset_at, expiry_at), now),
      }
      return lease_admitted(key, d, req.id, expiry_at, own, expired, reset_at, req, call,
        current, total)
    end
    if held >= req.limit then
      -- A slot frees when held - limit + 1 leases have ended (more than one
      -- when the limit was lowered below what is held).
      local k = held - req.limit + 1
      local frees = first
      if k > 1 then
        frees = lease_nth_held(key, now, held, total, k)
      end
      return {
        allowed = 0,
        remaining = 0,
        retry_after_ms = frees and lease_until(frees.expiry, now) or 0,
        reset_after_ms = lease_until(latest or now, now),
      }, nil
    end
    local d = {
      allowed = 1,
      remaining = req.limit - held - 1,
      retry_after_ms = 0,
      reset_after_ms = lease_until(reset_at, now),
    }
    if not call.writes then
      return d, nil
    end
    local id = req.id or lease_fresh_id(key, call.now)
    return lease_admitted(key, d, id, fin, nil, expired, reset_at, req, call, current, total)
  end

  LIMITERS.ACQUIRE = {
    token = 'ACQUIRE',
    usage = 'ACQUIRE key limit lease_ms [ID id]',
    parse = function(line)
      check_count(LEASE_ACQUIRE, line)
      local limit = positive(line[3], 'limit', LEASE_MAX_LIMIT)
      local lease_ms = positive(line[4], 'lease_ms', LEASE_MAX_MS)
      local opts = {}
      if #line > 4 then
        options(LEASE_ACQUIRE, line, function(token, value)
          set_once(opts, token, lease_id(value, token))
        end)
      end
      return { limit = limit, lease_ms = lease_ms, id = opts.ID }
    end,
    decide = acquire_decide,
  }

  -- The held leases at now once `id` ends at `id_at` (nil: released), as
  -- decide.rs `state_after`: [changed, held, retry_after_ms, reset_after_ms].
  local function lease_state_after(key, now, id, id_at, changed, total)
    local held = lease_held(key, now, total) - ((changed and id_at == nil) and 1 or 0)
    local function others(v)
      for k_ = 1, #v do local e = v[k_]
        if e.id ~= id then
          return e.expiry
        end
      end
      return nil
    end
    local first = others(lease_first_held(key, now, 2))
    local latest = others(lease_newest(key, 2))
    if id_at ~= nil then
      first = first and math.min(first, id_at) or id_at
      latest = latest and math.max(latest, id_at) or id_at
    end
    return {
      changed and 1 or 0,
      held,
      first and lease_until(first, now) or 0,
      latest and lease_until(latest, now) or 0,
    }
  end

  COMMANDS['rl.acquire'] = function(key, line)
    local req = LIMITERS.ACQUIRE.parse(line)
    local call = { now = now(), shares = Slide.ONE, writes = true }
    local d, write = acquire_decide(key, req, call)
    if write then
      write()
    end
    return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms, d.lease or false }
  end

  -- RL.RELEASE key lease: removes the lease if it is held.
  COMMANDS['rl.release'] = function(key, line)
    check_count(LEASE_RELEASE, line)
    local lease = lease_id(line[3], 'lease')
    local _, total = lease_open(key)
    local t = now().ms
    local at = lease_expiry_of(key, lease)
    if at == nil or at <= t then
      return lease_state_after(key, t, lease, nil, false, total)
    end
    local after = lease_state_after(key, t, lease, nil, true, total)
    if total == 2 then
      -- The last entry: the header goes with it (lease_set.rs record).
      redis.call('ZREM', key, lease, LEASE_HEADER)
    else
      redis.call('ZREM', key, lease)
    end
    return after
  end

  -- RL.RENEW key lease lease_ms: extends a held lease to now + lease_ms
  -- (never shortens it).
  COMMANDS['rl.renew'] = function(key, line)
    check_count(LEASE_RENEW, line)
    local lease = lease_id(line[3], 'lease')
    local lease_ms = positive(line[4], 'lease_ms', LEASE_MAX_MS)
    local current, total = lease_open(key)
    local t = now().ms
    local fin = lease_end(t, lease_ms)
    local at = lease_expiry_of(key, lease)
    if at == nil or at <= t then
      return lease_state_after(key, t, lease, nil, false, total)
    end
    local new_at = math.max(at, fin)
    local after = lease_state_after(key, t, lease, new_at, true, total)
    if new_at == at then
      -- Already lasts that long: renewed, and nothing to write.
      return after
    end
    redis.call('ZADD', key, int(new_at), lease)
    lease_keep_alive(key, current, t + after[4], lease_ms)
    return after
  end
end

-- ============================================================ end LEASES
