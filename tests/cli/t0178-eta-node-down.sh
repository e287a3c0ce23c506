# A job whose only possible node is down says so, naming the node; its estimate is unknown.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --node-timeout 6s
start_agent small --cpus 1 --mem 1G
start_agent big --cpus 4 --mem 4G
until_ok 60 nodes_up 2 || fail "nodes did not register"
a=$("$HRM" submit --cpus 3 --time 10m -- sh -c "touch '$TMP/go'; sleep 600") || fail "submit a"
until_ok 60 test -e "$TMP/go" || fail "a did not start"
b=$("$HRM" submit --cpus 3 --time 1m -- true) || fail "submit b"
reason() { "$HRM" job "$1" --json | python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["pending_reason"], j["estimated_start_s"])'; }
case "$(reason "$b")" in
  "waiting for 3 CPUs free on one node (CPUs short on 1 node) "[0-9]*) ;;
  *) fail "b while big is up: $(reason "$b")" ;;
esac
kill -KILL "$AGENT_big"
until_ok 60 sh -c "\"$HRM\" nodes --json | grep -q '\"state\": \"down\"'" || fail "big not down"
# b is behind a, requeued when big went down; a is first.
case "$(reason "$b")" in
  "the node that could run its tasks (big) is down; 1 job ahead in queue default None") ;;
  *) fail "b while big is down: $(reason "$b")" ;;
esac
case "$(reason "$a")" in
  "the node that could run its tasks (big) is down None") ;;
  *) fail "a (requeued) while big is down: $(reason "$a")" ;;
esac
echo "ok"
