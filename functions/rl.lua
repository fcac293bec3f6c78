#!lua name=rl
-- Generated from functions/src/ by scripts/assemble-functions.sh: edit
-- the files there and run `make functions`, never this file (a test
-- fails when it differs from the assembly).

-- ---- functions/src/prelude/errors.lua
--[[
rl, the function edition: rl's limiters as one server-function library, for
servers that cannot load the module (managed services) but run functions
(Redis 7+, Valkey). Same keys, same stored state, same replies, same errors
as the module's commands, so a key written by one edition is continued by
the other. docs/functions.md says how to load it, what it costs and where
it differs.

A release ships this file as rl-<version>.lua (VERSION below); a checkout
of rl has it as functions/rl.lua, which `make load-functions` loads. On
every primary:

    redis-cli -x FUNCTION LOAD REPLACE < rl-<version>.lua
    FCALL rl_slide 1 user:42 100 60000

Where only EVAL is allowed, the same file without its first line (the
`#!lua name=rl` line EVAL refuses) runs the function its first argument
after the keys names:

    tail -n +2 rl-<version>.lua | redis-cli -X script EVAL script 1 user:42 rl_slide 100 60000

A function per command, named after it (RL.SLIDE: rl_slide). The arguments
after the keys are the command's arguments without its keys:
    FCALL rl_slide 1 key limit window [COST cost]
    FCALL rl_peek 1 key SLIDE limit window        (RL.PEEK SLIDE key ...)
    FCALL rl_all 2 k1 k2 SLIDE 10 1000 FIXED 5 60000
                                                  (RL.ALL 2 k1 k2 SLIDE ...)

Numbers: Lua's are doubles, exact up to 2^53. Every time, limit, count and
window rl accepts is below that, but a few values are not: RL.SLIDE's
members (score_ms * 1,000,000 + n, about 1.8e18), RL.COUNT's counts and
totals (up to 999,999,999,999,999,999), CL.THROTTLE's quantity (up to
2^63 - 1) and GCRA states far ahead of the clock. They are handled as
decimal strings (`dec_*`, or a section's own) or split into exact parts,
never as rounded numbers.

Layout: the source is functions/src/, one file per part, assembled in
the order scripts/assemble-functions.sh lists (`make functions`): the
prelude (prelude/: errors, arguments, decimal strings, the clock, keys),
then one file per limiter, each a table registered in LIMITERS under its
token with the same interface (see `LIMITERS`), then the commands that
dispatch over limiters (all.lua: rl_peek, rl_refund, rl_all), then the
registrations (dispatch.lua).
]]

local VERSION = '1.0.0'

-- ---------------------------------------------------------------- errors

-- An error reply raised from anywhere below; `command` turns it into the
-- reply. Anything else raised (a bug, or an error from redis.call) goes on
-- as the server's own error.
local Fail = {}

local function fail(text)
  error(setmetatable({ text = text }, Fail), 0)
end

-- Raises again what a pcall caught. The server's pcall hands a script the
-- message of an error from redis.call ('OOM command not allowed ...',
-- 'READONLY ...'), not its error table, and a message raised as a string
-- gets 'ERR ' put before it: so a message that starts with an error code
-- is raised as the server's error table again, and keeps its code.
local function reraise(res)
  if type(res) == 'string' and res:find('^%u[%u%d_]* ') then
    error({ err = res }, 0)
  end
  error(res, 0)
end

-- `%d` for every integer in an error or a stored value: tostring() would
-- write 1e+12.
local function int(n)
  return string.format('%d', n)
end
-- (An integer below 2^53 handed to redis.call as a number is written by
-- the server as the same digits ("%.17g"), without a Lua string: the
-- hot paths pass their times and counts so.)

-- The texts of src/core/error.rs, one function per RlError variant used by
-- more than one limiter.
local E = {}

function E.arity(command)
  fail("ERR wrong number of arguments for '" .. command .. "' command")
end

function E.out_of_range(arg, max)
  fail('ERR ' .. arg .. ' must be an integer from 1 to ' .. int(max))
end

function E.not_in_range(arg, min, max)
  fail('ERR ' .. arg .. ' must be an integer from ' .. int(min) .. ' to ' .. int(max))
end

function E.wrong_type()
  fail('WRONGTYPE Operation against a key holding the wrong kind of value')
end

function E.cost_above_limit()
  fail('ERR COST must not exceed limit')
end

function E.unknown_option(token)
  fail("ERR unknown option '" .. E.token_text(token) .. "'")
end

-- RL.PEEK takes OLDEST off its line before the limiter's parser runs:
-- anywhere else it is refused by name (core/error.rs OldestOnlyInPeek).
function E.upto_only(command)
  fail('ERR UPTO is an option of RL.SLIDE, RL.BUCKETS, RL.THROTTLE and RL.FIXED only, not of \''
    .. command .. "'")
end

-- A command that never denies (RL.PEEK, RL.REFUND, RL.CHARGE) refuses
-- BLOCK by name (core/error.rs BlockOnlyInLimiters).
function E.block_only(command)
  fail("ERR BLOCK is an option of the limiters' own commands and their RL.ALL clauses only, not of '"
    .. command .. "'")
end

function E.oldest_only_in_peek(command)
  fail('ERR OLDEST is an option of RL.PEEK SLIDE and RL.PEEK BUCKETS only, not of \'' .. command
    .. "'")
end

function E.missing_value(option)
  fail('ERR ' .. option .. ' needs a value')
end

function E.duplicate_option(option)
  fail('ERR ' .. option .. ' given more than once')
end

function E.foreign_zset()
  fail('ERR key holds a sorted set that rl did not write')
end

function E.foreign_hash()
  fail('ERR key holds a hash that rl did not write')
end

function E.foreign_string(expected)
  fail('ERR key holds a string that is not ' .. expected)
end

-- A user's token as an error may echo it (error.rs `token_text`): at most
-- 32 bytes, control characters as '?', '...' when cut.
function E.token_text(bytes)
  local shown = bytes:sub(1, 32):gsub('[%c]', '?')
  if #bytes > 32 then
    shown = shown .. '...'
  end
  return shown
end

-- The function was called with another number of keys than its command
-- takes (the module's command cannot be called so: its keys are arguments).
local function wrong_keys(name, want)
  fail("ERR wrong number of keys for '" .. name .. "' (numkeys must be " .. want .. ')')
end

-- ---- functions/src/prelude/args.lua
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

-- ---- functions/src/prelude/keys.lua
-- --------------------------------------------------------------- the clock

-- The server's clock, read once per call: ms and µs. The module reads
-- the server's µs clock where it has one for modules (Redis 7.2+, every
-- Valkey) and only ms before (Redis 7.0, 7.1: µs = ms * 1000); so do we,
-- so that both editions store the same values on every server.
-- As two values (ms, µs), for the paths that build no table per call.
-- (`+ 0`, not tonumber(): one string conversion instead of two.)
local function clock()
  local t = redis.call('TIME')
  local s, us = t[1] + 0, t[2] + 0
  local ms = s * 1000 + (us - us % 1000) / 1000
  if redis.REDIS_VERSION_NUM < 0x070200 then
    return ms, ms * 1000
  end
  return ms, s * 1000000 + us
end

local function now()
  local ms, us = clock()
  return { ms = ms, us = us }
end

-- ---------------------------------------------------------------- UPTO

