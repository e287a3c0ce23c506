# GET /metrics under hrm-shared: the commit role's claims, commits and conflicts match hrm stats, after a race for one CPU that makes a conflict likely.
. "$(dirname "$0")/rtlib.sh"
. "$(dirname "$0")/metrics-lib.sh"
# One node of one CPU and two instances that think 2 s per transaction: both plan on the same
# snapshot when the machine keeps up, and the second claim conflicts (t0182 has the details).
up_two_scheds 1 --cpus 1 --policy hrm-shared --param instances=2 --param t_job_ms=2000
until_ok 60 test -s "$U/http" || fail "no $U/http"
stat() { "$HRM" stats --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["shared"][sys.argv[1]])' "$1"; }
a=$("$HRM" submit --cpus 1 -- sleep 0.2) || fail "submit a"
b=$("$HRM" submit --cpus 1 -- sleep 0.2) || fail "submit b"
expect_exit 0 timeout 120 "$HRM" wait "$a"
expect_exit 0 timeout 120 "$HRM" wait "$b"
scrape "$TMP/m"
for pair in transactions:txns claims:claims commits:committed commit_conflicts:conflicts retries:retries; do
  want=$(stat "${pair#*:}")
  is "$TMP/m" "hrm_shared_${pair%%:*}_total" "$want" ||
    fail "hrm_shared_${pair%%:*}_total is $(value "$TMP/m" "hrm_shared_${pair%%:*}_total"), hrm stats says ${pair#*:} $want"
done
is "$TMP/m" hrm_shared_commits_total 2 || fail "two tasks, not two commits"
is "$TMP/m" 'hrm_tasks{state="done"}' 2 || fail "done tasks"
