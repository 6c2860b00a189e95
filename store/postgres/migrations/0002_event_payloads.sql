-- 0002_event_payloads: payloads of cross-node task events too large for a
-- NOTIFY.
--
-- The event relay (relay.go) sends each task event as a NOTIFY on the
-- schema's channel. PostgreSQL refuses NOTIFY payloads of 8000 bytes or
-- more, so a larger event is stored here, in the statement that sends the
-- notification, and the notification carries only its id; listeners read the
-- row by id. Rows are needed for seconds and purged after minutes by the
-- nodes that write them. The payload is bytea, the event's JSON byte for
-- byte.
CREATE TABLE event_payloads (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    channel    text        NOT NULL,            -- the NOTIFY channel
    payload    bytea       NOT NULL,            -- the event's JSON
    created_at timestamptz NOT NULL DEFAULT now()
);

-- The purge: DELETE … WHERE created_at < now() - retention.
CREATE INDEX event_payloads_created ON event_payloads (created_at);
