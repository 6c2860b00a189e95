-- 0007_audit_pending: writers no longer wait for the audit chain's head.
--
-- Until now every transaction that appended to the audit chain locked the
-- one-row audit_head until it committed (pactum_seal, 0003), so every
-- writer on every node committed one after another. Now a transaction
-- writes its audit entries, unhashed, into audit_pending (pactum_pend),
-- which takes no lock any other writer needs; a sealer (store/postgres
-- audit.go, sealPending) later locks the head, moves the committed pending
-- rows into audit_log in (batch, ord) order, hashing them as before, and
-- deletes them, in one transaction. docs/design.md ("Sealing the
-- PostgreSQL audit chain after commit") argues why the chain stays linear,
-- in real-time order, and tamper-evident.
--
-- Sealed entries, audit_log, audit_head and pactum_seal are unchanged: a
-- database upgraded in place keeps its chain, and the first seal continues
-- it from the head. A node still running the previous binary keeps sealing
-- in its own transactions under the head lock, which the sealer takes too:
-- the chain stays linear while a cluster is upgraded node by node.

-- audit_pending_batch numbers the transactions that write pending entries:
-- one value per transaction, taken when it writes them, just before its
-- COMMIT. A transaction that starts after another has committed takes a
-- greater value (a sequence never goes back).
CREATE SEQUENCE audit_pending_batch;

-- audit_pending holds the audit entries of committed transactions that the
-- sealer has not sealed yet: at is the entry's time (the operation's Now),
-- ord its position among its transaction's entries.
CREATE TABLE audit_pending (
    batch   bigint      NOT NULL,
    ord     integer     NOT NULL,
    at      timestamptz NOT NULL,
    kind    text        NOT NULL,
    task_id text        NOT NULL DEFAULT '',
    actor   text        NOT NULL DEFAULT '',
    data    bytea,                             -- exact bytes: the hash will cover them
    PRIMARY KEY (batch, ord)
);

-- pactum_pend writes one pending entry per array element, all at p_at, in
-- array order, under one new batch number, and returns that number. It
-- locks nothing another writer waits for. A NULL data element is an entry
-- without data.
CREATE FUNCTION pactum_pend(p_at timestamptz, p_kinds text[], p_task_ids text[],
                            p_actors text[], p_datas bytea[]) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    b bigint;
BEGIN
    IF coalesce(array_length(p_kinds, 1), 0) = 0 THEN
        RETURN NULL;
    END IF;
    b := nextval('audit_pending_batch');
    INSERT INTO audit_pending (batch, ord, at, kind, task_id, actor, data)
    SELECT b, u.ord, p_at, u.kind, u.task_id, u.actor, u.data
    FROM unnest(p_kinds, p_task_ids, p_actors, p_datas) WITH ORDINALITY AS u(kind, task_id, actor, data, ord);
    RETURN b;
END
$$;

-- pactum_pend_new_task is pactum_pend for the transaction that creates task
-- p_task_id under the idempotency key (p_actor, p_key), with the check
-- pactum_seal_new_task made: another live task holding the key raises
-- SQLSTATE PTDUP, so that the transaction rolls back.
CREATE FUNCTION pactum_pend_new_task(p_at timestamptz, p_kinds text[], p_task_ids text[],
                                     p_actors text[], p_datas bytea[],
                                     p_actor text, p_key text, p_task_id text) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM idempotency_keys WHERE actor = p_actor AND key = p_key AND task_id = p_task_id) THEN
        RAISE EXCEPTION 'idempotency key (%, %) names another task', p_actor, p_key USING ERRCODE = 'PTDUP';
    END IF;
    RETURN pactum_pend(p_at, p_kinds, p_task_ids, p_actors, p_datas);
END
$$;

-- audit_log refuses UPDATE and DELETE statements themselves, not only the
-- rows they would touch (0001's row triggers): the sealer only ever
-- inserts, and a statement that would rewrite history is refused even
-- when it finds no row yet (the entries of a commit that is moments old
-- may still be pending). Like the row triggers, this catches bugs, not
-- attackers.
CREATE TRIGGER audit_log_append_only_statement BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION pactum_append_only();
