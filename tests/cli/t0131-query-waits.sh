# Waits: 10,000 on one job from one client all get their answer when it ends, and waits on another
# job are not answered by it; a client past the cap (--max-waits, default 10,000) gets the "limit"
# error; a resent wait is answered once; a job listing larger than a page is refused by name.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
expect_exit 2 "$HRM" master --state "$S" --max-waits 0
grep -q -- "--max-waits" "$TMP/err" || fail "bad --max-waits not named"
# No node: the jobs wait (pending) until cancelled.
a=$("$HRM" submit --name a -- true) || fail "submit a"
b=$("$HRM" submit --name b -- true) || fail "submit b"
lines() { wc -l <"$1"; }
# Client B: 3 waits on b, then a listing whose answer shows all were read.
{ for r in 1 2 3; do echo "{\"v\":1,\"type\":\"wait\",\"req\":$r,\"id\":$b}"; done
  echo '{"v":1,"type":"jobs","req":4}'; } >"$TMP/b.lines"
"$HRM" raw --timeout 120 "@lines:$TMP/b.lines" >"$TMP/b.out" 2>&1 &
RAWB=$!; PIDS+=("$RAWB")
until_ok 60 grep -q jobs_list "$TMP/b.out" || fail "client B's listing not answered"
# Client A: 10,001 waits on a; the last is one too many.
python3 -c 'import sys
for r in range(1, 10002): print("{\"v\":1,\"type\":\"wait\",\"req\":%d,\"id\":%s}" % (r, sys.argv[1]))' "$a" >"$TMP/a.lines"
"$HRM" raw --timeout 120 "@lines:$TMP/a.lines" >"$TMP/a.out" 2>&1 &
RAWA=$!; PIDS+=("$RAWA")
until_ok 120 grep -q '"code":"limit"' "$TMP/a.out" || { tail -3 "$TMP/a.out" >&2; fail "no limit error for wait 10,001"; }
grep '"code":"limit"' "$TMP/a.out" | matches '"req":10001' || fail "the limit error is not for wait 10,001"
grep -q "max-waits" "$TMP/a.out" || fail "the limit error does not name --max-waits"
expect_exit 0 "$HRM" cancel "$a"
wait "$RAWA" || { tail -3 "$TMP/a.out" >&2; fail "client A did not get 10,001 answers"; }
[ "$(grep -c "\"id\":$a,.*\"type\":\"job_done\"" "$TMP/a.out")" -eq 10000 ] || fail "not 10,000 job_done for a"
[ "$(grep '"type":"job_done"' "$TMP/a.out" | grep -o '"req":[0-9]*' | sort -u | wc -l)" -eq 10000 ] \
  || fail "job_done for a: not one per wait"
# b's waiters heard nothing of a's end.
[ "$(lines "$TMP/b.out")" -eq 1 ] || { cat "$TMP/b.out" >&2; fail "client B got answers for a's end"; }
# The cap counts pending waits: with a's gone, the client may wait again.
echo "{\"v\":1,\"type\":\"wait\",\"req\":1,\"id\":$a}" >"$TMP/again"
expect_exit 0 "$HRM" raw "$TMP/again"
grep -q '"type":"job_done"' "$TMP/out" || fail "a wait on an ended job is not answered at once"
expect_exit 0 "$HRM" cancel "$b"
wait "$RAWB" || { cat "$TMP/b.out" >&2; fail "client B: not 4 answers"; }
[ "$(grep -c "\"id\":$b,.*\"type\":\"job_done\"" "$TMP/b.out")" -eq 3 ] || { cat "$TMP/b.out" >&2; fail "b's waits"; }

# A wait sent twice (as hrm wait resends it) is answered once: 3 frames, 2 answers, then silence.
c=$("$HRM" submit --name c -- true) || fail "submit c"
{ echo "{\"v\":1,\"type\":\"wait\",\"req\":1,\"id\":$c}"; echo "{\"v\":1,\"type\":\"wait\",\"req\":1,\"id\":$c}"
  echo '{"v":1,"type":"jobs","req":2}'; } >"$TMP/c.lines"
"$HRM" raw --timeout 10 "@lines:$TMP/c.lines" >"$TMP/c.out" 2>&1 &
RAWC=$!; PIDS+=("$RAWC")
until_ok 60 grep -q jobs_list "$TMP/c.out" || fail "client C's listing not answered"
expect_exit 0 "$HRM" cancel "$c"
set +e; wait "$RAWC"; set -e
[ "$(grep -c '"type":"job_done"' "$TMP/c.out")" -eq 1 ] || { cat "$TMP/c.out" >&2; fail "a resent wait answered twice"; }
grep -q "no reply (2 of 3)" "$TMP/c.out" || { cat "$TMP/c.out" >&2; fail "client C: not 2 of 3 answers"; }

# Listings: a page is at most 2,000 jobs; asking for more is refused with the field's name.
echo '{"v":1,"type":"jobs","req":1,"limit":5000}' >"$TMP/big"
expect_exit 0 "$HRM" raw "$TMP/big"
grep -q '"code":"limit"' "$TMP/out" && grep -q "limit: 5000 is out of range 1..2000" "$TMP/out" \
  || { cat "$TMP/out" >&2; fail "jobs limit 5000 not refused"; }
echo '{"v":1,"type":"jobs","req":1,"all":true,"limit":1}' >"$TMP/one"
expect_exit 0 "$HRM" raw "$TMP/one"
grep -q "\"id\":$c," "$TMP/out" && grep -q "\"next\":$c" "$TMP/out" && grep -q '"truncated":true' "$TMP/out" \
  || { cat "$TMP/out" >&2; fail "a page of 1 job: not the newest with next"; }
exit 0
