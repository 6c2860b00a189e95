#!/usr/bin/env bash
# compare.sh: blocking SendMessage throughput of pactum against the official
# JS SDK's in-memory echo server (bench/js-baseline), each in its own
# process on loopback, measured by the same Go client
# (BenchmarkSendMessageExternal). Every round starts both servers fresh
# (pactum on a new SQLite file), warms each up with 2,000 requests, measures
# it, and stops it; the two alternate so that machine drift hits both.
#
#   bash bench/compare.sh [rounds] [requests]     (defaults: 5 rounds, 8000)
#
# Needs Go and Node 20+ with npm. Prints one line per server and round.
set -euo pipefail

rounds=${1:-5}
n=${2:-8000}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$root/bench/js-baseline" && npm ci --silent --no-audit --no-fund >/dev/null)
go build -o "$work/pactum" "$root/cmd/pactum"
go test -c -o "$work/bench.test" "$root/internal/server"

js_port=9931
pactum_port=9932
cat >"$work/pactum.yaml" <<EOF
listen: 127.0.0.1:$pactum_port
store: sqlite://$work/bench.db
workers: 64
log:
  level: error
agents:
  - name: echo
    type: echo
EOF

# wait_port waits until something accepts connections on 127.0.0.1:$1.
wait_port() {
	for _ in $(seq 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "nothing listens on 127.0.0.1:$1" >&2
	return 1
}

# measure runs the client against $2 and prints req/s, p50 and p99 per
# client count, labelled $1.
measure() {
	PACTUM_BENCH_URL=$2 "$work/bench.test" -test.run x -test.bench External -test.benchtime 2000x >/dev/null
	PACTUM_BENCH_URL=$2 "$work/bench.test" -test.run x -test.bench External -test.benchtime "${n}x" |
		awk -v label="$1" '/^BenchmarkSendMessageExternal/ {
			split($1, a, "="); sub(/-[0-9]+$/, "", a[2]);
			for (i = 1; i <= NF; i++) { if ($i == "req/s") r = $(i-1); if ($i == "p50-ms") p50 = $(i-1); if ($i == "p99-ms") p99 = $(i-1) }
			printf "%-7s clients=%-3s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms\n", label, a[2], r, p50, p99 }'
}

for round in $(seq "$rounds"); do
	echo "# round $round"
	(cd "$root/bench/js-baseline" && exec node server.mjs "$js_port" >"$work/js.log" 2>&1) &
	pids=($!)
	wait_port "$js_port"
	measure js "http://127.0.0.1:$js_port/"
	kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true

	rm -f "$work"/bench.db*
	"$work/pactum" serve --config "$work/pactum.yaml" >"$work/pactum.log" 2>&1 &
	pids=($!)
	wait_port "$pactum_port"
	measure pactum "http://127.0.0.1:$pactum_port/agents/echo"
	kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true
	pids=()
done
