-- ---- bucket fields read as numbers (buckets/state.lua's bk.slide and
-- the RL.BUCKETS denial): many fields in one HMGET, checked with one
-- pattern and summed as plain numbers while that is exact; anything else
-- goes to the field-by-field reads of buckets/state.lua, which check each
-- field as the module does.

-- Buckets `bs` of `key` (a key's name) in one HMGET, kept in BK.FETCHED
-- for bk.get: their values in that order ('0' for an absent one), or nil
-- when one holds anything but digits (`width` 1) or digits and commas.
-- One pattern over all of them, not one per field: past it every
-- non-empty comma-free item is a plain number (no sign, exponent, hex or
-- space that tonumber would take), which `+ 0` reads.
function bk.fetch_digits(key, bs, width, ring)
  local names = {}
  for i = 1, #bs do
    names[i] = bk.field_name(bs[i], ring)
  end
  local got = redis.call('HMGET', key, unpack(names))
  local f = { key = key }
  for i = 1, #names do
    local v = got[i]
    f[names[i]] = v
    if v == false then
      got[i] = '0'
    end
  end
  BK.FETCHED = f
  if width == 1 then
    if not table.concat(got):find('^%d*$') then
      return nil
    end
  elseif not table.concat(got, ','):find('^[%d,]*$') then
    return nil
  end
  return got
end

-- The counts of buckets `bs` added to (`sub`: taken from, never below 0)
-- `start`'s `width` counts one bucket at a time, as bk.acc does, in plain
-- numbers: the fields in one HMGET, one pattern over all of them instead
-- of one per count. nil when the key is a refund's view, or a field is not
-- 1 to `width` counts of 1 to 15 digits, or a sum reaches 8e15 (past it a
-- double is not exact): the caller then reads them through bk.field_counts,
-- which checks each and raises what the module raises. Either way the
-- fields stay fetched (BK.FETCHED) for bk.get.
function bk.sum(key, bs, width, start, sub, ring)
  if type(key) == 'table' or #bs == 0 then
    bk.fetch(key, bs, ring)
    return nil
  end
  local totals = {}
  for i = 1, width do
    local c = start[i] or '0'
    if #c > 15 then
      bk.fetch(key, bs, ring)
      return nil
    end
    totals[i] = c + 0
  end
  local got = bk.fetch_digits(key, bs, width, ring)
  if got == nil then
    return nil
  end
  for k = 1, #got do
    local raw = got[k]
    if width == 1 then
      local n = #raw
      if n == 0 or n > 15 then
        return nil
      end
      local c = raw + 0
      local v = totals[1]
      if sub then
        v = v - c
        totals[1] = v > 0 and v or 0
      else
        v = v + c
        if v >= 8e15 then
          return nil
        end
        totals[1] = v
      end
    else
      local at, i = 1, 0
      while true do
        local comma = raw:find(',', at, true)
        local stop = comma and comma - 1 or #raw
        i = i + 1
        if i > width or stop < at or stop - at >= 15 then
          return nil
        end
        local c = raw:sub(at, stop) + 0
        local v = totals[i]
        if sub then
          v = v - c
          totals[i] = v > 0 and v or 0
        else
          v = v + c
          if v >= 8e15 then
            return nil
          end
          totals[i] = v
        end
        if comma == nil then
          break
        end
        at = comma + 1
      end
    end
  end
  return totals
end

-- ---- counts read one field at a time (checked as the module checks them)

-- A running sum of canonical counts, as bk.sat_add / bk.sat_sub (`sub`)
-- applied one by one: a number while that is exact (below 8e15, counts of
-- at most 15 digits), else the decimal string. bk.acc_done turns the
-- numbers back into digits.
function bk.acc(acc, c, sub)
  if #c <= 15 then
    if type(acc) ~= 'number' and #acc <= 15 then
      acc = acc + 0
    end
    if type(acc) == 'number' then
      local v = sub and acc - c or acc + c
      if sub then
        return v > 0 and v or 0
      elseif v < 8e15 then
        return v
      end
    end
  end
  if type(acc) == 'number' then
    acc = int(acc)
  end
  return sub and bk.sat_sub(acc, c) or bk.sat_add(acc, c)
end

function bk.acc_done(totals)
  for i = 1, #totals do
    if type(totals[i]) == 'number' then
      totals[i] = int(totals[i])
    end
  end
end

-- Bucket b's own field as `width` counts (zeros when absent). A lone
-- count of 1 to 15 digits without a leading zero is already canonical: no
-- split.
function bk.field_counts(key, b, width, ring)
  local raw = bk.get(key, bk.field_name(b, ring))
  if raw ~= nil and #raw <= 15 and #raw > 0 and not raw:find('[^0-9]')
    and (raw:byte(1) ~= 48 or raw == '0') then
    local counts = { raw }
    for i = 2, width do
      counts[i] = '0'
    end
    return counts
  end
  local counts = {}
  if raw ~= nil then
    counts = bk.decode_counts(raw)
    if counts == nil or #counts > width then
      E.foreign_hash()
    end
  end
  for i = #counts + 1, width do
    counts[i] = '0'
  end
  return counts
end

function bk.resized(counts, width)
  local out = {}
  for i = 1, width do
    out[i] = counts[i] or '0'
  end
  return out
end
