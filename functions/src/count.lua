-- ---- RL.COUNT, RL.TOTALS

BK.COUNT_SYNTAX = syntax('rl.count', 3, { 'BY', 'PRECISION' })
BK.TOTALS_SYNTAX = syntax('rl.totals', 2, { 'PRECISION' })

-- request.rs `check_field`: 1 to 32 printable ASCII bytes, no space, no
-- comma.
function bk.check_field(field)
  local ok = #field >= 1 and #field <= BK.MAX_FIELD_LEN
  for i = 1, #field do
    local b = field:byte(i)
    if b < 33 or b > 126 or b == 44 then
      ok = false
    end
  end
  if not ok then
    fail('ERR field must be 1 to ' .. BK.MAX_FIELD_LEN
      .. ' printable ASCII characters, without spaces or commas')
  end
end

-- a < b bytewise.
function bk.bytes_lt(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then
      return x < y
    end
  end
  return #a < #b
end

-- decide.rs `sorted`: (name, total) pairs by name (bytewise), then total.
function bk.sorted(names, totals)
  local pairs_ = {}
  for i, name in ipairs(names) do
    pairs_[i] = { name, totals[i] or '0' }
  end
  table.sort(pairs_, function(x, y)
    if x[1] ~= y[1] then
      return bk.bytes_lt(x[1], y[1])
    end
    return dec_cmp_digits(x[2], y[2]) < 0
  end)
  return pairs_
end

-- Name/total pairs as the module replies them, sorted: a map in RESP3, a
-- flat array in RESP2. The server writes a Lua `{ map = t }` in the order
-- `next` visits t (for RESP2 clients as a flat array), which for string
-- keys is the order of the nodes holding them. So the table is built so
-- that the names sit in rising nodes (bk.ordered): it is grown to 64 nodes
-- by fillers that are then removed; each name's main node (the server's
-- string hash: Lua 5.1's on Redis, murmur32 on Valkey; BK.HASHES, the one
-- found by a probe) is taken by a padding key, so every name collides
-- and goes to the highest free node, the last name first; then the padding
-- is removed. 64 nodes less 33 fillers leave room for 15 names (rl writes
-- at most 8). The order is checked with `next` before it is returned: on a
-- Lua that hashes otherwise, the map goes in the order Lua gives.

-- Lua 5.1's string hash (lstring.c, Redis), 32 bits.
function bk.hash_lua(s)
  local l = #s
  local h = l
  for l1 = l, 1, -1 do
    h = bit.bxor(h, bit.tobit(bit.lshift(h, 5) + bit.rshift(h, 2) + s:byte(l1)))
  end
  return h
end

-- a * b mod 2^32 (as a bit-op integer), exact in doubles.
function bk.mul32(a, b)
  a = a % 4294967296
  b = b % 4294967296
  local lo = b % 65536
  local hi = (b - lo) / 65536
  return bit.tobit(a * lo + ((a * hi) % 65536) * 65536)
end

-- Valkey's string hash: murmur32 seeded with the length (lstring.c).
function bk.hash_murmur(s)
  local l = #s
  local h = l
  local c1, c2 = 0xcc9e2d51, 0x1b873593
  local blocks = math.floor(l / 4)
  for i = 0, blocks - 1 do
    local b0, b1, b2, b3 = s:byte(i * 4 + 1, i * 4 + 4)
    local k = b0 + b1 * 256 + b2 * 65536 + b3 * 16777216
    k = bk.mul32(k, c1)
    k = bit.rol(k, 15)
    k = bk.mul32(k, c2)
    h = bit.bxor(h, k)
    h = bit.rol(h, 13)
    h = bit.tobit(bk.mul32(h, 5) % 4294967296 + 0xe6546b64)
  end
  local rest = l % 4
  if rest > 0 then
    local at = blocks * 4
    local k1 = 0
    if rest == 3 then
      k1 = bit.bxor(k1, s:byte(at + 3) * 65536)
    end
    if rest >= 2 then
      k1 = bit.bxor(k1, s:byte(at + 2) * 256)
    end
    k1 = bit.bxor(k1, s:byte(at + 1))
    k1 = bk.mul32(k1, c1)
    k1 = bit.rol(k1, 15)
    k1 = bk.mul32(k1, c2)
    h = bit.bxor(h, k1)
  end
  h = bit.bxor(h, l)
  h = bit.bxor(h, bit.rshift(h, 16))
  h = bk.mul32(h, 0x85ebca6b)
  h = bit.bxor(h, bit.rshift(h, 13))
  h = bk.mul32(h, 0xc2b2ae35)
  h = bit.bxor(h, bit.rshift(h, 16))
  return h
end

BK.HASHES = { bk.hash_lua, bk.hash_murmur }
BK.NODES = 64
BK.FILLERS = BK.NODES / 2 + 1
-- Per hash: node -> a key whose main node it is (in BK.NODES nodes).
BK.PADS = { {}, {} }
-- The hash this server's Lua was found to use (nil: not yet known).
BK.FOUND = {}

