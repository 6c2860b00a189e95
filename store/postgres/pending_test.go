package postgres_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pactum/pactum/store/postgres"
	"github.com/pactum/pactum/store/storetest"
	"github.com/pactum/pactum/task"
)

// pendOld writes n entries as a node of the previous version does, with
// migration 0007's pactum_pend (one audit_pending row per entry), and
// returns their batch. Entry i is of kind prefix.i; the odd ones have an
// actor and no data, the even ones data and no actor.
func pendOld(t *testing.T, c *pgx.Conn, at time.Time, prefix string, n int) int64 {
	t.Helper()
	kinds, ids, actors, datas := pendArrays(prefix, n)
	var b int64
	if err := c.QueryRow(t.Context(), `SELECT pactum_pend($1, $2, $3, $4, $5)`, at, kinds, ids, actors, datas).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

// pendNew writes n entries as sqlPend does (one audit_pending_batches
// row), with pendOld's kinds, actors and data, and returns their batch.
// With bare, no entry has data.
func pendNew(t *testing.T, c *pgx.Conn, at time.Time, prefix string, n int, bare bool) int64 {
	t.Helper()
	kinds, ids, actors, datas := pendArrays(prefix, n)
	if bare {
		datas = make([][]byte, n)
	}
	ats := make([]time.Time, n)
	for i := range ats {
		ats[i] = at.Add(time.Duration(i) * time.Microsecond)
	}
	var b int64
	if err := c.QueryRow(t.Context(), `INSERT INTO audit_pending_batches (batch, at, kind, task_id, actor, data)
		VALUES (nextval('audit_pending_batch'), $1, $2, $3, $4, $5) RETURNING batch`,
		ats, kinds, ids, actors, datas).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

// pendArrays are the arrays of pendOld's and pendNew's entries.
func pendArrays(prefix string, n int) (kinds, ids, actors []string, datas [][]byte) {
	for i := range n {
		kinds = append(kinds, fmt.Sprintf("%s.%d", prefix, i))
		ids = append(ids, prefix)
		if i%2 == 1 {
			actors, datas = append(actors, "ops"), append(datas, nil)
		} else {
			actors, datas = append(actors, ""), append(datas, fmt.Appendf(nil, `{"i": %d, "s": "\u00e9"}`, i))
		}
	}
	return kinds, ids, actors, datas
}

// pendingEntries reads the pending entries of both tables, merged in
// (batch, position) order: the entries a seal must chain, in its order.
func pendingEntries(t *testing.T, c *pgx.Conn) []task.AuditEntry {
	t.Helper()
	rows, err := c.Query(t.Context(), `SELECT batch, ord, at, kind, task_id, actor, data FROM audit_pending
		UNION ALL SELECT b.batch, u.ord::integer, u.at, u.kind, u.task_id, u.actor, u.data
		FROM audit_pending_batches AS b, unnest(b.at, b.kind, b.task_id, b.actor, b.data)
			WITH ORDINALITY AS u (at, kind, task_id, actor, data, ord)
		ORDER BY batch, ord`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []task.AuditEntry
	for rows.Next() {
		var b int64
		var ord int32
		var e task.AuditEntry
		var kind string
		var data []byte
		if err := rows.Scan(&b, &ord, &e.At, &kind, &e.TaskID, &e.Actor, &data); err != nil {
			t.Fatal(err)
		}
		e.At, e.Kind = e.At.UTC(), task.AuditKind(kind)
		if data != nil {
			e.Data = json.RawMessage(data)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// head reads audit_head without sealing first (AuditHead would).
func head(t *testing.T, c *pgx.Conn) (int64, string) {
	t.Helper()
	var seq int64
	var hash string
	if err := c.QueryRow(t.Context(), `SELECT seq, hash FROM audit_head`).Scan(&seq, &hash); err != nil {
		t.Fatal(err)
	}
	return seq, hash
}

// chained returns entries as the chain must hold them after the entry
// (seq, hash): numbered on from seq, each hashed from the one before
// with task.AuditEntry.ComputeHash.
func chained(entries []task.AuditEntry, seq int64, hash string) []task.AuditEntry {
	out := make([]task.AuditEntry, len(entries))
	for i, e := range entries {
		seq++
		e.Seq, e.PrevHash = seq, hash
		e.Hash = e.ComputeHash()
		hash = e.Hash
		out[i] = e
	}
	return out
}

// sameEntries reports where got and want differ, field by field, data
// byte for byte (and an entry without data from one with empty data).
func sameEntries(t *testing.T, got, want []task.AuditEntry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Seq != w.Seq || !g.At.Equal(w.At) || g.Kind != w.Kind || g.TaskID != w.TaskID || g.Actor != w.Actor ||
			!bytes.Equal(g.Data, w.Data) || (g.Data == nil) != (w.Data == nil) || g.PrevHash != w.PrevHash || g.Hash != w.Hash {
			t.Errorf("entry %d:\n got %+v (data %q)\nwant %+v (data %q)", i, g, g.Data, w, w.Data)
		}
	}
}

// kindsOf returns the entries' "task id/kind" pairs, in order.
func kindsOf(entries []task.AuditEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.TaskID+"/"+string(e.Kind))
	}
	return out
}

// TestSealMixedPending: a database at schema 7 holding pending entries
// (one audit_pending row each) is migrated in place; a node of the
// previous version goes on writing entries that way while a node of this
// version writes batch rows, some of whose entries have no data (NULL
// elements) or none at all. One seal chains them all, merged in batch
// order (within an old-style batch by ord, within a batch row in array
// order), exactly as the previous sealer chained such entries: the same
// fields, the data byte for byte, the hashes task.AuditEntry.ComputeHash
// gives from the head. Both tables are left empty.
func TestSealMixedPending(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, schema := storeDSN(t), newSchema(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	c := sealedAt(t, schema, now, 7)
	pendOld(t, c, now, "o1", 3) // left pending by the previous binary
	if _, err := postgres.Migrate(ctx, dsn, postgres.Options{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	s := openWith(t, schema, postgres.Options{SealEvery: -1})
	if _, err := s.CreateTask(ctx, task.CreateParams{
		Task: storetest.EchoTask("n1"), Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
		Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: "n1", Actor: "alice"}}, Now: now,
	}); err != nil {
		t.Fatal(err)
	}
	pendOld(t, c, now.Add(time.Millisecond), "o2", 2) // the old node writes on after the upgrade
	if _, err := s.Claim(ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, Limit: 1, TaskID: "n1"}); err != nil {
		t.Fatal(err)
	}
	pendNew(t, c, now.Add(2*time.Millisecond), "bare", 2, true)
	pendOld(t, c, now.Add(3*time.Millisecond), "o3", 1)
	if _, err := s.Transition(ctx, task.TransitionParams{TaskID: "n1", From: task.StateInProgress, To: task.StateSucceeded,
		LeaseOwner: "w", Now: now.Add(4 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	pendNew(t, c, now.Add(5*time.Millisecond), "n2", 3, false)

	pend := pendingEntries(t, c)
	want := "[o1/o1.0 o1/o1.1 o1/o1.2 n1/task.submitted n1/task.transition n1/task.transition o2/o2.0 o2/o2.1 " +
		"n1/task.transition bare/bare.0 bare/bare.1 o3/o3.0 n1/task.transition n2/n2.0 n2/n2.1 n2/n2.2]"
	if got := fmt.Sprint(kindsOf(pend)); got != want {
		t.Fatalf("pending entries in batch order:\n%s\nwant\n%s", got, want)
	}
	seq, hash := head(t, c)
	if n, err := s.Seal(ctx); err != nil || n != len(pend) {
		t.Fatalf("Seal = %d, %v; want %d", n, err, len(pend))
	}
	log := readAll(t, s)
	if int64(len(log)) != seq+int64(len(pend)) {
		t.Fatalf("%d entries in the chain, want %d sealed before and %d now", len(log), seq, len(pend))
	}
	sameEntries(t, log[seq:], chained(pend, seq, hash))
	if p := pending(t, schema); p != 0 {
		t.Errorf("%d entries still pending", p)
	}
	if n, old := count(t, schema, "audit_pending_batches"), count(t, schema, "audit_pending"); n != 0 || old != 0 {
		t.Errorf("%d batch rows and %d old-style rows left", n, old)
	}
	verifyChain(t, s, len(log))
}

// TestSealBound: one seal takes batches until they hold its limit of
// entries (the last batch whole, however large), and no batch of either
// table past a batch of the other that it may have left: batches are
// sealed in batch order across seals too.
func TestSealBound(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openWith(t, schema, postgres.Options{SealEvery: -1})
	c := conn(t, schema)
	now := time.Now().UTC().Truncate(time.Microsecond)
	pendNew(t, c, now, "b1", 3, false)
	pendOld(t, c, now, "b2", 2)
	pendNew(t, c, now, "b3", 3, true)
	pendOld(t, c, now, "b4", 2)
	pendNew(t, c, now, "b5", 10, false)
	pendOld(t, c, now, "b6", 1)
	pend := pendingEntries(t, c)
	for i, want := range []int{
		8,  // b1 and b3 reach 4 entries; b2, then b4, reach 4 old-style rows: b1, b2, b3
		12, // b5 reaches 4 entries alone; b4 and b6 are only 3 rows: b4, b5
		1,  // b6
		0,
	} {
		n, err := postgres.SealOnce(ctx, s, 4)
		if err != nil || n != want {
			t.Fatalf("seal %d = %d, %v; want %d", i+1, n, err, want)
		}
	}
	log := readAll(t, s)
	sameEntries(t, log, chained(pend, 0, ""))
	verifyChain(t, s, len(pend))

	// Without a bound, one seal takes everything.
	pendOld(t, c, now, "c1", 2)
	pendNew(t, c, now, "c2", 5000, false)
	pendOld(t, c, now, "c3", 5000)
	if n, err := postgres.SealOnce(ctx, s, 0); err != nil || n != 10002 {
		t.Fatalf("unbounded seal = %d, %v; want 10002", n, err)
	}
	verifyChain(t, s, len(pend)+10002)
}

// TestOldSealerWaits: a sealer of the previous version (its statement,
// which knows only audit_pending) seals none of the old-style rows that
// follow a pending batch row it cannot see (pactum_pending_wait), so the
// chain keeps batch order; they stay pending until a sealer of this
// version takes them after that batch. Without batch rows pending it
// takes every old-style row, as before.
func TestOldSealerWaits(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openWith(t, schema, postgres.Options{SealEvery: -1})
	c := conn(t, schema)
	now := time.Now().UTC().Truncate(time.Microsecond)
	// oldSeal runs the previous version's seal statement, up to the
	// delete, and returns the kinds it took; the transaction rolls back.
	oldSeal := func() []string {
		t.Helper()
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(1936023916, hashtext(current_schema()))`); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT seq, hash FROM audit_head FOR UPDATE`); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, `DELETE FROM audit_pending WHERE ctid = ANY (ARRAY (
			SELECT ctid FROM audit_pending ORDER BY batch, ord LIMIT $1))
			RETURNING batch, ord, at, kind, task_id, actor, data`, 4096)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for rows.Next() {
			var b int64
			var ord int32
			var at time.Time
			var kind, id, actor string
			var data []byte
			if err := rows.Scan(&b, &ord, &at, &kind, &id, &actor, &data); err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, kind)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return kinds
	}
	pendOld(t, c, now, "o1", 2)
	pendNew(t, c, now, "n1", 1, false)
	pendOld(t, c, now, "o2", 1)
	if got := fmt.Sprint(oldSeal()); got != "[o1.0 o1.1]" {
		t.Errorf("the old sealer took %s, want [o1.0 o1.1]", got)
	}
	pend := pendingEntries(t, c)
	if n, err := s.Seal(ctx); err != nil || n != 4 {
		t.Fatalf("Seal = %d, %v; want 4", n, err)
	}
	sameEntries(t, readAll(t, s), chained(pend, 0, ""))

	pendOld(t, c, now, "o3", 2)
	if got := fmt.Sprint(oldSeal()); got != "[o3.0 o3.1]" {
		t.Errorf("with no batch row pending, the old sealer took %s, want [o3.0 o3.1]", got)
	}
	verifyChain(t, s, 6)
}
