-- ------------------------------------------------------ integer arguments

-- A decimal integer written as the server writes integers: digits only, no
-- sign, no leading zero ('0' alone is fine); nil for anything else. Every
-- maximum read through here is below 10^16, so longer strings are out of
-- range and shorter ones are exact doubles (CL.THROTTLE's quantity, up to
-- 2^63 - 1, is read as a string in its section).
-- Every string that passed, with its value: a call's parameters are mostly
-- the last call's, and a table lookup costs a tenth of the pattern test.
-- Cleared when it holds ARGUMENTS_KEPT (memory stays bounded whatever the
-- callers send); only strings that passed are kept.
local ARGUMENTS, ARGUMENTS_N, ARGUMENTS_KEPT = {}, 0, 512

local function argument(s)
  local v = ARGUMENTS[s]
  if v ~= nil then
    return v
  end
  if #s > 16 or not (s == '0' or s:find('^[1-9]%d*$')) then
    return nil
  end
  -- `+ 0`, not tonumber(): one string conversion instead of two (Lua 5.1's
  -- tonumber() converts to test, then again to answer).
  v = s + 0
  if ARGUMENTS_N >= ARGUMENTS_KEPT then
    ARGUMENTS, ARGUMENTS_N = {}, 0
  end
  ARGUMENTS[s], ARGUMENTS_N = v, ARGUMENTS_N + 1
  return v
end

-- An integer in 1..max, else the error naming `arg`.
local function positive(s, arg, max)
  local v = argument(s)
  if v == nil or v < 1 or v > max then
    E.out_of_range(arg, max)
  end
  return v
end

-- An integer in 0..max, else the error naming `arg`.
local function non_negative(s, arg, max)
  local v = argument(s)
  if v == nil or v > max then
    E.not_in_range(arg, 0, max)
  end
  return v
end

-- A command's declaration, as syntax.rs has it: its name (lower case, as
-- errors give it), how many arguments it needs at least (name included),
-- and its option tokens. `check_count` and `options` are syntax.rs's.
local function syntax(command, positional, options)
  return { command = command, positional = positional, options = options or {} }
end

-- `line` (name included) has too few arguments, or more than the command
-- can spell when it has no options.
local function check_count(syn, line)
  local n = #line
  if n < 1 + syn.positional or (#syn.options == 0 and not syn.open and n > 1 + syn.positional) then
    E.arity(syn.command)
  end
end

-- Walks the `TOKEN value` pairs after the positional arguments, calling
-- on_option(TOKEN, value) with the declared spelling.
local function options(syn, line, on_option)
  local at = 2 + syn.positional
  while at <= #line do
    local given = line[at]:upper()
    if given == 'OLDEST' then
      E.oldest_only_in_peek(syn.command)
    end
    -- The limiters' own commands take UPTO off their line first
    -- (take_upto): anywhere else it is refused by name.
    if given == 'UPTO' then
      E.upto_only(syn.command)
    end
    local token = nil
    for _, t in ipairs(syn.options) do
      if t == given then
        token = t
      end
    end
    if token == nil then
      E.unknown_option(line[at])
    end
    if line[at + 1] == nil then
      E.missing_value(token)
    end
    on_option(token, line[at + 1])
    at = at + 2
  end
end

-- `set[option] = value` once; a second time is an error.
local function set_once(set, option, value)
  if set[option] ~= nil then
    E.duplicate_option(option)
  end
  set[option] = value
end

-- ------------------------------------------------ decimal string integers

-- Non-negative integers of any size as decimal strings without leading
-- zeros, for the values that pass 2^53.

local function dec_norm(a)
  local first = a:byte(1)
  if first ~= nil and first ~= 48 then
    -- No leading zero: already canonical (no gsub, no new string).
    return a
  end
  a = a:gsub('^0+', '')
  if a == '' then
    return '0'
  end
  return a
end

-- -1, 0 or 1 as a < b, a == b, a > b, for canonical digit strings (no
-- leading zero): by length, then as numbers in chunks (Lua's string `<`
-- follows the locale's collation).
local function dec_cmp_digits(a, b)
  if #a ~= #b then
    return #a < #b and -1 or 1
  end
  if #a <= 15 then
    local x, y = tonumber(a), tonumber(b)
    return x < y and -1 or (x > y and 1 or 0)
  end
  for i = 1, #a, 8 do
    local x, y = tonumber(a:sub(i, i + 7)), tonumber(b:sub(i, i + 7))
    if x ~= y then
      return x < y and -1 or 1
    end
  end
  return 0
end

-- dec_cmp_digits for any digit strings (leading zeros allowed).
local function dec_cmp(a, b)
  return dec_cmp_digits(dec_norm(a), dec_norm(b))
end

-- a + b, in 7-digit limbs (each sum stays far below 2^53).
local function dec_add(a, b)
  local out, carry = {}, 0
  local i, j = #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local x = i > 0 and tonumber(a:sub(math.max(1, i - 6), i)) or 0
    local y = j > 0 and tonumber(b:sub(math.max(1, j - 6), j)) or 0
    local s = x + y + carry
    carry = s >= 10000000 and 1 or 0
    table.insert(out, 1, string.format('%07d', s % 10000000))
    i, j = i - 7, j - 7
  end
  return dec_norm(table.concat(out))
end

-- a - b for a >= b.
local function dec_sub(a, b)
  local out, borrow = {}, 0
  local i, j = #a, #b
  while i > 0 do
    local x = tonumber(a:sub(math.max(1, i - 6), i))
    local y = j > 0 and tonumber(b:sub(math.max(1, j - 6), j)) or 0
    local d = x - y - borrow
    borrow = 0
    if d < 0 then
      d = d + 10000000
      borrow = 1
    end
    table.insert(out, 1, string.format('%07d', d))
    i, j = i - 7, j - 7
  end
  return dec_norm(table.concat(out))
end

local U64_MAX = '18446744073709551615'

-- args.rs `unsigned`, as rl reads the integers it stored: 1 to 20 digits
-- (earlier releases wrote leading zeros), at most u64::MAX; the canonical
-- digits, or nil.
local function stored_unsigned(s)
  if s == nil or #s == 0 or #s > 20 or s:find('[^0-9]') then
    return nil
  end
  local digits = dec_norm(s)
  if #digits == 20 and dec_cmp_digits(digits, U64_MAX) > 0 then
    return nil
  end
  return digits
end
