# A job behind others in its queue names how many are ahead of it in that queue (jobs of another
# queue are not counted), and hrm jobs shows an ETA column: "?" unknown, "-" not pending.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 1 --mem 4G
until_ok 60 nodes_up 1 || fail "node did not register"
reason() { "$HRM" job "$1" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["pending_reason"])'; }

a=$("$HRM" submit --cpus 1 -- sh -c "touch '$TMP/go'; while [ ! -e '$TMP/stop' ]; do sleep 0.05; done") || fail "submit a"
until_ok 60 test -e "$TMP/go" || fail "a did not start"
b=$("$HRM" submit --cpus 1 -- true) || fail "submit b"
o=$("$HRM" submit --cpus 1 --queue other -- true) || fail "submit o"
c=$("$HRM" submit --cpus 1 -- true) || fail "submit c"
d=$("$HRM" submit --cpus 1 -- true) || fail "submit d"
case "$(reason "$d")" in
  *"; 2 jobs ahead in queue default") ;;
  *) fail "d: $(reason "$d")" ;;
esac
case "$(reason "$c")" in
  *"; 1 job ahead in queue default") ;;
  *) fail "c: $(reason "$c")" ;;
esac
case "$(reason "$b")" in
  *ahead*) fail "b is first in its queue: $(reason "$b")" ;;
esac
case "$(reason "$o")" in
  *ahead*) fail "o is alone in queue other: $(reason "$o")" ;;
esac
"$HRM" jobs >"$TMP/jobs"
head -1 "$TMP/jobs" | grep -Eq " ETA$" || { cat "$TMP/jobs" >&2; fail "hrm jobs: no ETA column"; }
awk -v a="$a" -v d="$d" '$1 == a && $NF == "-" { x++ } $1 == d && $NF == "?" { y++ } END { exit !(x == 1 && y == 1) }' "$TMP/jobs" \
  || { cat "$TMP/jobs" >&2; fail "hrm jobs: ETA of the running job is not -, or of d not ?"; }
touch "$TMP/stop"
expect_exit 0 timeout 60 "$HRM" wait "$d"
echo "ok"
