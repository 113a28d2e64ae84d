-- wrk script: each request with the next key of the file $KEYS_FILE (one
-- per line), round and round: a flood of keys, for bench/keys-scale.sh.
local keys, i = {}, 0
for line in io.lines(os.getenv("KEYS_FILE")) do keys[#keys + 1] = line end
request = function()
  i = i % #keys + 1
  return wrk.format("GET", "/v1/companies?limit=1", { ["Authorization"] = "Bearer " .. keys[i] })
end
