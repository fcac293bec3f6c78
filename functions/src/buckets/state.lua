-- ======================================================= BUCKETS, COUNT
-- RL.BUCKETS key limit window [PRECISION ms] [COST cost],
-- RL.COUNT key window field [BY n] [PRECISION ms],
-- RL.TOTALS key window [PRECISION ms]: src/core/buckets/, src/core/count/.
--
-- One plain hash per key (layout.rs): `h` the header
-- `kind,precision,newest,held,totals...[,current]`, `f` (RL.COUNT) the
-- names, `<b>` bucket b's counts. Counts are decimal strings here (an
-- RL.COUNT total reaches 999,999,999,999,999,999, and a stored count is
-- read as a u64 as the module reads it); small ones take a numeric path.

local bk = {}

local BK = {
  MAX_LIMIT = 1000000000000000,
  MAX_WINDOW = 1000000000000,
  -- request.rs MAX_BUCKETS, count/request.rs MAX_COUNT_BUCKETS.
  MAX_BUCKETS = 250,
  MAX_COUNT_BUCKETS = 100,
  DEFAULT_BUCKETS = 60,
  MAX_CLOCK = 1000000000000000,
  MAX_FIELDS = 8,
  MAX_FIELD_LEN = 32,
  MAX_BY = 1000000000000000,
  MAX_TOTAL = '999999999999999999',
  MAX_HELD_DIGITS = 500,
}

