#!/usr/bin/env bash
# pgwaits.sh: what PostgreSQL's active backends wait on while pactum nodes
# on one database serve blocking SendMessage at 32 clients (issue 31: show
# that nodes do not serialise each other). Starts NODES nodes (default 3)
# on a fresh database with pg.sh's functions and configuration, warms up
# with 2,000 requests, then samples pg_stat_activity (state 'active', this
# database, every 50 ms or so until the client is done) during REQUESTS
# more (default 5,000)
# and prints the share of the samples per wait event type and event
# ("CPU -" is a backend running). A lock wait between nodes shows as
# "Lock transactionid" or "Lock tuple"; the commit's WAL flush as "IO
# WALSync" or "LWLock WALWrite".
#
#   bash bench/lib/pgwaits.sh [NODES] [REQUESTS]
#
# PG_PACTUM_BIN, PG_BENCH_BIN, PG_ADMIN_DSN, PG_PORT_BASE as for pg.sh.
set -euo pipefail
source "$(dirname "$0")/pg.sh"
trap pg_cleanup EXIT
trap 'exit 130' INT TERM
nodes=${1:-3}
n=${2:-5000}
pg_setup
pg_start_nodes "$nodes"
pg_client "$pg_urls" 2000 >/dev/null
pg_client "$pg_urls" "$n" | grep '^Bench' &
cpid=$!
sleep 1
while kill -0 "$cpid" 2>/dev/null; do
	echo poll
	psql "$pg_db_dsn" -qAt -F ' ' -c "SELECT coalesce(wait_event_type, 'CPU'), coalesce(wait_event, '-'), count(*)
		FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid() GROUP BY 1, 2"
	sleep 0.05
done >"$pg_work/samples"
awk '$1 == "poll" { polls++; next } { all += $3 } END { printf "# %d node(s): %d active backends in %d samples\n", nodes, all, polls }' nodes="$nodes" "$pg_work/samples"
awk '$1 != "poll" { c[$1 " " $2] += $3; all += $3 } END { for (k in c) printf "%6.1f%%  %s\n", 100 * c[k] / all, k }' "$pg_work/samples" | sort -rn
wait "$cpid"
