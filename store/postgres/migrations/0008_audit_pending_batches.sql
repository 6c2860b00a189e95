-- 0008_audit_pending_batches: one pending row per transaction, not per entry.
--
-- Since 0007 a transaction writes its audit entries, unhashed, into
-- audit_pending, one row per entry, and the sealer deletes them as it
-- seals them. A blocking task writes five entries: five heap tuples and
-- five primary-key index tuples when they are written, five tuple deletes
-- when they are sealed: 15 of the 51 WAL records its statements wrote in
-- the benchmark (bench/lib/pg.sh, pg_stat_statements; issue 31).
-- Now a transaction writes its entries as one row of audit_pending_batches,
-- one array per column with one element per entry, in entry order: one
-- heap tuple, one index tuple and one delete, whatever the number of
-- entries.
--
-- audit_pending stays, with pactum_pend and pactum_pend_new_task, and the
-- sealer drains both tables, merged in batch order (store/postgres
-- audit.go, sqlTakePending): both take their batch numbers from the one
-- sequence audit_pending_batch, so the numbers of the two tables compare,
-- and an old-style batch's rows are ordered by ord. Pending rows that an
-- upgraded database holds are thus sealed where they belong, without being
-- copied, and so are the rows that a node still running the previous
-- binary writes while the cluster is upgraded node by node. (Copying the
-- old rows here would not have spared the sealer the old table: an old
-- node may write to it until the last node is upgraded.)
--
-- 0007 promised that such an upgrade keeps the chain linear; it does (every
-- sealer, old or new, appends under the audit_head row lock), and it keeps
-- the chain in real-time order too: an old node's sealer knows nothing of
-- audit_pending_batches and would seal an old-style row before the new
-- rows of smaller batches, committed before it, that it cannot see (the
-- next transition of a task before the previous one, when they ran on
-- nodes of different versions). pactum_pending_wait, below, keeps it from
-- deleting such a row: its DELETE leaves the row pending, and a sealer of
-- this version seals it after the batches before it.

-- One element per entry in each array, in entry order; no element is NULL
-- but data's. The writers (sqlPend, sqlCreate, sqlMove) build the arrays
-- from one list of entries, and the sealer refuses a row whose arrays
-- differ in length. No CHECK says so: one with cardinality and
-- array_position over the five arrays cost 20 µs of the server's CPU per
-- insert (38–41 µs against 17–19 µs without it, pgbench, one client;
-- docs/benchmarks.md), as much as the one row saves.
CREATE TABLE audit_pending_batches (
    batch   bigint        PRIMARY KEY,   -- nextval('audit_pending_batch'), as audit_pending's
    at      timestamptz[] NOT NULL,      -- each entry's time (the operation's Now)
    kind    text[]        NOT NULL,
    task_id text[]        NOT NULL,      -- '' for none
    actor   text[]        NOT NULL,      -- '' for none
    data    bytea[]       NOT NULL       -- exact bytes: the hash will cover them; a NULL element is an entry without data
)
-- A row lives moments and is read once, whole: keep it in the heap page,
-- uncompressed, up to the largest tuple a page holds, rather than
-- compressing it or moving it to the TOAST table (more tuples to write and
-- delete) when it passes 2 kB. A blocking task's five entries come close
-- (about 1.6 kB of entries in the benchmark, bench/lib/pg.sh, whose
-- submission entry holds the 0.6 kB message); a longer message passes it.
WITH (toast_tuple_target = 8160);

-- pactum_pending_wait, a trigger before each DELETE of an audit_pending
-- row, skips the delete (the row stays pending, and the DELETE … RETURNING
-- of a sealer of the previous version does not return it) when a batch of
-- audit_pending_batches with a smaller number is pending: a sealer of the
-- previous version must not seal the row before that batch, which it
-- cannot see. Sealers of this version take both tables in batch order and
-- say so with the setting pactum.seal, for their transaction only: for
-- them the trigger deletes the row. The query runs in a fresh snapshot (a
-- volatile function's), which sees at least every batch the DELETE's
-- snapshot saw: no sealer removes one meanwhile, for the DELETE's
-- transaction holds the head.
CREATE FUNCTION pactum_pending_wait() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('pactum.seal', true) IS DISTINCT FROM 'batches'
       AND EXISTS (SELECT 1 FROM audit_pending_batches WHERE batch < OLD.batch) THEN
        RETURN NULL;
    END IF;
    RETURN OLD;
END
$$;

CREATE TRIGGER audit_pending_wait BEFORE DELETE ON audit_pending
    FOR EACH ROW EXECUTE FUNCTION pactum_pending_wait();
