#!/usr/bin/env bash
# Three replicas on 127.0.0.1 (docs/replication.md): 10,000 keys written
# through the leader, the leader killed with SIGKILL, 10,000 more through
# the new leader, the old one restarted; once all three agree, every
# acknowledged key is checked on every replica. Exits 0 only if no
# acknowledged key is missing anywhere; everything it started is stopped.
#
#   scripts/replica-demo.sh [BIN_DIR]   (default build/release/tools: jigsaw, jigsaw_replica)
#   JIGSAW_DEMO_KEYS=N                  keys per round (default 10000)
#   JIGSAW_DEMO_MODE=disk|pmem|hybrid   the replicas' storage mode (default disk)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/tools}
keys=${JIGSAW_DEMO_KEYS:-10000}
mode=${JIGSAW_DEMO_MODE:-disk}
for b in jigsaw jigsaw_replica; do
  [[ -x $bin/$b ]] || { echo "replica-demo: $bin/$b is missing (build with libraft installed)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/jigsaw-replica-demo.XXXXXX")
declare -a pid raft client
cleanup() {
  for i in 1 2 3; do
    [[ -n ${pid[$i]:-} ]] && kill -9 "${pid[$i]}" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# Six free loopback ports below the kernel's ephemeral range: a port from
# that range can become the local end of another socket's connect while
# the replica listening on it is down, and the restarted replica could not
# take it back.
read -r -a ports < <(python3 -c '
import os, random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
picked = []
for port in random.Random(os.getpid()).sample(range(10000, max(low, 11000)), 200):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        picked.append(port)
    except OSError:
        pass
    finally:
        s.close()
    if len(picked) == 6:
        break
print(" ".join(map(str, picked)))')
bootstrap=""
for i in 1 2 3; do
  raft[$i]=127.0.0.1:${ports[$((i - 1))]}
  client[$i]=127.0.0.1:${ports[$((i + 2))]}
  bootstrap+="${bootstrap:+,}$i@${raft[$i]}"
done
cluster="${client[1]},${client[2]},${client[3]}"
jigsaw() { "$bin/jigsaw" --cluster "$@"; }

start() {
  local i=$1
  "$bin/jigsaw_replica" --id "$i" --raft "${raft[$i]}" --client "${client[$i]}" --dir "$work/replica$i" \
    --bootstrap "$bootstrap" --mode "$mode" --pool_mb 256 --election_ms 500 --heartbeat_ms 50 \
    --snapshot_threshold 4096 --snapshot_trailing 512 >>"$work/replica$i.log" 2>&1 &
  pid[$i]=$!
}

# The id of the replica that leads (waits up to 60 s for one).
leader() {
  local deadline=$((SECONDS + 60)) id
  while ((SECONDS < deadline)); do
    for i in 1 2 3; do
      if [[ -n ${pid[$i]:-} ]] && jigsaw "${client[$i]}" status 2>/dev/null | grep -q '^role=leader$'; then
        echo "$i"
        return 0
      fi
    done
    sleep 0.2
  done
  echo "replica-demo: no leader within 60 s" >&2
  return 1
}

field() { jigsaw "${client[$1]}" status 2>/dev/null | sed -n "s/^$2=//p"; }

echo "replica-demo: three replicas ($mode mode) in $work"
for i in 1 2 3; do start "$i"; done
first=$(leader)
echo "replica-demo: replica $first leads; writing $keys keys"
time_start=$SECONDS
jigsaw "$cluster" load --count "$keys" --prefix a --acked "$work/acked"

echo "replica-demo: kill -9 the leader (replica $first)"
kill -9 "${pid[$first]}"
wait "${pid[$first]}" 2>/dev/null || true
pid[$first]=""
second=$(leader)
echo "replica-demo: replica $second leads; writing $keys more keys"
jigsaw "$cluster" load --count "$keys" --prefix b --acked "$work/acked"

echo "replica-demo: restarting replica $first"
start "$first"
deadline=$((SECONDS + 120))
while :; do
  commit=$(field "$(leader)" commit_index)
  agreed=1
  for i in 1 2 3; do
    [[ $(field "$i" applied_index) == "$commit" ]] || agreed=0
  done
  ((agreed)) && break
  if ((SECONDS > deadline)); then
    echo "replica-demo: the replicas did not agree within 120 s" >&2
    for i in 1 2 3; do echo "[replica $i]"; jigsaw "${client[$i]}" status || true; done >&2
    exit 1
  fi
  sleep 0.2
done
echo "replica-demo: all three applied index $commit"

status=0
for i in 1 2 3; do
  echo -n "replica-demo: replica $i: "
  jigsaw "${client[$i]}" verify --acked "$work/acked" || status=1
done
for i in 1 2 3; do kill -TERM "${pid[$i]}"; done
for i in 1 2 3; do wait "${pid[$i]}" || status=1; pid[$i]=""; done
acked=$(wc -l <"$work/acked")
if ((status == 0)); then
  echo "replica-demo: ok: $acked acknowledged keys on every replica ($((SECONDS - time_start)) s)"
else
  echo "replica-demo: FAILED: acknowledged keys missing or a replica did not stop cleanly" >&2
fi
exit $status
