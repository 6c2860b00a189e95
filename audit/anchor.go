package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"
)

// Anchor is one publication of the chain's head: what an operator keeps
// outside the store and later passes to Verify (Options.Anchor, or `pactum
// audit verify --expect-head SEQ:HASH`).
type Anchor struct {
	Seq  int64     `json:"seq"`
	Hash string    `json:"hash"`
	Time time.Time `json:"time"`
	Node string    `json:"node"`
}

// Head returns the anchored head.
func (a Anchor) Head() Head { return Head{Seq: a.Seq, Hash: a.Hash} }

// PublisherOptions configure a Publisher. At least one sink (File, Log,
// Webhook) must be set.
type PublisherOptions struct {
	// Store is read for its head record.
	Store HeadReader
	// Interval is how often the head is read (> 0).
	Interval time.Duration
	// Node names the publishing node in each anchor.
	Node string
	// File, when set, gets each anchor appended as one JSON line, synced
	// to disk before the publication counts.
	File string
	// Log, when set, logs each anchor at INFO ("audit head").
	Log bool
	// Webhook, when set, is POSTed each anchor as JSON through Client; a
	// 2xx answer counts.
	Webhook string
	// Client sends the webhook requests (required with Webhook). Give it a
	// timeout and the destination checks outbound requests need.
	Client *http.Client
	// Logger receives the log sink's lines and publication failures.
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// sink is one place anchors go, and the last head it took.
type sink struct {
	name    string
	publish func(ctx context.Context, a Anchor, line []byte) error
	last    Head
}

// Publisher reads the store's head record at an interval and publishes it
// to its sinks, skipping a sink that already has the current head. A sink
// that fails is tried again at the next interval.
type Publisher struct {
	opts  PublisherOptions
	log   *slog.Logger
	sinks []*sink
	mu    sync.Mutex // serialises publications

	startOnce, stopOnce sync.Once
	cancel              context.CancelFunc
	done                chan struct{}
}

// NewPublisher checks opts and returns a Publisher; nothing runs until
// Start.
func NewPublisher(opts PublisherOptions) (*Publisher, error) {
	switch {
	case opts.Store == nil:
		return nil, errors.New("audit: publisher: no store")
	case opts.Interval <= 0:
		return nil, fmt.Errorf("audit: publisher: interval %s: must be positive", opts.Interval)
	case opts.File == "" && !opts.Log && opts.Webhook == "":
		return nil, errors.New("audit: publisher: no sink: set a file, the log or a webhook")
	case opts.Webhook != "" && opts.Client == nil:
		return nil, errors.New("audit: publisher: a webhook needs an HTTP client")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Publisher{opts: opts, log: log, done: make(chan struct{})}
	if opts.File != "" {
		s := &sink{name: "file", publish: p.toFile}
		s.last = lastAnchorInFile(opts.File)
		p.sinks = append(p.sinks, s)
	}
	if opts.Log {
		p.sinks = append(p.sinks, &sink{name: "log", publish: func(_ context.Context, a Anchor, _ []byte) error {
			p.log.Info("audit head", slog.Int64("seq", a.Seq), slog.String("hash", a.Hash), slog.String("node", a.Node))
			return nil
		}})
	}
	if opts.Webhook != "" {
		p.sinks = append(p.sinks, &sink{name: "webhook", publish: p.toWebhook})
	}
	return p, nil
}

// Start publishes the head at once and then at every interval, until
// Stop. Starting twice is a no-op.
func (p *Publisher) Start(ctx context.Context) error {
	p.startOnce.Do(func() {
		ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
		go p.run(ctx)
	})
	return nil
}

func (p *Publisher) run(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.opts.Interval)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, max(p.opts.Interval, 10*time.Second))
		if err := p.Publish(rctx); err != nil && ctx.Err() == nil {
			p.log.Warn("audit: publishing the head failed; trying again at the next interval", slog.Any("err", err))
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop ends publishing and waits for a publication under way, until ctx
// ends. Stopping twice, or a Publisher never started, is safe.
func (p *Publisher) Stop(ctx context.Context) error {
	p.startOnce.Do(func() { close(p.done) }) // never started: nothing runs
	p.stopOnce.Do(func() {
		if p.cancel != nil {
			p.cancel()
		}
	})
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Publish reads the head record once and gives it to every sink that does
// not have it yet. An empty chain is not published. It returns the sinks'
// errors, joined.
func (p *Publisher) Publish(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	seq, hash, err := p.opts.Store.AuditHead(ctx)
	if err != nil {
		return fmt.Errorf("audit: publish: read head: %w", err)
	}
	head := Head{Seq: seq, Hash: hash}
	if seq == 0 {
		return nil
	}
	a := Anchor{Seq: seq, Hash: hash, Time: p.opts.Now().UTC(), Node: p.opts.Node}
	line, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("audit: publish: %w", err)
	}
	var errs []error
	for _, s := range p.sinks {
		if s.last == head {
			continue
		}
		if err := s.publish(ctx, a, line); err != nil {
			errs = append(errs, fmt.Errorf("audit: publish head %d to the %s: %w", seq, s.name, err))
			continue
		}
		s.last = head
	}
	return errors.Join(errs...)
}

// toFile appends line to the file and syncs it.
func (p *Publisher) toFile(_ context.Context, _ Anchor, line []byte) error {
	f, err := os.OpenFile(p.opts.File, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(line, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	return errors.Join(werr, serr, cerr)
}

// toWebhook POSTs line to the webhook.
func (p *Publisher) toWebhook(ctx context.Context, _ Anchor, line []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.opts.Webhook, bytes.NewReader(line))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.opts.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return nil
}

// lastAnchorInFile returns the head of the last anchor line in the file,
// so that a restarted node does not write the same head again; zero when
// there is none.
func lastAnchorInFile(path string) Head {
	f, err := os.Open(path)
	if err != nil {
		return Head{}
	}
	defer f.Close()
	const tail = 4096
	st, err := f.Stat()
	if err != nil {
		return Head{}
	}
	off := max(st.Size()-tail, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return Head{}
	}
	lines := bytes.Split(bytes.TrimRight(buf, "\n"), []byte("\n"))
	var a Anchor
	if err := json.Unmarshal(lines[len(lines)-1], &a); err != nil {
		return Head{}
	}
	return a.Head()
}
