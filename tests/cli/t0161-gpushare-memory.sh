# Fractional GPUs under --policy hrm: GPU memory stops stacking before the shares do: on a 16G GPU a 0.25-GPU task with 10G and one with 6G run at once, and another 0.25 with 10G waits until the first 10G one ends, though the shares would fit.
. "$(dirname "$0")/gpushare-lib.sh"
gpu_cluster hrm 1
a=$("$HRM" submit --gpus 0.25 --gpu-mem 10G --cpus 1 -- sh -c "$(hold_task a)") || fail "submit a"
until_ok 60 began "$a" 0 || fail "the 10G task did not start"
c=$("$HRM" submit --gpus 0.25 --gpu-mem 6G --cpus 1 -- sh -c "$(hold_task c)") || fail "submit c"
until_ok 60 began "$c" 0 || fail "a 6G task did not stack beside 10G on a 16G GPU"
b=$("$HRM" submit --gpus 0.25 --gpu-mem 10G --cpus 1 -- sh -c "$(hold_task b)") || fail "submit b"
# The 6G one ends: 10G is still held, so b still waits.
touch "$TMP/go-c"
expect_exit 0 timeout 120 "$HRM" wait "$c"
touch "$TMP/go-a"
expect_exit 0 timeout 120 "$HRM" wait "$a"
until_ok 60 began "$b" 0 || fail "the second 10G task never started"
starts_after "$b" "$a"
touch "$TMP/go-b"
expect_exit 0 timeout 120 "$HRM" wait "$b"
