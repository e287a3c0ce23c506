# bench/p4-testbed and hrm bench p4real: a tiny testbed (2 agents x 2 slots, 1 sched process, one load) runs every policy on real processes; the table, the BENCH lines and the raw records hold together (every job and task ended, response >= ideal); bad input is refused with the flag or line named.  No timing is asserted.
. "$(dirname "$0")/lib.sh"
need python3 timeout
TB=$HRM_ROOT/bench/p4-testbed
POLS="d-random sparrow dhrm dhrm-batch dhrm-nego drf"

# Bad input, before anything starts.
expect_exit 0 "$TB" --help
matches -- "--quick" <"$TMP/out" || fail "--help does not document --quick"
expect_exit 2 "$TB" "$HRM" --loads 0
matches -- "--loads" <"$TMP/err" || fail "a bad --loads is not named: $(cat "$TMP/err")"
expect_exit 2 "$TB" "$HRM" --policies drf,nosuch
matches "nosuch" <"$TMP/err" || fail "an unknown policy is not named"
expect_exit 2 "$TB" /nonexistent/hrm
expect_exit 0 "$HRM" bench p4real --help
matches -- "--workload" <"$TMP/out" || fail "hrm bench p4real --help does not document --workload"
expect_exit 2 "$HRM" bench p4real
matches -- "--workload" <"$TMP/err" || fail "a missing --workload is not named"
printf '0 100 80\n0.5 abc\n' >"$TMP/bad.txt"
expect_exit 2 "$HRM" bench p4real --workload "$TMP/bad.txt"
matches "bad.txt:2" <"$TMP/err" || fail "the bad line is not named: $(cat "$TMP/err")"
printf '0.5 100\n0.1 100\n' >"$TMP/back.txt"
expect_exit 2 "$HRM" bench p4real --workload "$TMP/back.txt"
matches "back.txt:2" <"$TMP/err" || fail "an offset going back is not named"
printf '0 0\n' >"$TMP/zero.txt"
expect_exit 2 "$HRM" bench p4real --workload "$TMP/zero.txt"
expect_exit 2 "$HRM" bench p4real --workload "$TMP/nosuch.txt"
matches "nosuch.txt" <"$TMP/err" || fail "a missing workload file is not named"

# A cluster that cannot keep up: 8 tasks of 3 s on one slot need 24 s; --drain 1 gives up 1 s
# after the last arrival, says so and how many jobs ended, and exits 1.
printf '0 3000 3000 3000 3000 3000 3000 3000 3000\n' >"$TMP/long.txt"
expect_exit 1 timeout 120 "$HRM" bench p4real --workload "$TMP/long.txt" --nodes 1 --cpus 1 --drain 1 \
  --state "$TMP/st"
matches "0 of 1 jobs ended within 1 s of the last arrival (--drain)" <"$TMP/err" \
  || fail "no overload message: $(cat "$TMP/err")"
matches "^BENCH p4real.jobs_ended 0 " <"$TMP/out" || fail "jobs_ended is not 0"

# The tiny testbed, every policy, the raw outputs kept.
expect_exit 0 timeout 600 "$TB" "$HRM" --loads 50 --seconds 3 --nodes 2 --cpus 2 --sched-procs 1 \
  --keep "$TMP/k"
cp "$TMP/out" "$TMP/tb.out"
matches "^checks: .*: ok$" <"$TMP/tb.out" || fail "the checks did not pass: $(tail -5 "$TMP/tb.out")"
matches "^== load 50 %" <"$TMP/tb.out" || fail "no table for the 50 % load"
for p in $POLS; do
  k=${p//-/_}
  # A row with figures for the real run and both simulations (a failed run shows 'failed', a
  # missing simulation '-').
  awk -v p="$p" '$1 == p && $2 != "failed" { n = split($0, h, "|"); a = split(h[2], f, " ");
    b = split(h[3], g, " "); if (n == 3 && a == 5 && b == 5) ok = 1 } END { exit ok ? 0 : 1 }' "$TMP/tb.out" \
    || fail "no complete row for $p: $(grep "^$p " "$TMP/tb.out")"
  for m in p50_over_ideal_50 p95_over_ideal_50 mean_over_ideal_50 wait_mean_ms_50; do
    matches "^BENCH p4_real\.$k\.$m [0-9.]" <"$TMP/tb.out" || fail "no BENCH p4_real.$k.$m"
  done
  matches "^BENCH p4_sim\.$k\.p50_over_ideal_50 [0-9.]" <"$TMP/tb.out" || fail "no BENCH p4_sim.$k"
  # Each ratio over the ideal is at least 1.
  awk -v k="$k" '$2 ~ "^p4_(real|sim)\\." k "\\.(p50|p95|mean)_over_ideal" && $3 < 1 { bad = 1 }
    END { exit bad ? 1 : 0 }' "$TMP/tb.out" || fail "$p: a response below its ideal in the BENCH lines"
done
for r in "dhrm-batch / d-random" "dhrm-batch / dhrm" "negotiator: dhrm-nego vs dhrm-batch"; do
  matches -F "$r" <"$TMP/tb.out" || fail "no '$r' ratio"
done

# The raw records, read independently of the script's own summary: every job of the workload
# ended done, with all its tasks, and no response is shorter than its ideal.
wl=$TMP/k/load50.txt
[ -s "$wl" ] || fail "no workload kept"
jobs=$(grep -vc '^#' "$wl")
tasks=$(grep -v '^#' "$wl" | awk '{ n += NF - 1 } END { print n }')
[ "$jobs" -ge 1 ] || fail "an empty workload"
for p in $POLS; do
  raw=$TMP/k/load50-$p.out
  [ -s "$raw" ] || fail "no raw output for $p"
  awk -v jobs="$jobs" -v tasks="$tasks" -v p="$p" '
    $1 == "JOB" { j++; if ($6 != "done" || $4 + 0 < $5 + 0 || $5 + 0 <= 0) bad = bad " job " $2 }
    $1 == "WAIT" { t += NF - 2; for (i = 3; i <= NF; i++) if ($i + 0 < 0) bad = bad " wait<0 " $2 }
    $1 == "BENCH" && $2 == "p4real.jobs_ended" { ended = $3 }
    END { if (j != jobs || t != tasks || ended != jobs || bad != "") {
            printf "%s: %d/%d jobs, %d/%d tasks, ended %s;%s\n", p, j, jobs, t, tasks, ended, bad; exit 1 } }' \
    "$raw" >&2 || fail "$p: the raw records do not hold together"
done
# The simulator's spec lists the same jobs on the same cluster.
python3 - "$TMP/k/load50-sim.json" "$jobs" "$tasks" <<'P' || fail "the sim spec does not list the workload's jobs"
import json, sys
s = json.load(open(sys.argv[1]))
jobs = s["workload"]["jobs"]
assert len(jobs) == int(sys.argv[2]), len(jobs)
assert sum(len(j["tasks"]) for j in jobs) == int(sys.argv[3])
assert s["cluster"]["nodes"][0]["count"] == 2 and s["cluster"]["nodes"][0]["cores"] == 2
P
echo ok