function bk.pad(which, node)
  local pads = BK.PADS[which]
  if pads.n == nil then
    local found, j = 0, 0
    while found < BK.NODES and j < 100000 do
      j = j + 1
      local key = '\2' .. j
      local at = bit.band(BK.HASHES[which](key), BK.NODES - 1)
      if pads[at] == nil then
        pads[at] = key
        found = found + 1
      end
    end
    pads.n = found
  end
  return pads[node]
end

function bk.ordered_with(which, sorted)
  local map = {}
  local hash = BK.HASHES[which]
  for j = 1, BK.FILLERS do
    map['\1' .. j] = true
  end
  for j = 1, BK.FILLERS do
    map['\1' .. j] = nil
  end
  local pads = {}
  for _, pair in ipairs(sorted) do
    local pad = bk.pad(which, bit.band(hash(pair[1]), BK.NODES - 1))
    if pad == nil then
      return nil
    end
    if map[pad] == nil then
      map[pad] = true
      pads[#pads + 1] = pad
    end
  end
  for i = #sorted, 1, -1 do
    map[sorted[i][1]] = bk.reply_int(sorted[i][2])
  end
  for _, pad in ipairs(pads) do
    map[pad] = nil
  end
  local i = 0
  for name in pairs(map) do
    i = i + 1
    if sorted[i] == nil or sorted[i][1] ~= name then
      return nil
    end
  end
  if i ~= #sorted then
    return nil
  end
  return map
end

-- Eight names in order: the hash that orders them is this server's (a
-- wrong hash orders eight names by chance once in 40,320).
BK.PROBE = {
  { 'a1', '0' }, { 'b2', '0' }, { 'c3', '0' }, { 'd4', '0' },
  { 'e5', '0' }, { 'f6', '0' }, { 'g7', '0' }, { 'h8', '0' },
}

function bk.ordered(sorted)
  if BK.FOUND.which == nil then
    BK.FOUND.which = 0
    for which = 1, #BK.HASHES do
      if BK.FOUND.which == 0 and bk.ordered_with(which, BK.PROBE) ~= nil then
        BK.FOUND.which = which
      end
    end
  end
  if #sorted < 2 or #sorted > 15 or BK.FOUND.which == 0 then
    return nil
  end
  return bk.ordered_with(BK.FOUND.which, sorted)
end

function bk.totals_reply(sorted)
  local map = bk.ordered(sorted)
  if map == nil then
    map = {}
    for _, pair in ipairs(sorted) do
      map[pair[1]] = bk.reply_int(pair[2])
    end
  end
  return { map = map }
end

COMMANDS['rl.count'] = function(key, line)
  check_count(BK.COUNT_SYNTAX, line)
  local window = positive(line[3], 'window', BK.MAX_WINDOW)
  local field = line[4]
  bk.check_field(field)
  local set = {}
  if #line > 4 then
    options(BK.COUNT_SYNTAX, line, function(token, value)
      if token == 'BY' then
        set_once(set, token, positive(value, token, BK.MAX_BY))
      else
        bk.precision_option(value, window, set)
      end
    end)
  end
  local by = int(set.BY or 1)
  local exists, at, h = bk.open(key)
  local state = bk.load(key, exists, 'c', h)
  local precision = bk.resolve_precision(window, set.PRECISION, state)
  local win = bk.slide(key, state, window, precision, now().ms)
  local names = {}
  if state ~= nil then
    for i, n in ipairs(state.names) do
      names[i] = n
    end
  end
  local idx = nil
  for i, n in ipairs(names) do
    if idx == nil and n == field then
      idx = i
    end
  end
  local new_name = false
  if idx == nil then
    if #names >= BK.MAX_FIELDS then
      fail('ERR key already counts ' .. BK.MAX_FIELDS .. ' fields, the most it may hold')
    end
    names[#names + 1] = field
    new_name = true
    idx = #names
  end
  local totals = bk.resized(win.totals, #names)
  local bucket = bk.target_counts(win, #names)
  local total = bk.add(totals[idx], by)
  local count = bk.add(bucket[idx], by)
  if dec_cmp_digits(total, BK.MAX_TOTAL) > 0 or dec_cmp_digits(count, BK.MAX_TOTAL) > 0 then
    fail("ERR BY would take the field's total over the window past " .. BK.MAX_TOTAL)
  end
  bucket[idx] = count
  totals[idx] = total
  local changed = nil
  if state == nil or new_name then
    changed = names
  end
  bk.record(key, bk.write(win, 'c', bucket, totals, changed), at)
  return bk.totals_reply(bk.sorted(names, totals))
end

-- Never writes: buckets that left are subtracted on the fly.
COMMANDS['rl.totals'] = function(key, line)
  check_count(BK.TOTALS_SYNTAX, line)
  local window = positive(line[3], 'window', BK.MAX_WINDOW)
  local set = {}
  if #line > 3 then
    options(BK.TOTALS_SYNTAX, line, function(_, value)
      bk.precision_option(value, window, set)
    end)
  end
  local exists, _, h = bk.open(key)
  local state = bk.load(key, exists, 'c', h)
  if state == nil then
    return bk.totals_reply({})
  end
  local precision = bk.resolve_precision(window, set.PRECISION, state)
  local win = bk.slide(key, state, window, precision, now().ms)
  return bk.totals_reply(bk.sorted(state.names, win.totals))
end

-- =================================================== end BUCKETS, COUNT
