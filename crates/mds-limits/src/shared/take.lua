-- Takes a node's mirror over (see scripts.rs, TAKE_LUA).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {3}
end
local now = tonumber(ARGV[1])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local mode = tonumber(ARGV[5])
local all = redis.call('HGETALL', KEYS[1])
local h, out = {}, {}
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 1) == '_' then
    h[all[i]] = all[i + 1]
  else
    out[#out + 1] = all[i]
    out[#out + 1] = all[i + 1]
  end
end
local status = 1
if h['_taken'] then
  if mode == 1 then
    status = 2
  elseif h['_done'] then
    return {0}
  else
    local at = tonumber(string.match(h['_taken'], ' (%d+)$'))
    if now - at < tonumber(ARGV[6]) then
      return {0}
    end
  end
elseif mode == 0 then
  if #out == 0 then
    return {0}
  end
  local from = math.max(tonumber(h['_at'] or '0'), tonumber(h['_seen'] or '0'))
  local idle = tonumber(h['_idle'] or '0') + math.min(math.max(now - from, 0), tonumber(ARGV[4]))
  redis.call('HSET', KEYS[1], '_idle', idle, '_seen', now)
  if idle < tonumber(ARGV[3]) then
    return {0}
  end
end
if status == 1 then
  redis.call('HSET', KEYS[1], '_taken', ARGV[2] .. ' ' .. now)
  redis.call('HDEL', KEYS[1], '_done')
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[7]))
local res = {status, h['_lease'] or ''}
for _, v in ipairs(out) do
  res[#res + 1] = v
end
return res
