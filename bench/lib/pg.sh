#!/usr/bin/env bash
# pg.sh: pactum on PostgreSQL, one node and three nodes on one database
# (issue 15), measured by the same Go client as bench/compare.sh
# (BenchmarkSendMessageExternal: blocking SendMessage at 32 clients; with
# three nodes PACTUM_BENCH_URL names all three and the client sends the
# requests to them in turn).
#
# Per round: a fresh database on the server, `pactum serve` (echo agent,
# audit on, workers 64, log level error, as compare.sh runs it) on it, a
# warm-up of 2,000 requests, the measurement, the node stopped and the
# database dropped; then the same with three nodes on one fresh database.
# With PG_JS=1 the JS SDK's in-memory server (bench/js-baseline) is
# measured in the same round too, so that pactum-PG / JS is a ratio taken
# in one run. Prints one line per measurement, then the medians of the
# rounds and the ratios (3 nodes / 1 node, and 1 node / JS).
#
#   bash bench/lib/pg.sh [rounds] [requests]          (defaults: 3, 8000)
#
# or, from another script (bench/compare.sh):
#
#   source bench/lib/pg.sh; pg_main 3 8000
#
# PG_ADMIN_DSN is the server to use (default
# postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable; the
# benchmark databases are made on it, named pactum_bench_<pid>_<n>);
# PG_POOL is each node's pool_max_conns (default 24: three nodes stay
# under PostgreSQL's default max_connections of 100); PG_PORT_BASE the
# first of the nodes' ports (default 9941, three in a row; 9944 for JS).
# PG_DSN_EXTRA is appended to the nodes' DSN, for diagnostics (e.g.
# '&synchronous_commit=off' to see what the WAL flushes cost; not a setting
# to measure pactum with). PG_LABEL prefixes the labels (default pg: pg-1, pg-3); PG_PACTUM_BIN
# and PG_BENCH_BIN use a pactum binary and a client (go test -c of
# internal/node) built elsewhere, e.g. from another commit for an A/B run.
# Every client run has a 5-minute timeout; nodes and databases are removed
# on exit, error or interrupt.
#
# Needs Go and psql (and Node 20+ with npm for PG_JS=1).

pg_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$pg_root/bench/lib/node.sh"

