#!/usr/bin/env bash
# ab.sh: pactum at an earlier commit against pactum now, on the same
# machine in the same minutes, with compare.sh's client and server setup
# (echo agent, a new SQLite file, audit on, workers 64, log level error).
# The two servers alternate (the starting one rotates each round); each is
# started fresh, warmed up with 2,000 requests, and measured with blocking
# SendMessage at 1 and 32 clients and SendStreamingMessage at 32. Prints
# one line per measurement, the medians and the ratios now / then. Each
# line also gives the server's CPU time per request (user + system, from
# /proc/PID/stat around the measurement): on a shared host it drifts less
# than the rate does.
#
#   bash bench/lib/ab.sh REV [rounds] [requests]    (defaults: 3, 6000)
#
# The machine's speed drifts (a shared host); a ratio between two builds
# measured this way is what says what a change did.
set -euo pipefail
rev=${1:?usage: ab.sh REV [rounds] [requests]}
rounds=${2:-3}
n=${3:-6000}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
port=${AB_PORT:-9961}
pid=
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	git -C "$root" worktree remove --force "$work/then-src" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$root/bench/lib/node.sh"
build_then_now "$root" "$rev" "$work"
go test -c -o "$work/bench.test" "$root/internal/node"
port_free "$port" "set AB_PORT"
echo_config "$work/pactum.yaml" "$port" "sqlite://$work/bench.db"

client() {
	PACTUM_BENCH_URL=http://127.0.0.1:$port/agents/echo "$work/bench.test" -test.run '^$' -test.timeout 5m \
		-test.bench "$1" -test.benchtime "$2"
}
for round in $(seq "$rounds"); do
	echo "# round $round"
	order=(then now)
	((round % 2 == 0)) && order=(now then)
	for b in "${order[@]}"; do
		rm -f "$work"/bench.db*
		"$work/$b" serve --config "$work/pactum.yaml" >"$work/$b.log" 2>&1 &
		pid=$!
		wait_port "$port"
		client '^BenchmarkSendMessageExternal$' 2000x >/dev/null
		for bench in '^BenchmarkSendMessageExternal$/^clients=1$' '^BenchmarkSendMessageExternal$/^clients=32$' \
			'^BenchmarkSendStreamingMessageExternal$/^clients=32$'; do
			t0=$(cpu_ticks "$pid")
			out=$(client "$bench" "${n}x")
			t1=$(cpu_ticks "$pid")
			printf '%s\n' "$out" | awk -v label="$b" -v us="$(per_request "$t0" "$t1" "$n")" '/FAIL|panic/ { print > "/dev/stderr" }
			/^BenchmarkSend/ {
				mode = ($1 ~ /Streaming/) ? "stream" : "send"; split($1, a, "="); sub(/-[0-9]+$/, "", a[2])
				for (i = 1; i <= NF; i++) { if ($i == "req/s") r = $(i-1); if ($i == "p99-ms") p99 = $(i-1) }
				printf "%-4s %-6s clients=%-3s %7.0f req/s  p99 %6.2f ms  cpu %5d us/req\n", label, mode, a[2], r, p99, us }' |
				tee -a "$work/results"
		done
		kill "$pid"; wait "$pid" 2>/dev/null || true
		pid=
	done
done
sort -s -k2,2 -k3,3 "$work/results" | awk "$median_awk"'
{ key = $2 " " $3; b = $1; r[b, key] = r[b, key] " " $4; p[b, key] = p[b, key] " " $7; c[b, key] = c[b, key] " " $10; keys[key] = 1 }
END {
	print "# medians, and now / then"
	for (k in keys) {
		rt = median(r["then", k]); rn = median(r["now", k]); pt = median(p["then", k]); pn = median(p["now", k])
		ct = median(c["then", k]); cn = median(c["now", k])
		printf "%-6s %-11s then %6.0f req/s p99 %6.2f ms cpu %4.0f us   now %6.0f req/s p99 %6.2f ms cpu %4.0f us   now/then %5.2fx  p99 %5.2fx  cpu %5.2fx\n", substr(k, 1, index(k, " ") - 1), substr(k, index(k, " ") + 1), rt, pt, ct, rn, pn, cn, rn / rt, pn / pt, cn / ct
	}
}'
