# bench/latency_hops.py (bench/profile-latency's reading of the trace): one probe followed from the
# client's call through both sides' I/O threads, the master's turn, commit and fdatasync, to the
# agent's clone; its hops, its acknowledgement, the device requests of its sync, and what it
# leaves out: other processes' events in between, and a probe whose clone never came; and the
# same for a launch sent between the commit's write and its sync.
. "$(dirname "$0")/lib.sh"
need python3
HOPS="$HRM_ROOT/bench/latency_hops.py"
# A perf script line: TIME(ms after 1000 s) PID/TID COMM EVENT TRACE...
ev() { printf '%16s %s %s: %20s: %s\n' "$3" "$2" "$(awk -v t="$1" 'BEGIN { printf "%.6f", 1000 + t / 1000 }')" "$4" "${*:5}"; }
{
  ev 0.000 100/100 hrm probe_hrm:lat7_submit_one '(55d0)'
  ev 0.100 100/101 ZMQbg/IO/0 syscalls:sys_enter_sendto 'fd: 0x0000000e, len: 0x000000b4'
  ev 0.120 400/401 ZMQbg/IO/0 syscalls:sys_enter_sendto 'fd: 0x00000009, len: 0x00000010' # another process
  ev 0.150 200/201 ZMQbg/IO/1 syscalls:sys_exit_recvfrom 0xb4
  ev 0.250 200/200 hrm probe_hrm:lat7_dispatch_msg '(55d0)'
  ev 0.400 200/200 hrm probe_hrm:lat7_commit '(55d0)'
  ev 0.500 200/200 hrm syscalls:sys_enter_fdatasync 'fd: 0x00000007'
  ev 0.510 200/200 hrm block:block_rq_issue '254,0 WS 4096 () 409738376 + 8 0x2,0,4 [hrm]'
  ev 0.520 400/400 hrm block:block_rq_issue '254,0 W 4096 () 1 + 8 0x2,0,4 [hrm]' # not the master's
  ev 0.700 200/200 hrm block:block_rq_issue '254,0 WSM 4096 () 377487672 + 8 0x2,0,4 [hrm]'
  ev 1.000 200/200 hrm syscalls:sys_exit_fdatasync 0x0
  ev 1.020 200/200 hrm probe_hrm:lat7_commit_ret__return '(55d0 <- 55d1)'
  ev 1.030 200/200 hrm probe_hrm:lat7_flush_msgs '(55d0)'
  ev 1.060 200/201 ZMQbg/IO/1 syscalls:sys_enter_sendto 'fd: 0x00000018, len: 0x000000f4'
  ev 1.100 300/301 ZMQbg/IO/0 syscalls:sys_exit_recvfrom 0xf4
  ev 1.120 300/300 hrm syscalls:sys_exit_poll 0x0
  ev 1.150 300/300 hrm syscalls:sys_exit_poll 0x1
  ev 1.200 300/300 hrm syscalls:sys_enter_clone 'clone_flags: 0x00004111'
  ev 1.300 100/100 hrm probe_hrm:lat7_submit_ret__return '(55d0 <- 55d1)'
  # A second probe whose task never starts: left out, not matched with anything after it.
  ev 50.000 100/100 hrm probe_hrm:lat7_submit_one '(55d0)'
  ev 50.100 100/101 ZMQbg/IO/0 syscalls:sys_enter_sendto 'fd: 0x0000000e, len: 0x000000b4'
} >"$TMP/perf.txt"
python3 "$HOPS" "$TMP/perf.txt" lat7 10 >"$TMP/out" || { cat "$TMP/out" >&2; fail "latency_hops.py failed"; }
cat "$TMP/out"
hop() { awk -v h="$1" 'index($0, h) == 1 { print $(NF - 1) }' "$TMP/out"; }
matches -x 'probes followed: 1' "$TMP/out" || fail "not exactly one probe followed"
[ "$(hop 'client I/O thread sends it')" = 0.100 ] || fail "client hop: $(hop 'client I/O thread sends it')"
[ "$(hop 'master I/O thread receives it')" = 0.050 ] || fail "the other process's sendto was taken for the master's receipt"
[ "$(hop 'master: turn done, commit called')" = 0.150 ] || fail "turn hop"
[ "$(hop 'fdatasync returned')" = 0.500 ] || fail "sync hop: $(hop 'fdatasync returned')"
[ "$(hop 'master I/O thread sends the launch')" = 0.030 ] || fail "launch hop"
[ "$(hop 'agent main thread wakes (poll returns)')" = 0.050 ] || fail "a poll that returned nothing was taken for the wake-up"
[ "$(hop 'agent: clone (start_us)')" = 0.050 ] || fail "clone hop"
[ "$(hop 'submit called -> clone')" = 1.200 ] || fail "total"
[ "$(hop 'submit called -> acknowledged')" = 1.300 ] || fail "acknowledgement"
matches 'device requests per fdatasync.*: WS WSM x1$' "$TMP/out" || fail "the sync's requests (the master's only)"

