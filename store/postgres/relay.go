package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pactum/pactum/task"
)

// Cross-node task events travel as NOTIFYs on one channel per schema; see
// docs/postgres.md, "Cross-node events".

const (
	// wireVersion is the version of the events' JSON (wireEvent.V).
	wireVersion = 1
	// notifyLimit: PostgreSQL refuses NOTIFY payloads of this many bytes or
	// more. A larger event goes through the event_payloads table.
	notifyLimit = 8000

	// queueMaxEvents and queueMaxBytes bound the events waiting to be sent.
	// They are reached only when the database is unreachable or far slower
	// than the node; artifact chunks are then dropped first.
	queueMaxEvents = 8192
	queueMaxBytes  = 32 << 20
	// batchMaxEvents and batchMaxBytes bound what one round trip carries.
	batchMaxEvents = 64
	batchMaxBytes  = 1 << 20
	// sendRetries is how many times a batch whose connection was lost is
	// sent again before its events are dropped.
	sendRetries = 3
	// flushTimeout bounds how long Close spends sending what is queued.
	flushTimeout = 2 * time.Second

	// payloadRetention is how long a stored payload is kept; listeners read
	// it within milliseconds. purgeEvery spaces the purges.
	payloadRetention = 10 * time.Minute
	purgeEvery       = time.Minute

	// dropLogEvery spaces the warnings about dropped events.
	dropLogEvery = 10 * time.Second
	// maxSenders bounds the senders a listener remembers for deduplication.
	maxSenders = 4096
)

// errRelayClosed is what Listen returns once the store is closed.
var errRelayClosed = errors.New("postgres: event relay: store closed")

// EventChannel returns the NOTIFY channel on which the stores of schema
// relay task events: "pactum_events_" and 16 hex digits of the schema
// name's SHA-256, so installations in different schemas of one database do
// not hear each other, and the name stays a valid, short identifier
// whatever the schema is called. `LISTEN <channel>` in psql shows the
// events.
func EventChannel(schema string) string {
	sum := sha256.Sum256([]byte(schema))
	return "pactum_events_" + hex.EncodeToString(sum[:8])
}

// Relay returns the store's task.Relay: it carries task events between the
// nodes whose stores share this schema, over LISTEN/NOTIFY (see
// docs/postgres.md). Every call returns the same relay; it starts a sender
// goroutine the first time and is stopped by Close, after which Send does
// nothing and Listen returns an error.
func (s *Store) Relay() task.Relay {
	s.relayMu.Lock()
	defer s.relayMu.Unlock()
	if s.relay == nil {
		s.relay = newRelay(s.pool, s.schema, s.log, s.closed)
	}
	return s.relay
}

// closeRelay stops the relay, if there is one, and keeps a later Relay
// call from starting one.
func (s *Store) closeRelay() {
	s.relayMu.Lock()
	s.closed = true
	r := s.relay
	s.relayMu.Unlock()
	if r != nil {
		r.close()
	}
}

// sqlNotifyAll sends the notifications $2 on channel $1, in array order,
// and lets the transaction commit without waiting for its WAL flush (as
// sqlAsyncCommit). One statement for a batch of events: until issue 31,
// one pg_notify statement each and a set_config.
const sqlNotifyAll = `SELECT pg_notify($1, m) FROM unnest($2::text[]) AS m
	WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL`

// relay is the PostgreSQL task.Relay. Send queues the event's JSON; one
// sender goroutine sends the queue in order, several NOTIFYs a round trip,
// so one node's events reach listeners in the order they were sent. Listen
// holds a connection of its own (not one of the pool's) for LISTEN.
type relay struct {
	log     *slog.Logger
	pool    *pgxpool.Pool
	connCfg *pgx.ConnConfig
	channel string
	// insertSQL stores a large payload and notifies its id; fetchSQL reads
	// it back; purgeSQL deletes old ones.
	insertSQL, fetchSQL, purgeSQL string
	// src tells this relay's events from other senders' for deduplication:
	// a batch sent again after a lost connection may have been delivered.
	// Every notification starts with it (own), so the listener drops this
	// relay's own without decoding them, or fetching a stored payload.
	src string
	own string

	mu       sync.Mutex
	queue    []outEvent
	bytes    int // of the bodies in queue
	chunks   int // artifact events in queue
	closed   bool
	dropped  map[task.EventKind]int // since the last warning
	droppedT time.Time              // when the last warning was logged

	wake    chan struct{} // a Send for the sender; capacity 1
	closing chan struct{} // closed by close
	done    chan struct{} // closed when the sender returned
	// sendCtx is the sender's, canceled when the flush at close times out;
	// stopCtx is canceled by close and ends every Listen.
	sendCtx, stopCtx  context.Context
	stopSend, stopAll context.CancelFunc
	listeners         sync.WaitGroup // running Listen calls
	closeOnce         sync.Once
	n                 uint64 // the sender's last event number; sender only
}

