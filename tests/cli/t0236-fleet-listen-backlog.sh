# The master's listening socket queues as many connections as the kernel allows (net.core.somaxconn), not ZeroMQ's 100: thousands of agents connecting at once after a master restart must not have their connections dropped by the kernel and retried seconds later.
. "$(dirname "$0")/rtlib.sh"
need ss
keygen
start_master
port=$(sed 's/.*://' "$S/endpoint")
[ -n "$port" ] || fail "no endpoint"
cap=$(cat /proc/sys/net/core/somaxconn)
[ "$cap" -gt 65535 ] && cap=65535
backlog=$(ss -Hltn "sport = :$port" | awk '{print $3}' | head -1)
[ -n "$backlog" ] || fail "no listening socket on port $port"
[ "$backlog" -eq "$cap" ] || fail "the master listens with a backlog of $backlog, not $cap (somaxconn)"
echo ok
