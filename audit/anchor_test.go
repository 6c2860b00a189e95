package audit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
)

// fixedHead is a HeadReader whose head the test sets.
type fixedHead struct{ seq atomic.Int64 }

func (f *fixedHead) AuditHead(context.Context) (int64, string, error) {
	n := f.seq.Load()
	if n == 0 {
		return 0, "", nil
	}
	return n, strings.Repeat(string(rune('a'+n%6)), 64), nil
}

func TestNewPublisherRefuses(t *testing.T) {
	t.Parallel()
	h := &fixedHead{}
	for name, opts := range map[string]audit.PublisherOptions{
		"no store":           {Interval: time.Second, Log: true},
		"no interval":        {Store: h, Log: true},
		"no sink":            {Store: h, Interval: time.Second},
		"webhook, no client": {Store: h, Interval: time.Second, Webhook: "https://example.com"},
		"negative interval":  {Store: h, Interval: -time.Second, Log: true},
	} {
		if _, err := audit.NewPublisher(opts); err == nil {
			t.Errorf("%s: NewPublisher accepted %+v", name, opts)
		}
	}
}

// TestPublishSkipsUnchanged: a sink gets each head once; a sink that
// failed gets it at the next publication, the others do not get it again;
// a new publisher on the same file does not repeat the file's last head.
func TestPublishSkipsUnchanged(t *testing.T) {
	t.Parallel()
	var posts, fail atomic.Int32
	fail.Store(1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		posts.Add(1)
		if fail.Load() == 1 {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	defer hook.Close()
	file := filepath.Join(t.TempDir(), "anchors.jsonl")
	h := &fixedHead{}
	newPub := func() *audit.Publisher {
		p, err := audit.NewPublisher(audit.PublisherOptions{Store: h, Interval: time.Hour, Node: "n", File: file, Webhook: hook.URL, Client: hook.Client()})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	lines := func() int {
		b, _ := os.ReadFile(file)
		return strings.Count(string(b), "\n")
	}
	p := newPub()
	ctx := t.Context()
	if err := p.Publish(ctx); err != nil || lines() != 0 || posts.Load() != 0 {
		t.Fatalf("Publish of an empty chain: %v, %d lines, %d posts; want nothing published", err, lines(), posts.Load())
	}
	h.seq.Store(3)
	if err := p.Publish(ctx); err == nil || !strings.Contains(err.Error(), "503") || lines() != 1 || posts.Load() != 1 {
		t.Fatalf("Publish with the webhook down: %v, %d lines, %d posts", err, lines(), posts.Load())
	}
	fail.Store(0)
	if err := p.Publish(ctx); err != nil || lines() != 1 || posts.Load() != 2 {
		t.Fatalf("Publish again: %v, %d lines, %d posts; want the webhook retried and the file left alone", err, lines(), posts.Load())
	}
	if err := p.Publish(ctx); err != nil || lines() != 1 || posts.Load() != 2 {
		t.Fatalf("Publish of an unchanged head: %v, %d lines, %d posts", err, lines(), posts.Load())
	}
	h.seq.Store(4)
	if err := p.Publish(ctx); err != nil || lines() != 2 || posts.Load() != 3 {
		t.Fatalf("Publish of a new head: %v, %d lines, %d posts", err, lines(), posts.Load())
	}
	if err := newPub().Publish(ctx); err != nil || lines() != 2 {
		t.Fatalf("a restarted publisher: %v, %d lines; want the file's last head not repeated", err, lines())
	}
	b, _ := os.ReadFile(file)
	last := strings.Split(strings.TrimSpace(string(b)), "\n")[1]
	if !strings.Contains(last, `"seq":4,"hash":"`+strings.Repeat("e", 64)+`"`) || !strings.Contains(last, `"node":"n"`) {
		t.Errorf("anchor line %s", last)
	}
}

func TestPublisherStop(t *testing.T) {
	t.Parallel()
	p, err := audit.NewPublisher(audit.PublisherOptions{Store: &fixedHead{}, Interval: time.Millisecond, Log: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(t.Context()); err != nil {
		t.Fatalf("Stop before Start: %v", err)
	}
	p, _ = audit.NewPublisher(audit.PublisherOptions{Store: &fixedHead{}, Interval: time.Millisecond, Log: true})
	_ = p.Start(t.Context())
	_ = p.Start(t.Context())
	for range 2 {
		if err := p.Stop(t.Context()); err != nil {
			t.Fatalf("Stop: %v", err)
		}
	}
}