var _ task.Relay = (*relay)(nil)

// outEvent is a queued event: its JSON without the header (see frame).
type outEvent struct {
	body  []byte
	chunk bool
}

func newRelay(pool *pgxpool.Pool, schema string, log *slog.Logger, closed bool) *relay {
	var src [8]byte
	_, _ = rand.Read(src[:])
	channel := EventChannel(schema)
	table := quoteIdent(schema) + ".event_payloads"
	r := &relay{
		log:     log.With(slog.String("channel", channel)),
		pool:    pool,
		connCfg: pool.Config().ConnConfig,
		channel: channel,
		insertSQL: `WITH p AS (INSERT INTO ` + table + ` (channel, payload) VALUES ($1, $2) RETURNING id)
			SELECT pg_notify($1, '{"v":` + strconv.Itoa(wireVersion) + `,"src":"' || $3 || '","ref":' || p.id || '}') FROM p`,
		fetchSQL: `SELECT payload FROM ` + table + ` WHERE id = $1`,
		purgeSQL: `DELETE FROM ` + table + ` WHERE created_at < now() - make_interval(secs => $1)`,
		src:      hex.EncodeToString(src[:]),
		own:      fmt.Sprintf(`{"v":%d,"src":%q,`, wireVersion, hex.EncodeToString(src[:])),
		dropped:  map[task.EventKind]int{},
		wake:     make(chan struct{}, 1),
		closing:  make(chan struct{}),
		done:     make(chan struct{}),
	}
	r.sendCtx, r.stopSend = context.WithCancel(context.Background())
	r.stopCtx, r.stopAll = context.WithCancel(context.Background())
	if closed {
		r.closed = true
		close(r.closing)
		close(r.done)
		r.stopSend()
		r.stopAll()
		return r
	}
	go r.run()
	return r
}

// close stops Send, sends what is queued (for flushTimeout at most), ends
// every Listen and waits for them to close their connections. Closing
// twice is safe.
func (r *relay) close() {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		already := r.closed
		r.closed = true
		r.mu.Unlock()
		if already {
			return
		}
		close(r.closing)
		t := time.NewTimer(flushTimeout)
		select {
		case <-r.done:
			t.Stop()
		case <-t.C:
			r.stopSend()
			<-r.done
		}
		r.stopSend()
		r.stopAll()
		r.listeners.Wait()
	})
}

// Send queues ev for the other nodes. It never waits for the network. When
// the queue is full (the database unreachable for a while) the oldest
// artifact chunks are dropped first, then, if only status events are
// queued, the oldest of them, with a warning.
func (r *relay) Send(ev task.Event) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return
	}
	body, err := encodeEvent(ev)
	if err != nil {
		r.log.Error("event relay: cannot encode event; dropped", slog.String("task", ev.TaskID), slog.Any("err", err))
		return
	}
	e := outEvent{body: body, chunk: ev.Kind == task.EventArtifact}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	if !r.makeRoom(e, ev.Kind) {
		warn := r.dropWarning()
		r.mu.Unlock()
		warn()
		return
	}
	r.queue = append(r.queue, e)
	r.bytes += len(e.body)
	if e.chunk {
		r.chunks++
	}
	warn := r.dropWarning()
	r.mu.Unlock()
	warn()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// makeRoom drops queued events until e fits, or reports that e itself is
