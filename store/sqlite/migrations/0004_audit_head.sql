-- 0004_audit_head: the audit chain's head record.
--
-- audit_head holds the seq and hash of the last sealed audit entry, in its
-- one row. Every transaction that seals entries reads the head from here
-- and moves it with the entries it inserts, so the head record and the
-- chain change together. audit.Verify compares the chain's end with it: an
-- entry cut off the end of audit_log leaves the head pointing past the
-- chain ("truncated"), and new entries continue from the head, so the gap
-- stays visible. Before this migration the head was max(seq) of audit_log,
-- which moved back with a truncation; the row starts from that.
CREATE TABLE audit_head (
    singleton INTEGER NOT NULL PRIMARY KEY CHECK (singleton = 1),
    seq       INTEGER NOT NULL,
    hash      TEXT    NOT NULL
) STRICT;

INSERT INTO audit_head (singleton, seq, hash)
SELECT 1, coalesce((SELECT seq FROM audit_log ORDER BY seq DESC LIMIT 1), 0),
          coalesce((SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1), '');
