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
