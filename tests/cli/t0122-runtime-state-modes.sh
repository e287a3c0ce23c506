# The state folder, the store and task output are private to the daemons' user; open folders are closed (logged), readable secret keys refused.
. "$(dirname "$0")/rtlib.sh"
need stat
mode() { stat -c %a "$1"; }
mkdir "$S"; chmod 755 "$S"
keygen
start_master
[ "$(mode "$S")" = 700 ] || fail "state folder is $(mode "$S"), not 700"
grep -q "state folder $S was open to other users (mode 0755): now 0700" "$TMP/master.log" \
  || fail "closing the state folder is not logged"
start_agent n1 --cpus 2
until_ok 60 nodes_up 1 || fail "agent did not register"
id=$("$HRM" submit --env SECRET=hunter2 -- sh -c 'echo out; echo err >&2') || fail "submit"
expect_exit 0 timeout 60 "$HRM" wait "$id"
for f in hrm.db hrm.db-wal hrm.db-shm endpoint; do
  [ "$(mode "$S/$f")" = 600 ] || fail "$f is $(mode "$S/$f"), not 600"
done
out="$S/agents/n1/$id"
[ "$(mode "$out")" = 700 ] || fail "the job's output folder is $(mode "$out"), not 700"
[ "$(mode "$out/0.out")" = 600 ] || fail "task output is $(mode "$out/0.out"), not 600"
[ "$(mode "$out/0.err")" = 600 ] || fail "task errors are $(mode "$out/0.err"), not 600"

# A folder and store of an older hrm (0755, 0644): closed at the next start, saying so.
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true
chmod 755 "$S"; chmod 644 "$S/hrm.db"
start_master
[ "$(mode "$S")" = 700 ] && [ "$(mode "$S/hrm.db")" = 600 ] || fail "an old folder was not closed"
grep -q "hrm.db was readable by other users (mode 0644): now 0600" "$TMP/master.log" \
  || fail "closing hrm.db is not logged"

# A shared folder (sticky, as /tmp) is not ours to close: refused, with the reason.
mkdir "$TMP/shared"; chmod 1777 "$TMP/shared"
expect_exit 1 timeout 60 "$HRM" master --state "$TMP/shared"
grep -q "not this user's own folder" "$TMP/err" || fail "a shared state folder was accepted"
[ "$(mode "$TMP/shared")" = 1777 ] || fail "a shared folder was changed"

# Secret keys others may read are refused, naming the file and the fix; so is an authorized
# file others may change.
chmod 644 "$S/keys/client.key"
expect_exit 1 "$HRM" nodes
grep -q "client.key: mode 0644 lets other users read this secret key; run chmod 600" "$TMP/err" \
  || fail "a readable client key was used"
chmod 600 "$S/keys/client.key"
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true
chmod 640 "$S/keys/master.key"
expect_exit 1 timeout 60 "$HRM" master --state "$S"
grep -q "master.key: mode 0640 lets other users read" "$TMP/err" || fail "a readable master key was used"
chmod 600 "$S/keys/master.key"; chmod 666 "$S/keys/authorized"
expect_exit 1 timeout 60 "$HRM" master --state "$S"
grep -q "authorized: other users may change it (mode 0666)" "$TMP/err" || fail "a writable allow-list was used"