// to be dropped. r.mu is held.
func (r *relay) makeRoom(e outEvent, kind task.EventKind) bool {
	if len(e.body) > queueMaxBytes {
		r.dropped[kind]++
		return false
	}
	for len(r.queue)+1 > queueMaxEvents || r.bytes+len(e.body) > queueMaxBytes {
		i := 0
		switch {
		case r.chunks > 0:
			i = slices.IndexFunc(r.queue, func(q outEvent) bool { return q.chunk })
		case e.chunk:
			r.dropped[task.EventArtifact]++
			return false
		}
		old := r.queue[i]
		r.queue = slices.Delete(r.queue, i, i+1)
		r.bytes -= len(old.body)
		if old.chunk {
			r.chunks--
			r.dropped[task.EventArtifact]++
		} else {
			r.dropped[task.EventStatus]++
		}
	}
	return true
}

// dropWarning returns a function that logs the events dropped since the
// last warning, at most once every dropLogEvery; it is called after r.mu is
// released. r.mu is held.
func (r *relay) dropWarning() func() {
	if len(r.dropped) == 0 || time.Since(r.droppedT) < dropLogEvery {
		return func() {}
	}
	chunks, status := r.dropped[task.EventArtifact], r.dropped[task.EventStatus]
	clear(r.dropped)
	r.droppedT = time.Now()
	return func() {
		r.log.Warn("event relay: send queue full (database unreachable or slow); dropped events, other nodes re-read the tasks",
			slog.Int("artifact_chunks", chunks), slog.Int("status_events", status))
	}
}

// take removes the next batch from the queue.
func (r *relay) take() []outEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, size := 0, 0
	for k < len(r.queue) && k < batchMaxEvents && (k == 0 || size+len(r.queue[k].body) <= batchMaxBytes) {
		size += len(r.queue[k].body)
		if r.queue[k].chunk {
			r.chunks--
		}
		k++
	}
	if k == 0 {
		return nil
	}
	batch := slices.Clone(r.queue[:k])
	clear(r.queue[:k]) // let the sent bodies be collected
	r.queue = r.queue[k:]
	if len(r.queue) == 0 {
		r.queue = nil
	}
	r.bytes -= size
	return batch
}

// run is the sender: it sends the queue in order until the relay is
// closed, then what is left, and purges old stored payloads.
func (r *relay) run() {
	defer close(r.done)
	ticker := time.NewTicker(purgeEvery)
	defer ticker.Stop()
	var lastWrite, lastPurge time.Time
	purge := func() {
		// Purge while rows this node wrote may not have expired at the last
		// purge, at most every purgeEvery.
		if lastWrite.IsZero() || time.Since(lastPurge) < purgeEvery ||
			lastPurge.After(lastWrite.Add(payloadRetention+purgeEvery)) {
			return
		}
		lastPurge = time.Now()
		if _, err := r.pool.Exec(r.sendCtx, r.purgeSQL, payloadRetention.Seconds()); err != nil {
			r.log.Warn("event relay: purging stored payloads failed", slog.Any("err", err))
		}
	}
	for {
		if batch := r.take(); batch != nil {
			if r.send(batch) {
				lastWrite = time.Now()
			}
			purge()
			continue
		}
		select {
		case <-r.wake:
		case <-ticker.C:
			purge()
		case <-r.closing:
			left := 0
			for batch := r.take(); batch != nil; batch = r.take() {
				if r.sendCtx.Err() != nil {
					left += len(batch) // out of time: drop the rest quietly
					continue
				}
				r.send(batch)
			}
			if left > 0 {
				r.log.Warn("event relay: store closed before its queue was sent; dropped events", slog.Int("events", left))
			}
			return
		}
	}
}

