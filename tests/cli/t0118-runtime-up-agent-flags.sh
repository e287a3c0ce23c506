# hrm up passes its agents' task flags on (--task-pids, --max-output, --output-retention, --usage-period), and refuses bad ones before anything starts.
. "$(dirname "$0")/lib.sh"
need stat pgrep
# Bad values: refused up front (exit 2), naming the flag, and nothing started.
for bad in "--task-pids -1" "--max-output 1K" "--output-retention soon" "--usage-period 0"; do
  # shellcheck disable=SC2086
  expect_exit 2 timeout 60 "$HRM" up --nodes 1 --state "$TMP/bad" $bad
  grep -q -- "${bad%% *}: '${bad#* }'" "$TMP/err" || fail "$bad: not named: $(cat "$TMP/err")"
done
[ ! -e "$TMP/bad/endpoint" ] || fail "a refused hrm up started a master"

# Good values reach every agent: its command line has them, and a task's cgroup has the pids.max.
cat >"$TMP/run.sh" <<'X'
set -e
for n in 1 2; do
  pid=$(pgrep -f -- "^hrm agent --state $HRM_STATE --name node$n ")
  tr '\0' ' ' <"/proc/$pid/cmdline" >"$OUT/node$n.cmdline"
done
id=$("$HRM" submit -- sh -c 'p=$(sed -n "s/^[0-9]*:pids:\(.*\)/\1/p" /proc/self/cgroup); cat /sys/fs/cgroup/pids$p/pids.max')
timeout 60 "$HRM" wait "$id"
"$HRM" logs "$id" --task 0 >"$OUT/pids.max"
X
OUT="$TMP" timeout 300 "$HRM" up --nodes 2 --cpus 1 --state "$TMP/st" --task-pids 77 --max-output 2M \
  --output-retention 5h --usage-period 3s -- env OUT="$TMP" bash "$TMP/run.sh" >"$TMP/out" 2>"$TMP/err" ||
  { cat "$TMP/err" >&2; fail "hrm up run failed"; }
for n in 1 2; do
  for f in "--task-pids 77" "--max-output 2M" "--output-retention 5h" "--usage-period 3s"; do
    grep -q -- "$f" "$TMP/node$n.cmdline" || fail "node$n was not given $f: $(cat "$TMP/node$n.cmdline")"
  done
done
[ "$(cat "$TMP/pids.max")" = 77 ] || fail "the task's pids.max is '$(cat "$TMP/pids.max")', not 77"
