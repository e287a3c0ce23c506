# hrm up --policy hrm-shared places through the hrm policy's units: two half-GPU tasks of 4G stack on the one 16G virtual GPU of the node (both run at once on GPU 0), and a quarter-GPU task of 10G waits beside another 10G one by GPU memory though the shares would fit, and starts once the first ends.
. "$(dirname "$0")/gpushare-lib.sh"
up_two_scheds 1 --cpus 4 --gpus 1 --gpu-mem 16G --policy hrm-shared --log-level debug
a=$("$HRM" submit --gpus 0.5 --gpu-mem 4G --cpus 1 -- sh -c "$(hold_task a)") || fail "submit a"
until_ok 60 began "$a" 0 || fail "the first half-GPU task did not start"
c=$("$HRM" submit --gpus 0.5 --gpu-mem 4G --cpus 1 -- sh -c "$(hold_task c)") || fail "submit c"
until_ok 60 began "$c" 0 || fail "a second half-GPU task did not stack on the 16G GPU"
[ "$(dev "$a" 0)" = 0 ] && [ "$(dev "$c" 0)" = 0 ] || fail "not both on GPU 0: $(dev "$a" 0) $(dev "$c" 0)"
until_ok 60 shares_are 1000 || fail "the GPU does not hold both halves: $(node_shares)"
touch "$TMP/go-a" "$TMP/go-c"
expect_exit 0 timeout 120 "$HRM" wait "$a"
expect_exit 0 timeout 120 "$HRM" wait "$c"
# By memory: 10G + 10G > 16G, while a quarter and a quarter are only half the GPU.
x=$("$HRM" submit --gpus 0.25 --gpu-mem 10G --cpus 1 -- sh -c "$(hold_task x)") || fail "submit x"
until_ok 60 began "$x" 0 || fail "the first 10G task did not start"
y=$("$HRM" submit --gpus 0.25 --gpu-mem 10G --cpus 1 -- sh -c "$(hold_task y)") || fail "submit y"
touch "$TMP/go-x"
expect_exit 0 timeout 120 "$HRM" wait "$x"
until_ok 60 began "$y" 0 || fail "the second 10G task never started"
starts_after "$y" "$x"
touch "$TMP/go-y"
expect_exit 0 timeout 120 "$HRM" wait "$y"
expect_exit 0 "$HRM" stats --json
python3 - "$TMP/out" <<'PY' || fail "hrm stats: $(cat "$TMP/out")"
import json, sys
s = json.load(open(sys.argv[1]))["shared"]
assert s["committed"] == 4, s
assert s["protocol_errors"] == 0 and s["launches_refused"] == 0, s
PY
