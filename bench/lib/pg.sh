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
# in one run. With PG_FAIR=1 the one node is measured once more at 11
# clients (label pg-1@11), the load each of the three nodes gets (pg_round
# says why). Prints one line per measurement, then the medians of the
# rounds and the ratios (3 nodes / 1 node, 3 nodes / 1 node at 11
# clients, and 1 node / JS).
#
# Each pactum line also gives, per task (one request, one task) over the
# measurement: pg-cpu, the CPU time of every PostgreSQL process (user +
# system ticks from /proc, the postmaster's reaped children included);
# db-cpu, that of the processes serving the benchmark's database only (its
# backends: neither the WAL writer nor other databases' sessions, which
# on a shared host are other people's);
# node-cpu, the nodes' together; stmts, the statements pg_stat_statements
# counted in the database (BEGIN and COMMIT included); rt and sent, the
# round trips and statements the nodes sent (their
# pactum_store_round_trips_total and pactum_store_statements_total);
# commits, the write transactions (transaction IDs assigned); walsync,
# the WAL flushes of the server (pg_stat_wal.wal_sync). Cumulative
# statistics reach pg_stat_wal up to 10 s late, so each measurement waits
# PG_STATS_WAIT seconds (default 11) before and after. stmts is "-" when
# pg_stat_statements is not loaded (shared_preload_libraries); the rest is
# printed all the same. PG_TOP=n prints the n statements that took the
# most time (total_exec_time, waits included), per task, with their calls
# and WAL records per task, and the WAL records and bytes per task of all
# statements.
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
	pg_ports=()
	pg_stmts_on=0
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
# their endpoints, comma-separated, pg_ports to their ports and pg_db_dsn
# to the database. The first node migrates the database before the others
# start.
pg_start_nodes() {
	local nodes=$1 db dsn i port
	pg_seq=$((pg_seq + 1))
	db=pactum_bench_$$_$pg_seq
	pg_db=$db
	psql "$pg_admin" -qAtc "CREATE DATABASE $db" >/dev/null
	pg_dbs+=("$db")
	dsn=$(printf '%s' "$pg_admin" | sed -E "s#/[^/?]*(\\?|$)#/$db\\1#")
	pg_db_dsn=$dsn
	pg_stmts_on=0
	if psql "$dsn" -qAtc "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT 1 FROM pg_stat_statements LIMIT 1" >/dev/null 2>&1; then
		pg_stmts_on=1
	else
		echo "# pg_stat_statements is not loaded (shared_preload_libraries): no statement counts from the server" >&2
	fi
	dsn="$dsn&pool_max_conns=$pg_pool${PG_DSN_EXTRA:-}"
	pg_urls=""
	pg_ports=()
	for i in $(seq 0 $((nodes - 1))); do
		port=$((pg_port_base + i))
		port_free "$port" "set PG_PORT_BASE"
		echo_config "$pg_work/node$i.yaml" "$port" "$dsn" "node: bench-$i"
		"$pg_work/pactum" serve --config "$pg_work/node$i.yaml" >"$pg_work/node$i.log" 2>&1 &
		pg_pids+=($!)
		pg_ports+=("$port")
		wait_port "$port"
		pg_urls="$pg_urls${pg_urls:+,}http://127.0.0.1:$port/agents/echo"
	done
}

# pg_client runs the client against $1 (comma-separated URLs) at $3
# clients (default 32) for $2 requests.
pg_client() {
	PACTUM_BENCH_CLIENTS=${3:-32} PACTUM_BENCH_URL=$1 "$pg_work/bench.test" -test.run '^$' -test.timeout 5m \
		-test.bench "^BenchmarkSendMessageExternal\$/^clients=${3:-32}\$" -test.benchtime "$2x"
}

# pg_cpu_ticks prints the user + system CPU ticks of every PostgreSQL
# process (comm "postgres"), plus the postmaster's reaped children's: a
# backend that exits during the measurement still counts. The files are
# read by cat, not awk: a process that ends between the glob and the read
# made awk fail, and with it the whole run (set -e).
pg_cpu_ticks() {
	{ cat /proc/[0-9]*/stat 2>/dev/null || true; } |
		awk '$2 == "(postgres)" { t[$1] = $14 + $15; c[$1] = $16 + $17; pp[$1] = $4 }
		END { for (p in t) { s += t[p]; if (!(pp[p] in t)) s += c[p] } print s + 0 }'
}

