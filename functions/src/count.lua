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

-- Name/total pairs: a map in RESP3, a flat array in RESP2, in the order
-- the server's Lua visits the table. Both editions document that order as
-- unspecified (clients read the reply as a map): an order that copied the
-- module's sorting would have to follow each server's Lua string hash.
function bk.totals_reply(names, totals)
  local map = {}
  for i = 1, #names do
    map[names[i]] = bk.reply_int(totals[i] or '0')
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
        bk.precision_option(value, window, set, BK.MAX_COUNT_BUCKETS)
      end
    end)
  end
  local by = int(set.BY or 1)
  local exists, at, h = bk.open(key)
  local state = bk.load(key, exists, 'c', h)
  local precision = bk.resolve_precision(window, set.PRECISION, state, BK.MAX_COUNT_BUCKETS)
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
  return bk.totals_reply(names, totals)
end

-- Never writes: buckets that left are subtracted on the fly.
COMMANDS['rl.totals'] = function(key, line)
  check_count(BK.TOTALS_SYNTAX, line)
  local window = positive(line[3], 'window', BK.MAX_WINDOW)
  local set = {}
  if #line > 3 then
    options(BK.TOTALS_SYNTAX, line, function(_, value)
      bk.precision_option(value, window, set, BK.MAX_COUNT_BUCKETS)
    end)
  end
  local exists, _, h = bk.open(key)
  local state = bk.load(key, exists, 'c', h)
  if state == nil then
    return bk.totals_reply({}, {})
  end
  local precision = bk.resolve_precision(window, set.PRECISION, state, BK.MAX_COUNT_BUCKETS)
  local win = bk.slide(key, state, window, precision, now().ms)
  return bk.totals_reply(state.names, win.totals)
end

-- =================================================== end BUCKETS, COUNT
