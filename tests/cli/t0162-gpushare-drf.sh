# Fractional GPUs under a policy that does not stack (drf): each 0.5-GPU task gets a whole idle GPU of its own, and a third waits while both GPUs are held.
. "$(dirname "$0")/gpushare-lib.sh"
gpu_cluster drf 2
a=$("$HRM" submit --count 2 --gpus 0.5 --cpus 1 -- sh -c "$(hold_task a)") || fail "submit a"
until_ok 60 began "$a" 0 || fail "task 0 did not start"
until_ok 60 began "$a" 1 || fail "task 1 did not start"
d0=$(dev "$a" 0); d1=$(dev "$a" 1)
[[ $d0 =~ ^[01]$ && $d1 =~ ^[01]$ && $d0 != "$d1" ]] || fail "drf gave the two 0.5-GPU tasks '$d0' and '$d1', not a GPU each"
shares_are "500 500" || fail "n1 holds GPU shares '$(node_shares)', expected 500 500"
"$HRM" nodes --json | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)[0]["gpu_free"] == 0 else 1)' \
  || fail "drf left a GPU free under two fractional tasks"
w=$("$HRM" submit --gpus 0.5 --cpus 1 -- sh -c "$(hold_task w)") || fail "submit w"
touch "$TMP/go-a"
expect_exit 0 timeout 120 "$HRM" wait "$a"
until_ok 60 began "$w" 0 || fail "the waiting task never started"
starts_after "$w" "$a"
touch "$TMP/go-w"
expect_exit 0 timeout 120 "$HRM" wait "$w"
