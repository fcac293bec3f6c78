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