-- core/upto.rs take_upto: the line without its UPTO (anywhere from word
-- `from` on, after the required positional arguments), nil when it has
-- none. UPTO twice is an error.
local function take_upto(line, from)
  local found = 0
  for i = from, #line do
    if line[i]:upper() == 'UPTO' then
      found = found + 1
    end
  end
  if found == 0 then
    return nil
  end
  if found > 1 then
    E.duplicate_option('UPTO')
  end
  local out = {}
  for i = 1, #line do
    if i < from or line[i]:upper() ~= 'UPTO' then
      out[#out + 1] = line[i]
    end
  end
  return out
end

-- core/upto.rs UpTo: the whole cost when it fits; else the limiter's
-- decision for what fits (its denial's remaining, at least 1): an
-- admission of that many, or the denial of one unit. The reply gains the
-- units granted.
local function grant_up_to(lim, key, req)
  local call = { now = now(), shares = { slides = 1, buckets = 1 }, writes = true }
  -- The whole cost asked without BLOCK first (upto.rs without_block): a
  -- breach would hide what fits (its remaining is 0).
  local whole = req
  if req.block ~= nil then
    whole = lim.with_units(req, lim.units(req))
    whole.block = nil
  end
  local d, write = lim.decide(key, whole, call)
  local granted = lim.units(req)
  if d.allowed ~= 1 then
    local fits = math.max(math.min(d.remaining, granted), 1)
    d, write = lim.decide(key, lim.with_units(req, fits), call)
    granted = d.allowed == 1 and fits or 0
  end
  if write ~= nil then
    write()
  end
  return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms, granted }
end

-- ---------------------------------------------------------------- keys

-- The key's absolute expiry in ms; -1 without one, -2 when absent.
local function expire_at(key)
  return redis.call('PEXPIRETIME', key)
end

-- redis.pcall(...) of a read that fails only on another type: its reply,
-- or WRONGTYPE (what TYPE would have told) raised as rl's error. Saves the
-- TYPE round trip before a typed read.
local function typed_read(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err ~= nil then
    if r.err:find('^WRONGTYPE') then
      E.wrong_type()
    end
    error(r, 0)
  end
  return r
end

-- string_key.rs split_blocked: a blocked string state,
-- `<state>e<expiry>b<until>`, as (state bytes, expiry ms, block end ms);
-- nil for any other shape. Both times 1 to 15 digits, an optional '-'.
local function split_blocked(bytes)
  local state, own, untl = bytes:match('^([^e]*)e(%-?%d+)b(%-?%d+)$')
  if state == nil or #own:match('%d+') > 15 or #untl:match('%d+') > 15 then
    return nil
  end
  return state, own + 0, untl + 0
end

-- block.rs holds: the reply fields of a block that holds at now_ms
-- (remaining 0, both waits its time left), or nil.
local function block_left(untl, now_ms)
  if untl ~= nil and untl > now_ms then
    return untl - now_ms
  end
  return nil
end

-- options/block.rs MAX_BLOCK_MS.
local MAX_BLOCK_MS = 1000000000000

-- SET key <count>e<end>b<until> with the later end (string_key.rs
-- StringWrite::blocked_bytes).
local function sf_blocked_set(key, value, own, untl)
  redis.call('SET', key, value .. 'e' .. int(own) .. 'b' .. int(untl), 'PXAT', int(math.max(own, untl)))
end

-- RL.UNBLOCK on a string key (THROTTLE, FIXED: dispatch/block.rs
-- `string::unblock`), its state read as `value`, `own` (its own expiry)
-- and `untl` (nil: no key): the state written back plain, or the key
-- deleted when its own expiry has come; 1 if a block held.
local function string_unblock(key, value, own, untl, t)
  if value == nil or block_left(untl, t.ms) == nil then
    return 0
  end
  if own <= t.ms then
    redis.call('DEL', key)
  else
    redis.call('SET', key, value, 'PXAT', int(own))
  end
  return 1
end

-- ------------------------------------------------------------- limiters
--[[
LIMITERS[TOKEN] is one limiter, as the module's core::limiter::Limiter:

  token   'SLIDE', 'BUCKETS', 'THROTTLE', 'FIXED' or 'ACQUIRE'
  usage   its command's synopsis without 'RL.', e.g.
          'SLIDE key limit window [COST cost]' (error texts restate it)
  parse(line) -> req
          line = { name, key, parameters... } shaped like the limiter's own
          command line (name: its command, 'rl.slide', or the token when
          RL.PEEK / RL.ALL hand it over); raises the command's errors,
          E.arity(...) for a wrong count.
  decide(key, req, call) -> decision, write
          call = { now = now(), shares = { slides = n, slide_cost = c,
                   buckets = n }, writes = bool }: writes false for RL.PEEK
                   (slide_cost: RL.ALL's SLIDE clauses' costs together).
          decision = { allowed (0|1), remaining, retry_after_ms,
                       reset_after_ms, lease = id or nil }
          write = nil, or a function that applies the admission (writes,
          expiry); called only if the whole call admits. Every check that
          can refuse (type, foreign state) runs in decide, before any write.
          A denial's write is the block its BLOCK option sets (decision
          blocked = nil); a denial by a block that holds has decision
          blocked = true and no write.
  units(req) -> n, unit(req) -> req
          (RL.REFUND) the units the request charges, and the same request
          for one unit.
  refund(key, req, call) -> refunded[, decision after]
          gives back up to units(req), writes it, answers how many.
  charge(key, req, call) -> charged[, decision after]
          (RL.CHARGE) records units(req) whether or not they fit.
  oldest_wait(key, req, now_ms) -> ms
          (RL.PEEK ... OLDEST; SLIDE only) the wait until the oldest
          entry still in the window leaves.
  block(key, t, ms) -> until_ms, unblock(key, t) -> 0|1
          (RL.BLOCK, RL.UNBLOCK; SLIDE, BUCKETS, THROTTLE, FIXED) the
          key's block set, or lifted if one holds.
Each limiter's file defines its own; block.lua and all.lua only find the
limiter by its token and call these.
]]
local LIMITERS = {}

-- Single-key commands: name -> function(key, line) -> reply.
local COMMANDS = {}

-- Fast paths of single-key commands: name -> function(key, args) -> reply,
-- or nil when FCALL's arguments are not the common form they read, or the
-- key is anything but the plain case (then COMMANDS[name] reads the line
-- and the key again, errors included). No line is built. A fast path runs
-- outside the pcall that turns rl errors into replies (dispatch.lua
-- `single`), so it never raises one, and it returns nil only before it
-- has written anything.
local PLAIN = {}

-- ---- functions/src/slide/log.lua
-- ================================================================ SLIDE
-- RL.SLIDE key limit window [COST cost] [BLOCK ms]: src/core/slide/.
--
-- A plain sorted set, one entry per admitted unit: score the admission time
-- in ms, member the integer score * 10^6 + n (n numbers the entries of that
-- ms from 0), kept as a decimal string (it passes 2^53). Every call reads
-- and checks, as the module does (slide/decide.rs `read_ends`), the newest
-- entry, the oldest one, and the stale entries it would remove; an entry
-- rl could not have written among them refuses the key.
--
-- A block (slide/block_member.rs) is the member 'rl block' at the block's end T:
-- the newest entry (T > now >= every entry's score while it holds), read
-- with the newest. An ended one counts nothing (the reads below skip it)
-- and goes with the next admission (ZREM).

local Slide = {
  token = 'SLIDE',
  usage = 'SLIDE key limit window [COST cost] [BLOCK ms]',
  syntax = syntax('rl.slide', 3, { 'COST', 'BLOCK' }),
  -- slide/log.rs BLOCK_MEMBER_TEXT.
  BLOCK_MEMBER = 'rl block',
  -- log.rs `Entry::is_block`: the latest block end, MAX_NOW_MS + MAX_BLOCK_MS.
  MAX_BLOCK_END = 9223372036853 + 1000000000000,
  MAX_LIMIT = 1000000,
  MAX_COST = 100,
  MAX_WINDOW_MS = 1000000000000,
  -- slide/log.rs MAX_NOW_MS: i64::MAX / 10^6 - 1, the latest score rl
  -- writes (members must fit in an i64).
  MAX_NOW_MS = 9223372036853,
  MEMBERS_PER_MS = 1000000,
  -- slide/decide.rs EVICT_PER_CALL: all of a call's logs together.
  EVICT_PER_CALL = 128,
  ONE = { slides = 1, slide_cost = 0, buckets = 1 },
  -- Six-digit member numbers as strings, kept for the first 1,000.
  SUFFIXES = {},
  SUFFIXES_KEPT = 1000,
}

-- `up_to` (RL.SLIDE ... UPTO, the flag taken off): the cost may pass the
-- limit.
function Slide.parse(line, up_to)
  check_count(Slide.syntax, line)
  local limit = positive(line[3], 'limit', Slide.MAX_LIMIT)
  local window = positive(line[4], 'window', Slide.MAX_WINDOW_MS)
  local cost, block = 1, nil
  if #line > 4 then
    local set = {}
    options(Slide.syntax, line, function(token, value)
      -- The value is checked before a repeat is (args.rs
      -- `cost_block_options`).
      set_once(set, token, positive(value, token, token == 'BLOCK' and MAX_BLOCK_MS or Slide.MAX_COST))
    end)
    cost, block = set.COST or 1, set.BLOCK
  end
  if cost > limit and not up_to then
    E.cost_above_limit()
  end
  return { limit = limit, window = window, cost = cost, block = block }
end

function Slide.units(req)
  return req.cost
end

function Slide.with_units(req, n)
  return { limit = req.limit, window = req.window, cost = n, block = req.block }
end

-- refund.rs unit: one unit, without BLOCK (a report never breaches).
function Slide.unit(req)
  return { limit = req.limit, window = req.window, cost = 1 }
end

-- A stored score as whole ms; nil for one that is not a whole finite
-- number (zset_log.rs `score_ms` reads those as i64::MIN).
function Slide.score(s)
  local v = tonumber(s)
  if v == nil or v ~= v or v == math.huge or v == -math.huge or v % 1 ~= 0 then
    return nil
  end
  return v
end

-- log.rs `Entry::is_rl`: a score rl accepts (0..MAX_NOW_MS, whole) and a
-- member that is an integer (as the server's string2ll reads one) numbered
-- from that score: its digits but the last 6 are the score.
function Slide.is_rl(score, m)
  if score == nil or score < 0 or score > Slide.MAX_NOW_MS then
    return false
  end
  if m ~= '0' and not m:find('^[1-9]%d*$') then
    return false
  end
  if #m <= 6 then
    return score == 0
  end
  -- The digits but the last 6 (no leading zero) spell the score: at most
  -- 13 of them for a score in range, compared as an exact number.
  local q = m:sub(1, #m - 6)
  return #q <= 15 and tonumber(q) == score
end

-- An entry as the server replies it (member m, score text s): its score
-- in whole ms when Slide.is_rl accepts it, else nil. What rl writes in
-- this era, a score's digits then 6 more, is told by one pattern and one
-- comparison (the server writes a whole score as its digits); anything
-- else goes through the full test.
function Slide.entry(m, s)
  local n = #s
  if #m == n + 6 and n <= 13 and m:find(s, 1, true) == 1 and m:find('^[1-9]%d*$') then
    -- Digits without a leading zero: s is the whole number they spell.
    local v = s + 0
    if v <= Slide.MAX_NOW_MS then
      return v
    end
    return nil
  end
  local score = Slide.score(s)
  if Slide.is_rl(score, m) then
    return score
  end
  return nil
end

-- Slide.entry's test without the score's value, for the entries a call
-- only checks (the stale ones it walks): a 13-digit score below 9 * 10^12
-- is in range without converting it.
function Slide.is_entry(m, s)
  if #s == 13 and #m == 19 and s:byte(1) < 57 and m:find(s, 1, true) == 1
    and m:find('^[1-9]%d*$') then
    return true
  end
  return Slide.entry(m, s) ~= nil
end

-- The n (0..999999) of an rl member: its last 6 digits.
function Slide.number(m)
  return tonumber(m:sub(-6))
end

-- The member for the n-th entry at `score`, as a decimal string.
function Slide.member(score, n)
  if score == 0 then
    return int(n)
  end
  return string.format('%d%06d', score, n)
end

-- The key as the module opens it (host/key.rs): nil when missing; another
-- type is WRONGTYPE, a sorted set without a TTL is not rl's. Answers the
-- key's absolute expiry.
-- Also answers the newest entry as ZRANGE key -1 -1 WITHSCORES replies it
-- (`Slide.ends` reads it from there): that read tells WRONGTYPE as TYPE
-- would, so TYPE is not sent.
-- A block's member at the newest rank (block.rs `SkipBlock`): `last` is
-- then the newest entry under it, and the third answer the block's end
-- (nil: none); `trim` counts entries under the block.
function Slide.open(key, trim)
  local at = expire_at(key)
  if at == -2 then
    return nil
  end
  -- Constants as strings: a number argument costs the server a
  -- conversion (Redis 7.0 formats it with snprintf).
  local last = typed_read('ZRANGE', key, '-1', '-1', 'WITHSCORES')
  if at == -1 then
    E.foreign_zset()
  end
  local block
  if last[1] == Slide.BLOCK_MEMBER then
    block = Slide.score(last[2])
    if block == nil or block < 0 or block > Slide.MAX_BLOCK_END then
      E.foreign_zset()
    end
    local r = int(-2 - trim)
    last = redis.call('ZRANGE', key, r, r, 'WITHSCORES')
  elseif trim > 0 then
    local r = int(-1 - trim)
    last = redis.call('ZRANGE', key, r, r, 'WITHSCORES')
  end
  return at, last, block
end

-- The reply fields of a block that holds at `now` (block.rs `holds`), or nil.
function Slide.held(block, now)
  return block_left(block, now)
end

-- block.rs `block_write`: the block's member at now + ms, and past the
-- newest entry (a clock that stepped back); the key kept until then.
-- Answers the block's end.
function Slide.block_set(key, newest, expiry, now, ms)
  local untl = now + ms
  if newest ~= nil and newest + 1 > untl then
    untl = newest + 1
  end
  redis.call('ZADD', key, int(untl), Slide.BLOCK_MEMBER)
  if expiry == nil or expiry < untl then
    redis.call('PEXPIREAT', key, int(untl))
  end
  return untl
end

-- decide.rs `read_ends` at `now`: the newest entry's score and member, how
-- many entries have left the window (score <= cutoff) and how many still
-- count, the oldest entries read (a WITHSCORES reply from rank 0, or nil)
-- and the oldest one's score when read, which a denial's wait may reuse. Checks the clock, the newest
-- entry, the oldest, and the first min(stale, max_read) stale ones (those
-- an admission would remove); the module walks them and counts a longer
-- backlog with ZCOUNT, so the counts are the server's. Multiple values,
-- not a table: this runs on every call.
function Slide.ends(key, last, now, cutoff, max_read, trim, block)
  if now < 0 or now > Slide.MAX_NOW_MS then
    fail('ERR rl internal error: server clock out of range')
  end
  if last == nil or #last == 0 then
    return nil, nil, 0, 0, nil, nil
  end
  local member = last[1]
  local score = Slide.entry(member, last[2])
  if score == nil then
    E.foreign_zset()
  end
  -- The block's member (the newest rank) is no entry.
  local total = redis.call('ZCARD', key) - trim - (block and 1 or 0)
  if total == 1 then
    -- The newest is the oldest, already checked.
    local stale = score <= cutoff and 1 or 0
    return score, member, stale, 1 - stale, last, score
  end
  local read = math.max(max_read, 1)
  if score <= cutoff then
    -- Every entry has left: the oldest `read` by rank are the stale ones
    -- the module walks, and the count is the log's.
    local old = redis.call('ZRANGE', key, '0', int(math.min(read, total) - 1), 'WITHSCORES')
    for i = 1, #old, 2 do
      if not Slide.is_entry(old[i], old[i + 1]) then
        E.foreign_zset()
      end
    end
    return score, member, total, 0, old
  end
  -- The oldest tells whether any entry has left (none: a key at its limit,
  -- or called less often than its window); only then are the stale ones
  -- walked. (Each entry a read returns costs the server a score to
  -- format: the walk reads no more than it must.)
  local low = redis.call('ZRANGE', key, '0', '0', 'WITHSCORES')
  local first = Slide.entry(low[1], low[2])
  if first == nil then
    E.foreign_zset()
  end
  if first > cutoff then
    return score, member, 0, total, low, first
  end
  local old = redis.call('ZRANGE', key, '-inf', int(cutoff), 'BYSCORE', 'LIMIT', '0', int(read),
    'WITHSCORES')
  for i = 1, #old, 2 do
    if not Slide.is_entry(old[i], old[i + 1]) then
      E.foreign_zset()
    end
  end
  local stale = #old / 2
  if stale == read then
    -- A backlog longer than the walk: the server's rank lookup counts it.
    stale = redis.call('ZCOUNT', key, '-inf', int(cutoff))
  end
  return score, member, stale, total - stale, old, nil
end

-- decide.rs `evict_budget`: the stale entries one admission may remove,
-- when the call decides `shares.slides` sliding logs costing
-- `shares.slide_cost` together (RL.ALL): cost + 1, so removal outpaces
-- insertion, and an equal part of what EVICT_PER_CALL leaves beyond the
-- clauses' cost + 1 each. One log alone (`shares` nil): EVICT_PER_CALL,
-- and never less than cost + 1 (the same formula as the module's, for any
-- EVICT_PER_CALL a measurement builds with).
function Slide.budget(cost, shares)
  local slides = shares and math.max(shares.slides, 1) or 1
  local owed = math.max(shares and shares.slide_cost or 0, cost) + slides
  return cost + 1 + math.floor(math.max(Slide.EVICT_PER_CALL - owed, 0) / slides)
end

-- The wait until an entry at score `s` leaves (decide.rs): at least 1 ms.
-- The entry is read like every other, so a score rl could not have written
-- (a fraction, +inf, out of range) is refused.
function Slide.wait_after(s, window, now)
  if s == nil or s < 0 or s > Slide.MAX_NOW_MS then
    E.foreign_zset()
  end
  return math.max(s + window - now, 1)
end

-- The members an admission of `cost` at `at` adds: the next free numbers
-- of `at` from `taken` (zset_log.rs `apply` skips members that exist, at
-- any score, and refuses the key when they run past the ms). Checked here,
-- before anything is written; a new key (no expiry) holds none. One
-- member's string, or a list for a cost above 1.
function Slide.members(key, expiry, at, taken, cost)
  if cost == 1 and taken < Slide.MEMBERS_PER_MS
    and (expiry == nil or not redis.call('ZSCORE', key, Slide.member(at, taken))) then
    return Slide.member(at, taken)
  end
  local members, n = {}, taken
  -- The score's digits once, then each number's six (Slide.member's
  -- string, without a format per member).
  local prefix = at > 0 and int(at)
  local suffixes = Slide.SUFFIXES
  while #members < cost do
    local batch = {}
    for i = n, math.min(n + cost - #members, Slide.MEMBERS_PER_MS) - 1 do
      if prefix then
        local suffix = suffixes[i]
        if suffix == nil then
          suffix = string.format('%06d', i)
          if i < Slide.SUFFIXES_KEPT then
            suffixes[i] = suffix
          end
        end
        batch[#batch + 1] = prefix .. suffix
      else
        batch[#batch + 1] = Slide.member(at, i)
      end
    end
    if #batch == 0 then
      E.foreign_zset()
    end
    local found = expiry and redis.call('ZMSCORE', key, unpack(batch)) or {}
    for i = 1, #batch do local m = batch[i]
      if not found[i] then
        members[#members + 1] = m
      end
    end
    n = n + #batch
  end
  if cost == 1 then
    return members[1]
  end
  return members
end

-- Applies an admission: the members at `at`, the `evict` oldest removed,
-- the expiry moved where core/expiry.rs moves it (only when it falls short
-- of `at + window`, then a quarter window past it).
-- `taken`: one member not yet checked (RL.SLIDE alone, where nothing is
-- written between the decision and here): ZADD NX is the check, and a
-- member that exists (only ever another writer's) sends the search on from
-- the next number; a search that runs past the ms refuses the key with
-- nothing written (a ZADD NX that adds nothing is no write: not
-- replicated, no event).
function Slide.write(key, members, at, evict, expiry, window, taken, unblock)
  -- The score as the member's leading digits: a number argument costs the
  -- server a conversion (snprintf on Redis 7.0); the same value.
  local score = at
  if at > 0 then
    score = (type(members) == 'string' and members or members[1]):sub(1, -7)
  end
  if type(members) == 'string' then
    if taken ~= nil and redis.call('ZADD', key, 'NX', score, members) == 0 then
      members = Slide.members(key, expiry, at, taken + 1, 1)
      taken = nil
    end
    if taken == nil then
      redis.call('ZADD', key, score, members)
    end
  else
    local args = {}
    for i = 1, #members do
      args[2 * i - 1] = score
      args[2 * i] = members[i]
    end
    redis.call('ZADD', key, unpack(args))
  end
  if evict > 0 then
    redis.call('ZREMRANGEBYRANK', key, '0', int(evict - 1))
  end
  if unblock then
    -- An ended block goes with the admission (zset_log.rs `admit`).
    redis.call('ZREM', key, Slide.BLOCK_MEMBER)
  end
  local needed = at + window
  if expiry == nil or expiry < needed then
    redis.call('PEXPIREAT', key, int(needed + math.max(math.floor(window / 4), 1)))
  end
end

-- decide.rs `admission`: where `cost` new entries go, at `now` or at the
-- newest entry's time if the clock stepped back, and the first number
-- they may take there.
function Slide.place(newest, newest_member, now, cost)
  local at = newest and math.max(newest, now) or now
  local taken = 0
  if newest == at then
    taken = Slide.number(newest_member) + 1
  end
  if taken + cost > Slide.MEMBERS_PER_MS then
    -- error.rs MillisecondFull: rl's own writes reach it (charges, a
    -- clock stepped back); the next millisecond numbers from 0 again.
    fail("ERR the key's millisecond " .. int(at) .. ' has ' .. int(Slide.MEMBERS_PER_MS - taken)
      .. ' of its 1000000 entries left, fewer than COST ' .. int(cost)
      .. ': nothing written, retry in ' .. int(at + 1 - now) .. ' ms')
  end
  return at, taken
end

-- decide.rs `nth_leaves`: the wait until the entry at `rank` leaves the
-- window (often among the oldest already read: `oldest`, `low`); `default`
-- when the rank holds none.
function Slide.wait_at_rank(key, low, oldest, rank, window, now, default)
  if rank == 0 and oldest ~= nil then
    return Slide.wait_after(oldest, window, now)
  end
  local s = low and low[2 * rank + 2]
  if s == nil then
    local r = int(rank)
    local at_rank = redis.call('ZRANGE', key, r, r, 'WITHSCORES')
    s = at_rank[2]
  end
  if s ~= nil then
    return Slide.wait_after(Slide.score(s), window, now)
  end
  return default
end

-- slide/mod.rs + decide.rs `decide_within`, as multiple values: allowed,
-- remaining, retry_after_ms, reset_after_ms, then for an admission that
-- writes the members to add, their score, the stale entries to remove and
-- the key's expiry (and, when `writes` is 'unchecked', the number of a
-- member left for the write to check). `trim` (a read only, RL.REFUND): decided over the log
-- without its `trim` newest entries (refund.rs `Trimmed`), all of which
-- still count; the ranks below them are the same.
-- A denial answers, after the four reply fields, nil, the newest entry's
-- score (where a block it sets must end past), true for a denial by a
-- block that holds, and the key's expiry (in the places of an admission's
-- score, removals and expiry). An admission's last answer
-- is true when an ended block's member goes with it.
function Slide.decide_at(key, limit, window, cost, now, max_evict, writes, trim)
  local cutoff = now - window
  local expiry, last, block = Slide.open(key, trim)
  local newest, newest_member, stale, held, low, oldest =
    Slide.ends(key, last, now, cutoff, max_evict, trim, block)
  local left = Slide.held(block, now)
  if left ~= nil then
    return 0, 0, left, left, nil, newest, true, expiry
  end
  local unblock = block ~= nil

  if held + cost <= limit then
    local at, taken = Slide.place(newest, newest_member, now, cost)
    local reset = at + window - now
    if not writes then
      return 1, limit - held - cost, 0, reset
    end
    if writes == 'unchecked' and cost == 1 and expiry ~= nil then
      -- Checked by the write (Slide.write's `taken`).
      return 1, limit - held - cost, 0, reset, Slide.member(at, taken), at,
        math.min(stale, max_evict), expiry, taken, unblock
    end
    return 1, limit - held - cost, 0, reset, Slide.members(key, expiry, at, taken, cost), at,
      math.min(stale, max_evict), expiry, nil, unblock
  end

  -- Denied: the request fits once the `need` oldest entries still in the
  -- window have left; the need-th of them is at rank stale + need - 1
  -- (often among the oldest already read).
  local need = held + cost - limit
  local reset = newest and math.max(newest + window - now, 0) or 0
  local retry = Slide.wait_at_rank(key, low, oldest, stale + need - 1, window, now, reset)
  return 0, math.max(limit - held, 0), math.max(retry, 1), reset, nil, newest, false, expiry
end

-- ---- functions/src/slide/slide.lua
-- ------------------------------------------------------ SLIDE: the verbs
-- The limiter interface over the log (slide/log.lua): decide, refund,
-- charge, oldest, block and unblock, each as src/core/slide/ has it; then
-- RL.SLIDE itself and its fast path.

-- The limiter interface's decide (RL.PEEK, RL.ALL, RL.REFUND's peek).
function Slide.decide(key, req, call, trim)
  local window = req.window
  local max_evict = call.writes and Slide.budget(req.cost, call.shares) or 0
  local now = call.now.ms
  local allowed, remaining, retry, reset, members, at, evict, expiry, _, unblock =
    Slide.decide_at(key, req.limit, window, req.cost, now, max_evict, call.writes, trim or 0)
  local decision = {
    allowed = allowed,
    remaining = remaining,
    retry_after_ms = retry,
    reset_after_ms = reset,
  }
  if allowed == 0 then
    -- A denial answers the newest entry's score, whether a block holds
    -- and the expiry in the admission's places (Slide.decide_at).
    if evict then
      decision.blocked = true
      return decision, nil
    end
    if req.block == nil then
      return decision, nil
    end
    -- block.rs breached: the breach answers as the block it sets, which
    -- ends past the newest entry.
    local untl = math.max(now + req.block, at and at + 1 or 0)
    decision = { allowed = 0, remaining = 0, retry_after_ms = untl - now, reset_after_ms = untl - now }
    return decision, function()
      Slide.block_set(key, at, expiry, now, req.block)
    end
  end
  if members == nil then
    return decision, nil
  end
  return decision, function()
    Slide.write(key, members, at, evict, expiry, window, nil, unblock)
  end
end

-- refund.rs: the `cost` newest entries that still count (never one that
-- left the window) are removed, each checked to be rl's. The expiry
-- stays. The reply's peek is decided over the log without them, before
-- they are removed.
function Slide.refund(key, req, call)
  local now = call.now.ms
  local cutoff = now - req.window
  local _, last, block = Slide.open(key, 0)
  -- What RL.PEEK SLIDE reads and checks.
  local _, _, _, held = Slide.ends(key, last, now, cutoff, 0, 0, block)
  local n = math.min(req.cost, held)
  if n == 0 then
    return 0
  end
  -- A block's member is the newest (and > cutoff: an entry is): read past
  -- it, then dropped. A block that holds stays: a refund moves units.
  local skip = block and 1 or 0
  local newest = redis.call('ZRANGE', key, '+inf', '(' .. int(cutoff), 'BYSCORE', 'REV',
    'LIMIT', int(skip), int(n + 1), 'WITHSCORES')
  for i = 1, #newest, 2 do
    if Slide.entry(newest[i], newest[i + 1]) == nil then
      E.foreign_zset()
    end
  end
  local members = {}
  for i = 1, math.min(n, #newest / 2) do
    members[i] = newest[2 * i - 1]
  end
  local after = Slide.decide(key, Slide.unit(req), { now = call.now, shares = Slide.ONE,
    writes = false }, #members)
  redis.call('ZREM', key, unpack(members))
  return #members, after
end

-- charge.rs: `cost` entries at now whether or not they fit, with the
-- removals an admission of that cost makes. The reply's peek from what
-- the charge reads, before the write: the new entries are the newest, so
-- its wait is an entry in the window now or the new ones' leaving.
function Slide.charge(key, req, call)
  local now, window, limit, cost = call.now.ms, req.window, req.limit, req.cost
  local cutoff = now - window
  local max_evict = Slide.budget(cost, call.shares)
  local expiry, last, block = Slide.open(key, 0)
  local newest, newest_member, stale, held, low, oldest =
    Slide.ends(key, last, now, cutoff, max_evict, 0, block)
  local at, taken = Slide.place(newest, newest_member, now, cost)
  -- A block that holds stays (a charge grants no access) and answers the
  -- peek after; an ended one goes as with an admission.
  local left = Slide.held(block, now)
  local members = Slide.members(key, expiry, at, taken, cost)
  local counted = held + cost
  local reset = at + window - now
  local after
  if counted < limit then
    after = { allowed = 1, remaining = limit - counted - 1, retry_after_ms = 0, reset_after_ms = reset }
  else
    local need = counted + 1 - limit
    local retry = reset
    if need <= held then
      retry = Slide.wait_at_rank(key, low, oldest, stale + need - 1, window, now, reset)
    end
    after = { allowed = 0, remaining = 0, retry_after_ms = math.max(retry, 1), reset_after_ms = reset }
  end
  if left ~= nil then
    after = { allowed = 0, remaining = 0, retry_after_ms = left, reset_after_ms = left, blocked = true }
  end
  Slide.write(key, members, at, math.min(stale, max_evict), expiry, window, nil, block ~= nil and left == nil)
  return cost, after
end

-- oldest.rs `oldest_wait`: the wait until the oldest entry still in the
-- window leaves (RL.PEEK SLIDE ... OLDEST), 0 when it counts nothing.
function Slide.oldest_wait(key, req, now)
  local window = req.window
  local cutoff = now - window
  local _, last, block = Slide.open(key, 0)
  local _, _, stale, held, _, first = Slide.ends(key, last, now, cutoff, 0, 0, block)
  if held == 0 then
    return 0
  end
  if first == nil then
    local r = int(stale)
    first = Slide.score(redis.call('ZRANGE', key, r, r, 'WITHSCORES')[2])
  end
  return Slide.wait_after(first, window, now)
end

-- slide/block.rs `block` (RL.BLOCK SLIDE): the log read and checked as
-- RL.PEEK SLIDE reads it, the block's member past its newest entry; the
-- block's end.
function Slide.block(key, t, ms)
  local expiry, last, block = Slide.open(key, 0)
  local newest = Slide.ends(key, last, t.ms, t.ms, 0, 0, block)
  return Slide.block_set(key, newest, expiry, t.ms, ms)
end

-- slide/block.rs `unblock` (RL.UNBLOCK SLIDE): the block's member removed
-- if it holds (an ended one goes with the next admission); 1 if removed.
function Slide.unblock(key, t)
  local _, last, block = Slide.open(key, 0)
  Slide.ends(key, last, t.ms, t.ms, 0, 0, block)
  if Slide.held(block, t.ms) == nil then
    return 0
  end
  redis.call('ZREM', key, Slide.BLOCK_MEMBER)
  return 1
end

LIMITERS.SLIDE = Slide

-- RL.SLIDE at limit, window and cost: the decision, and the admission
-- written.
-- `block`: BLOCK ms, the block a denial sets (none for one by a block
-- that holds).
function Slide.admit(key, limit, window, cost, block)
  local now = clock()
  local allowed, remaining, retry, reset, members, at, evict, expiry, taken, unblock =
    Slide.decide_at(key, limit, window, cost, now, Slide.budget(cost), 'unchecked', 0)
  -- A denial by the limit, not by a block (PLAIN's hint for Slide.full).
  Slide.denied_full = allowed == 0 and not evict
  if members ~= nil then
    Slide.write(key, members, at, evict, expiry, window, taken, unblock)
  elseif allowed == 0 and block ~= nil and not evict then
    -- block.rs breached: the breach answers as the block it sets.
    local left = Slide.block_set(key, at, expiry, now, block) - now
    return { 0, 0, left, left }
  end
  return { allowed, remaining, retry, reset }
end

COMMANDS['rl.slide'] = function(key, line)
  local up = take_upto(line, 5)
  if up ~= nil then
    return grant_up_to(Slide, key, Slide.parse(up, true))
  end
  local req = Slide.parse(line)
  return Slide.admit(key, req.limit, req.window, req.cost, req.block)
end

-- The plain `key limit window` line with both in range, without the line
-- and the option parser. An rl error gives nil: every one is raised
-- before anything is written, and the full path then raises it again
-- (its reads are the same). A server error goes on as it is.
-- Keys whose last plain call was denied (a key at its limit is called
-- again and again): their next call tries Slide.full first. Only a choice
-- of reads, never a decision; bounded as ARGUMENTS is.
Slide.FULL, Slide.FULL_N, Slide.FULL_KEPT = {}, 0, 512

-- The plain call's denial on a key holding exactly `limit` entries, none
-- left the window and no block: the reply, else nil (the full path then
-- reads and decides; nothing is written here). It reads what
-- Slide.decide_at reads for it, but ZCARD and the oldest in one range:
-- ranks -(limit + 1) to -limit hold one entry exactly when the log holds
-- `limit`, and that entry is the oldest, the one whose leaving ends the
-- wait. The same checks: the expiry, the newest entry, the oldest.
function Slide.full(key, limit, window)
  local time = redis.call('TIME')
  local now = time[1] * 1000 + (time[2] - time[2] % 1000) / 1000
  if now > Slide.MAX_NOW_MS or redis.call('PEXPIRETIME', key) < 0 then
    return nil
  end
  local last = redis.pcall('ZRANGE', key, '-1', '-1', 'WITHSCORES')
  if last[1] == nil or last[1] == Slide.BLOCK_MEMBER then
    return nil
  end
  local newest = Slide.entry(last[1], last[2])
  local r = redis.call('ZRANGE', key, int(-1 - limit), int(-limit), 'WITHSCORES')
  if newest == nil or #r ~= 2 then
    return nil
  end
  local first = Slide.entry(r[1], r[2])
  if first == nil or first <= now - window then
    return nil
  end
  return { 0, 0, math.max(first + window - now, 1), math.max(newest + window - now, 0) }
end

PLAIN['rl.slide'] = function(key, args)
  if #args ~= 2 then
    return nil
  end
  local limit, window = argument(args[1]), argument(args[2])
  if limit == nil or limit < 1 or limit > Slide.MAX_LIMIT or window == nil or window < 1
    or window > Slide.MAX_WINDOW_MS then
    return nil
  end
  if Slide.FULL[key] then
    local reply = Slide.full(key, limit, window)
    if reply ~= nil then
      return reply
    end
    Slide.FULL[key] = nil
  end
  local ok, reply = pcall(Slide.admit, key, limit, window, 1)
  if ok then
    if Slide.denied_full and not Slide.FULL[key] then
      if Slide.FULL_N >= Slide.FULL_KEPT then
        Slide.FULL, Slide.FULL_N = {}, 0
      end
      Slide.FULL[key], Slide.FULL_N = true, Slide.FULL_N + 1
    end
    return reply
  end
  if getmetatable(reply) == Fail then
    return nil
  end
  reraise(reply)
end

-- ============================================================ end SLIDE

-- ---- functions/src/buckets/state.lua
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

-- ---- functions/src/buckets/read.lua
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

-- ---- functions/src/buckets/buckets.lua
-- ---- RL.BUCKETS (src/core/buckets/): the limiter over the hash layout of
-- buckets/state.lua.

local BUCKETS = {
  token = 'BUCKETS',
  usage = 'BUCKETS key limit window [PRECISION ms] [COST cost] [BLOCK ms]',
}

-- `up_to` (RL.BUCKETS ... UPTO, the flag taken off): the cost may pass
-- the limit.
function BUCKETS.parse(line, up_to)
  check_count(BK.BUCKETS_SYNTAX, line)
  local limit = positive(line[3], 'limit', BK.MAX_LIMIT)
  local window = positive(line[4], 'window', BK.MAX_WINDOW)
  local set = {}
  if #line > 4 then
    options(BK.BUCKETS_SYNTAX, line, function(token, value)
      if token == 'COST' then
        set_once(set, token, positive(value, token, BK.MAX_LIMIT))
      elseif token == 'BLOCK' then
        set_once(set, token, positive(value, token, MAX_BLOCK_MS))
      else
        bk.precision_option(value, window, set)
      end
    end)
  end
  local cost = set.COST or 1
  if cost > limit and not up_to then
    E.cost_above_limit()
  end
  return { limit = limit, window = window, precision = set.PRECISION, cost = cost, block = set.BLOCK }
end

function BUCKETS.with_units(req, n)
  return { limit = req.limit, window = req.window, precision = req.precision, cost = n, block = req.block }
end

function BUCKETS.units(req)
  return req.cost
end

-- refund.rs unit: one unit, without BLOCK (a report never breaches).
function BUCKETS.unit(req)
  return { limit = req.limit, window = req.window, precision = req.precision, cost = 1 }
end

-- decide.rs `block_write`: HSET the header as stored (the kind alone for
-- a missing key) with the block's item replaced, the key kept at least
-- until the block's end.
function bk.block_set(key, h, at, untl)
  local base = h and (h:match('^(.*),b[^,]*$') or h) or 'b'
  redis.call('HSET', key, 'h', base .. ',b' .. int(untl))
  if at == nil or at < untl then
    redis.call('PEXPIREAT', key, int(untl))
  end
end

-- decide.rs `keep_block`: the write `w` keeping a block that holds at
-- now_ms (a charge or a refund moves units, it grants no access).
function bk.keep_block(w, untl, now_ms)
  if block_left(untl, now_ms) then
    w.header = w.header .. ',b' .. int(untl)
    w.needed = math.max(w.needed, untl)
  end
end

-- decide.rs `decide_within`, with RL.ALL's shared bound. A block that
-- holds denies before any bucket is read (but for RL.CHARGE, `counting`:
-- decide_state, the block left aside); a denial with BLOCK writes the
-- block. Returns the decision, the write's function, and for RL.CHARGE
-- the write as data, the key's expiry and the block's end.
function BUCKETS.decide(key, req, call, counting)
  local exists, at, h = bk.open(key)
  local state, untl = bk.load(key, exists, 'b', h)
  local left = block_left(untl, call.now.ms)
  if left ~= nil and not counting then
    return { allowed = 0, remaining = 0, retry_after_ms = left, reset_after_ms = left, blocked = true }, nil
  end
  local precision = bk.resolve_precision(req.window, req.precision, state)
  local shares = math.max(call.shares.buckets or 1, 1)
  local max_buckets = math.floor(BK.MAX_BUCKETS / shares)
  if max_buckets < BK.MAX_BUCKETS and bk.ceil_div(req.window, precision) > max_buckets then
    fail('ERR PRECISION too small: the window would need more than ' .. int(max_buckets)
      .. " buckets (RL.ALL's BUCKETS clauses share " .. BK.MAX_BUCKETS .. ')')
  end
  local now = call.now.ms
  local win = bk.slide(key, state, req.window, precision, now)
  local held = win.totals[1] or '0'
  local cost = int(req.cost)
  local limit = int(req.limit)
  if dec_cmp_digits(bk.sat_add(held, cost), limit) <= 0 then
    local bucket = bk.target_counts(win, 1)
    bucket[1] = bk.sat_add(bucket[1], cost)
    local w = bk.write(win, 'b', bucket, { bk.add(held, cost) }, nil)
    local d = {
      allowed = 1,
      remaining = req.limit - tonumber(held) - req.cost,
      retry_after_ms = 0,
      reset_after_ms = math.max(w.needed - now, 0),
    }
    -- The write as data too, for RL.CHARGE.
    return d, function()
      bk.record(key, w, at)
    end, w, at, untl
  end
  -- Denied: the oldest counted buckets first, until enough leaves.
  local newest = win.newest or win.target
  local need = bk.sat_sub(bk.sat_add(held, cost), limit)
  local freed = '0'
  local retry_at = nil
  local order = {}
  for j = #win.held, 1, -1 do
    order[#order + 1] = newest - 1 - win.held[j]
  end
  -- Summed as numbers while exact (need below 10^16, counts of 15 digits).
  local short = #need <= 15
  local need_n, freed_n = short and need + 0, 0
  local walked = false
  if short and type(key) ~= 'table' and #order > 0 then
    -- Every count read as a number first (bk.fetch_digits); anything
    -- else is walked below from the start, as before.
    local got = bk.fetch_digits(key, order, 1, win.ring)
    local last = win.newest_counts[1] or '0'
    if got ~= nil and #last <= 15 then
      got[#got + 1] = last
      walked = true
      for k_ = 1, #got do
        local n = #got[k_]
        if n == 0 or n > 15 then
          walked, retry_at, freed_n = false, nil, 0
          break
        end
        freed_n = freed_n + got[k_]
        if freed_n >= need_n then
          retry_at = bk.leaves_at(win, k_ < #got and order[k_] or newest)
          break
        end
      end
    end
  else
    bk.fetch(key, order, win.ring)
  end
  order[#order + 1] = newest
  for k_ = 1, walked and 0 or #order do local b = order[k_]
    local c = bk.read_bucket(key, win, b, 1)[1]
    local enough
    if short and #c <= 15 then
      freed_n = freed_n + c
      enough = freed_n >= need_n
    else
      if short then
        freed, short = int(freed_n), false
      end
      freed = bk.sat_add(freed, c)
      enough = dec_cmp_digits(freed, need) >= 0
    end
    if enough then
      retry_at = bk.leaves_at(win, b)
      break
    end
  end
  local reset_at = bk.leaves_at(win, newest)
  retry_at = retry_at or reset_at
  local d = {
    allowed = 0,
    remaining = tonumber(bk.sat_sub(limit, held)),
    retry_after_ms = math.max(retry_at - now, 1),
    reset_after_ms = math.max(reset_at - now, 0),
  }
  if req.block == nil then
    return d, nil, nil, at, untl
  end
  -- block.rs breached: the breach answers as the block it sets.
  d = { allowed = 0, remaining = 0, retry_after_ms = req.block, reset_after_ms = req.block }
  if type(key) == 'table' then
    return d, nil, nil, at, untl
  end
  return d, function()
    bk.block_set(key, h, at, now + req.block)
  end, nil, at, untl
end

-- refund.rs: cost back from the buckets that count under the window the
-- refund names, the newest first. Nothing is evicted: a bucket that left
-- this window may count for the key's own (not stored), so only what is
-- reported leaves the hash. The reply's peek is decided over the hash as
-- the write leaves it, before the write.
function BUCKETS.refund(key, req, call)
  local exists, at, h = bk.open(key)
  local state, untl = bk.load(key, exists, 'b', h)
  local precision = bk.resolve_precision(req.window, req.precision, state)
  local win = bk.slide(key, state, req.window, precision, call.now.ms)
  local held = win.totals[1] or '0'
  local n = bk.min(int(req.cost), held)
  if n == '0' or win.newest == nil then
    return 0
  end
  local newest = win.newest
  local left = n
  local current = win.newest_counts[1] or '0'
  local taken = bk.min(left, current)
  current = bk.sat_sub(current, taken)
  left = bk.sat_sub(left, taken)
  local fields = {}
  local delete = {}
  local removed = {}
  local bs = {}
  for k_ = 1, #win.held do
    bs[k_] = newest - 1 - win.held[k_]
  end
  bk.fetch(key, bs, win.ring)
  for k_ = 1, #win.held do local i = win.held[k_]
    if left == '0' then
      break
    end
    local b = newest - 1 - i
    local count = bk.field_counts(key, b, 1, win.ring)[1]
    taken = bk.min(left, count)
    left = bk.sat_sub(left, taken)
    if count == taken then
      delete[#delete + 1] = bk.field_name(b, win.ring)
      removed[i] = true
    else
      fields[#fields + 1] = { bk.field_name(b, win.ring), bk.sat_sub(count, taken) }
    end
  end
  -- The stored set and totals: buckets outside this window keep theirs.
  local kept = {}
  for k_ = 1, #state.held do local i = state.held[k_]
    if not removed[i] then
      kept[#kept + 1] = i
    end
  end
  local refunded = bk.sat_sub(n, left)
  local totals = { bk.sat_sub(state.totals[1], refunded) }
  local w = {
    header = bk.header('b', win.precision, newest, kept, totals, { current }, win.ring),
    fields = fields,
    delete = delete,
    needed = bk.leaves_at(win, newest),
    window = win.window,
  }
  -- A block that holds stays: a refund gives back units, not access.
  bk.keep_block(w, untl, call.now.ms)
  local after = BUCKETS.decide(bk.written(key, w), BUCKETS.unit(req),
    { now = call.now, shares = BK.ONE, writes = false })
  bk.record(key, w, at)
  return tonumber(refunded), after
end

-- charge.rs: an admission of cost under the ceiling every total stays
-- below (MAX_LIMIT) instead of the request's limit; past that ceiling,
-- what still fits under it. The reply's peek is decided over the hash as
-- the write leaves it, before the write.
function BUCKETS.charge(key, req, call)
  local lifted = { limit = BK.MAX_LIMIT, window = req.window, precision = req.precision, cost = req.cost }
  -- A block the key carries is kept, and counts nothing here.
  local d, _, w, at, untl = BUCKETS.decide(key, lifted, call, true)
  local charged = req.cost
  if w == nil and d.remaining > 0 then
    charged = d.remaining
    lifted.cost = charged
    d, _, w, at, untl = BUCKETS.decide(key, lifted, call, true)
  end
  if w == nil then
    return 0
  end
  bk.keep_block(w, untl, call.now.ms)
  local after = BUCKETS.decide(bk.written(key, w), BUCKETS.unit(req),
    { now = call.now, shares = BK.ONE, writes = false })
  bk.record(key, w, at)
  return charged, after
end

-- oldest.rs `oldest_wait`: the wait until the oldest bucket that still
-- counts and holds a count leaves (RL.PEEK BUCKETS ... OLDEST), 0 when the
-- window counts nothing.
function BUCKETS.oldest_wait(key, req, now)
  local exists, _, h = bk.open(key)
  local state = bk.load(key, exists, 'b', h)
  local precision = bk.resolve_precision(req.window, req.precision, state)
  local win = bk.slide(key, state, req.window, precision, now)
  local newest = win.newest
  if newest == nil then
    return 0
  end
  local b = nil
  if #win.held > 0 then
    -- The highest bit is the oldest bucket held.
    b = newest - 1 - win.held[#win.held]
  elseif newest >= win.live_from then
    for k_ = 1, #win.newest_counts do
      if dec_cmp_digits(win.newest_counts[k_], '0') > 0 then
        b = newest
      end
    end
  end
  if b == nil then
    return 0
  end
  return math.max(bk.leaves_at(win, b) - now, 1)
end

-- buckets/block.rs `block` (RL.BLOCK BUCKETS): checked as RL.BUCKETS
-- checks the key; the block's end.
function BUCKETS.block(key, t, ms)
  local untl = t.ms + ms
  local exists, at, h = bk.open(key)
  bk.load(key, exists, 'b', h)
  bk.block_set(key, h, at, untl)
  return untl
end

-- buckets/block.rs `unblock` (RL.UNBLOCK BUCKETS): the header without its
-- block (the expiry kept), or the key deleted when the block was all it
-- held; 1 if a block held.
function BUCKETS.unblock(key, t)
  local exists, _, h = bk.open(key)
  local state, untl = bk.load(key, exists, 'b', h)
  if block_left(untl, t.ms) == nil then
    return 0
  end
  if state == nil then
    redis.call('DEL', key)
  else
    redis.call('HSET', key, 'h', h:match('^(.*),b[^,]*$'))
  end
  return 1
end

LIMITERS.BUCKETS = BUCKETS

COMMANDS['rl.buckets'] = function(key, line)
  local up = take_upto(line, 5)
  if up ~= nil then
    return grant_up_to(BUCKETS, key, BUCKETS.parse(up, true))
  end
  local req = BUCKETS.parse(line)
  local d, write = BUCKETS.decide(key, req, { now = now(), shares = BK.ONE, writes = true })
  if write then
    write()
  end
  return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- ---- the plain line's fast path
-- `rl_buckets key limit window` on a key that is absent or whose header
-- holds only short numbers: the decision of BUCKETS.decide with plain
-- numbers (every value here is below 2^53, where doubles are exact), the
-- held set as one number (at most 13 hex digits, 52 bits), the bucket
-- fields read in one HMGET. Anything else (an error to raise, a foreign
-- or long value, a held set past 52 bits) answers nil before any write,
-- and the full path decides from the start: its reads are the same. It
-- runs outside the dispatcher's pcall (dispatch.lua `single`), so it
-- raises nothing itself (an error table escaping there crashes Redis 7.0).

-- A stored count as a number, if it is 1 to 15 digits (nil: the full path
-- reads it).
function bk.fast_count(raw)
  if raw == false or raw == nil then
    return 0
  end
  if #raw > 15 or raw:find('[^0-9]') or #raw == 0 then
    return nil
  end
  return raw + 0
end

-- The counts of buckets `bs` (nil: one is not a short count).
function bk.fast_counts(key, bs, ring)
  if #bs == 0 then
    return {}
  end
  local names = {}
  for i = 1, #bs do
    names[i] = bk.field_name(bs[i], ring)
  end
  local got = #bs == 1 and { redis.call('HGET', key, names[1]) }
    or redis.call('HMGET', key, unpack(names))
  local out = {}
  for i = 1, #bs do
    out[i] = bk.fast_count(got[i])
    if out[i] == nil then
      return nil
    end
  end
  return out
end

-- The buckets of the set bits of `v` (a held set shifted right by `from`
-- bits, below 2^53: bit i of the set is bucket newest - 1 - i), oldest
-- (highest bit) first. Halving walks the bits without a power per bit.
function bk.fast_buckets(v, from, newest)
  local out, n, i = {}, 0, from
  while v > 0 do
    local b = v % 2
    if b == 1 then
      n = n + 1
      out[n] = newest - 1 - i
    end
    v = (v - b) / 2
    i = i + 1
  end
  for a = 1, (n - n % 2) / 2 do
    out[a], out[n + 1 - a] = out[n + 1 - a], out[a]
  end
  return out
end

function bk.fast(key, args)
  if #args ~= 2 then
    return nil
  end
  local limit, w = argument(args[1]), argument(args[2])
  if limit == nil or limit < 1 or limit > BK.MAX_LIMIT or w == nil or w < 1 or w > BK.MAX_WINDOW then
    return nil
  end
  local at = expire_at(key)
  local p, newest, hex, total, cur
  local ring = true
  if at ~= -2 then
    -- This path runs outside the dispatcher's pcall and raises nothing:
    -- another type's error table, like every refusal, is the full path's.
    local h = redis.pcall('HGET', key, 'h')
    if at < 0 or type(h) ~= 'string' then
      return nil
    end
    local g_, p_, n_, x_, t_, c_ = h:match('^([bB]),(%d+),(%d+),([0-9a-f]+),(%d+),(%d+)$')
    if p_ == nil or #p_ > 15 or #n_ > 15 or #x_ > 13 or #t_ > 15 or #c_ > 15 then
      return nil
    end
    p, newest, hex, total, cur = p_ + 0, n_ + 0, x_, t_ + 0, c_ + 0
    ring = g_ == 'B'
    if p < 1 or p > w or newest > bk.floor_div(BK.MAX_CLOCK, p) then
      return nil
    end
  else
    p = math.max(bk.ceil_div(w, BK.DEFAULT_BUCKETS), 1)
  end
  if bk.ceil_div(w, p) > BK.MAX_BUCKETS then
    return nil
  end
  local t = now().ms
  if t > BK.MAX_CLOCK or t < -BK.MAX_CLOCK then
    return nil
  end
  local live_from = bk.floor_div(t - w + 1, p)
  local target = bk.floor_div(t, p)
  if newest == nil then
    local needed = (target + 1) * p - 1 + w
    redis.call('HSET', key, 'h', 'B,' .. int(p) .. ',' .. int(target) .. ',0,1,1')
    redis.call('PEXPIREAT', key, needed + math.max(math.floor(w / 4), 1))
    return { 1, limit - 1, 0, math.max(needed - t, 0) }
  end
  -- The held set: bit i is bucket newest - 1 - i; those at or past
  -- first_stale have left the window.
  local held = tonumber(hex, 16)
  local first_stale = math.max(newest - live_from, 0)
  local live, stale = held, {}
  if first_stale < 53 then
    live = held % 2 ^ first_stale
  end
  if live < held then
    -- Oldest first, as the full path lists them.
    stale = bk.fast_buckets((held - live) / 2 ^ first_stale, first_stale, newest)
  end
  -- The live buckets, oldest first: listed only when a sum or a denial
  -- reads them (with nothing stale, the header's total is the window's).
  local lives
  local sum
  if live_from > newest then
    sum = 0
  elseif #stale == 0 then
    sum = total
  else
    lives = bk.fast_buckets(live, 0, newest)
    if #stale <= #lives then
      local cs = bk.fast_counts(key, stale, ring)
      if cs == nil then
        return nil
      end
      sum = total
      for i = 1, #cs do
        sum = sum - cs[i]
      end
      sum = math.max(sum, 0)
    else
      local cs = bk.fast_counts(key, lives, ring)
      if cs == nil then
        return nil
      end
      sum = cur
      for i = 1, #cs do
        sum = sum + cs[i]
      end
    end
  end
  target = math.max(target, newest)
  if sum + 1 <= limit then
    local bucket = (newest == target and cur or 0) + 1
    local flush = nil
    if newest < target then
      -- (0 stays 0: a step past 1023 buckets would make it 0 * inf.)
      if live > 0 then
        live = live * 2 ^ (target - newest)
      end
      if newest >= live_from and cur ~= 0 then
        live = live + 2 ^ (target - newest - 1)
        flush = newest
      end
      if live >= 2 ^ 52 then
        return nil
      end
    end
    -- An earlier build's key takes ring names once no field stays (then
    -- nothing but the header is set: no name to clash with).
    local tag = (ring or live == 0) and 'B,' or 'b,'
    local header = tag .. int(p) .. ',' .. int(target) .. ',' .. string.format('%x', live) .. ','
      .. int(sum + 1) .. ',' .. int(bucket)
    if flush ~= nil then
      redis.call('HSET', key, 'h', header, bk.field_name(flush, ring), int(cur))
    else
      redis.call('HSET', key, 'h', header)
    end
    if #stale > 0 then
      local names = {}
      for i = 1, #stale do
        names[i] = bk.field_name(stale[i], ring)
      end
      redis.call('HDEL', key, unpack(names))
    end
    local needed = (target + 1) * p - 1 + w
    if at < needed then
      redis.call('PEXPIREAT', key, needed + math.max(math.floor(w / 4), 1))
    end
    return { 1, limit - sum - 1, 0, math.max(needed - t, 0) }
  end
  -- Denied: the oldest counted buckets first, until enough leaves.
  local need = sum + 1 - limit
  lives = lives or bk.fast_buckets(live, 0, newest)
  local cs = bk.fast_counts(key, lives, ring)
  if cs == nil then
    return nil
  end
  cs[#cs + 1] = cur
  lives[#lives + 1] = newest
  local reset_at = (newest + 1) * p - 1 + w
  local retry_at = reset_at
  local freed = 0
  for i = 1, #cs do
    freed = freed + cs[i]
    if freed >= need then
      retry_at = (lives[i] + 1) * p - 1 + w
      break
    end
  end
  return { 0, math.max(limit - sum, 0), math.max(retry_at - t, 1), math.max(reset_at - t, 0) }
end

PLAIN['rl.buckets'] = bk.fast

-- ---- functions/src/count.lua
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

-- ---- functions/src/throttle.lua
-- ====================================================== THROTTLE, FIXED
-- RL.THROTTLE key max_burst count period [quantity],
-- CL.THROTTLE key max_burst count period [quantity],
-- RL.FIXED key limit window [COST cost]: src/core/throttle/, src/core/fixed/.
--
-- Every value below 2^53 is a plain number; where one can pass it (a
-- stored TAT: redis-cell's nanoseconds read as µs reach 1.8e16, and the
-- waits derived from it; CL.THROTTLE's quantity up to 2^63 - 1) it is
-- kept as a decimal string or as two parts (hi * 10^6 + lo), never as a
-- rounded double.

-- The limits and texts of src/core/throttle/ and src/core/fixed/ (one
-- table: the main chunk's locals are limited).
local SF = {
  MAX_UNITS = 1000000000000000, -- throttle/request.rs MAX_UNITS
  MAX_PERIOD_MS = 1000000000000, -- MAX_PERIOD_MS
  MAX_PERIOD_S = 1000000000, -- MAX_PERIOD_S
  MAX_TOLERANCE_US = 1000000000000000, -- gcra.rs MAX_TOLERANCE_US
  I64_MAX = '9223372036854775807',
  MIN_STORED_TAT = '1000000000000000', -- gcra.rs MIN_STORED_TAT_US
  NANOS_FROM = '100000000000000000', -- gcra.rs NANOS_FROM
  MAX_LIMIT = 1000000000000000, -- fixed/request.rs MAX_LIMIT
  MAX_WINDOW_MS = 1000000000000, -- args.rs MAX_WINDOW_MS
  EXACT = 9007199254740992, -- 2^53
  THROTTLE_STATE = 'an rl throttle state (a TAT in microseconds)',
  -- sf_ahead: past this many 10^6 µs ahead, a distance is kept in two parts.
  AHEAD_BIG = 4000000000,
  FIXED_STATE = 'an rl fixed-window counter',
}

-- floor(a / b) and a - floor(a / b) * b, exact for integers a (|a| below
-- 2^53) and b > 0: the float quotient is corrected by its remainder.
local function sf_divmod(a, b)
  -- Lua's % is a - floor(a / b) * b: the same float quotient, without
  -- math.floor's call (this runs several times on every throttle call).
  local r = a % b
  if r < 0 then
    r = r + b
  elseif r >= b then
    r = r - b
  end
  return (a - r) / b, r
end

-- ceil(a / b) for integers a >= 0, b > 0 (a below 2^53).
local function sf_ceil_div(a, b)
  local q, r = sf_divmod(a, b)
  if r > 0 then
    q = q + 1
  end
  return q
end


-- A decimal string as (hi, lo): value = hi * 10^6 + lo, both exact.
local function sf_split_digits(s)
  if #s <= 6 then
    return 0, s + 0
  end
  return s:sub(1, -7) + 0, s:sub(-6) + 0
end

-- ceil(s / 1000) of a decimal string, as a number (s below 2^63).
local function sf_ceil_ms_of_digits(s)
  local hi, lo = sf_split_digits(s)
  return hi * 1000 + sf_ceil_div(lo, 1000)
end

-- CL.THROTTLE's quantity: 0 to 2^63 - 1 (args.rs `non_negative` with
-- i64::MAX). A number: exact up to 2^53; above, only compared with limits
-- far below it, which rounding cannot cross.
local function sf_cell_quantity(s)
  local bad = #s == 0 or s:find('[^0-9]') or (#s > 1 and s:byte(1) == 48)
    or #s > 19 or (#s == 19 and s > SF.I64_MAX)
  if bad then
    fail('ERR quantity must be an integer from 0 to ' .. SF.I64_MAX)
  end
  return tonumber(s)
end

-- gcra.rs Gcra::new: emission, tolerance, limit; nil and which bound a
-- rate breaks (1: count per period, 2: the tolerance) instead of raising,
-- for the fast paths.
local function sf_rate(max_burst, count, period_us)
  if count > period_us then
    return nil, 1
  end
  local emission = sf_ceil_div(period_us, count)
  local limit = max_burst + 1
  -- limit * emission <= MAX_TOLERANCE_US, without the product.
  if limit > sf_divmod(SF.MAX_TOLERANCE_US, emission) then
    return nil, 2
  end
  return emission, limit * emission, limit
end

local function sf_gcra(max_burst, count, period_us)
  local emission, tolerance, limit = sf_rate(max_burst, count, period_us)
  if emission == nil then
    if tolerance == 1 then
      fail('ERR count per period must not exceed 1 per microsecond (1000000 per second)')
    end
    fail('ERR max_burst too large: (max_burst + 1) * period / count must not exceed 31 years')
  end
  return emission, tolerance, limit
end

-- request.rs ThrottleRequest::parse; cell: CL.THROTTLE's dialect. As
-- values (emission, tolerance, limit, quantity): the commands build no
-- table per call; `sf_parse_throttle` is the limiter interface's form.
-- `up_to` (RL.THROTTLE ... UPTO, the flag taken off): the quantity may
-- pass max_burst + 1.
local function sf_parse_throttle_parts(line, cell, up_to)
  local command = cell and 'cl.throttle' or 'rl.throttle'
  if #line < 5 then
    E.arity(command)
  end
  if line[6] ~= nil and line[6]:upper() == 'UPTO' then
    E.upto_only(command)
  end
  -- RL.THROTTLE: [quantity] [BLOCK ms], the quantity a positional word
  -- (never the token) and nothing after the option (request.rs).
  local function is_block(a)
    return not cell and a:upper() == 'BLOCK'
  end
  -- WAIT: unknown to RL.THROTTLE's parser (request.rs), as to every other.
  local function is_wait(a)
    return not cell and a:upper() == 'WAIT'
  end
  local q_at = nil
  if line[6] ~= nil and not is_block(line[6]) and not is_wait(line[6]) then
    q_at = 6
  end
  local block = nil
  local at = q_at and 7 or 6
  while at <= #line do
    if is_wait(line[at]) then
      E.unknown_option(line[at])
    end
    if not is_block(line[at]) then
      E.arity(command)
    end
    if line[at + 1] == nil then
      E.missing_value('BLOCK')
    end
    local v = positive(line[at + 1], 'BLOCK', MAX_BLOCK_MS)
    if block ~= nil then
      E.duplicate_option('BLOCK')
    end
    block = v
    at = at + 2
  end
  local max_burst = non_negative(line[3], 'max_burst', SF.MAX_UNITS)
  local count = positive(line[4], 'count', SF.MAX_UNITS)
  local period = positive(line[5], 'period', cell and SF.MAX_PERIOD_S or SF.MAX_PERIOD_MS)
  local quantity = 1
  if q_at ~= nil then
    if cell then
      quantity = sf_cell_quantity(line[6])
    else
      quantity = non_negative(line[6], 'quantity', SF.MAX_UNITS)
    end
  end
  local emission, tolerance, limit = sf_gcra(max_burst, count, period * (cell and 1000000 or 1000))
  if not cell and not up_to and quantity > limit then
    fail('ERR quantity must not exceed max_burst + 1')
  end
  return emission, tolerance, limit, quantity, block
end

local function sf_parse_throttle(line, cell, up_to)
  local emission, tolerance, limit, quantity, block = sf_parse_throttle_parts(line, cell, up_to)
  return { rate = { emission = emission, tolerance = tolerance, limit = limit }, quantity = quantity, block = block }
end

-- The key as a string state: its bytes and absolute expiry (-1: none), nil
-- when absent; WRONGTYPE for another type (key.rs OpenKey::open).
local function sf_string_key(key)
  -- GET answers nil for no key and WRONGTYPE for another type, as TYPE
  -- would have told. typed_read's work inlined: this is on every call.
  local bytes = redis.pcall('GET', key)
  if bytes == false then
    return nil
  end
  if type(bytes) == 'table' and bytes.err ~= nil then
    if bytes.err:find('^WRONGTYPE') then
      E.wrong_type()
    end
    error(bytes, 0)
  end
  return bytes, redis.call('PEXPIRETIME', key)
end

-- gcra.rs stored_tat: the TAT in µs as a decimal string (ns as
-- redis-cell writes them rounded up) if rl could have written `bytes`,
-- else nil.
local function sf_tat_of(bytes)
  if #bytes == 16 and bytes ~= SF.MIN_STORED_TAT and bytes:find('^[1-9]%d*$') then
    -- What rl writes in this era: 16 digits without a leading zero, so
    -- above MIN_STORED_TAT (10^15) once not equal to it, and below
    -- NANOS_FROM (18 digits): the checks below in three tests.
    return bytes
  end
  local v = stored_unsigned(bytes)
  if v == nil then
    return nil
  end
  if dec_cmp(v, SF.NANOS_FROM) >= 0 then
    local us = v:sub(1, -4)
    if v:sub(-3) ~= '000' then
      us = dec_add(us, '1')
    end
    return us
  elseif dec_cmp(v, SF.MIN_STORED_TAT) <= 0 then
    return nil
  end
  return v
end

-- gcra.rs stored_with_block: the stored TAT (see sf_tat_of) and the end of
-- the key's block (nil: none), refused unless rl could have written them;
-- nil for no key.
local function sf_stored_tat(key)
  local bytes, at = sf_string_key(key)
  if bytes == nil then
    return nil
  end
  local v, untl = sf_tat_of(bytes), nil
  if v == nil then
    local state, _, u = split_blocked(bytes)
    v = state and sf_tat_of(state)
    if v == nil then
      E.foreign_string(SF.THROTTLE_STATE)
    end
    untl = u
  end
  if at == -1 then
    E.foreign_string(SF.THROTTLE_STATE)
  end
  return v, untl
end

-- sf_stored_tat's common case for the fast paths, raising nothing: the
-- TAT as rl writes it in this era (16 digits, no leading zero, above
-- MIN_STORED_TAT) on a key with an expiry; nil for no key; false for
-- anything else (the full path then reads it again and answers).
local function sf_quick_tat(key)
  local bytes = redis.pcall('GET', key)
  if bytes == false then
    return nil
  end
  if type(bytes) == 'string' and #bytes == 16 and bytes ~= SF.MIN_STORED_TAT
    and bytes:find('^[1-9]%d*$') and redis.call('PEXPIRETIME', key) ~= -1 then
    return bytes
  end
  return false
end

-- How far the TAT `tat` (decimal µs) is ahead of `now_us`, never below 0:
-- a number when below 2^52, else (hi, lo) with the distance
-- hi * 10^6 + lo, hi >= 4 * 10^9 (far beyond any tolerance).
local function sf_ahead(tat, now_us)
  if #tat == 16 and tat:byte(1) < 57 then
    -- Below 9 * 10^15 < 2^53: one exact number (a TAT rl writes now).
    local d = (tat + 0) - now_us
    if d < 0 then
      return 0
    end
    if d < SF.AHEAD_BIG * 1000000 then
      return d
    end
  end
  local th, tl = sf_split_digits(tat)
  local nh, nl = sf_divmod(now_us, 1000000)
  local hi, lo = th - nh, tl - nl
  if lo < 0 then
    hi, lo = hi - 1, lo + 1000000
  end
  if hi < 0 then
    return 0
  end
  if hi < SF.AHEAD_BIG then
    return hi * 1000000 + lo
  end
  return nil, hi, lo
end

-- ceil((hi * 10^6 + lo + delta) / 1000) for a big distance and
-- |delta| <= 2 * 10^15: the result is below 2^53.
local function sf_big_ms(hi, lo, delta)
  local dh, dl = sf_divmod(delta, 1000000)
  return (hi + dh) * 1000 + sf_ceil_div(lo + dl, 1000)
end

-- gcra.rs decide + to_decision at now_us over the stored TAT `tat` (a
-- decimal string, nil for none), for emission t, tolerance tau,
-- limit and quantity q, as values (no table, no closure per call):
-- allowed, remaining, retry_after_ms (nil: never, CL.THROTTLE's oversized
-- quantity), reset_after_ms, and the TAT an admission stores (nil: none).
local function sf_throttle_core(tat, t, tau, limit, q, now_us)
  local d, bh, bl = 0, nil, nil
  if tat ~= nil then
    d, bh, bl = sf_ahead(tat, now_us)
  end
  local oversized = q > limit
  -- increment = q * T, exact when not oversized (q * T <= tau).
  if d ~= nil and not oversized and d <= tau - q * t then
    local ahead = d + q * t
    local new_tat = nil
    if q > 0 then
      new_tat = now_us + ahead
    end
    return 1, (sf_divmod(tau - ahead, t)), 0, sf_ceil_div(ahead, 1000), new_tat
  end
  local remaining, reset, retry
  if d ~= nil then
    remaining = sf_divmod(math.max(0, tau - d), t)
    reset = sf_ceil_div(d, 1000)
    if not oversized then
      retry = sf_ceil_div(d - (tau - q * t), 1000)
    end
  else
    remaining = 0
    reset = sf_big_ms(bh, bl, 0)
    if not oversized then
      retry = sf_big_ms(bh, bl, q * t - tau)
    end
  end
  return 0, remaining, retry, reset, nil
end

local function sf_throttle_write(key, new_tat)
  local tat = int(new_tat)
  local at
  if #tat > 3 and tat:sub(-3) == '000' then
    -- A whole ms (Redis 7.0's µs clock is ms * 1000): its digits, without
    -- formatting a second number.
    at = tat:sub(1, -4)
  else
    at = int(sf_ceil_div(new_tat, 1000))
  end
  redis.call('SET', key, tat, 'PXAT', at)
end

-- The TAT `tat` (a decimal string) as it is, blocked until `untl`:
-- `<tat>e<tat in ms, rounded up>b<until>`, expiring at the later end.
local function sf_throttle_block(key, tat, untl)
  local own = sf_ceil_ms_of_digits(tat)
  redis.call('SET', key, tat .. 'e' .. int(own) .. 'b' .. int(untl), 'PXAT', int(math.max(own, untl)))
end

-- The limiter interface's decide: sf_throttle_core at call.now.us. The
-- decision carries `retry_never` (retry_after_us None).
local function sf_throttle_decide(key, req, call)
  local rate = req.rate
  local tat, untl = sf_stored_tat(key)
  local left = block_left(untl, call.now.ms)
  if left ~= nil then
    return { allowed = 0, remaining = 0, retry_after_ms = left, reset_after_ms = left, blocked = true }, nil
  end
  local allowed, remaining, retry, reset, new_tat =
    sf_throttle_core(tat, rate.emission, rate.tolerance, rate.limit, req.quantity, call.now.us)
  local decision = { allowed = allowed, remaining = remaining, retry_after_ms = retry, reset_after_ms = reset }
  if retry == nil then
    decision.retry_never = true
    -- u64::MAX ms, as the reply saturates it (i64::MAX; unreachable for
    -- RL.THROTTLE, which refuses such a quantity).
    decision.retry_after_ms = 9223372036854775807
  end
  local write = nil
  if new_tat ~= nil then
    write = function()
      sf_throttle_write(key, new_tat)
    end
  elseif allowed == 0 and req.block ~= nil then
    -- block.rs breached: the breach answers as the block it sets.
    decision = { allowed = 0, remaining = 0, retry_after_ms = req.block, reset_after_ms = req.block }
    write = function()
      sf_throttle_block(key, tat or int(call.now.us), call.now.ms + req.block)
    end
  end
  return decision, write
end

-- refund.rs: the TAT moved back by quantity intervals, never before now.
local function sf_throttle_refund(key, req, call)
  local t, q = req.rate.emission, req.quantity
  local now_us = call.now.us
  local tat, untl = sf_stored_tat(key)
  if tat == nil or q == 0 then
    return 0
  end
  local ahead = sf_ahead(tat, now_us)
  local refunded
  if ahead == nil or ahead > (q - 1) * t then
    refunded = q
  else
    refunded = sf_ceil_div(ahead, t)
  end
  if refunded == 0 then
    return 0
  end
  local back = q * t
  local value, at
  if ahead ~= nil then
    local new_tat = math.max(now_us + ahead - back, now_us)
    value, at = int(new_tat), sf_ceil_div(new_tat, 1000)
  else
    -- Far ahead: tat - q * T stays far ahead of now.
    value = dec_sub(tat, int(back))
    at = sf_ceil_ms_of_digits(value)
  end
  -- (A TAT refunded to now on a whole-ms clock expires at now: SET PXAT
  -- deletes the key there, where the module keeps it for that ms; both
  -- read as idle.) A block that holds stays.
  if block_left(untl, call.now.ms) then
    redis.call('SET', key, value .. 'e' .. int(at) .. 'b' .. int(untl), 'PXAT', int(math.max(at, untl)))
  else
    redis.call('SET', key, value, 'PXAT', at)
  end
  return refunded
end

-- charge.rs: the TAT moved forward by quantity intervals from max(tat,
-- now), past the burst tolerance or not, at most MAX_TOLERANCE_US past
-- now + tau (a TAT farther ahead, sf_ahead's nil, is past it already).
-- The peek after reads back the TAT written.
local function sf_throttle_charge(key, req, call)
  local t, tau = req.rate.emission, req.rate.tolerance
  local now_us = call.now.us
  local tat, untl = sf_stored_tat(key)
  local ahead = 0
  if tat ~= nil then
    ahead = sf_ahead(tat, now_us)
  end
  if ahead == nil then
    return 0
  end
  -- All below 2^53: ahead, tau and the ceiling are at most 2 * 10^15.
  local room = sf_divmod(math.max(tau + SF.MAX_TOLERANCE_US - ahead, 0), t)
  local charged = math.min(req.quantity, room)
  if charged > 0 then
    local new_tat = now_us + ahead + charged * t
    -- A block that holds stays: a charge records units, it grants nothing.
    if block_left(untl, call.now.ms) then
      local at = sf_ceil_div(new_tat, 1000)
      redis.call('SET', key, int(new_tat) .. 'e' .. int(at) .. 'b' .. int(untl), 'PXAT', int(math.max(at, untl)))
    else
      sf_throttle_write(key, new_tat)
    end
  end
  return charged
end

LIMITERS.THROTTLE = {
  token = 'THROTTLE',
  usage = 'THROTTLE key max_burst count period [quantity] [BLOCK ms]',
  parse = function(line)
    return sf_parse_throttle(line, false)
  end,
  decide = sf_throttle_decide,
  units = function(req)
    return req.quantity
  end,
  unit = function(req)
    return { rate = req.rate, quantity = 1 }
  end,
  -- The same request for n units, its BLOCK kept (UPTO's denial of one
  -- unit blocks as the whole call would: core's `..*self`).
  with_units = function(req, n)
    return { rate = req.rate, quantity = n, block = req.block }
  end,
  refund = sf_throttle_refund,
  charge = sf_throttle_charge,
}

-- throttle/block.rs: the TAT to keep, its own expiry, and the block's
-- end; nil for no key.
local function sf_throttle_state(key)
  local tat, untl = sf_stored_tat(key)
  if tat == nil then
    return nil
  end
  return tat, sf_ceil_ms_of_digits(tat), untl
end

-- throttle/block.rs `block` (RL.BLOCK THROTTLE): the TAT as it is (an
-- idle one at now for no key), blocked; the block's end.
function LIMITERS.THROTTLE.block(key, t, ms)
  local untl = t.ms + ms
  local value, own = sf_throttle_state(key)
  if value == nil then
    value = int(t.us)
    own = sf_ceil_ms_of_digits(value)
  end
  sf_blocked_set(key, value, own, untl)
  return untl
end

-- throttle/block.rs `unblock` (RL.UNBLOCK THROTTLE).
function LIMITERS.THROTTLE.unblock(key, t)
  local value, own, untl = sf_throttle_state(key)
  return string_unblock(key, value, own, untl, t)
end

local sf_clock = clock

-- RL.THROTTLE's reply, or with `cell` CL.THROTTLE's (gcra.rs CellReply:
-- [limited, limit, remaining, retry_after_s, reset_after_s]), for the TAT
-- read at now_us; an admission written first.
local function sf_throttle_reply(key, tat, now_us, t, tau, limit, q, cell)
  -- RL.THROTTLE refuses an oversized quantity: retry is never nil there.
  local allowed, remaining, retry, reset, new_tat = sf_throttle_core(tat, t, tau, limit, q, now_us)
  if new_tat ~= nil then
    sf_throttle_write(key, new_tat)
  end
  if not cell then
    return { allowed, remaining, retry, reset }
  end
  local retry_s = -1
  if allowed == 0 and retry ~= nil then
    retry_s = sf_ceil_div(retry, 1000)
  end
  return { 1 - allowed, limit, remaining, retry_s, sf_ceil_div(reset, 1000) }
end

local function sf_throttle_command(key, line, cell)
  local t, tau, limit, q, block = sf_parse_throttle_parts(line, cell)
  local now_ms, now_us = sf_clock()
  local tat, untl = sf_stored_tat(key)
  local left = block_left(untl, now_ms)
  if left ~= nil then
    -- A block that holds (set by RL.THROTTLE) denies CL.THROTTLE too.
    if cell then
      local s = sf_ceil_div(left, 1000)
      return { 1, limit, 0, s, s }
    end
    return { 0, 0, left, left }
  end
  local reply = sf_throttle_reply(key, tat, now_us, t, tau, limit, q, cell)
  if block ~= nil and reply[1] == 0 then
    sf_throttle_block(key, tat or int(now_us), now_ms + block)
    -- block.rs breached: the breach answers as the block it sets.
    return { 0, 0, block, block }
  end
  return reply
end

COMMANDS['rl.throttle'] = function(key, line)
  local up = take_upto(line, 6)
  if up ~= nil then
    return grant_up_to(LIMITERS.THROTTLE, key, sf_parse_throttle(up, false, true))
  end
  return sf_throttle_command(key, line, false)
end

COMMANDS['cl.throttle'] = function(key, line)
  return sf_throttle_command(key, line, true)
end

-- The common line `max_burst count period` (quantity 1) with every number
-- in range and a rate rl accepts, on a key absent or holding a TAT as rl
-- writes it: the reply, else nil before anything is written (the full
-- path then answers, errors included; quantity 1 never exceeds
-- max_burst + 1).
-- The rates the fast paths computed, by their argument strings
-- (rates[max_burst][count][period] = { emission, tolerance, limit }), one
-- table per dialect: a call's rate is mostly the last call's, and three
-- lookups cost less than reading the three numbers and dividing. Cleared
-- when it holds SF.RATES_KEPT (memory stays bounded whatever the callers
-- send); only rates rl accepts are kept.
SF.RATES, SF.RATES_N, SF.RATES_KEPT = { [false] = {}, [true] = {} }, 0, 512

local function sf_plain_rate(args, cell)
  local a1, a2, a3 = args[1], args[2], args[3]
  local rates = SF.RATES[cell]
  local by_count = rates[a1]
  local by_period = by_count and by_count[a2]
  local rate = by_period and by_period[a3]
  if rate ~= nil then
    return rate[1], rate[2], rate[3]
  end
  local max_burst, count, period = argument(a1), argument(a2), argument(a3)
  if max_burst == nil or max_burst > SF.MAX_UNITS or count == nil or count < 1 or count > SF.MAX_UNITS
    or period == nil or period < 1 or period > (cell and SF.MAX_PERIOD_S or SF.MAX_PERIOD_MS) then
    return nil
  end
  local t, tau, limit = sf_rate(max_burst, count, period * (cell and 1000000 or 1000))
  if t == nil then
    return nil
  end
  if SF.RATES_N >= SF.RATES_KEPT then
    SF.RATES, SF.RATES_N = { [false] = {}, [true] = {} }, 0
    rates = SF.RATES[cell]
  end
  by_count = rates[a1] or {}
  rates[a1] = by_count
  by_period = by_count[a2] or {}
  by_count[a2] = by_period
  by_period[a3], SF.RATES_N = { t, tau, limit }, SF.RATES_N + 1
  return t, tau, limit
end

local function sf_plain_throttle(key, args, cell)
  if #args ~= 3 then
    return nil
  end
  local t, tau, limit = sf_plain_rate(args, cell)
  if t == nil then
    return nil
  end
  -- sf_clock's µs, inlined (one Lua call less on every call).
  local time = redis.call('TIME')
  local us = time[2] + 0
  local now_us = time[1] * 1000000 + us
  if redis.REDIS_VERSION_NUM < 0x070200 then
    now_us = now_us - us % 1000
  end
  local tat = sf_quick_tat(key)
  if tat == false then
    return nil
  end
  if tat ~= nil and not cell and tat:byte(1) < 57 then
    -- The common admission of RL.THROTTLE, inlined from sf_throttle_core
    -- and sf_throttle_write (the same values): a TAT below 9 * 10^15 is
    -- one exact number, and so is every value below.
    local ahead = (tat + 0) - now_us
    if ahead < 0 then
      ahead = 0
    end
    ahead = ahead + t
    if ahead <= tau then
      local new_tat = now_us + ahead
      if new_tat % 1000 == 0 then
        -- A whole ms (Redis 7.0's µs clock is ms * 1000): one number
        -- formatted, its digits the expiry, and with '000' the TAT.
        local at = int(new_tat / 1000)
        redis.call('SET', key, at .. '000', 'PXAT', at)
      else
        redis.call('SET', key, int(new_tat), 'PXAT', int(sf_ceil_div(new_tat, 1000)))
      end
      return { 1, (sf_divmod(tau - ahead, t)), 0, sf_ceil_div(ahead, 1000) }
    end
  end
  return sf_throttle_reply(key, tat, now_us, t, tau, limit, 1, cell)
end

PLAIN['rl.throttle'] = function(key, args)
  return sf_plain_throttle(key, args, false)
end

PLAIN['cl.throttle'] = function(key, args)
  return sf_plain_throttle(key, args, true)
end

-- ---- functions/src/fixed.lua
-- ---- RL.FIXED (src/core/fixed/). Shares SF, sf_divmod, sf_clock and
-- sf_string_key with throttle.lua, which comes first.

-- fixed/request.rs: limit window [COST cost] [BLOCK ms].
local FIXED_SYNTAX = syntax('rl.fixed', 3, { 'COST', 'BLOCK' })

-- As values (limit, window, cost, block ms or nil); `sf_parse_fixed` is
-- the limiter interface's form.
local function sf_parse_fixed_parts(line, up_to)
  check_count(FIXED_SYNTAX, line)
  local limit = positive(line[3], 'limit', SF.MAX_LIMIT)
  local window = positive(line[4], 'window', SF.MAX_WINDOW_MS)
  local cost, block = 1, nil
  if #line > 4 then
    local set = {}
    options(FIXED_SYNTAX, line, function(token, value)
      set_once(set, token, positive(value, token, token == 'BLOCK' and MAX_BLOCK_MS or SF.MAX_LIMIT))
    end)
    cost, block = set.COST or 1, set.BLOCK
  end
  if cost > limit and not up_to then
    E.cost_above_limit()
  end
  return limit, window, cost, block
end

-- `up_to` (RL.FIXED ... UPTO, the flag taken off): the cost may pass the
-- limit.
local function sf_parse_fixed(line, up_to)
  local limit, window, cost, block = sf_parse_fixed_parts(line, up_to)
  return { limit = limit, window = window, cost = cost, block = block }
end

-- fixed/decide.rs stored_count: the counter, or nil if `bytes` is none.
local function sf_fixed_count(bytes)
  if #bytes >= 1 and #bytes <= 15 and not bytes:find('[^0-9]') then
    -- 1 to 15 digits: below MAX_LIMIT (10^15), an exact number.
    return bytes + 0
  end
  local v = stored_unsigned(bytes)
  if v == nil or dec_cmp(v, int(SF.MAX_LIMIT)) > 0 then
    return nil
  end
  return tonumber(v)
end

-- fixed/decide.rs stored_state: the count, the window's end (the key's
-- expiry, or the one a blocked value keeps) and the block's end (nil:
-- none); nil for no key.
local function sf_fixed_read(key)
  local bytes, at = sf_string_key(key)
  if bytes == nil then
    return nil
  end
  local n, untl = sf_fixed_count(bytes), nil
  if n == nil then
    local state, own, u = split_blocked(bytes)
    n = state and sf_fixed_count(state)
    if n == nil then
      E.foreign_string(SF.FIXED_STATE)
    end
    at, untl = own, u
  end
  if at == -1 then
    E.foreign_string(SF.FIXED_STATE)
  end
  return n, at, untl
end

-- FixedState::current: the count and end of the window running at
-- now_ms, or nil; and the block's end.
local function sf_fixed_current(key, now_ms)
  local n, at, untl = sf_fixed_read(key)
  if n ~= nil and at > now_ms then
    return n, at, untl
  end
  return nil, nil, untl
end

-- SET key count with the window's end. An end at or past 2^53 ms (a
-- user's far PXAT) is kept as it is: a double cannot spell it.
local function sf_fixed_set(key, count, at)
  if at >= SF.EXACT then
    redis.call('SET', key, count, 'KEEPTTL')
  else
    redis.call('SET', key, int(count), 'PXAT', int(at))
  end
end

-- fixed/decide.rs decide at now_ms, as values (no table, no closure per
-- call): allowed, remaining, retry_after_ms, reset_after_ms, the count and
-- window end to store (an admission) or as they are (a denial), and true
-- for a denial by a block that holds (then nothing else).
local function sf_fixed_core(key, limit, window, cost, now_ms)
  local count, at, untl = sf_fixed_current(key, now_ms)
  local left = block_left(untl, now_ms)
  if left ~= nil then
    return 0, 0, left, left, nil, nil, true
  end
  if count == nil then
    count, at = 0, now_ms + window
  end
  local reset = at - now_ms
  if reset < 0 then
    reset = 0
  end
  if count + cost <= limit then
    local after = count + cost
    return 1, limit - after, 0, reset, after, at
  end
  return 0, math.max(limit - count, 0), reset > 1 and reset or 1, reset, count, at
end

-- The limiter interface's decide: sf_fixed_core at call.now.ms. A denial
-- with BLOCK writes the block, the count and end as they are, and answers
-- as the block does.
local function sf_fixed_decide(key, req, call)
  local now_ms = call.now.ms
  local allowed, remaining, retry, reset, after, at, blocked =
    sf_fixed_core(key, req.limit, req.window, req.cost, now_ms)
  local decision = { allowed = allowed, remaining = remaining, retry_after_ms = retry, reset_after_ms = reset,
    blocked = blocked }
  if allowed == 0 then
    if blocked or req.block == nil then
      return decision, nil
    end
    -- block.rs breached: the breach answers as the block it sets.
    decision = { allowed = 0, remaining = 0, retry_after_ms = req.block, reset_after_ms = req.block }
    return decision, function()
      sf_blocked_set(key, int(after), at, now_ms + req.block)
    end
  end
  return decision, function()
    sf_fixed_set(key, after, at)
  end
end

-- fixed/refund.rs: the current window's count lowered by COST, never
-- below zero; its end stays, and so does a block that holds.
local function sf_fixed_refund(key, req, call)
  local now_ms = call.now.ms
  local count, at, untl = sf_fixed_current(key, now_ms)
  if count == nil then
    return 0
  end
  local refunded = math.min(count, req.cost)
  if refunded > 0 then
    if block_left(untl, now_ms) then
      sf_blocked_set(key, int(count - refunded), at, untl)
    else
      sf_fixed_set(key, count - refunded, at)
    end
  end
  return refunded
end

-- fixed/charge.rs: cost added to the current window's count (a new
-- window's, if none runs) whether or not it fits, up to MAX_LIMIT; its end
-- stays, and so does a block that holds. The peek after reads back the count written.
local function sf_fixed_charge(key, req, call)
  local now_ms = call.now.ms
  local count, at, untl = sf_fixed_current(key, now_ms)
  if count == nil then
    count, at = 0, now_ms + req.window
  end
  local charged = math.min(req.cost, SF.MAX_LIMIT - count)
  if charged > 0 then
    -- A block that holds stays: a charge records units, it grants nothing.
    if block_left(untl, now_ms) then
      sf_blocked_set(key, int(count + charged), at, untl)
    else
      sf_fixed_set(key, count + charged, at)
    end
  end
  return charged
end

LIMITERS.FIXED = {
  token = 'FIXED',
  usage = 'FIXED key limit window [COST cost] [BLOCK ms]',
  parse = sf_parse_fixed,
  decide = sf_fixed_decide,
  units = function(req)
    return req.cost
  end,
  unit = function(req)
    return { limit = req.limit, window = req.window, cost = 1 }
  end,
  -- The same request for n units, its BLOCK kept (UPTO's denial of one
  -- unit blocks as the whole call would: core's `..*self`).
  with_units = function(req, n)
    return { limit = req.limit, window = req.window, cost = n, block = req.block }
  end,
  refund = sf_fixed_refund,
  charge = sf_fixed_charge,
}

-- fixed/block.rs: the count and the window's end to keep (a window over
-- counts nothing: it ends now), and the block's end; nil for no key.
local function sf_fixed_state(key, t)
  local count, at, untl = sf_fixed_read(key)
  if count == nil then
    return nil
  end
  if at <= t.ms then
    count, at = 0, t.ms
  end
  return int(count), at, untl
end

-- fixed/block.rs `block` (RL.BLOCK FIXED): the count as it is (0 for no
-- key), blocked; the block's end.
function LIMITERS.FIXED.block(key, t, ms)
  local untl = t.ms + ms
  local value, own = sf_fixed_state(key, t)
  if value == nil then
    value, own = '0', t.ms
  end
  sf_blocked_set(key, value, own, untl)
  return untl
end

-- fixed/block.rs `unblock` (RL.UNBLOCK FIXED).
function LIMITERS.FIXED.unblock(key, t)
  local value, own, untl = sf_fixed_state(key, t)
  return string_unblock(key, value, own, untl, t)
end

local function sf_rl_fixed(key, limit, window, cost, block)
  local now_ms = sf_clock()
  local allowed, remaining, retry, reset, after, at, blocked = sf_fixed_core(key, limit, window, cost, now_ms)
  if allowed == 1 then
    sf_fixed_set(key, after, at)
  elseif block ~= nil and not blocked then
    sf_blocked_set(key, int(after), at, now_ms + block)
    -- block.rs breached: the breach answers as the block it sets.
    return { 0, 0, block, block }
  end
  return { allowed, remaining, retry, reset }
end

COMMANDS['rl.fixed'] = function(key, line)
  local up = take_upto(line, 5)
  if up ~= nil then
    return grant_up_to(LIMITERS.FIXED, key, sf_parse_fixed(up, true))
  end
  return sf_rl_fixed(key, sf_parse_fixed_parts(line))
end

-- The plain paths' reading of a FIXED key (rl_fixed's and rl_all's): its
-- count and the ms its window has left; 0 and nil for no key; nil when it
-- is anything but a running window as rl writes it (the full path then
-- reads it again and answers, errors included). It reads no clock: PTTL
-- is the window's end less the server's now, and a new window's SET PX
-- puts its end at the server's now plus window, the instant the call
-- runs, as the module reads it; both replicate as absolute times (SET
-- PXAT), and INCRBY keeps the end. It builds nothing (no table, no
-- string): on this path every allocation is paid again in the collector.
local function sf_fixed_plain_read(key)
  local ttl = redis.call('PTTL', key)
  if ttl == -2 then
    return 0, nil
  end
  -- No expiry (not rl's, or another type), a window that ends at this ms,
  -- or one too far out for a double: the full path.
  if ttl < 1 or ttl >= SF.EXACT then
    return nil
  end
  -- Another type answers an error table: the full path refuses it.
  local bytes = redis.pcall('GET', key)
  -- What rl writes: 1 to 15 digits without a leading zero (below
  -- MAX_LIMIT); INCRBY reads them as the same integer.
  if type(bytes) ~= 'string' or #bytes > 15 or not (bytes == '0' or bytes:find('^[1-9]%d*$')) then
    return nil
  end
  return bytes + 0, ttl
end

-- `limit` and `window` (the text FCALL sent) in range, as numbers; nil
-- otherwise (the full path answers the error).
local function sf_fixed_plain_params(limit_text, window_text)
  if limit_text == nil or window_text == nil then
    return nil
  end
  local limit, window = argument(limit_text), argument(window_text)
  if limit == nil or limit < 1 or limit > SF.MAX_LIMIT or window == nil or window < 1 or window > SF.MAX_WINDOW_MS then
    return nil
  end
  return limit, window
end

-- The common line `limit window` (no COST) with both in range, on a key
-- that is absent or holds a running window as rl writes it; nil for any
-- other, before anything is written (the full path then answers, errors
-- included). It is sf_fixed_plain_params and sf_fixed_plain_read
-- (above) inlined: those two Lua calls would be 3% of this path's
-- instructions.
PLAIN['rl.fixed'] = function(key, args)
  if #args ~= 2 then
    return nil
  end
  local window_text = args[2]
  local limit, window = argument(args[1]), argument(window_text)
  if limit == nil or limit < 1 or limit > SF.MAX_LIMIT or window == nil or window < 1 or window > SF.MAX_WINDOW_MS then
    return nil
  end
  local ttl = redis.call('PTTL', key)
  if ttl == -2 then
    redis.call('SET', key, '1', 'PX', window_text)
    return { 1, limit - 1, 0, window }
  end
  -- No expiry (not rl's, or another type), a window that ends at this ms,
  -- or one too far out for a double: the full path.
  if ttl < 1 or ttl >= SF.EXACT then
    return nil
  end
  -- Another type answers an error table: the full path refuses it.
  local bytes = redis.pcall('GET', key)
  -- What rl writes: 1 to 15 digits without a leading zero (below
  -- MAX_LIMIT); INCRBY reads them as the same integer.
  if type(bytes) ~= 'string' or #bytes > 15 or not (bytes == '0' or bytes:find('^[1-9]%d*$')) then
    return nil
  end
  local count = bytes + 0
  if count < limit then
    redis.call('INCRBY', key, '1')
    return { 1, limit - count - 1, 0, ttl }
  end
  return { 0, math.max(limit - count, 0), ttl, ttl }
end

-- ================================================== end THROTTLE, FIXED

-- ---- functions/src/leases.lua
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

-- ---- functions/src/all.lua
-- =============================================== PEEK, REFUND, CHARGE, ALL

local function unknown_limiter(token)
  fail("ERR unknown limiter '" .. E.token_text(token)
    .. "' (expected SLIDE, BUCKETS, THROTTLE, FIXED or ACQUIRE)")
end

local function limiter_of(token)
  -- Every token starts with a letter: a number (most words of a line)
  -- is told apart without building its upper-case copy.
  local first = token:byte(1)
  if first == nil or first < 65 then
    return nil
  end
  return LIMITERS[token] or LIMITERS[token:upper()]
end

-- The error `req` that `lim`'s parser raised, restated for `called`:
-- OLDEST, UPTO and a wrong count of parameters become `called`'s errors
-- (with_key false drops ' key' from the usage: an RL.ALL clause lists
-- its key apart; `usage`, when given, spells the limiter as `called`
-- takes it: RL.CHARGE); any other is raised as it is.
local function restate_parse_error(lim, req, called, with_key, usage)
  if getmetatable(req) == Fail and req.text:find('^ERR OLDEST is an option of') then
    E.oldest_only_in_peek(called)
  end
  if getmetatable(req) == Fail and req.text:find('^ERR UPTO is an option of') then
    E.upto_only(called)
  end
  if getmetatable(req) == Fail and req.text:find("^ERR wrong number of arguments for '") then
    usage = usage and usage(lim) or lim.usage
    if not with_key then
      usage = usage:gsub(' key', '', 1)
    end
    fail("ERR wrong number of arguments for '" .. called .. "' command (expected " .. usage .. ')')
  end
  reraise(req)
end

-- Parses `line` (token, key, parameters) with the limiter's parser; its
-- errors restated for `called` (restate_parse_error).
local function parse_limited(line, called, with_key, usage)
  local lim = limiter_of(line[1])
  if lim == nil then
    unknown_limiter(line[1])
  end
  local ok, req = pcall(lim.parse, line)
  if ok then
    return lim, req
  end
  restate_parse_error(lim, req, called, with_key, usage)
end

-- core/dispatch/mod.rs refuse_block: BLOCK anywhere after the key of a settling
-- command (RL.REFUND, RL.CHARGE, which never deny), refused by name
-- before the limiter's parser runs. RL.PEEK takes it (a peek answers what
-- the call with that very line would).
local function refuse_block(clause, command)
  for i = 3, #clause do
    if clause[i]:upper() == 'BLOCK' then
      E.block_only(command)
    end
  end
end

-- `<limiter> key <parameters>` (RL.PEEK, RL.REFUND), as `clause`: the
-- limiter's token first, then the key and its parameters (the shape its
-- parser takes). The named limiter and its request, parsed by its own
-- parser; a wrong count of parameters is restated for `command` with the
-- limiter's usage.
local function parse_named(clause, command)
  if clause[1] == nil then
    E.arity(command)
  end
  return parse_limited(clause, command, true)
end

local ONE = { slides = 1, buckets = 1 }

local function reply4(d)
  return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- RL.PEEK's OLDEST, anywhere after the key (core/peek.rs `parse_peek`):
-- the clause without it, and whether it was there.
local function take_oldest(clause)
  local flags = 0
  for i = 3, #clause do
    if clause[i]:upper() == 'OLDEST' then
      flags = flags + 1
    end
  end
  if flags == 0 then
    return clause, false
  end
  local lim = limiter_of(clause[1])
  if lim == nil then
    unknown_limiter(clause[1])
  end
  if flags > 1 then
    E.duplicate_option('OLDEST')
  end
  if lim.oldest_wait == nil then
    E.oldest_only_in_peek('rl.peek ' .. lim.token)
  end
  local line = { clause[1], clause[2] }
  for i = 3, #clause do
    if clause[i]:upper() ~= 'OLDEST' then
      line[#line + 1] = clause[i]
    end
  end
  return line, true
end

-- RL.PEEK <limiter> key <parameters> [OLDEST]
local function peek(key, clause)
  local line, oldest = take_oldest(clause)
  local lim, req = parse_named(line, 'rl.peek')
  local t = now()
  local d = lim.decide(key, req, { now = t, shares = ONE, writes = false })
  if oldest then
    return { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms,
      lim.oldest_wait(key, req, t.ms) }
  end
  return reply4(d)
end

local function refund_usage(lim)
  return (lim.usage:gsub(' %[BLOCK ms%]', ''))
end

-- RL.REFUND <limiter> key <parameters>
local function refund(key, clause)
  if clause[1] == nil then
    E.arity('rl.refund')
  end
  -- Refused before ACQUIRE's own parser runs (core/refund.rs): no error
  -- advertises a form that would be refused anyway.
  if clause[1]:upper() == 'ACQUIRE' then
    fail('ERR RL.REFUND does not apply to ACQUIRE (a lease is given back with RL.RELEASE)')
  end
  refuse_block(clause, 'rl.refund')
  -- The usage offers the limiter's parameters without the BLOCK it refuses.
  local lim, req = parse_limited(clause, 'rl.refund', true, refund_usage)
  local t = now()
  -- The peek after: decided before the write where the write leaves
  -- fields or entries it did not read (SLIDE, BUCKETS); a string limiter
  -- reads back only the value it wrote.
  local refunded, d = lim.refund(key, req, { now = t, shares = ONE, writes = true })
  d = d or lim.decide(key, lim.unit(req), { now = t, shares = ONE, writes = false })
  return { refunded, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- core/charge.rs: the most one charge records (SLIDE keeps its cap of a
-- call: a member per unit).
local MAX_CHARGE = { SLIDE = 100, BUCKETS = BK.MAX_LIMIT, THROTTLE = SF.MAX_UNITS, FIXED = SF.MAX_LIMIT }

-- The limiter as RL.CHARGE takes it: its parameters without its units.
local function charge_usage(lim)
  return (lim.usage:gsub(' %[COST cost%]', ''):gsub(' %[quantity%]', ''):gsub(' %[BLOCK ms%]', ''))
    .. ' COST cost'
end

-- RL.CHARGE <limiter> key <parameters> COST n (core/charge.rs): the
-- limiter's line without COST n parsed by its own parser, n its units.
local function charge(key, clause)
  if #clause < 3 then
    E.arity('rl.charge')
  end
  local lim = limiter_of(clause[1])
  if lim == nil then
    unknown_limiter(clause[1])
  end
  if lim.token == 'ACQUIRE' then
    fail('ERR RL.CHARGE does not apply to ACQUIRE (a lease holds a slot, not units)')
  end
  local at = nil
  for i = 3, #clause do
    if clause[i]:upper() == 'COST' then
      if at ~= nil then
        E.duplicate_option('COST')
      end
      at = i
    end
  end
  if at == nil then
    fail('ERR RL.CHARGE needs COST n, the units to charge')
  end
  if clause[at + 1] == nil then
    E.missing_value('COST')
  end
  local units = positive(clause[at + 1], 'COST', MAX_CHARGE[lim.token])
  local line = {}
  for i = 1, #clause do
    if i ~= at and i ~= at + 1 then
      line[#line + 1] = clause[i]
    end
  end
  -- Before THROTTLE's quantity check, which would count BLOCK ms as
  -- parameters and answer with the usage.
  refuse_block(line, 'rl.charge')
  -- THROTTLE's own units (quantity) are the charge's COST: a word after
  -- the period is a quantity too many, unless it is an option the
  -- limiter's parser refuses by name (WAIT, UPTO), as on every other
  -- limiter's charge line.
  local after = line[6] and line[6]:upper()
  if lim.token == 'THROTTLE' and #line > 5 and after ~= 'WAIT' and after ~= 'UPTO' then
    fail("ERR wrong number of arguments for 'rl.charge' command (expected " .. charge_usage(lim) .. ')')
  end
  local _, req = parse_limited(line, 'rl.charge', true, charge_usage)
  if lim.token == 'THROTTLE' then
    req.quantity = units
  else
    req.cost = units
  end
  local t = now()
  -- The peek after: decided before the write where the write leaves
  -- fields or entries it did not read (SLIDE, BUCKETS); a string limiter
  -- reads back only the value it wrote.
  local charged, d = lim.charge(key, req, { now = t, shares = ONE, writes = true })
  d = d or lim.decide(key, lim.unit(req), { now = t, shares = ONE, writes = false })
  return { charged, d.remaining, d.retry_after_ms, d.reset_after_ms }
end

-- An error raised in RL.ALL clause i: 'ERR clause i: ...'; WRONGTYPE keeps
-- its standard form.
local function in_clause(i, err)
  if getmetatable(err) ~= Fail or err.text:find('^WRONGTYPE') then
    reraise(err)
  end
  fail('ERR clause ' .. i .. ': ' .. err.text:gsub('^ERR ', '', 1))
end

local MAX_CLAUSES = 8
local MAX_SLIDE_COST = 100

-- The clauses of the RL.ALL call being run, by position, kept from one
-- call to the next (each call overwrites what it uses): no table per
-- clause, every allocation being paid again in the collector. `al_at` is
-- the clause the loops below are at, for the error of the one that fails.
local AL_START, AL_LIM, AL_REQ, AL_DEC, AL_WRITE, AL_REPLY = {}, {}, {}, {}, {}, {}
local al_at = 0

-- Each clause parsed by its limiter's parser (its errors raised as the
-- parser raises them: `all` restates them), as { token, key, parameters
-- }; the SLIDE and BUCKETS clauses counted, the SLIDE clauses' costs
-- added up.
local function all_parse(keys, args, n)
  local slides, buckets, slide_cost = 0, 0, 0
  local last = #args
  for i = 1, n do
    al_at = i
    local start = AL_START[i]
    local stop = (i < n and AL_START[i + 1] or last + 1) - 1
    local clause
    if stop - start <= 16 then
      -- One constructor (unpack sizes it); a long clause (an arity error
      -- to come) is copied, unpack's stack being bounded.
      clause = { args[start], keys[i], unpack(args, start + 1, stop) }
    else
      clause = { args[start], keys[i] }
      for a = start + 1, stop do
        clause[#clause + 1] = args[a]
      end
    end
    local lim = limiter_of(args[start])
    AL_LIM[i] = lim
    local req = lim.parse(clause)
    AL_REQ[i] = req
    if lim.token == 'SLIDE' then
      slides = slides + 1
      slide_cost = slide_cost + lim.units(req)
    elseif lim.token == 'BUCKETS' then
      buckets = buckets + 1
    end
  end
  return slides, buckets, slide_cost
end

-- Every clause decided: all keys read, nothing written. Whether all
-- admit, the longest wait of those that deny, and whether a clause is an
-- ACQUIRE.
local function all_decide(keys, n, call)
  local allowed, retry, any_lease = 1, 0, false
  for i = 1, n do
    al_at = i
    local lim = AL_LIM[i]
    local d, write = lim.decide(keys[i], AL_REQ[i], call)
    AL_DEC[i], AL_WRITE[i] = d, write
    if d.allowed == 0 then
      allowed = 0
      if d.retry_after_ms > retry then
        retry = d.retry_after_ms
      end
    end
    any_lease = any_lease or lim.token == 'ACQUIRE'
  end
  return allowed, retry, any_lease
end

-- RL.ALL numkeys key [key ...] clause [clause ...] (src/core/dispatch/all/),
-- as FCALL rl_all gives it: `keys` (numkeys is their count) and `args`,
-- the clauses (the line is not copied).
local function all(keys, args)
  local n, nargs = #keys, #args
  -- The command's line is RL.ALL, numkeys, the keys, the clauses.
  if 2 + n + nargs < 4 then
    E.arity('rl.all')
  end
  if n < 1 then
    positive(tostring(n), 'numkeys', MAX_CLAUSES)
  end
  if nargs < n then
    E.arity('rl.all')
  end
  for i = 1, n do
    for j = 1, i - 1 do
      if keys[i] == keys[j] then
        fail('ERR each RL.ALL clause needs its own key')
      end
    end
  end
  if limiter_of(args[1]) == nil then
    unknown_limiter(args[1])
  end
  -- A clause runs to the next limiter token, except the word after an
  -- ACQUIRE clause's ID.
  local starts = 1
  AL_START[1] = 1
  for j = 2, nargs do
    if limiter_of(args[j]) ~= nil then
      local before = args[j - 1]
      if #before ~= 2 or before:upper() ~= 'ID' then
        starts = starts + 1
        if starts <= n then
          AL_START[starts] = j
        end
      end
    end
  end
  if starts ~= n then
    local given = starts == 1 and '1 clause was given' or (starts .. ' clauses were given')
    fail('ERR numkeys is ' .. n .. ' but ' .. given .. ' (one per key)')
  end
  local ok, slides, buckets, slide_cost = pcall(all_parse, keys, args, n)
  if not ok then
    local _, err = pcall(restate_parse_error, AL_LIM[al_at], slides, 'rl.all', false)
    in_clause(al_at, err)
  end
  if slide_cost > MAX_SLIDE_COST then
    fail('ERR the SLIDE clauses\' COST must add up to at most ' .. MAX_SLIDE_COST)
  end
  local call = { now = now(), shares = { slides = slides, slide_cost = slide_cost, buckets = buckets }, writes = true }
  local ok2, allowed, retry, any_lease = pcall(all_decide, keys, n, call)
  if not ok2 then
    in_clause(al_at, allowed)
  end
  for i = 1, n do
    local d = AL_DEC[i]
    if any_lease and AL_LIM[i].token == 'ACQUIRE' then
      -- The lease id only when the call records it; false is a nil reply.
      AL_REPLY[i] = { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms,
        (allowed == 1 and d.lease) or false }
    else
      AL_REPLY[i] = { d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms }
    end
  end
  -- An admitted call records every clause; a denied one only the blocks
  -- its denying clauses' BLOCK sets.
  for i = 1, n do
    local write = AL_WRITE[i]
    if write and (allowed == 1 or AL_DEC[i].allowed == 0) then
      write()
    end
  end
  -- One constructor (unpack sizes it: n is at most MAX_CLAUSES).
  return { allowed, retry, unpack(AL_REPLY, 1, n) }
end

-- rl_all's plain path: every clause `FIXED limit window [COST cost]` as
-- rl-ratelimit sends them (the token and COST in capitals, every number
-- in range, cost at most limit), one distinct key per clause, each key
-- absent or a running window as rl writes it (sf_fixed_plain_read); nil
-- for any other call, before anything is written (`all` then reads the
-- line and the keys again and answers, errors included). A clause costs
-- what rl_fixed's plain path does, PTTL and GET, then SET PX for a new
-- window or INCRBY on a running one (the module's RL.ALL replicates a
-- running window's counter so too); nothing is built but the reply, and
-- no clock is read. The clauses' parameters, read once, are kept in these
-- tables from one call to the next (each call overwrites what it uses):
-- on this path every allocation is paid again in the collector.
local PA_LIMIT, PA_WINDOW, PA_WINDOW_TEXT, PA_COST, PA_COST_TEXT, PA_NEW, PA_REPLY = {}, {}, {}, {}, {}, {}, {}

local function plain_all(keys, args)
  local n = #keys
  if n < 1 or n > MAX_CLAUSES then
    return nil
  end
  -- The shape first: no key is read for a call this path leaves.
  local at, last = 1, #args
  for i = 1, n do
    if args[at] ~= 'FIXED' then
      return nil
    end
    local window_text = args[at + 2]
    local limit, window = sf_fixed_plain_params(args[at + 1], window_text)
    if limit == nil then
      return nil
    end
    local cost, cost_text = 1, '1'
    at = at + 3
    if args[at] == 'COST' then
      cost_text = args[at + 1]
      cost = cost_text and argument(cost_text)
      if cost == nil or cost < 1 or cost > limit then
        return nil
      end
      at = at + 2
    end
    for j = 1, i - 1 do
      if keys[j] == keys[i] then
        return nil
      end
    end
    PA_LIMIT[i], PA_WINDOW[i], PA_WINDOW_TEXT[i], PA_COST[i], PA_COST_TEXT[i] = limit, window, window_text, cost, cost_text
  end
  if at ~= last + 1 then
    return nil
  end
  -- Decide every clause: all keys read, nothing written.
  local allowed, retry = 1, 0
  for i = 1, n do
    local count, ttl = sf_fixed_plain_read(keys[i])
    if count == nil then
      return nil
    end
    PA_NEW[i] = ttl == nil
    -- A new window's reset is the whole window.
    ttl = ttl or PA_WINDOW[i]
    local limit, cost = PA_LIMIT[i], PA_COST[i]
    if count + cost <= limit then
      PA_REPLY[i] = { 1, limit - count - cost, 0, ttl }
    else
      PA_REPLY[i] = { 0, math.max(limit - count, 0), ttl, ttl }
      allowed = 0
      if ttl > retry then
        retry = ttl
      end
    end
  end
  -- An admitted call records every clause; a denied one nothing (no BLOCK
  -- on this path).
  if allowed == 1 then
    for i = 1, n do
      if PA_NEW[i] then
        redis.call('SET', keys[i], PA_COST_TEXT[i], 'PX', PA_WINDOW_TEXT[i])
      else
        redis.call('INCRBY', keys[i], PA_COST_TEXT[i])
      end
    end
  end
  -- One constructor (unpack sizes it); the clauses' replies stay in
  -- PA_REPLY until the next call overwrites them.
  return { allowed, retry, unpack(PA_REPLY, 1, n) }
end

-- ---- functions/src/block.lua
-- ================================================== RL.BLOCK, RL.UNBLOCK
-- RL.BLOCK <limiter> key ms, RL.UNBLOCK <limiter> key
-- (src/core/dispatch/block.rs): FCALL rl_block 1 key FIXED ms, FCALL
-- rl_unblock 1 key FIXED. Each limiter blocks its own key (its block and
-- unblock, in its file); here only the limiter is found by its token.

-- The named limiter, if a block applies to it (block.rs `blockable`).
local function blockable(token, command)
  local lim = limiter_of(token)
  if lim == nil then
    unknown_limiter(token)
  end
  if lim.block == nil then
    fail('ERR ' .. command .. ' does not apply to ' .. lim.token .. ' (it blocks SLIDE, BUCKETS, THROTTLE or FIXED)')
  end
  return lim
end

local function rl_block(key, clause)
  if clause[1] == nil or #clause ~= 3 then
    E.arity('rl.block')
  end
  local lim = blockable(clause[1], 'RL.BLOCK')
  local ms = positive(clause[3], 'ms', MAX_BLOCK_MS)
  return lim.block(key, now(), ms)
end

local function rl_unblock(key, clause)
  if clause[1] == nil or #clause ~= 2 then
    E.arity('rl.unblock')
  end
  local lim = blockable(clause[1], 'RL.UNBLOCK')
  return lim.unblock(key, now())
end

-- ---- functions/src/dispatch.lua
-- ============================================================= commands

-- The server callback around `body(keys, args)`: an rl error raised
-- anywhere below becomes its error reply; anything else (a server error
-- from redis.call, a bug) goes on as the server's own error.
local function guarded(body)
  return function(keys, args)
    local ok, res = pcall(body, keys, args)
    if ok then
      return res
    end
    if getmetatable(res) == Fail then
      return redis.error_reply(res.text)
    end
    reraise(res)
  end
end

-- A single-key command (RL.SLIDE key ...): FCALL rl_slide 1 key ...
-- Its fast path (PLAIN) runs first, outside the pcall: it raises no rl
-- error, so the common call pays for no pcall and no closure.
local function single(name, command)
  local plain = PLAIN[command]
  local full = guarded(function(keys, args)
    if #keys ~= 1 then
      wrong_keys(name, 1)
    end
    local n = #args
    if n <= 8 then
      -- One constructor (unpack sizes it); a long line (an arity error to
      -- come) is copied, unpack's stack being bounded.
      return COMMANDS[command](keys[1], { command, keys[1], unpack(args) })
    end
    local line = { command, keys[1] }
    for i = 1, n do
      line[i + 2] = args[i]
    end
    return COMMANDS[command](keys[1], line)
  end)
  if plain == nil then
    return full
  end
  return function(keys, args)
    if #keys == 1 then
      local reply = plain(keys[1], args)
      if reply ~= nil then
        return reply
      end
    end
    return full(keys, args)
  end
end

-- RL.PEEK, RL.REFUND and RL.CHARGE name the limiter before the key (RL.PEEK SLIDE key
-- ...); the function takes it first after the key (FCALL rl_peek 1 key
-- SLIDE ...). `body` gets the clause { token, key, parameters... }.
local function named(name, body)
  return guarded(function(keys, args)
    if #keys ~= 1 then
      wrong_keys(name, 1)
    end
    local n = #args
    if n <= 8 then
      -- One constructor (unpack sizes it); a long line is copied, unpack's
      -- stack being bounded.
      return body(keys[1], { args[1], keys[1], unpack(args, 2) })
    end
    local clause = { args[1], keys[1] }
    for i = 2, n do
      clause[i + 1] = args[i]
    end
    return body(keys[1], clause)
  end)
end

-- Under EVAL (services that allow scripts but not functions) there is no
-- registration API: the callbacks are kept here and the call at the end
-- runs the one ARGV[1] names.
local EVAL_FUNCTIONS = {}

local function register(name, callback, flags)
  if redis.register_function == nil then
    EVAL_FUNCTIONS[name] = callback
    return
  end
  redis.register_function { function_name = name, callback = callback, flags = flags or {} }
end

-- (At load time the server offers only the registration API, not Lua's
-- base library: no loop over a table here.)
register('rl_slide', single('rl_slide', 'rl.slide'))
register('rl_buckets', single('rl_buckets', 'rl.buckets'))
register('rl_count', single('rl_count', 'rl.count'))
register('rl_throttle', single('rl_throttle', 'rl.throttle'))
register('cl_throttle', single('cl_throttle', 'cl.throttle'))
register('rl_fixed', single('rl_fixed', 'rl.fixed'))
register('rl_acquire', single('rl_acquire', 'rl.acquire'))
register('rl_renew', single('rl_renew', 'rl.renew'))
-- A slot can be given back at maxmemory (the module's RL.RELEASE is not
-- deny-oom either).
register('rl_release', single('rl_release', 'rl.release'), { 'allow-oom' })
-- Read-only: FCALL_RO, replicas.
register('rl_totals', single('rl_totals', 'rl.totals'), { 'no-writes' })
register('rl_peek', named('rl_peek', peek), { 'no-writes' })
-- A refund never grows a key: it may give back at maxmemory (the module's
-- RL.REFUND is not deny-oom either).
register('rl_refund', named('rl_refund', refund), { 'allow-oom' })
register('rl_block', named('rl_block', rl_block))
-- Lifting a block only shortens the key (the module's RL.UNBLOCK is not
-- deny-oom either).
register('rl_unblock', named('rl_unblock', rl_unblock), { 'allow-oom' })
-- A charge grows a key as an admission does: not at maxmemory.
register('rl_charge', named('rl_charge', charge))
-- rl_all: its plain path (all.lua plain_all) first, outside the pcall, as
-- a single-key command's.
local all_full = guarded(function(keys, args)
  -- More keys than RL.ALL takes: its numkeys error first.
  if #keys > MAX_CLAUSES then
    positive(tostring(#keys), 'numkeys', MAX_CLAUSES)
  end
  return all(keys, args)
end)
register('rl_all', function(keys, args)
  local reply = plain_all(keys, args)
  if reply ~= nil then
    return reply
  end
  return all_full(keys, args)
end)
register('rl_version', function()
  return VERSION
end, { 'no-writes' })

-- EVAL "<this file without its first line>" numkeys key... rl_slide args...
if redis.register_function == nil then
  local callback = EVAL_FUNCTIONS[ARGV[1] or '']
  if callback == nil then
    return redis.error_reply("ERR the first argument after the keys names an rl function (rl_slide, rl_all, ...), not '"
      .. E.token_text(ARGV[1] or '') .. "'")
  end
  local args = {}
  for i = 2, #ARGV do
    args[#args + 1] = ARGV[i]
  end
  return callback(KEYS, args)
end
