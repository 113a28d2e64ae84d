-- After a takeover was applied: makes the taken node's lease record on a
-- key reclaimable at once, or drops a counter seeded before the apply
-- (see scripts.rs, FORGET_LUA).
local rec = redis.call('HGET', KEYS[2], ARGV[1])
if rec then
  local f = {}
  for v in string.gmatch(rec, '%S+') do f[#f + 1] = v end
  if #f >= 6 then
    f[5] = '0'
    if tonumber(f[2]) == 0 and tonumber(f[3]) == 0 and tonumber(f[6]) == 0 then
      f[6] = '1'
    end
    redis.call('HSET', KEYS[2], ARGV[1], table.concat(f, ' '))
    return 1
  end
end
local seeded = tonumber(redis.call('HGET', KEYS[2], '_seeded') or '-1')
if seeded < tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  return 2
end
return 0
