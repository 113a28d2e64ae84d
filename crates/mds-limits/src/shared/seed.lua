-- Seeds a missing month counter (see scripts.rs, SEED_LUA). The records
-- of live nodes stay: what each may still admit or has not flushed (its
-- lease's month tokens and its requests not in the store when it last
-- wrote) is reserved on top of the ledger's count, and noted as the
-- record's seventh field until its node's next script replaces it with
-- what the node counted that the seed lacks.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local count = tonumber(ARGV[1])
local all = redis.call('HGETALL', KEYS[2])
local kept = {}
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 1) ~= '_' then
    local f = {}
    for v in string.gmatch(all[i + 1], '%S+') do f[#f + 1] = v end
    if #f >= 6 then
      local reserve = tonumber(f[3]) + tonumber(f[6])
      count = count + reserve
      kept[#kept + 1] = all[i]
      kept[#kept + 1] = table.concat({f[1], f[2], f[3], f[4], f[5], f[6], reserve}, ' ')
    end
  end
end
redis.call('SET', KEYS[1], count, 'EX', tonumber(ARGV[2]))
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], '_seeded', ARGV[3], unpack(kept))
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]))
return 1