// send sends a batch of events in one round trip, again after a lost
// connection, and reports whether it stored large payloads. Events it
// cannot send are dropped with a warning: the other nodes learn the
// tasks' states from the store.
func (r *relay) send(batch []outEvent) (stored bool) {
	msgs := make([][]byte, len(batch))
	for i, e := range batch {
		r.n++
		msgs[i] = frame(r.src, r.n, e.body)
		stored = stored || len(msgs[i]) >= notifyLimit
	}
	for attempt := 0; ; attempt++ {
		b := &pgx.Batch{}
		// The batch is one implicit transaction. Its commit need not wait
		// for the WAL to reach the disk: notifications are delivered at
		// commit and exist only for the listeners connected then, and a
		// stored payload is fetched by them at once, so a crash that lost
		// the commit loses nothing a restarted node could use. Without it,
		// every batch would be one more flush for the commits of tasks to
		// queue behind. Consecutive notifications go in one statement
		// (sqlNotifyAll, which also turns synchronous_commit off), in
		// order; a payload too large for a NOTIFY in one of its own.
		async := false
		var run []string
		flushRun := func() {
			if len(run) > 0 {
				b.Queue(sqlNotifyAll, r.channel, run)
				async, run = true, nil
			}
		}
		for _, m := range msgs {
			if len(m) < notifyLimit {
				run = append(run, string(m))
				continue
			}
			flushRun()
			b.Queue(r.insertSQL, r.channel, m, r.src)
		}
		flushRun()
		if !async {
			b.Queue(sqlAsyncCommit)
		}
		err := r.pool.SendBatch(r.sendCtx, b).Close()
		if err == nil {
			return stored
		}
		// A batch whose connection was lost may have been delivered;
		// listeners drop the copies by (src, n).
		retry, lost := classify(err, false)
		if lost {
			r.pool.Reset()
		}
		if !retry || attempt >= sendRetries || r.sendCtx.Err() != nil {
			r.log.Warn("event relay: sending events failed; dropped, other nodes re-read the tasks",
				slog.Int("events", len(batch)), slog.Any("err", err))
			return false
		}
		t := time.NewTimer(backoff(attempt + 2))
		select {
		case <-r.sendCtx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// Listen delivers the events of every node on the schema (this one's
// included; the Coordinator skips those) until ctx ends, the store is
// closed, or the connection breaks. It holds a connection of its own,
// outside the pool, and closes it on return. A payload that cannot be
// decoded is logged and skipped.
func (r *relay) Listen(ctx context.Context, deliver func(task.Event)) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return errRelayClosed
	}
	r.listeners.Add(1)
	r.mu.Unlock()
	defer r.listeners.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.stopCtx, cancel)()
	err := r.listen(ctx, deliver)
	if r.stopCtx.Err() != nil {
		return errRelayClosed
	}
	return err
}

func (r *relay) listen(ctx context.Context, deliver func(task.Event)) error {
	conn, err := pgx.ConnectConfig(ctx, r.connCfg.Copy())
	if err != nil {
		return fmt.Errorf("postgres: event relay: connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+quoteIdent(r.channel)); err != nil {
		return fmt.Errorf("postgres: event relay: listen: %w", err)
	}
	r.log.Debug("event relay listening", slog.Uint64("pid", uint64(conn.PgConn().PID())))
	// Whatever was sent before this point is not heard: tell the
	// Coordinator to re-read (task.Relay).
	deliver(task.Event{Kind: task.EventResync})
	seen := map[string]uint64{}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("postgres: event relay: %w", err)
		}
		if n.Channel != r.channel || strings.HasPrefix(n.Payload, r.own) {
			// Another schema's, or this relay's own event: the
			// Coordinator that sent it has it already.
			continue
		}
		w, err := r.resolve(ctx, conn, n.Payload)
		if err != nil {
			if conn.IsClosed() || ctx.Err() != nil {
				return fmt.Errorf("postgres: event relay: %w", err)
			}
			r.log.Warn("event relay: skipped an undecodable notification", slog.Uint64("sender_pid", uint64(n.PID)), slog.Any("err", err))
			continue
		}
		if w.Src != "" && w.N != 0 {
			if last, ok := seen[w.Src]; ok && w.N <= last {
				continue // sent again after a lost connection
			}
			if len(seen) >= maxSenders {
				clear(seen)
			}
			seen[w.Src] = w.N
		}
		deliver(w.event())
	}
}