# pg_db_ticks prints "pid ticks" (user + system CPU ticks) for each
# PostgreSQL process that serves $pg_db, the benchmark's database: those
# whose title names it (the nodes' backends, an autovacuum worker on it).
# Unlike pg_cpu_ticks it leaves out the server's shared processes (WAL
# writer, checkpointer) and the sessions of other databases, which on a
# shared host are other people's work.
pg_db_ticks() {
	local f pid
	for f in $(grep -laF " $pg_db " /proc/[0-9]*/cmdline 2>/dev/null); do
		pid=${f#/proc/}
		pid=${pid%/cmdline}
		awk -v pid="$pid" '{ print pid, $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || true
	done
}

# pg_db_cpu prints the CPU ticks the processes in pg_db_ticks' list $2
# used since its list $1 (a process that started since counts from 0; one
# that has ended is left out).
pg_db_cpu() {
	awk 'NR == FNR { t0[$1] = $2; next } { s += $2 - t0[$1] } END { print s + 0 }' <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# pg_server_stats prints the server's counters, one line: transaction IDs
# assigned so far, WAL flushes, statements (pg_stat_statements, in
# $pg_db_dsn's database; "-" without it).
pg_server_stats() {
	local q="SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint, (SELECT wal_sync FROM pg_stat_wal)"
	if [[ $pg_stmts_on == 1 ]]; then
		q="$q, (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()))"
	else
		q="$q, '-'"
	fi
	psql "$pg_db_dsn" -qAt -F ' ' -c "$q"
}

# pg_wire prints the round trips and statements the nodes have sent
# (their /metrics), summed.
pg_wire() {
	local port
	for port in "${pg_ports[@]}"; do curl -fsS "http://127.0.0.1:$port/metrics"; done |
		awk '/^pactum_store_round_trips_total / { rt += $2 } /^pactum_store_statements_total / { st += $2 }
		END { printf "%.0f %.0f\n", rt, st }'
}

# pg_node_ticks prints the nodes' CPU ticks, summed.
pg_node_ticks() {
	local p t=0
	for p in "${pg_pids[@]}"; do t=$((t + $(cpu_ticks "$p"))); done
	echo "$t"
}

# pg_measure warms up and measures $2 ($3 requests from $4 clients,
# default 32) and prints, labelled $1, req/s, p50 and p99 in compare.sh's
# format, and for pactum (pg_ports set) the per-task costs; the line also
# goes to $pg_work/results.
pg_measure() {
	local label=$1 url=$2 n=$3 clients=${4:-32} wait=${PG_STATS_WAIT:-11} bench extra="" cpu0 cpu1 db0 db1 node0 node1 wire0 wire1 srv0 srv1 srv2
	pg_client "$url" 2000 "$clients" >/dev/null
	if [[ ${#pg_ports[@]} -gt 0 ]]; then
		sleep "$wait"
		[[ $pg_stmts_on == 1 ]] && psql "$pg_db_dsn" -qAtc "SELECT pg_stat_statements_reset()" >/dev/null
		srv0=$(pg_server_stats)
		wire0=$(pg_wire)
		cpu0=$(pg_cpu_ticks)
		db0=$(pg_db_ticks)
		node0=$(pg_node_ticks)
	fi
	bench=$(pg_client "$url" "$n" "$clients")
	if [[ ${#pg_ports[@]} -gt 0 ]]; then
		cpu1=$(pg_cpu_ticks)
		db1=$(pg_db_cpu "$db0" "$(pg_db_ticks)")
		node1=$(pg_node_ticks)
		wire1=$(pg_wire)
		srv1=$(pg_server_stats)
		if [[ -n ${PG_TOP:-} && $pg_stmts_on == 1 ]]; then
			psql "$pg_db_dsn" -qAt -F ' | ' -c "SELECT round(total_exec_time::numeric * 1000 / $n, 1) AS us_per_task,
				round(calls::numeric / $n, 2) AS calls_per_task, round(wal_records::numeric / $n, 2) AS wal_per_task,
				left(regexp_replace(query, '\s+', ' ', 'g'), 110)
				FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
				ORDER BY total_exec_time DESC LIMIT ${PG_TOP}" | sed "s/^/# $label top: /" >&2
			psql "$pg_db_dsn" -qAt -c "SELECT format('%s WAL records, %s bytes per task (all statements)',
				round(sum(wal_records)::numeric / $n, 2), round(sum(wal_bytes) / $n))
				FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())" |
				sed "s/^/# $label wal: /" >&2
		fi
		sleep "$wait"
		srv2=$(pg_server_stats)
		extra=$(awk -v n="$n" -v hz="$(getconf CLK_TCK)" -v c0="$cpu0" -v c1="$cpu1" -v db="$db1" -v d0="$node0" -v d1="$node1" \
			-v w0="$wire0" -v w1="$wire1" -v s0="$srv0" -v s1="$srv1" -v s2="$srv2" 'BEGIN {
			split(w0, a, " "); split(w1, b, " "); split(s0, x, " "); split(s1, y, " "); split(s2, z, " ")
			st = (x[3] == "-") ? "-" : sprintf("%.2f", (y[3] - x[3]) / n)
			printf "  pg-cpu %5.0f us  db-cpu %5.0f us  node-cpu %5.0f us  stmts %s  sent %.2f  rt %.2f  commits %.2f  walsync %.2f /task",
				(c1 - c0) * 1e6 / hz / n, db * 1e6 / hz / n, (d1 - d0) * 1e6 / hz / n, st, (b[2] - a[2]) / n, (b[1] - a[1]) / n,
				(y[1] - x[1]) / n, (z[2] - x[2]) / n }')
	fi
	printf '%s\n' "$bench" | awk -v label="$label" -v extra="$extra" -v clients="$clients" '/FAIL|panic|Error|_test\.go/ { print > "/dev/stderr" }
	/^BenchmarkSend/ {
		for (i = 1; i <= NF; i++) { if ($i == "req/s") r = $(i-1); if ($i == "p50-ms") p50 = $(i-1); if ($i == "p99-ms") p99 = $(i-1) }
		printf "%-7s %-6s clients=%-3s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms%s\n", label, "send", clients, r, p50, p99, extra }' |
		tee -a "$pg_work/results"
}

# pg_round measures one node, three nodes and, with PG_JS=1, the JS
# server, with $1 requests each. With PG_FAIR=1 the node is measured a
# second time (label suffix @11) at 11 clients, what each of the three
# nodes serves of the 32: a node's groups of blocking requests (several
# tasks per transaction) and its relay's batches grow with its own load,
# so three nodes against one at the same total load compares batch sizes
# as much as nodes; at the same load per node it shows whether nodes cost
# each other anything.
pg_round() {
	local n=$1 js_port
	pg_start_nodes 1
	pg_measure "$pg_label-1" "$pg_urls" "$n"
	if [[ ${PG_FAIR:-0} == 1 ]]; then
		pg_measure "$pg_label-1@11" "$pg_urls" "$n" 11
	fi
	pg_stop
	pg_start_nodes 3
	pg_measure "$pg_label-3" "$pg_urls" "$n"
	pg_stop
	if [[ ${PG_JS:-0} == 1 ]]; then
		js_port=$((pg_port_base + 3))
		port_free "$js_port" "set PG_PORT_BASE"
		(cd "$pg_root/bench/js-baseline" && exec node server.mjs "$js_port" >"$pg_work/js.log" 2>&1) &
		pg_pids+=($!)
		pg_ports=()
		wait_port "$js_port"
		pg_measure js "http://127.0.0.1:$js_port/" "$n"
		pg_stop
	fi
}

# pg_report prints the medians of the rounds and the ratios.
pg_report() {
	awk -v rounds="$1" -v label="$pg_label" "$median_awk"'
{ if (!($1 in r)) order[++nk] = $1; cl[$1] = substr($3, 9); r[$1] = r[$1] " " $4; p50[$1] = p50[$1] " " $7; p99[$1] = p99[$1] " " $10
  for (i = 11; i < NF; i++) if ($i ~ /^(pg-cpu|db-cpu|node-cpu|stmts|sent|rt|commits|walsync)$/ && $(i+1) != "-") { x[$1, $i] = x[$1, $i] " " $(i+1); has[$1] = 1 } }
END {
	printf "# medians of %d rounds\n", rounds
	for (i = 1; i <= nk; i++) {
		k = order[i]; mr[k] = median(r[k]); m99[k] = median(p99[k])
		extra = ""
		if (has[k]) {
			extra = sprintf("  pg-cpu %5.0f us  db-cpu %5.0f us  node-cpu %5.0f us  stmts %s  sent %.2f  rt %.2f  commits %.2f  walsync %.2f /task",
				median(x[k, "pg-cpu"]), median(x[k, "db-cpu"]), median(x[k, "node-cpu"]), ((k, "stmts") in x) ? sprintf("%.2f", median(x[k, "stmts"])) : "-",
				median(x[k, "sent"]), median(x[k, "rt"]), median(x[k, "commits"]), median(x[k, "walsync"]))
			pgcpu[k] = median(x[k, "pg-cpu"])
		}
		printf "%-7s %-6s clients=%-3s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms%s\n", k, "send", cl[k], mr[k], median(p50[k]), m99[k], extra
	}
	print "# ratios (req/s)"
	one = label "-1"; three = label "-3"
	if (mr[one] > 0) printf "%s/%s   send   clients=32  req/s %5.2fx\n", three, one, mr[three] / mr[one]
	if (pgcpu[one] > 0) printf "%s/%s   send   clients=32  pg-cpu per task %5.2fx\n", three, one, pgcpu[three] / pgcpu[one]
	fair = one "@11"
	if (pgcpu[fair] > 0) printf "%s/%s   send   11 clients a node  pg-cpu per task %5.2fx\n", three, fair, pgcpu[three] / pgcpu[fair]
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
