-- wrk script: each request with the next path of the file $PATHS_FILE (one
-- per line), round and round, with the key of $KEY: many distinct pages,
-- for bench/news-list.sh.
local paths, i = {}, 0
for line in io.lines(os.getenv("PATHS_FILE")) do paths[#paths + 1] = line end
local key = os.getenv("KEY")
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i], { ["Authorization"] = "Bearer " .. key })
end
