#!/usr/bin/env bash
# compare.sh: pactum against the in-memory servers of the official SDKs,
# each in its own process on loopback, measured by the same Go client
# (BenchmarkSendMessageExternal and BenchmarkSendStreamingMessageExternal
# in internal/node):
#
#   js      the official JS SDK's in-memory echo server (bench/js-baseline)
#   a2ago   a2a-go v2's in-memory echo server (bench/a2ago-baseline)
#   pactum  `pactum serve`, echo agent, a new SQLite file, audit on,
#           tuned as issue 15 measured it (`workers: 64`, log level error)
#   pactumd the same with pactum's default configuration: nothing but
#           listen, store and the agents (issue 31: default = tuned)
#
# Per round every server is started fresh, warmed up with 2,000 requests
# at 1 and at 32 clients, measured (blocking SendMessage at 1 and 32
# clients, then SendStreamingMessage at 32 clients), and stopped; the
# servers take turns (the starting one rotates each round) so that drift in
# the machine hits all of them. Prints one line per server, measurement and
# round (with the CPU time the server spent per request meanwhile, from
# /proc), then the medians of the rounds, then the ratios (pactum / peer
# for req/s, pactum's p99 / the peer's, pactum's CPU per request / the
# peer's; the same for pactumd; and pactumd / pactum, the default over the
# tuned configuration). After its streaming run,
# pactum's "checked" agent (echo with a 3-assertion contract, "pactumc")
# and its echo agent once more ("pactume") are measured at 32 clients on
# the same server, twice each in the order A B B A (which of the two is A
# alternates with the round, so drift within a round falls on both
# alike), and the last ratio is contract / none: the median of the
# pactumc lines over the median of the pactume lines.
#
#   bash bench/compare.sh [rounds] [requests]     (defaults: 5 rounds, 8000)
#
# COMPARE_SERVERS="js pactum" limits the servers (default "js a2ago
# pactum pactumd"); COMPARE_PORT_BASE moves the ports (default 9931, three
# in a row; pactum and pactumd share one). Every client run has a 5-minute timeout and every server is
# stopped on exit, error or interrupt (an interrupt takes effect when the
# client run in progress ends, within seconds at the defaults). A port
# already in use stops the script rather than measuring someone else.
# COMPARE_PACTUM_TAGS=sqlite_cgo builds pactum with those build tags (here
# the cgo SQLite driver, which needs a C compiler; docs/storage.md).
#
# Optional last stages (issue 15's and 31's other targets): COMPARE_PG=1
# adds PostgreSQL with one and three nodes (bench/lib/pg.sh), COMPARE_RSS=1
# the memory after 1,000 and 100,000 tasks (bench/lib/rss.sh),
# COMPARE_FANOUT=1 10,000 SubscribeToTask streams (bench/lib/fanout.sh),
# COMPARE_WORKERS=1 the default worker pools against `workers: N` for an
# in-process, an HTTP and an exec agent (bench/lib/workers.sh);
# COMPARE_ALL=1 all four.
#
# Needs Go and Node 20+ with npm.
set -euo pipefail

rounds=${1:-5}
n=${2:-8000}
servers=(${COMPARE_SERVERS:-js a2ago pactum pactumd})
port_base=${COMPARE_PORT_BASE:-9931}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

js_port=$port_base
pactum_port=$((port_base + 1))
a2ago_port=$((port_base + 2))

for s in "${servers[@]}"; do
	case $s in
	js) (cd "$root/bench/js-baseline" && npm ci --silent --no-audit --no-fund >/dev/null) ;;
	a2ago) go build -o "$work/a2ago" "$root/bench/a2ago-baseline" ;;
	pactum | pactumd) go build -tags "${COMPARE_PACTUM_TAGS:-}" -o "$work/pactum" "$root/cmd/pactum" ;;
	*) echo "unknown server $s (js, a2ago, pactum, pactumd)" >&2; exit 2 ;;
	esac
done
go test -c -o "$work/bench.test" "$root/internal/node"

source "$root/bench/lib/node.sh"
# Every port a stage will listen on is checked now, not only when its
# stage starts: a port something else holds would otherwise stop the run
# after the stages before it had taken their minutes.
for p in "$js_port" "$pactum_port" "$a2ago_port"; do
	port_free "$p" "set COMPARE_PORT_BASE"
done
if [[ ${COMPARE_PG:-${COMPARE_ALL:-0}} == 1 ]]; then
	for i in 0 1 2 3; do
		port_free $((${PG_PORT_BASE:-9941} + i)) "set PG_PORT_BASE"
	done
