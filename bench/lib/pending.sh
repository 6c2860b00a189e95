#!/usr/bin/env bash
# pending.sh: the PostgreSQL store's pending audit entries alone, one row
# per entry (migration 0007's audit_pending) against one row per
# transaction (0008's audit_pending_batches), with pgbench at one client
# (issue 31). For each form, on a fresh database migrated with this
# tree's migrations: pgbench writes 25,000 transactions of a blocking
# task's five entries (sizes as bench/lib/pg.sh's echo task writes them:
# a 0.6 kB submission, four 0.15 kB transition records), each as the
# store writes them (0007: sqlPend's INSERT … SELECT … unnest as of
# migration 0007; 0008: sqlPend), then seals them 25 tasks a seal with the
# sealer's statement (sqlTakePending then and now; the insert into
# audit_log, the same for both, is left out). Prints, per task, each
# statement's calls, execution time (pg_stat_statements total_exec_time:
# at one client, with nothing to wait for, the backend's work) and WAL
# records and bytes. Rounds alternate the forms.
#
#   bash bench/lib/pending.sh [rounds]          (default 2)
#
# PG_ADMIN_DSN as in pg.sh. Needs psql and pgbench, and
# pg_stat_statements in shared_preload_libraries.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
admin=${PG_ADMIN_DSN:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
work=$(mktemp -d)
db=pactum_pending_$$
trap 'psql "$admin" -qAtc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1; rm -rf "$work"' EXIT

sub=$(printf '{"kind":"message","messageId":"m-%0540d"}' 0)
rec='{"taskId":"t1","seq":1,"from":"submitted","to":"working","at":"2026-11-28T09:00:00.123456Z","node":"n1","reason":"rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr"}'
arrays="ARRAY[now(), now(), now(), now(), now()]::timestamptz[],
	ARRAY['task.submitted', 'task.transition', 'task.transition', 'task.transition', 'task.transition']::text[],
	ARRAY['task-1', 'task-1', 'task-1', 'task-1', 'task-1']::text[], ARRAY['alice', '', '', '', '']::text[],
	ARRAY[convert_to('$sub', 'UTF8'), convert_to('$rec', 'UTF8'), convert_to('$rec', 'UTF8'),
		convert_to('$rec', 'UTF8'), convert_to('$rec', 'UTF8')]::bytea[]"
oneline() { tr '\n\t' '  '; echo; }
oneline >"$work/0007-write.sql" <<SQL
WITH b AS MATERIALIZED (SELECT nextval('audit_pending_batch') AS n)
INSERT INTO audit_pending (batch, ord, at, kind, task_id, actor, data)
SELECT b.n, u.ord, u.at, u.kind, u.task_id, u.actor, u.data
FROM b, unnest($arrays) WITH ORDINALITY AS u(at, kind, task_id, actor, data, ord);
SQL
oneline >"$work/0008-write.sql" <<SQL
INSERT INTO audit_pending_batches (batch, at, kind, task_id, actor, data)
VALUES (nextval('audit_pending_batch'), $arrays);
SQL
oneline >"$work/0007-seal.sql" <<'SQL'
DELETE FROM audit_pending WHERE ctid = ANY (ARRAY (SELECT ctid FROM audit_pending ORDER BY batch, ord LIMIT 125))
RETURNING batch, ord, at, kind, task_id, actor, data;
SQL
# sqlTakePending, from store/postgres/sql.go, with 125 entries for $1.
awk '/sqlTakePending = `/ { on = 1; sub(/.*sqlTakePending = `/, "") } on { if (sub(/`.*/, "")) { print; exit } print }' \
	"$root/store/postgres/sql.go" | sed 's/\$1/125/g' | oneline >"$work/0008-seal.sql"
sed -i 's/$/;/' "$work/0008-seal.sql"

for round in $(seq "${1:-2}"); do
	for form in 0007 0008; do
		PGOPTIONS="-c client_min_messages=warning" psql "$admin" -qAtc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
		dsn=$(printf '%s' "$admin" | sed -E "s#/[^/?]*(\\?|$)#/$db\\1#")
		cat "$root"/store/postgres/migrations/0*.sql | psql "$dsn" -q -v ON_ERROR_STOP=1 >/dev/null
		psql "$dsn" -qAtc "CREATE EXTENSION pg_stat_statements" -c "SELECT pg_stat_statements_reset()" >/dev/null
		PGOPTIONS="-c synchronous_commit=off" pgbench -n -c1 -t 25000 -M prepared -f "$work/$form-write.sql" "$dsn" >/dev/null
		PGOPTIONS="-c synchronous_commit=off" pgbench -n -c1 -t 1000 -M prepared -f "$work/$form-seal.sql" "$dsn" >/dev/null
		psql "$dsn" -qAt -F ' ' -c "SELECT format('round %s %s %-5s %5s calls %6s us %6s WAL records %5s WAL bytes per task',
			$round, '$form', CASE WHEN query ~* '^delete|^with f' THEN 'seal' ELSE 'write' END,
			round(calls / 25000.0, 2), round(total_exec_time::numeric * 1000 / 25000, 1),
			round(wal_records / 25000.0, 2), round(wal_bytes / 25000))
			FROM pg_stat_statements WHERE query ~* '^(insert|delete|with)' ORDER BY query DESC"
		left=$(psql "$dsn" -qAtc "SELECT (SELECT count(*) FROM audit_pending) + (SELECT count(*) FROM audit_pending_batches)")
		[[ $left == 0 ]] || echo "round $round $form: $left pending rows left unsealed" >&2
	done
done
