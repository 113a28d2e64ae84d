local now = tonumber(ARGV[12])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local used = redis.call('GET', KEYS[2])
if not used then
  return {-1, 0, 0, 0, 0, 0, 0, 0}
end
used = tonumber(used)
local period = 60000000
local limit = math.max(tonumber(ARGV[9]), 1)
local t = math.max(math.floor(period / limit), 1)
-- Another node's record neither renewed nor given back within the stale
-- age, holding tokens or counts not in the store: the node is dead (or
-- stalled, and then adds back what it still has when it returns, as after
-- a reseed). Its minute tokens go back to the GCRA; when it held month
-- tokens or counts, the counter is dropped, to be seeded again from the
-- ledger by the caller, every live node adding what the ledger lacks.
-- With usage mirrors (ARGV[18] > 0) the record first waits for the dead
-- node's mirror to be taken over, which gives its unflushed counts to the
-- ledger and marks the record (`at` 0): a seed before that would leave
-- them out of the counter, to be leased again and then billed on top.
-- Past ARGV[18] it is reclaimed all the same (a mirror never taken).
local stale = tonumber(ARGV[16])
local await = tonumber(ARGV[18] or '0')
if stale > 0 then
  local recs = redis.call('HGETALL', KEYS[3])
  local dead, back, reseed = {}, 0, false
  for i = 1, #recs, 2 do
    if recs[i] ~= ARGV[1] and string.sub(recs[i], 1, 1) ~= '_' then
      local f = {}
      for v in string.gmatch(recs[i + 1], '%S+') do f[#f + 1] = tonumber(v) end
      local age = now - (f[5] or now)
      local due = age > stale and (await == 0 or f[5] == 0 or age > await)
      if f[6] and due and (f[2] > 0 or f[3] > 0 or f[6] > 0) then
        dead[#dead + 1] = recs[i]
        back = back + f[2]
        reseed = reseed or f[3] > 0 or f[6] > 0
      end
    end
  end
  if #dead > 0 then
    redis.call('HDEL', KEYS[3], unpack(dead))
    local tat = tonumber(redis.call('GET', KEYS[1]) or now) - back * t
    if tat > now then
      redis.call('SET', KEYS[1], tat, 'PX', math.max(math.ceil((tat - now) / 1000), 1))
    else
      redis.call('DEL', KEYS[1])
    end
    if reseed then
      redis.call('DEL', KEYS[2])
      return {-1, 0, 0, 0, 0, 0, 0, #dead}
    end
  end
end
local seq = tonumber(ARGV[2])
local rec = redis.call('HGET', KEYS[3], ARGV[1])
local rseq, rmin, rmon, radj, reserved = 0, 0, 0, nil, nil
if rec then
  local f = {}
  for v in string.gmatch(rec, '%S+') do f[#f + 1] = tonumber(v) end
  rseq, rmin, rmon, radj, reserved = f[1], f[2], f[3], f[4], f[7]
  if rseq >= seq then
    return {-2, 0, 0, 0, 0, 0, used, rseq}
  end
end
-- A record kept through a seed holds a reservation, not a lease: the
-- node says what it counted that the seed lacks, as a node with no
-- record does, and that replaces the reservation.
if reserved then
  rec, radj = nil, nil
end
if not rec then
  local seeded = tonumber(redis.call('HGET', KEYS[3], '_seeded') or '-1')
  if tonumber(ARGV[7]) < 0 or tonumber(ARGV[17]) ~= seeded then
    return {-3, 0, 0, 0, 0, 0, used, seeded}
  end
end
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then
  tat = now
end
if reserved then
  used = used - reserved
end
if rec then
  local umin, umon = 0, 0
  if rseq == tonumber(ARGV[3]) then
    umin, umon = tonumber(ARGV[4]), tonumber(ARGV[5])
  end
  tat = math.max(tat - math.max(rmin - umin, 0) * t, now)
  used = used - math.max(rmon - umon, 0)
end
local adj = tonumber(ARGV[6])
if radj then
  used = used + adj - radj
else
  used = used + tonumber(ARGV[7])
end
used = math.max(used, 0)
local want = tonumber(ARGV[8])
local want_mon = tonumber(ARGV[14])
local nodes = math.max(tonumber(ARGV[11]), 1)
local avail = math.floor((now + period - tat) / t)
local gmin = 0
if want > 0 and avail > 0 then
  gmin = math.min(want, math.max(math.floor(avail / nodes), 1))
end
local left = tonumber(ARGV[10]) - used
local gmon = 0
if want_mon > 0 and left > 0 and gmin > 0 then
  gmon = math.min(want_mon, gmin, math.max(math.floor(left / nodes), 1))
end
tat = tat + gmin * t
if tat > now then
  redis.call('SET', KEYS[1], tat, 'PX', math.max(math.ceil((tat - now) / 1000), 1))
else
  redis.call('DEL', KEYS[1])
end
used = used + gmon
redis.call('SET', KEYS[2], used, 'KEEPTTL')
redis.call('HSET', KEYS[3], ARGV[1], seq .. ' ' .. gmin .. ' ' .. gmon .. ' ' .. adj .. ' ' .. now .. ' ' .. ARGV[15])
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[13]))
local retry = 0
if avail == 0 then
  retry = tat - now - (period - t)
end
return {1, gmin, gmon, avail - gmin, tat - now, retry, used, 0}
