#!/usr/bin/env bash
# contractab.sh: the 3-assertion contract's cost at an earlier commit
# against now (issue 31: within 10 % of no contract, in server CPU). Each
# build serves compare.sh's configuration (a new SQLite file, audit on,
# workers 64, log level error, the echo agent and the "checked" agent:
# echo with compare.sh's 3-assertion contract), is warmed up with 2,000
# requests to each agent, and then measured with blocking SendMessage at
# 32 clients, echo and checked in the order A B B A (A alternating with
# the round, as compare.sh does). The two builds alternate too (the
# starting one rotates each round). Each line gives the server's CPU
# time per request (user + system, from /proc/PID/stat around the
# measurement); the summary gives the medians per build and agent, and
# contract / none per build.
#
#   bash bench/lib/contractab.sh REV [rounds] [requests]    (defaults: 3, 6000)
#
# CONTRACTAB_THEN=/path/to/pactum skips building REV and runs that binary.
set -euo pipefail
rev=${1:?usage: contractab.sh REV [rounds] [requests]}
rounds=${2:-3}
n=${3:-6000}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
port=${AB_PORT:-9962}
pid=
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	git -C "$root" worktree remove --force "$work/then-src" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$root/bench/lib/node.sh"
build_then_now "$root" "$rev" "$work" "${CONTRACTAB_THEN:-}"
go test -c -o "$work/bench.test" "$root/internal/node"
port_free "$port" "set AB_PORT"
echo_config "$work/pactum.yaml" "$port" "sqlite://$work/bench.db" "" "$checked_agent"

client() {
	PACTUM_BENCH_URL=http://127.0.0.1:$port/agents/$1 "$work/bench.test" -test.run '^$' -test.timeout 5m \
		-test.bench '^BenchmarkSendMessageExternal$/^clients=32$' -test.benchtime "$2"
}
for round in $(seq "$rounds"); do
	echo "# round $round"
	order=(then now)
	((round % 2 == 0)) && order=(now then)
	pair=(echo checked checked echo)
	((round % 2 == 0)) && pair=(checked echo echo checked)
	for b in "${order[@]}"; do
		rm -f "$work"/bench.db*
		"$work/$b" serve --config "$work/pactum.yaml" >"$work/$b.log" 2>&1 &
		pid=$!
		wait_port "$port"
		client echo 2000x >/dev/null
		client checked 2000x >/dev/null
		for a in "${pair[@]}"; do
			t0=$(cpu_ticks "$pid")
			out=$(client "$a" "${n}x")
			t1=$(cpu_ticks "$pid")
			printf '%s\n' "$out" | awk -v label="$b" -v agent="$a" -v us="$(per_request "$t0" "$t1" "$n")" '/FAIL|panic/ { print > "/dev/stderr" }
			/^BenchmarkSend/ {
				for (i = 1; i <= NF; i++) { if ($i == "req/s") r = $(i-1); if ($i == "p99-ms") p99 = $(i-1) }
				printf "%-4s %-7s %7.0f req/s  p99 %6.2f ms  cpu %5d us/req\n", label, agent, r, p99, us }' |
				tee -a "$work/results"
		done
		kill "$pid"; wait "$pid" 2>/dev/null || true
		pid=
	done
done
# Fields: build, agent, req/s, "req/s", "p99", p99, "ms", "cpu", µs, "us/req";
# a server's four lines in a row (one instance: its ratio).
awk "$median_awk"'
{ c[$1, $2] = c[$1, $2] " " $9; r[$1, $2] = r[$1, $2] " " $3; s[$2] += $9; k++ }
k == 4 { q[$1] = q[$1] " " s["checked"] / s["echo"]; delete s; k = 0 }
END {
	print "# medians (server cpu us/request, req/s); contract / none: of the medians, and the median of each server'"'"'s own"
	for (i = 1; i <= 2; i++) {
		b = (i == 1) ? "then" : "now"
		ce = median(c[b, "echo"]); cc = median(c[b, "checked"])
		printf "%-4s echo %4.0f us %6.0f req/s   checked %4.0f us %6.0f req/s   contract/none cpu %5.3f, per server %5.3f (%s)\n", b, ce, median(r[b, "echo"]), cc, median(r[b, "checked"]), cc / ce, median(q[b]), q[b]
	}
	printf "now / then: echo cpu %5.3f   checked cpu %5.3f\n", median(c["now", "echo"]) / median(c["then", "echo"]), median(c["now", "checked"]) / median(c["then", "checked"])
}' "$work/results"