fi
# The echo agent, and the same agent with a 3-assertion contract (issue 15:
# within 10 % of echo without one), measured as "pactumc" at 32 clients.
echo_config "$work/pactum.yaml" "$pactum_port" "sqlite://$work/bench.db" "" "$checked_agent"
# The default configuration: what `pactum serve` runs with when the file
# says nothing but where to listen, the store and the agents.
printf 'listen: 127.0.0.1:%s\nstore: "sqlite://%s/bench.db"\nagents:\n  - name: echo\n    type: echo\n' \
	"$pactum_port" "$work" >"$work/pactumd.yaml"

# run_client runs the benchmark client against URL $1 with -test.bench $2
# and -test.benchtime $3.
run_client() {
	PACTUM_BENCH_URL=$1 "$work/bench.test" -test.run '^$' -test.timeout 5m \
		-test.bench "$2" -test.benchtime "$3"
}

# measure runs the client against $2 and prints, labelled $1, req/s, p50,
# p99 and the server's CPU time per request per call and client count;
# the lines also go to $work/results.
measure() {
	run_client "$2" '^BenchmarkSendMessageExternal$' 2000x >/dev/null
	measured "$1" "$2" '^BenchmarkSendMessageExternal$/^clients=1$'
	measured "$1" "$2" '^BenchmarkSendMessageExternal$/^clients=32$'
	measured "$1" "$2" '^BenchmarkSendStreamingMessageExternal$/^clients=32$'
	if [[ $1 == pactum* ]]; then
		# The contract agent and the echo agent once more, on the same
		# server in the same minutes, so that the two compared have
		# the same database behind them: A B B A, A alternating with
		# the round. One measurement of 6,000 requests takes a second,
		# and one second's noise (a checkpoint, a collection) was as
		# large as the difference measured.
		local pair=(echo:pactume checked:pactumc checked:pactumc echo:pactume)
		((round % 2 == 0)) && pair=(checked:pactumc echo:pactume echo:pactume checked:pactumc)
		# Only the tuned server has the contract agent.
		[[ $1 == pactumd ]] && pair=()
		for a in "${pair[@]}"; do
			run_client "${2%/echo}/${a%%:*}" '^BenchmarkSendMessageExternal$/^clients=32$' 2000x >/dev/null
			measured "${a#*:}" "${2%/echo}/${a%%:*}" '^BenchmarkSendMessageExternal$/^clients=32$'
		done
	fi
}

# measured runs the client against URL $2 with -test.bench $3 (one
# measurement) and labels its line $1, with the CPU time the server
# (pids[0]) spent per request meanwhile.
measured() {
	local t0 t1 out
	t0=$(cpu_ticks "${pids[0]}")
	out=$(run_client "$2" "$3" "${n}x")
	t1=$(cpu_ticks "${pids[0]}")
	label "$1" "$(per_request "$t0" "$t1" "$n")" <<<"$out"
}

# label turns the client's benchmark lines into result lines labelled $1,
# with $2 the server's CPU per request (also appended to $work/results).
label() {
	awk -v label="$1" -v us="$2" '/FAIL|panic|Error|_test\.go/ { print > "/dev/stderr" }
	/^BenchmarkSend/ {
		mode = ($1 ~ /Streaming/) ? "stream" : "send";
		split($1, a, "="); sub(/-[0-9]+$/, "", a[2]);
		for (i = 1; i <= NF; i++) { if ($i == "req/s") r = $(i-1); if ($i == "p50-ms") p50 = $(i-1); if ($i == "p99-ms") p99 = $(i-1) }
		printf "%-7s %-6s clients=%-3s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms  cpu %5d us/req\n", label, mode, a[2], r, p50, p99, us }' |
		tee -a "$work/results"
}

# start_server starts server $1 fresh and sets url to its endpoint.
start_server() {
	case $1 in
	js)
		port_free "$js_port" "set COMPARE_PORT_BASE"
		(cd "$root/bench/js-baseline" && exec node server.mjs "$js_port" >"$work/js.log" 2>&1) &
		pids=($!)
		wait_port "$js_port"
		url="http://127.0.0.1:$js_port/"
		;;
	a2ago)
		port_free "$a2ago_port" "set COMPARE_PORT_BASE"
		"$work/a2ago" "127.0.0.1:$a2ago_port" >"$work/a2ago.log" 2>&1 &
		pids=($!)
		wait_port "$a2ago_port"
		url="http://127.0.0.1:$a2ago_port/"
		;;
	pactum | pactumd)
		port_free "$pactum_port" "set COMPARE_PORT_BASE"
		rm -f "$work"/bench.db*
		"$work/pactum" serve --config "$work/$1.yaml" >"$work/$1.log" 2>&1 &
		pids=($!)
		wait_port "$pactum_port"
		url="http://127.0.0.1:$pactum_port/agents/echo"
		;;
	esac
}

