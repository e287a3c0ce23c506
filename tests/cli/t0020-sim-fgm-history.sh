# hrm sim --history: FGM's estimates survive a restart; bad history files and bad FGM/NPARSA
# parameters are refused with a message naming the file or key; --help documents them.
. "$(dirname "$0")/lib.sh"
# One node of 8 cores / 16 GiB; 16 tasks asking 2 cores / 4 GiB that use 1 core / 1.5 GiB
# for 10 s.  By request 4 run at a time (40 s); FGM's first run takes its first wave by
# request and then packs 8 (30 s); a second run predicts from the start (20 s).
cat >"$TMP/spec.json" <<'JSON'
{"cluster": {"nodes": [{"name": "n", "cores": 8, "mem": "16G"}]},
 "workload": {"jobs": [{"name": "j", "user": "u", "stages": [{"name": "map", "tasks": 16,
   "task": {"logic": "over-asked", "cpu": 2, "mem": "4G",
            "profile": [{"duration": "10s", "cpu": 1, "mem": "1536M"}]}}]}]},
 "execution": {"model": "fluid", "contention": 0.05, "usage_interval": "1s"}}
JSON
makespan() { sed -n 's/^makespan (s) *\([0-9.]*\).*/\1/p' "$TMP/out"; }
# near SECONDS: the makespan is within 0.1 s of it (message passing adds a millisecond)
near() { awk -v m="$(makespan)" -v s="$1" 'BEGIN { exit !(m - s < 0.1 && s - m < 0.1) }'; }
hist="$TMP/fgm.hist"
expect_exit 0 "$HRM" sim "$TMP/spec.json" -q --policy drf
near 40 || fail "drf makespan $(makespan), expected 40 s"
expect_exit 0 "$HRM" sim "$TMP/spec.json" -q --policy fgm --history "$hist"
near 30 || fail "first fgm run: makespan $(makespan), expected 30 s"
head -1 "$hist" | matches -x "hrm-estimates 1" || fail "history not saved"
expect_exit 0 "$HRM" sim "$TMP/spec.json" -q --policy fgm --history "$hist"
near 20 || fail "second fgm run: makespan $(makespan), expected 20 s"
# --param fgm.history is the same thing.
expect_exit 0 "$HRM" sim "$TMP/spec.json" -q --policy fgm --param "fgm.history=$hist"
near 20 || fail "--param fgm.history: makespan $(makespan)"

# Damaged, foreign and unwritable histories: exit 2, the file and the key named, file kept.
printf 'hrm-estimates 1\n0000abcd 3 1 1 oops\n' >"$TMP/bad.hist"
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy fgm --history "$TMP/bad.hist"
grep -q "parameter 'history'.*bad.hist: line 2" "$TMP/err" || fail "corrupt history: $(cat "$TMP/err")"
grep -q oops "$TMP/bad.hist" || fail "a refused history was overwritten"
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy fgm --history "$TMP/spec.json"
grep -q "not an hrm estimates file" "$TMP/err" || fail "foreign history: $(cat "$TMP/err")"
head -c 3000 /dev/urandom >"$TMP/random.hist"
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy fgm --history "$TMP/random.hist"
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy fgm --history "$TMP/no/such/dir/h"
grep -q "cannot create" "$TMP/err" || fail "unwritable history: $(cat "$TMP/err")"
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy drf --history "$hist"
grep -q -- "--history: only policy fgm" "$TMP/err" || fail "--history without fgm"

# Bad parameters name their key.
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy fgm --param fgm.th_fg=0.5
grep -q "'th_fg'" "$TMP/err" || fail "fgm threshold order: $(cat "$TMP/err")"
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy fgm --param fgm.max_compression=2
grep -q "'max_compression'" "$TMP/err" || fail "fgm max_compression"
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy nparsa --param nparsa.threshold=-1
grep -q "'threshold'" "$TMP/err" || fail "nparsa threshold: $(cat "$TMP/err")"
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy nparsa \
  --param "nparsa.cpu_static=1,9,1/9,1;1/9,1,9,1;9,1/9,1,1;1,1,1,1"
grep -q "parameter 'cpu_static'.*consistency ratio CR = .*must be below 0.1" "$TMP/err" ||
  fail "inconsistent AHP matrix: $(cat "$TMP/err")"

# --help documents every FGM and NPARSA parameter with its default.
expect_exit 0 "$HRM" sim --help
for key in min_obs weight compressed_factor max_stages "p \[0.05\]" limitation max_compression \
  mem_headroom "idle \[0.01\]" conf_idle th_fg th_cg th_sa window qos_stretch history \
  "threshold \[1.1\]" typing "alpha \[0.5\]" balance cpu_static cpu_dynamic mem_static mem_dynamic; do
  grep -q -- "$key" "$TMP/out" || fail "hrm sim --help does not document '$key'"
done