// resolve decodes a notification's payload, reading a stored payload by
// its reference.
func (r *relay) resolve(ctx context.Context, conn *pgx.Conn, payload string) (*wireEvent, error) {
	w, err := parseWire([]byte(payload))
	if err != nil || w.Ref == 0 {
		return w, err
	}
	var b []byte
	if err := conn.QueryRow(ctx, r.fetchSQL, w.Ref).Scan(&b); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("stored payload %d not found (purged?)", w.Ref)
		}
		return nil, fmt.Errorf("read stored payload %d: %w", w.Ref, err)
	}
	w, err = parseWire(b)
	if err == nil && w.Ref != 0 {
		err = fmt.Errorf("stored payload %d is a reference", w.Ref)
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

// wireEvent is a task event as it travels between nodes: compact JSON,
// versioned by V. A notification either carries the event or, when it
// would exceed the NOTIFY limit, only Ref, the id of its row in
// event_payloads.
type wireEvent struct {
	V   int    `json:"v"`
	Src string `json:"src,omitempty"` // the sending relay, random per process
	N   uint64 `json:"n,omitempty"`   // its event number: 1, 2, 3, …
	Ref int64  `json:"ref,omitempty"`
	wireBody
}

// wireBody is the event proper: task.Event without Complete (a relayed
// event never is) and with Task stripped of history and artifacts by the
// Coordinator.
type wireBody struct {
	Kind      task.EventKind      `json:"kind,omitempty"`
	TaskID    string              `json:"task,omitempty"`
	ContextID string              `json:"ctx,omitempty"`
	Seq       int                 `json:"seq,omitempty"`
	State     task.State          `json:"state,omitempty"`
	Task      *task.Task          `json:"snap,omitempty"`
	Message   *task.Message       `json:"msg,omitempty"`
	Chunk     *task.ArtifactChunk `json:"chunk,omitempty"`
	Final     bool                `json:"final,omitempty"`
	At        time.Time           `json:"at,omitzero"`
	Node      string              `json:"node,omitempty"`
}

// encodeEvent returns ev's wire body: JSON in pure ASCII, so its length in
// bytes is the same in every server encoding and no character can fail to
// convert.
func encodeEvent(ev task.Event) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(wireBody{
		Kind: ev.Kind, TaskID: ev.TaskID, ContextID: ev.ContextID, Seq: ev.Seq, State: ev.State,
		Task: ev.Task, Message: ev.Message, Chunk: ev.Chunk, Final: ev.Final, At: ev.At, Node: ev.Node,
	}); err != nil {
		return nil, err
	}
	return asciiJSON(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// frame puts the header (version, sender, number) in front of a body's
// fields.
func frame(src string, n uint64, body []byte) []byte {
	out := make([]byte, 0, len(body)+48)
	out = fmt.Appendf(out, `{"v":%d,"src":%q,"n":%d`, wireVersion, src, n)
	if rest := body[1:]; len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
		return append(out, rest...)
	}
	return append(out, '}')
}

// asciiJSON rewrites the non-ASCII characters of JSON text as \u escapes.
// They can only occur inside strings, where the escapes mean the same.
func asciiJSON(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < utf8.RuneSelf {
		i++
	}
	if i == len(b) {
		return b
	}
	const hexDigits = "0123456789abcdef"
	esc := func(out []byte, r rune) []byte {
		return append(out, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	out = append(out, b[:i]...)
	for i < len(b) {
		if b[i] < utf8.RuneSelf {
			out = append(out, b[i])
			i++
			continue
		}
		c, size := utf8.DecodeRune(b[i:])
		i += size
		if c > 0xffff {
			c1, c2 := utf16.EncodeRune(c)
			out = esc(esc(out, c1), c2)
		} else {
			out = esc(out, c)
		}
	}
	return out
}

// parseWire decodes and checks a payload. It never panics on bad input.
func parseWire(b []byte) (*wireEvent, error) {
	var w wireEvent
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	switch {
	case w.V != wireVersion:
		return nil, fmt.Errorf("wire version %d, want %d", w.V, wireVersion)
	case w.Ref < 0:
		return nil, fmt.Errorf("bad reference %d", w.Ref)
	case w.Ref > 0:
		return &w, nil
	case w.TaskID == "":
		return nil, errors.New("no task id")
	}
	switch w.Kind {
	case task.EventStatus:
		if w.State == "" {
			return nil, errors.New("status event without a state")
		}
	case task.EventArtifact:
		if w.Chunk == nil {
			return nil, errors.New("artifact event without a chunk")
		}
	case task.EventPushConfig:
	default:
		return nil, fmt.Errorf("unknown event kind %q", w.Kind)
	}
	return &w, nil
}

// event returns the task.Event w carries.
func (w *wireEvent) event() task.Event {
	return task.Event{
		Kind: w.Kind, TaskID: w.TaskID, ContextID: w.ContextID, Seq: w.Seq, State: w.State,
		Task: w.Task, Message: w.Message, Chunk: w.Chunk, Final: w.Final, At: w.At, Node: w.Node,
	}
}