count=${#servers[@]}
for round in $(seq "$rounds"); do
	echo "# round $round"
	for i in $(seq 0 $((count - 1))); do
		s=${servers[$(((round - 1 + i) % count))]}
		start_server "$s"
		measure "$s" "$url"
		kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true
		pids=()
	done
done

# Medians of the rounds, then the ratios.
sort -s -k2,2 -k3,3 "$work/results" | awk -v rounds="$rounds" "$median_awk"'
{
	key = $2 " " $3 " " $1
	if (!(key in r)) order[++nk] = key
	r[key] = r[key] " " $4; p50[key] = p50[key] " " $7; p99[key] = p99[key] " " $10; cpu[key] = cpu[key] " " $13
}
END {
	printf "# medians of %d rounds\n", rounds
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, f, " ")
		mr[k] = median(r[k]); m99[k] = median(p99[k]); mc[k] = median(cpu[k])
		printf "%-7s %-6s %-11s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms  cpu %5d us/req\n", f[3], f[1], f[2], mr[k], median(p50[k]), m99[k], mc[k]
	}
	print "# ratios (pactum / peer: req/s, p99, server CPU per request; pactumd: the default configuration)"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, f, " ")
		if (f[3] ~ /^pactum/) continue
		for (j = 0; j < 2; j++) {
			p = j ? "pactumd" : "pactum"
			pk = f[1] " " f[2] " " p
			if (!(pk in mr) || mr[k] == 0 || m99[k] == 0) continue
			printf "%-14s %-6s %-11s req/s %5.2fx  p99 %5.2fx  cpu %5.2fx\n", p "/" f[3], f[1], f[2], mr[pk] / mr[k], m99[pk] / m99[k], (mc[k] > 0 ? mc[pk] / mc[k] : 0)
		}
	}
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, f, " ")
		if (f[3] != "pactumd") continue
		pk = f[1] " " f[2] " pactum"
		if (!(pk in mr) || mr[pk] == 0 || m99[pk] == 0) continue
		printf "%-14s %-6s %-11s req/s %5.2fx  p99 %5.2fx  cpu %5.2fx\n", "default/tuned", f[1], f[2], mr[k] / mr[pk], m99[k] / m99[pk], (mc[pk] > 0 ? mc[k] / mc[pk] : 0)
	}
	ck = "send clients=32 pactumc"; pk = "send clients=32 pactume"
	if ((ck in mr) && (pk in mr) && mr[pk] > 0)
		printf "%-14s send   clients=32  req/s %5.2fx  p99 %5.2fx  cpu %5.2fx\n", "contract/none", mr[ck] / mr[pk], m99[ck] / m99[pk], (mc[pk] > 0 ? mc[ck] / mc[pk] : 0)
}'

# Optional stage, COMPARE_PG=1: pactum on PostgreSQL, one node and three
# nodes on one database, with the JS server measured again in the same
# rounds for the pactum-PG / JS ratio (bench/lib/pg.sh; PG_ADMIN_DSN names
# the server, default postgres@127.0.0.1:5432).
if [[ ${COMPARE_PG:-${COMPARE_ALL:-0}} == 1 ]]; then
	(
		source "$root/bench/lib/pg.sh"
		trap pg_cleanup EXIT
		PG_JS=1 pg_main "$rounds" "$n"
	)
fi

# Optional stage, COMPARE_RSS=1: pactum's memory after 1,000 and after
# 100,000 settled tasks and the ratio (bench/lib/rss.sh; target ≤ 1.20×).
if [[ ${COMPARE_RSS:-${COMPARE_ALL:-0}} == 1 ]]; then
	bash "$root/bench/lib/rss.sh"
fi

# Optional stage, COMPARE_WORKERS=1: the default worker pools against
# `workers: N` for an in-process, an HTTP and an exec agent
# (bench/lib/workers.sh; target: the default within 5 % of the best).
if [[ ${COMPARE_WORKERS:-${COMPARE_ALL:-0}} == 1 ]]; then
	bash "$root/bench/lib/workers.sh" 2 "$n"
fi

# Optional stage, COMPARE_FANOUT=1: 10,000 SubscribeToTask streams on one
# node, every event of every stream checked, RSS per stream
# (bench/lib/fanout.sh; target under 1 GiB, none dropped).
if [[ ${COMPARE_FANOUT:-${COMPARE_ALL:-0}} == 1 ]]; then
	(source "$root/bench/lib/fanout.sh" && run_fanout)
fi
