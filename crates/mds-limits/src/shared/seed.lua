if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[2]))
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[2], '_seeded', ARGV[3])
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]))
  return 1
end
return 0