# A master that sends the launch between its commit's write and its sync: the commit returns
# first, the launch leaves, and the sync runs beside the launch's hops, printed apart.
{
  ev 0.000 100/100 hrm probe_hrm:lat8_submit_one '(55d0)'
  ev 0.100 100/101 ZMQbg/IO/0 syscalls:sys_enter_sendto 'fd: 0x0000000e, len: 0x000000b4'
  ev 0.150 200/201 ZMQbg/IO/1 syscalls:sys_exit_recvfrom 0xb4
  ev 0.250 200/200 hrm probe_hrm:lat8_dispatch_msg '(55d0)'
  ev 0.400 200/200 hrm probe_hrm:lat8_commit '(55d0)'
  ev 0.480 200/200 hrm probe_hrm:lat8_commit_ret__return '(55d0 <- 55d1)'
  ev 0.490 200/200 hrm probe_hrm:lat8_flush_msgs '(55d0)'
  ev 0.500 200/200 hrm syscalls:sys_enter_fdatasync 'fd: 0x00000007'
  ev 0.510 200/200 hrm block:block_rq_issue '254,0 WS 4096 () 409738376 + 8 0x2,0,4 [hrm]'
  ev 0.520 200/201 ZMQbg/IO/1 syscalls:sys_enter_sendto 'fd: 0x00000018, len: 0x000000f4'
  ev 0.560 300/301 ZMQbg/IO/0 syscalls:sys_exit_recvfrom 0xf4
  ev 0.600 300/300 hrm syscalls:sys_exit_poll 0x1
  ev 0.650 300/300 hrm syscalls:sys_enter_clone 'clone_flags: 0x00004111'
  ev 0.900 200/200 hrm syscalls:sys_exit_fdatasync 0x0
  ev 0.950 200/200 hrm probe_hrm:lat8_flush_msgs '(55d0)'
  ev 1.100 100/100 hrm probe_hrm:lat8_submit_ret__return '(55d0 <- 55d1)'
} >"$TMP/perf8.txt"
python3 "$HOPS" "$TMP/perf8.txt" lat8 10 >"$TMP/out8" || fail "latency_hops.py failed on the early launch"
cat "$TMP/out8"
grep -qx 'probes followed: 1' "$TMP/out8" || fail "the early launch's probe was not followed"
while IFS='|' read -r label want; do
  got=$(awk -v h="$label" 'index($0, h) == 1 { print $(NF - 1) }' "$TMP/out8")
  [ "$got" = "$want" ] || fail "early launch, '$label': $got, not $want"
done <<'W'
master: commit written (frames), returned|0.080
master: launches sent (flush), sync next|0.010
master I/O thread sends the launch|0.030
submit called -> clone|0.650
fdatasync, beside the launch|0.400
submit called -> acknowledged|1.100
W
grep -q 'device requests per fdatasync.*: WS x1$' "$TMP/out8" || fail "the early sync's requests"
echo ok
