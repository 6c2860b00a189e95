#!/usr/bin/env bash
# walcount.sh: what one pactum binary writes per blocking request and per
# commit. It serves the echo agent (compare.sh's setup: a new SQLite file,
# audit on, workers 64) with BINARY, warms it up with 500 requests at 32
# clients, then sends REQUESTS blocking SendMessage from CLIENTS clients
# and prints the store's commits (pactum_store_commits_total), the
# server's CPU, write calls and bytes written per request (/proc/PID/io:
# each WAL frame is two pwrites, the checkpointer's copies and the HTTP
# answers count too), then SIGKILLs it and reads the log's last generation
# with bench/walstat: pages per commit, by b-tree. PACTUM_BENCH_TEXT_BYTES
# sets the size of each request's text (default "hello").
#
#   bash bench/lib/walcount.sh BINARY [clients] [requests]   (defaults: 1, 3000)
#
# Write calls per request move ~2 % from run to run, CPU per request on a
# shared host far more: they say what a schema change did to the pages a
# commit writes (docs/benchmarks.md, issue 31, third session).
set -euo pipefail
bin=$(realpath "${1:?usage: walcount.sh BINARY [clients] [requests]}")
clients=${2:-1}
n=${3:-3000}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
port=${WAL_PORT:-9973}
pid=
cleanup() {
	[[ -n $pid ]] && kill -9 "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$root/bench/lib/node.sh"
go test -c -o "$work/bench.test" "$root/internal/node"
port_free "$port" "set WAL_PORT"
echo_config "$work/pactum.yaml" "$port" "sqlite://$work/bench.db"
"$bin" serve --config "$work/pactum.yaml" >"$work/serve.log" 2>&1 &
pid=$!
wait_port "$port"
client() {
	PACTUM_BENCH_URL=http://127.0.0.1:$port/agents/echo "$work/bench.test" -test.run '^$' -test.timeout 10m \
		-test.bench "^BenchmarkSendMessageExternal\$/^clients=$1\$" -test.benchtime "$2"
}
commits() { curl -fsS "http://127.0.0.1:$port/metrics" | awk '/^pactum_store_commits_total/ { print $2 }'; }
io() { awk '/^syscw/ { c = $2 } /^wchar/ { b = $2 } END { print c, b }' "/proc/$pid/io"; }
client 32 500x >/dev/null
c0=$(commits) t0=$(cpu_ticks "$pid")
read -r w0 b0 < <(io)
client "$clients" "${n}x" | grep -E '^BenchmarkSend|FAIL|panic' || true
read -r w1 b1 < <(io)
c1=$(commits) t1=$(cpu_ticks "$pid")
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=
awk -v n="$n" -v c="$((c1 - c0))" -v us="$(per_request "$t0" "$t1" "$n")" -v w="$((w1 - w0))" -v b="$((b1 - b0))" 'BEGIN {
	printf "clients=%s: %d commits for %d requests; per request: cpu %d us, %.1f write calls, %.1f KB written\n", "'"$clients"'", c, n, us, w / n, b / n / 1024 }'
cp "$work/bench.db" "$work/copy.db"
cp "$work/bench.db-wal" "$work/copy.db-wal"
(cd "$root" && go run ./bench/walstat -skip 5 "$work/copy.db")