# pg_setup builds pactum and the client into $pg_work.
pg_setup() {
	pg_admin=${PG_ADMIN_DSN:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
	pg_pool=${PG_POOL:-24}
	pg_port_base=${PG_PORT_BASE:-9941}
	pg_work=$(mktemp -d)
	pg_pids=()
	pg_dbs=()
	pg_seq=0
	pg_label=${PG_LABEL:-pg}
	if [[ -n ${PG_PACTUM_BIN:-} ]]; then
		cp "$PG_PACTUM_BIN" "$pg_work/pactum"
	else
		go build -o "$pg_work/pactum" "$pg_root/cmd/pactum"
	fi
	if [[ -n ${PG_BENCH_BIN:-} ]]; then
		cp "$PG_BENCH_BIN" "$pg_work/bench.test"
	else
		go test -c -o "$pg_work/bench.test" "$pg_root/internal/node"
	fi
	if [[ ${PG_JS:-0} == 1 ]]; then
		(cd "$pg_root/bench/js-baseline" && npm ci --silent --no-audit --no-fund >/dev/null)
	fi
}

# pg_cleanup stops the nodes and drops the databases this script made.
pg_cleanup() {
	pg_stop
	for db in "${pg_dbs[@]}"; do
		psql "$pg_admin" -qAtc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
	done
	pg_dbs=()
	[[ -n ${pg_work:-} ]] && rm -rf "$pg_work"
}

pg_stop() {
	for p in "${pg_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pg_pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pg_pids=()
}

# pg_start_nodes starts $1 nodes on a fresh database and sets pg_urls to
# their endpoints, comma-separated. The first node migrates the database
# before the others start.
pg_start_nodes() {
	local nodes=$1 db dsn i port
	pg_seq=$((pg_seq + 1))
	db=pactum_bench_$$_$pg_seq
	psql "$pg_admin" -qAtc "CREATE DATABASE $db" >/dev/null
	pg_dbs+=("$db")
	dsn=$(printf '%s' "$pg_admin" | sed -E "s#/[^/?]*(\\?|$)#/$db\\1#")
	dsn="$dsn&pool_max_conns=$pg_pool${PG_DSN_EXTRA:-}"
	pg_urls=""
	for i in $(seq 0 $((nodes - 1))); do
		port=$((pg_port_base + i))
		port_free "$port" "set PG_PORT_BASE"
		echo_config "$pg_work/node$i.yaml" "$port" "$dsn" "node: bench-$i"
		"$pg_work/pactum" serve --config "$pg_work/node$i.yaml" >"$pg_work/node$i.log" 2>&1 &
		pg_pids+=($!)
		wait_port "$port"
		pg_urls="$pg_urls${pg_urls:+,}http://127.0.0.1:$port/agents/echo"
	done
}

# pg_client runs the client against $1 (comma-separated URLs) at 32
# clients for $2 requests.
pg_client() {
	PACTUM_BENCH_URL=$1 "$pg_work/bench.test" -test.run x -test.timeout 5m \
		-test.bench '^BenchmarkSendMessageExternal$/^clients=32$' -test.benchtime "$2x"
}

# pg_measure warms up and measures $2 and prints, labelled $1, req/s, p50
# and p99 in compare.sh's format; the line also goes to $pg_work/results.
pg_measure() {
	pg_client "$2" 2000 >/dev/null
	pg_client "$2" "$3" | awk -v label="$1" '/FAIL|panic|Error|_test\.go/ { print > "/dev/stderr" }
	/^BenchmarkSend/ {
		for (i = 1; i <= NF; i++) { if ($i == "req/s") r = $(i-1); if ($i == "p50-ms") p50 = $(i-1); if ($i == "p99-ms") p99 = $(i-1) }
		printf "%-7s %-6s clients=%-3s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms\n", label, "send", 32, r, p50, p99 }' |
		tee -a "$pg_work/results"
}

# pg_round measures one node, three nodes and, with PG_JS=1, the JS
# server, with $1 requests each.
pg_round() {
	local n=$1 js_port
	pg_start_nodes 1
	pg_measure "$pg_label-1" "$pg_urls" "$n"
	pg_stop
	pg_start_nodes 3
	pg_measure "$pg_label-3" "$pg_urls" "$n"
	pg_stop
	if [[ ${PG_JS:-0} == 1 ]]; then
		js_port=$((pg_port_base + 3))
		port_free "$js_port" "set PG_PORT_BASE"
		(cd "$pg_root/bench/js-baseline" && exec node server.mjs "$js_port" >"$pg_work/js.log" 2>&1) &
		pg_pids+=($!)
		wait_port "$js_port"
		pg_measure js "http://127.0.0.1:$js_port/" "$n"
		pg_stop
	fi
}

# pg_report prints the medians of the rounds and the ratios.
pg_report() {
	awk -v rounds="$1" -v label="$pg_label" '
function median(list,    v, k, i, j, t) {
	k = split(list, v, " ")
	for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
	return (k % 2) ? v[(k+1)/2] : (v[k/2] + v[k/2+1]) / 2
}
{ if (!($1 in r)) order[++nk] = $1; r[$1] = r[$1] " " $4; p50[$1] = p50[$1] " " $7; p99[$1] = p99[$1] " " $10 }
END {
	printf "# medians of %d rounds\n", rounds
	for (i = 1; i <= nk; i++) {
		k = order[i]; mr[k] = median(r[k]); m99[k] = median(p99[k])
		printf "%-7s %-6s clients=%-3s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms\n", k, "send", 32, mr[k], median(p50[k]), m99[k]
	}
	print "# ratios (req/s)"
	one = label "-1"; three = label "-3"
	if (mr[one] > 0) printf "%s/%s   send   clients=32  req/s %5.2fx\n", three, one, mr[three] / mr[one]
	if (mr["js"] > 0) printf "%s/js     send   clients=32  req/s %5.2fx  p99 %5.2fx\n", one, mr[one] / mr["js"], m99[one] / m99["js"]
}' "$pg_work/results"
}

# pg_main runs $1 rounds of $2 requests and reports.
pg_main() {
	local rounds=${1:-3} n=${2:-8000} round
	pg_setup
	for round in $(seq "$rounds"); do
		echo "# postgres round $round"
		pg_round "$n"
	done
	pg_report "$rounds"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -euo pipefail
	trap pg_cleanup EXIT
	trap 'exit 130' INT TERM
	pg_main "$@"
fi
