# hrm logs streams output of any size and any bytes: 5 MiB of stdout and binary stderr (NUL, 0xFF, invalid UTF-8) read back byte for byte.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1
until_ok 60 nodes_up 1 || fail "the node did not register"

# 5 MiB of numbered lines, far over the wire's 64 KiB string and 1 MiB frame limits.
python3 -c 'import sys
sys.stdout.write("".join("%09d\n" % i for i in range(524288)))' >"$TMP/big"
[ "$(stat -c %s "$TMP/big")" -eq 5242880 ] || fail "the reference file is not 5 MiB"
# Every byte value, NULs and 0xFF runs, and bytes that are not UTF-8.
python3 -c 'import sys
b = bytes(range(256)) * 64 + b"\0" * 1000 + b"\xff" * 1000 + b"\xc3\x28\xa0\xa1" * 100
sys.stdout.buffer.write(b)' >"$TMP/bin"

j=$("$HRM" submit -- sh -c "cat '$TMP/big'; cat '$TMP/bin' >&2") || fail "submit"
expect_exit 0 timeout 300 "$HRM" wait "$j"
timeout 300 "$HRM" logs "$j" >"$TMP/got-out" || fail "hrm logs failed"
cmp "$TMP/big" "$TMP/got-out" || fail "5 MiB of stdout did not come back byte for byte"
timeout 300 "$HRM" logs "$j" --err >"$TMP/got-err" || fail "hrm logs --err failed"
cmp "$TMP/bin" "$TMP/got-err" || fail "binary stderr did not come back byte for byte"

# An empty output prints nothing and succeeds; a task that does not exist is an error.
k=$("$HRM" submit -- true) || fail "submit k"
expect_exit 0 timeout 300 "$HRM" wait "$k"
expect_exit 0 timeout 300 "$HRM" logs "$k"
[ ! -s "$TMP/out" ] || fail "an empty output printed something"
expect_exit 1 timeout 300 "$HRM" logs "$k" --task 5
grep -q "no task" "$TMP/err" || fail "a missing task is not named"
