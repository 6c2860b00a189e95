#!/usr/bin/env bash
# streamcpu.sh: a pactum server's own CPU per streamed request. Starts
# `pactum serve` (binary $1; echo agent, a new SQLite file, workers: 64,
# log level error, as compare.sh runs it) on 127.0.0.1:$2 (default 9771),
# sends 1,000 warm-up then STREAMCPU_N (default 5000) SendStreamingMessage
# requests from 32 clients (BenchmarkSendStreamingMessageExternal), and
# prints the server's CPU time (utime + stime, /proc/<pid>/stat) over the
# measured requests divided by their number, with the client's req/s. Run
# it for two builds in turn for an A/B:
#
#   go build -o /tmp/pactum-a ./cmd/pactum    # one tree, then the other into /tmp/pactum-b
#   for r in 1 2; do bash bench/lib/streamcpu.sh /tmp/pactum-a; bash bench/lib/streamcpu.sh /tmp/pactum-b; done
set -euo pipefail
bin=$1
port=${2:-9771}
n=${STREAMCPU_N:-5000}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
pid=
cleanup() {
	if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
source "$root/bench/lib/node.sh"
port_free "$port"
go test -c -o "$work/bench.test" "$root/internal/node"
echo_config "$work/pactum.yaml" "$port" "sqlite://$work/bench.db"
"$bin" serve --config "$work/pactum.yaml" >"$work/pactum.log" 2>&1 &
pid=$!
wait_port "$port"
url=http://127.0.0.1:$port/agents/echo
bench() {
	PACTUM_BENCH_URL=$url "$work/bench.test" -test.run '^$' -test.timeout 5m \
		-test.bench 'SendStreamingMessageExternal$/clients=32' -test.benchtime "$1"
}
bench 1000x >/dev/null
t0=$(cpu_ticks "$pid")
out=$(bench "${n}x" | grep '^Benchmark')
t1=$(cpu_ticks "$pid")
rps=$(awk '{for (i = 1; i <= NF; i++) if ($i == "req/s") print $(i-1)}' <<<"$out")
echo "$bin: server CPU $(per_request "$t0" "$t1" "$n") µs per streamed request, $rps req/s"
