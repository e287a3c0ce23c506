# The store's WAL keeps one size: written out when the master opens hrm.db, it is not grown by the commits of a burst of launches and ends, nor by checkpoints (run after the turns' messages, counted in the master's last log line and /metrics); a master killed with SIGKILL comes back with every acknowledged job, and the same WAL size.
. "$(dirname "$0")/rtlib.sh"
need stat
wal_size() { stat -c %s "$S/hrm.db-wal"; }
keygen
start_master
start_agent n1 --cpus 4 --mem 4G
until_ok 60 nodes_up 1 || fail "node did not register"
size=$(wal_size) || fail "no hrm.db-wal once the master is up"
# At least SQLite's checkpoint threshold of 4 KiB pages, each with its 24-byte frame header.
[ "$size" -ge $((32 + 1000 * (24 + 4096))) ] || fail "the WAL was not written out at open: $size bytes"

# A burst: every launch and end is a row and an event, enough pages for several checkpoints.
b=$("$HRM" submit --no-output --count 2000 --cpus 250m -- true) || fail "submit burst"
expect_exit 0 timeout 600 "$HRM" wait "$b"
[ "$(wal_size)" = "$size" ] || fail "the burst changed the WAL's size: $size -> $(wal_size)"
ids=()
for i in $(seq 20); do
  j=$("$HRM" submit --no-output --cpus 250m -- true) || fail "submit $i"
  ids+=("$j")
done
for j in "${ids[@]}"; do expect_exit 0 timeout 120 "$HRM" wait "$j"; done
[ "$(wal_size)" = "$size" ] || fail "one-task jobs changed the WAL's size: $size -> $(wal_size)"
grep -q "checkpoint" "$TMP/master.log" && fail "a checkpoint failed: $(grep checkpoint "$TMP/master.log")"

# Stopped: its last line counts the checkpoints it ran.
kill -TERM "$MASTER"
wait "$MASTER" 2>/dev/null || true
line=$(grep "master stopped" "$TMP/master.log" | tail -1)
n=$(sed -n 's/.* \([0-9][0-9]*\) checkpoints).*/\1/p' <<<"$line")
[ -n "$n" ] && [ "$n" -ge 1 ] || fail "no checkpoint counted by the master: $line"

# Reopened: written out again. Killed before it can checkpoint or close: every acknowledged job
# is back, the WAL the same size.
start_master
[ "$(wal_size)" = "$size" ] || fail "the reopened WAL: $size -> $(wal_size)"
last=$("$HRM" submit --no-output --cpus 250m -- true) || fail "submit last"
kill -KILL "$MASTER"
wait "$MASTER" 2>/dev/null || true
start_master
expect_exit 0 timeout 120 "$HRM" wait "$last"
for j in "$b" "${ids[@]}" "$last"; do
  expect_exit 0 "$HRM" job "$j"
done
[ "$(wal_size)" = "$size" ] || fail "the restarted master's WAL: $size -> $(wal_size)"
