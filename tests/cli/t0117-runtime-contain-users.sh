# Tasks run as their job's user: a job of `nobody` runs with nobody's uid, gid and groups, owns its output and cannot read the keys (in a folder the daemons make 0700); an unknown user fails the launch with the reason; a fork bomb stops at the task's pids.max (--task-pids) and cancel clears it.
. "$(dirname "$0")/rtlib.sh"
need id stat
[ "$(id -u)" -eq 0 ] || fail "needs root (tasks switch users)"
[ -w /sys/fs/cgroup/pids ] || fail "needs a writable cgroup v1 pids hierarchy"
id nobody >/dev/null 2>&1 || fail "needs the user 'nobody'"
keygen
# Only the keys' own modes may protect them: the folders above let anyone through, and the
# keys folder starts open to all (the daemons must close it before anything runs).
chmod 0711 "$TMP" "$S"
chmod 0755 "$S/keys"
# A client key whose jobs run as nobody, in a key folder of that user's own.
"$HRM" keygen --client nob --user nobody "$S/keys" >/dev/null || fail "keygen --client"
mkdir -m 0700 "$TMP/nobody-keys"
cp "$S/keys/master.pub" "$TMP/nobody-keys/"
cp -p "$S/keys/client-nob.key" "$TMP/nobody-keys/client.key"
cp -p "$S/keys/client-nob.pub" "$TMP/nobody-keys/client.pub"
PIDS_MAX=40
start_master --node-timeout 2s
start_agent n1 --cpus 2 --task-pids "$PIDS_MAX"
until_ok 30 nodes_up 1 || fail "n1 did not register"
[ "$(stat -c %a "$S/keys")" = 700 ] || fail "the agent left the keys folder mode $(stat -c %a "$S/keys")"

# The job's user is the client key's account: nobody's key, or for an account the node does not
# have, a key mapped to it.
submit_as() { # USER SHELL-LINE [CWD]
  local keys="$TMP/keys-$1"
  if [ "$1" = nobody ]; then keys="$TMP/nobody-keys"
  elif [ ! -d "$keys" ]; then
    "$HRM" keygen --client "$1" --user "$1" "$S/keys" >/dev/null || return 1
    mkdir -m 0700 "$keys"
    cp "$S/keys/master.pub" "$keys/"
    cp -p "$S/keys/client-$1.key" "$keys/client.key"
    cp -p "$S/keys/client-$1.pub" "$keys/client.pub"
  fi
  printf '{"tasks": [{"cmd": ["sh", "-c", "%s"], "cwd": "%s"}]}' "$2" "${3:-/}" >"$TMP/job.json"
  HRM_KEYS="$keys" "$HRM" submit "$TMP/job.json"
}
j=$(submit_as nobody "id -u; id -g; id -G; cat $S/keys/master.key >/dev/null 2>&1 && echo key-read || echo key-refused") ||
  fail "submit"
expect_exit 0 timeout 60 "$HRM" wait "$j"
out="$S/agents/n1/$j/0.out"
[ "$(sed -n 1p "$out")" = "$(id -u nobody)" ] || fail "uid $(sed -n 1p "$out"), expected nobody's $(id -u nobody)"
[ "$(sed -n 2p "$out")" = "$(id -g nobody)" ] || fail "gid $(sed -n 2p "$out"), expected nobody's $(id -g nobody)"
[ "$(sed -n 3p "$out")" = "$(id -G nobody)" ] || fail "groups $(sed -n 3p "$out"), expected nobody's $(id -G nobody)"
[ "$(sed -n 4p "$out")" = key-refused ] || fail "a task of nobody read keys/master.key"
[ "$(stat -c %u "$out")" = "$(id -u nobody)" ] || fail "the output file is owned by uid $(stat -c %u "$out")"

# An unknown user: the launch fails (127) and the agent says why.
nouser="hrm-no-user-$$"
j=$(submit_as "$nouser" "true") || fail "submit"
expect_exit 127 timeout 60 "$HRM" wait "$j"
grep -q "no such user '$nouser' on n1" "$TMP/n1.log" || fail "the agent did not say the user is unknown"

# The task enters its working directory as its user: one nobody may not enter fails the launch.
mkdir -m 0700 "$TMP/private"
j=$(submit_as nobody "true" "$TMP/private") || fail "submit"
expect_exit 127 timeout 60 "$HRM" wait "$j"
grep -q "Permission denied (working directory $TMP/private)" "$TMP/n1.log" ||
  fail "the agent did not say nobody may not enter the working directory"

# A bounded fork bomb: a shell starts 1,000 background sleeps; pids.max stops it at the
# limit (the shell fails to fork and exits non-zero), and the outer shell stays to be counted.
M="$$$RANDOM"
marks() { pgrep -fc "^sleep 9751\\.$M\$" || true; }
j=$("$HRM" submit -- sh -c "sh -c 'i=0; while [ \$i -lt 1000 ]; do sleep 9751.$M & i=\$((i+1)); done'
echo \$? >$TMP/bomb.rc; exec sleep 9752.$M") || fail "submit"
until_ok 120 test -s "$TMP/bomb.rc" || fail "the fork loop never ended"
[ "$(cat "$TMP/bomb.rc")" -ne 0 ] || fail "the fork loop ran to its end: $(marks) processes"
n=$(marks)
[ "$n" -ge 1 ] && [ "$n" -le "$PIDS_MAX" ] || fail "$n processes in the task, pids.max is $PIDS_MAX"
# The outer shell writes bomb.rc just before it execs: wait for the exec, not just the file.
until_ok 60 pgrep -f "^sleep 9752\\.$M\$" >/dev/null || fail "the task's main process is gone"
holder=$(pgrep -f "^sleep 9752\\.$M\$") || fail "the task's main process is gone"
p=$(sed -n 's/^[0-9]*:pids:\(.*\)/\1/p' "/proc/$holder/cgroup")
[ "$(cat "/sys/fs/cgroup/pids$p/pids.max")" = "$PIDS_MAX" ] || fail "pids.max $(cat "/sys/fs/cgroup/pids$p/pids.max")"
expect_exit 0 "$HRM" cancel "$j"
none_left() { [ "$(marks)" -eq 0 ] && ! pgrep -f "^sleep 9752\\.$M\$" >/dev/null; }
until_ok 60 none_left || fail "$(marks) processes of the fork bomb outlived the cancel"
