-- Adds segments of a node's unflushed counts to its mirror (see
-- scripts.rs, MIRROR_LUA).
local now = tonumber(ARGV[1])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function data()
  local out = {-1}
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 1) ~= '_' then
      out[#out + 1] = all[i]
      out[#out + 1] = all[i + 1]
    end
  end
  return out
end
if redis.call('HEXISTS', KEYS[1], '_taken') == 1 then
  return data()
end
local last = tonumber(redis.call('HGET', KEYS[1], '_seq') or '0')
local i = 4
local ndrop = tonumber(ARGV[i])
if ndrop > 0 then
  local drop = {}
  for j = 1, ndrop do
    drop[ARGV[i + j]] = true
  end
  for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
    local b = string.match(f, '^([^\t]+)\t')
    if b and drop[b] then
      redis.call('HDEL', KEYS[1], f)
    end
  end
end
i = i + ndrop + 1
local top = last
while i <= #ARGV do
  local seq, n = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  i = i + 2
  if seq > last then
    for j = 0, n - 1 do
      local f = ARGV[i + 3 * j]
      local r, m = tonumber(ARGV[i + 3 * j + 1]), tonumber(ARGV[i + 3 * j + 2])
      local v = redis.call('HGET', KEYS[1], f)
      if v then
        local a, b = string.match(v, '^(%d+) (%d+)$')
        r, m = r + tonumber(a), m + tonumber(b)
      end
      redis.call('HSET', KEYS[1], f, r .. ' ' .. m)
    end
    if seq > top then
      top = seq
    end
  end
  i = i + 3 * n
end
redis.call('HSET', KEYS[1], '_seq', top, '_at', now, '_idle', 0, '_lease', ARGV[3])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return {1}
