-- 0003_seal_function: seal audit entries inside the server.
--
-- Every transaction that appends to the audit chain locks the one-row
-- audit_head until it ends, so such transactions commit one after another.
-- Sealing used to read the head, send it to pactum to hash the new entries,
-- and send them back: a network round trip with the lock held. pactum_seal
-- does the same work in the statement that takes the lock, so the lock is
-- held for the statement and the commit only, and the whole transaction
-- fits in the round trip that carries its COMMIT.
--
-- The hash is task.AuditEntry.ComputeHash, byte for byte: SHA-256 over the
-- previous hash, the sequence number in decimal, the time as pactum formats
-- it (RFC 3339 with nanoseconds, passed in as text so that both sides agree
-- on it), the kind, task id, actor and data, each field preceded by its
-- length in bytes as 8 bytes little-endian. audit.Verify recomputes it in
-- Go, so a mismatch could not go unnoticed.

-- pactum_audit_field is one field of the hashed encoding: its length as 8
-- bytes little-endian, then its bytes.
CREATE FUNCTION pactum_audit_field(b bytea) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT set_byte(set_byte(set_byte(set_byte(set_byte(set_byte(set_byte(set_byte(
        '\x0000000000000000'::bytea,
        0, (length(b)::bigint & 255)::int),
        1, ((length(b)::bigint >> 8) & 255)::int),
        2, ((length(b)::bigint >> 16) & 255)::int),
        3, ((length(b)::bigint >> 24) & 255)::int),
        4, 0), 5, 0), 6, 0), 7, 0) || b
$$;

-- pactum_seal appends one entry per array element to the chain, all at
-- p_at (p_at_text is p_at as pactum formats it), locking the head for the
-- rest of the transaction, and returns the new head's sequence number. A
-- NULL data element is an entry without data.
CREATE FUNCTION pactum_seal(p_at timestamptz, p_at_text text, p_kinds text[], p_task_ids text[],
                            p_actors text[], p_datas bytea[]) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    h_seq  bigint;
    h_hash text;
    next   text;
BEGIN
    IF coalesce(array_length(p_kinds, 1), 0) = 0 THEN
        RETURN NULL; -- nothing to seal, nothing to lock
    END IF;
    SELECT seq, hash INTO h_seq, h_hash FROM audit_head FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'audit_head has no row: the schema is damaged (was the table emptied?)';
    END IF;
    FOR i IN 1 .. coalesce(array_length(p_kinds, 1), 0) LOOP
        h_seq := h_seq + 1;
        next := encode(sha256(
            pactum_audit_field(convert_to(h_hash, 'UTF8')) ||
            pactum_audit_field(convert_to(h_seq::text, 'UTF8')) ||
            pactum_audit_field(convert_to(p_at_text, 'UTF8')) ||
            pactum_audit_field(convert_to(p_kinds[i], 'UTF8')) ||
            pactum_audit_field(convert_to(p_task_ids[i], 'UTF8')) ||
            pactum_audit_field(convert_to(p_actors[i], 'UTF8')) ||
            pactum_audit_field(coalesce(p_datas[i], '\x'::bytea))), 'hex');
        INSERT INTO audit_log (seq, at, kind, task_id, actor, data, prev_hash, hash)
        VALUES (h_seq, p_at, p_kinds[i], p_task_ids[i], p_actors[i], p_datas[i], h_hash, next);
        h_hash := next;
    END LOOP;
    UPDATE audit_head SET seq = h_seq, hash = h_hash;
    RETURN h_seq;
END
$$;

-- pactum_seal_new_task is pactum_seal for the transaction that creates task
-- p_task_id under the idempotency key (p_actor, p_key): it seals only if the
-- key names that task, that is if this transaction took it. If another
-- live task holds the key it raises SQLSTATE PTDUP, so that the
-- transaction, already on its way to COMMIT, rolls back instead; pactum
-- then answers with the task that holds the key.
CREATE FUNCTION pactum_seal_new_task(p_at timestamptz, p_at_text text, p_kinds text[], p_task_ids text[],
                                     p_actors text[], p_datas bytea[],
                                     p_actor text, p_key text, p_task_id text) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM idempotency_keys WHERE actor = p_actor AND key = p_key AND task_id = p_task_id) THEN
        RAISE EXCEPTION 'idempotency key (%, %) names another task', p_actor, p_key USING ERRCODE = 'PTDUP';
    END IF;
    RETURN pactum_seal(p_at, p_at_text, p_kinds, p_task_ids, p_actors, p_datas);
END
$$;