-- floor(a / b) for integers (b > 0), exact below 2^53.
function bk.floor_div(a, b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

function bk.ceil_div(a, b)
  return -bk.floor_div(-a, b)
end

-- ---- decimal counts: canonical strings (no sign, no leading zero)


function bk.add(a, b)
  if #a <= 15 and #b <= 15 then
    return int(tonumber(a) + tonumber(b))
  end
  return dec_add(a, b)
end

-- u64 saturating_add / saturating_sub.
function bk.sat_add(a, b)
  local s = bk.add(a, b)
  if #s >= 20 and dec_cmp_digits(s, U64_MAX) > 0 then
    return U64_MAX
  end
  return s
end

function bk.sat_sub(a, b)
  if dec_cmp_digits(a, b) <= 0 then
    return '0'
  end
  if #a <= 15 then
    return int(tonumber(a) - tonumber(b))
  end
  return dec_sub(a, b)
end

function bk.min(a, b)
  return dec_cmp_digits(a, b) <= 0 and a or b
end

-- A reply integer: exact up to 2^53; beyond, the nearest double (a Lua
-- reply cannot carry more), capped as the module caps at i64::MAX.
function bk.reply_int(s)
  if dec_cmp_digits(s, '9223372036854775807') >= 0 then
    -- The largest double below 2^63 (a double of 2^63 does not convert).
    return 9223372036854774784
  end
  return tonumber(s)
end

-- ---- stored values


-- layout.rs `Items::int`: an optional '-' and 1 to 18 digits; (negative,
-- canonical digits) or nil.
function bk.item_int(s)
  local neg = s:byte(1) == 45
  local digits = neg and s:sub(2) or s
  if #digits == 0 or #digits > 18 or digits:find('[^0-9]') then
    return nil
  end
  return neg, dec_norm(digits)
end

-- The value's comma-separated items (empty ones too).
function bk.split(s)
  local out, at = {}, 1
  while true do
    local c = s:find(',', at, true)
    if c == nil then
      out[#out + 1] = s:sub(at)
      return out
    end
    out[#out + 1] = s:sub(at, c - 1)
    at = c + 1
  end
end

-- layout.rs `decode_counts`; nil when not rl's.
function bk.decode_counts(s)
  local counts = {}
  local items = bk.split(s)
  for k_ = 1, #items do local item = items[k_]
    local v = stored_unsigned(item)
    if v == nil then
      return nil
    end
    counts[#counts + 1] = v
  end
  return counts
end

function bk.encode_counts(counts)
  return table.concat(counts, ',')
end

-- ---- the held set (held.rs): ascending bit indexes, bit i is bucket
-- newest - 1 - i; stored as lowercase hex without leading zeros.

BK.HEX = '0123456789abcdef'

-- The set bits of each hex digit's value, by its byte: a digit costs one
-- lookup and its set bits, not four divisions (1,000 bits = 250 digits).
-- (A literal: the load runs without Lua's libraries.)
BK.DIGIT_BITS = {
  [48] = {}, [49] = { 0 }, [50] = { 1 }, [51] = { 0, 1 }, [52] = { 2 }, [53] = { 0, 2 },
  [54] = { 1, 2 }, [55] = { 0, 1, 2 }, [56] = { 3 }, [57] = { 0, 3 }, [97] = { 1, 3 },
  [98] = { 0, 1, 3 }, [99] = { 2, 3 }, [100] = { 0, 2, 3 }, [101] = { 1, 2, 3 },
  [102] = { 0, 1, 2, 3 },
}

function bk.held_parse(hex)
  if #hex == 0 or #hex > BK.MAX_HELD_DIGITS or hex:find('[^0-9a-f]') then
    return nil
  end
  local bits = {}
  local n = #hex
  local digit_bits = BK.DIGIT_BITS
  for k = 0, n - 1 do
    local set = digit_bits[hex:byte(n - k)]
    local base = k * 4
    for j = 1, #set do
      bits[#bits + 1] = base + set[j]
    end
  end
  return bits
end

function bk.held_write(bits)
  if #bits == 0 then
    return '0'
  end
  local digits = {}
  local top = math.floor(bits[#bits] / 4)
  for k = 0, top do
    digits[k] = 0
  end
  for k_ = 1, #bits do local i = bits[k_]
    local k = math.floor(i / 4)
    digits[k] = digits[k] + 2 ^ (i % 4)
  end
  local out = {}
  for k = top, 0, -1 do
    out[#out + 1] = BK.HEX:sub(digits[k] + 1, digits[k] + 1)
  end
  return table.concat(out)
end

function bk.held_copy(bits)
  local out = {}
  for i = 1, #bits do local v = bits[i]
    out[i] = v
  end
  return out
end

-- ---- the key

-- layout.rs `Naming::field`: ring names (`ring`) are b mod 4096, an
-- earlier build's the full index.
function bk.field_name(b, ring)
  if ring then
    return int(b % 4096)
  end
  return int(b)
end

-- The key opened as HashState opens it: another type is WRONGTYPE, a hash
-- without a TTL is not rl's. The expiry it had (nil: none, a new key).
-- Also answers the header field `h` (false when absent) for `bk.load`:
-- that read tells WRONGTYPE as TYPE would, so TYPE is not sent.
function bk.open(key)
  if type(key) == 'table' then
    return true, nil, key.set.h
  end
  -- What an earlier call fetched is not this call's.
  BK.FETCHED.key = nil
  local at = expire_at(key)
  if at == -2 then
    return false, nil
  end
  local h = typed_read('HGET', key, 'h')
  if at < 0 then
    E.foreign_hash()
  end
  return true, at, h
end

-- Bucket fields of `key` read ahead in one HMGET (bk.fetch), for bk.get:
-- { key = the key they are of (nil: none), [field] = value or false }.
BK.FETCHED = {}

-- Reads buckets `bs` of `key` in one HMGET, where a call will read several
-- of them: one redis.call instead of one each. Each is still decoded (and
-- checked) only when the call reads it through bk.get, as the module reads
-- only what it needs.
function bk.fetch(key, bs, ring)
  if #bs < 2 then
    return
  end
  local names = {}
  for i = 1, #bs do
    names[i] = bk.field_name(bs[i], ring)
  end
  bk.fetch_fields(key, names)
end

function bk.fetch_fields(key, names)
  if type(key) == 'table' then
    key = key.name
  end
  local got = redis.call('HMGET', key, unpack(names))
  local f = { key = key }
  for i = 1, #names do
    f[names[i]] = got[i]
  end
  BK.FETCHED = f
end

function bk.get(key, field)
  if type(key) == 'table' then
    if key.del[field] then
      return nil
    end
    return key.set[field] or bk.get(key.name, field)
  end
  local f = BK.FETCHED
  if f.key == key and f[field] ~= nil then
    return f[field] or nil
  end
  local v = redis.call('HGET', key, field)
  if v == false then
    return nil
  end
  return v
end

BK.KIND = { b = 'RL.BUCKETS', c = 'RL.COUNT' }
-- A state's tag (layout.rs `Kind::from_state_tag`): the kind, and whether
-- its fields have ring names.
BK.STATE_TAG = { b = { 'b', false }, c = { 'c', false }, B = { 'b', true }, C = { 'c', true } }

-- layout.rs `load_blocked`: the state (nil for a missing key, or one
-- holding only a block) and the end of the block the header carries in its
-- last item `b<until>` (RL.BUCKETS only); errors for the other command's
-- key and for a hash rl did not write.
function bk.load(key, exists, kind, raw)
  if not exists then
    return nil
  end
  if not raw then
    E.foreign_hash()
  end
  -- Header::parse_blocked
  local items = bk.split(raw)
  local tag = BK.STATE_TAG[items[1]]
  local found = tag and tag[1]
  local ring = tag and tag[2]
  local untl = nil
  local last = items[#items]
  if #items >= 2 and found ~= nil and last:byte(1) == 98 then
    -- The block's end: at most 15 digits (exact in a double).
    local neg, digits = bk.item_int(last:sub(2))
    if neg == nil or #digits > 15 then
      E.foreign_hash()
    end
    untl = neg and -tonumber(digits) or tonumber(digits)
    items[#items] = nil
    if #items == 1 then
      -- A key RL.BLOCK made: the kind and the block alone (lowercase).
      if ring then
        E.foreign_hash()
      end
      if found ~= kind then
        fail('ERR key holds ' .. BK.KIND[found] .. ' state, not ' .. BK.KIND[kind] .. ' state')
      end
      if kind ~= 'b' then
        E.foreign_hash()
      end
      return nil, untl
    end
  end
  if #items < 4 or found == nil then
    E.foreign_hash()
  end
  local p_neg, p_digits = bk.item_int(items[2])
  local n_neg, n_digits = bk.item_int(items[3])
  if p_neg == nil or n_neg == nil then
    E.foreign_hash()
  end
  local held = bk.held_parse(items[4])
  if held == nil then
    E.foreign_hash()
  end
  local counts = {}
  for i = 5, #items do
    local neg, digits = bk.item_int(items[i])
    if neg == nil or (neg and digits ~= '0') then
      E.foreign_hash()
    end
    counts[#counts + 1] = digits
  end
  if found ~= kind then
    fail('ERR key holds ' .. BK.KIND[found] .. ' state, not ' .. BK.KIND[kind] .. ' state')
  end
  if untl ~= nil and kind ~= 'b' then
    E.foreign_hash()
  end
  local names = {}
  if kind == 'c' then
    -- The names and the newest bucket in one read.
    local n_name = (n_neg and '-' or '') .. n_digits
    if ring and #n_digits <= 16 then
      n_name = bk.field_name(tonumber(n_name), true)
    end
    bk.fetch_fields(key, { 'f', n_name })
    local f = bk.get(key, 'f')
    if f == nil then
      E.foreign_hash()
    end
    names = bk.split(f)
  end
  local width = math.max(#names, 1)
  local stored = kind == 'b' and 2 * width or width
  if p_neg or p_digits == '0' or #counts ~= stored then
    E.foreign_hash()
  end
  -- precision >= 1; max_index = MAX_CLOCK / precision (0 past 10^15).
  local precision = tonumber(p_digits)
  local max_index = #p_digits > 16 and 0 or bk.floor_div(BK.MAX_CLOCK, precision)
  if #n_digits > 16 or tonumber(n_digits) > max_index then
    E.foreign_hash()
  end
  local newest = tonumber(n_digits)
  if n_neg then
    newest = -newest
  end
  local totals, current = {}, {}
  for i = 1, width do
    totals[i] = counts[i]
  end
  if kind == 'b' then
    for i = width + 1, stored do
      current[#current + 1] = counts[i]
    end
  else
    current = bk.field_counts(key, newest, width, ring)
  end
  return {
    kind = kind,
    ring = ring,
    precision = precision,
    precision_text = p_digits,
    newest = newest,
    held = held,
    totals = totals,
    current = current,
    names = names,
  }, untl
end

-- request.rs `check_precision_within`: `max` buckets (RL.BUCKETS' when
-- nil).
function bk.check_precision(window, precision, max)
  max = max or BK.MAX_BUCKETS
  if precision > window then
    fail('ERR PRECISION must not exceed window')
  end
  if bk.ceil_div(window, precision) > max then
    fail('ERR PRECISION too small: the window would need more than ' .. max .. ' buckets')
  end
end

-- window.rs `resolve_precision_within` (`max` as bk.check_precision's).
function bk.resolve_precision(window, requested, state, max)
  local precision
  if state ~= nil and requested ~= nil and state.precision ~= requested then
    fail("ERR PRECISION differs from the key's bucket width (" .. state.precision_text .. ' ms)')
  elseif state ~= nil then
    precision = state.precision
  elseif requested ~= nil then
    precision = requested
  else
    precision = math.max(bk.ceil_div(window, BK.DEFAULT_BUCKETS), 1)
  end
  bk.check_precision(window, precision, max)
  return precision
end

-- window.rs `slide`: the window at `now`, stale buckets found (not yet
-- removed), the totals without them.
function bk.slide(key, state, window, precision, now)
  if now < -BK.MAX_CLOCK or now > BK.MAX_CLOCK then
    fail('ERR rl internal error: server clock out of range')
  end
  local p, w = precision, window
  local live_from = bk.floor_div(now - w + 1, p)
  local current = bk.floor_div(now, p)
  local win = { precision = p, window = w, now = now, live_from = live_from, ring = true }
  if state == nil then
    win.target = current
    win.newest = nil
    win.held = {}
    win.newest_counts = {}
    win.totals = {}
    win.stale = {}
    return win
  end
  local s = state
  win.ring = s.ring
  local first_stale = math.max(s.newest - live_from, 0)
  local held, stale = {}, {}
  for j = #s.held, 1, -1 do
    local i = s.held[j]
    if i < first_stale then
      break
    end
    stale[#stale + 1] = s.newest - 1 - i
  end
  for k_ = 1, #s.held do local i = s.held[k_]
    if i < first_stale then
      held[#held + 1] = i
    end
  end
  if s.kind == 'c' and s.newest < live_from then
    stale[#stale + 1] = s.newest
  end
  local width = #s.totals
  local totals
  if live_from > s.newest then
    totals = bk.resized({}, width)
  elseif #stale <= #held then
    totals = bk.sum(key, stale, width, s.totals, true, s.ring)
    if totals == nil then
      totals = bk.held_copy(s.totals)
      for k_ = 1, #stale do local b = stale[k_]
        local c = bk.field_counts(key, b, width, s.ring)
        for i = 1, width do
          totals[i] = bk.acc(totals[i], c[i], true)
        end
      end
    end
    bk.acc_done(totals)
  else
    local bs = {}
    for k_ = 1, #held do
      bs[k_] = s.newest - 1 - held[k_]
    end
    totals = bk.sum(key, bs, width, s.current, false, s.ring)
    if totals == nil then
      totals = bk.resized(s.current, width)
      for k_ = 1, #bs do
        local c = bk.field_counts(key, bs[k_], width, s.ring)
        for k = 1, width do
          totals[k] = bk.acc(totals[k], c[k], false)
        end
      end
    end
    bk.acc_done(totals)
  end
  win.target = math.max(current, s.newest)
  win.newest = s.newest
  win.held = held
  win.newest_counts = s.current
  win.totals = totals
  win.stale = stale
  return win
end

function bk.leaves_at(win, b)
  return (b + 1) * win.precision - 1 + win.window
end

function bk.target_counts(win, width)
  if win.newest == win.target then
    return bk.resized(win.newest_counts, width)
  end
  return bk.resized({}, width)
end

function bk.read_bucket(key, win, b, width)
  if win.newest == b then
    return bk.resized(win.newest_counts, width)
  end
  return bk.field_counts(key, b, width, win.ring)
end

-- `ring`: the state's fields have ring names (the tag in uppercase).
function bk.header(kind, precision, newest, held, totals, current, ring)
  local line = (ring and kind:upper() or kind) .. ',' .. int(precision) .. ',' .. int(newest) .. ',' .. bk.held_write(held)
    .. ',' .. bk.encode_counts(totals)
  if #current > 0 then
    line = line .. ',' .. bk.encode_counts(current)
  end
  return line
end

-- window.rs `write`: { header, fields = { {f, v}, ... }, delete, needed,
-- window }.
function bk.write(win, kind, bucket, totals, names)
  local fields = {}
  local in_header = kind == 'b' and bucket or {}
  local held = bk.held_copy(win.held)
  local flush = nil
  if win.newest ~= nil and win.newest < win.target then
    local by = win.target - win.newest
    for j = 1, #held do
      held[j] = held[j] + by
    end
    local counted = win.newest >= win.live_from
    local has_field = counted
    if kind == 'b' then
      has_field = false
      if counted then
        for k_ = 1, #win.newest_counts do local c = win.newest_counts[k_]
          if c ~= '0' then
            has_field = true
          end
        end
      end
    end
    if has_field then
      table.insert(held, 1, by - 1)
      if kind == 'b' then
        flush = win.newest
      end
    end
  end
  -- An earlier build's key takes ring names once none of its fields
  -- stays (an RL.COUNT newest bucket that stays keeps its field).
  local ring = win.ring or (#held == 0 and (kind == 'b' or win.newest ~= win.target))
  local header = bk.header(kind, win.precision, win.target, held, totals, in_header, ring)
  if kind == 'c' and names ~= nil then
    fields[#fields + 1] = { 'f', table.concat(names, ',') }
  end
  if kind == 'c' then
    fields[#fields + 1] = { bk.field_name(win.target, ring), bk.encode_counts(bucket) }
  elseif flush ~= nil then
    fields[#fields + 1] = { bk.field_name(flush, ring), bk.encode_counts(win.newest_counts) }
  end
  -- Stale fields by the names they have; one a new field reuses is set,
  -- not deleted (record sets before it deletes).
  local set = {}
  for k_ = 1, #fields do
    set[fields[k_][1]] = true
  end
  local delete = {}
  for i = 1, #win.stale do
    local name = bk.field_name(win.stale[i], win.ring)
    if not set[name] then
      delete[#delete + 1] = name
    end
  end
  return {
    header = header,
    fields = fields,
    delete = delete,
    needed = bk.leaves_at(win, win.target),
    window = win.window,
  }
end

-- HashState `record`: HSET the header (and the other fields), HDEL the
-- stale buckets, then PEXPIREAT when the expiry the key had when opened
-- (`at`, nil: none) falls short (expiry.rs).
function bk.record(key, w, at)
  local args = { 'HSET', key, 'h', w.header }
  for k_ = 1, #w.fields do local fv = w.fields[k_]
    args[#args + 1] = fv[1]
    args[#args + 1] = fv[2]
  end
  redis.call(unpack(args))
  if #w.delete > 0 then
    redis.call('HDEL', key, unpack(w.delete))
  end
  if at == nil or at < w.needed then
    local slack = math.max(math.floor(w.window / 4), 1)
    redis.call('PEXPIREAT', key, w.needed + slack)
  end
end

-- refund.rs `Written`: the hash `key` as the write `w` leaves it, read
-- before the write is made (bk.open and bk.get read through it): the
-- header and fields set, then the deletions.
function bk.written(key, w)
  local over = { name = key, set = { h = w.header }, del = {} }
  for k_ = 1, #w.fields do local fv = w.fields[k_]
    over.set[fv[1]] = fv[2]
  end
  for k_ = 1, #w.delete do local f = w.delete[k_]
    over.del[f] = true
  end
  return over
end

-- ---- RL.BUCKETS

BK.BUCKETS_SYNTAX = syntax('rl.buckets', 3, { 'PRECISION', 'COST', 'BLOCK' })
BK.ONE = { slides = 1, buckets = 1 }

-- request.rs `precision_option_within` (`max` as bk.check_precision's).
function bk.precision_option(value, window, set, max)
  local precision = positive(value, 'PRECISION', BK.MAX_WINDOW)
  bk.check_precision(window, precision, max)
  set_once(set, 'PRECISION', precision)
end
