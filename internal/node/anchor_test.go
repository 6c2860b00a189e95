package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/internal/syncbuf"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// anchorNode starts a node on a new SQLite file with the given audit
// section, runs one task through it so that the chain has a head, and
// returns the directory (the node's base directory), the database path and
// the node's log. The node stops when the test ends.
func anchorNode(t *testing.T, auditYAML string) (dir, dbPath string, logs *syncbuf.Buffer, stop func()) {
	t.Helper()
	dir = t.TempDir()
	dbPath = filepath.Join(dir, "pactum.db")
	src := fmt.Sprintf("node: n1\nstore: sqlite://%s\n%sagents:\n  - {name: echo, type: echo}\n", dbPath, auditYAML)
	cfg, err := config.Parse([]byte(src), "anchor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	logs = &syncbuf.Buffer{}
	ctx := context.Background()
	srv, err := node.New(ctx, cfg, dir, nil, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			if err := srv.Stop(ctx); err != nil {
				t.Errorf("Stop: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = srv.Coordinator().SubmitAndWait(wctx, task.SubmitRequest{Envelope: task.Envelope{
		Actor: "alice", Action: "echo",
		Input: task.Message{ID: "m1", Role: task.RoleUser, Parts: []task.Part{task.TextPart("hi")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return dir, dbPath, logs, stop
}

// storeHead verifies the stopped node's store and returns its head.
func storeHead(t *testing.T, dbPath string, anchor *audit.Head) *audit.Report {
	t.Helper()
	s, err := sqlite.Open(t.Context(), "sqlite://"+dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := audit.VerifyWith(t.Context(), s, audit.Options{Anchor: anchor})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAnchorFileAndLog: the node appends the head to the file and logs it;
// what it published is an anchor that verifies against the store.
func TestAnchorFileAndLog(t *testing.T) {
	t.Parallel()
	dir, dbPath, logs, stop := anchorNode(t, "audit: {anchor: {interval: 20ms, file: anchors.jsonl, log: true}}\n")
	file := filepath.Join(dir, "anchors.jsonl")
	// The task has settled, so the head is what the store has now; wait
	// until the file has caught up with it.
	var want int64
	{
		s, err := sqlite.Open(t.Context(), "sqlite://"+dbPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err = s.AuditHead(t.Context())
		s.Close()
		if err != nil || want == 0 {
			t.Fatalf("AuditHead = %d, %v", want, err)
		}
	}
	var last audit.Anchor
	waitFor(t, "the head in the anchor file", func() bool {
		b, _ := os.ReadFile(file)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(b) == 0 || json.Unmarshal([]byte(lines[len(lines)-1]), &last) != nil {
			return false
		}
		return last.Seq >= want
	})
	waitFor(t, "the head in the log", func() bool {
		return strings.Contains(logs.String(), fmt.Sprintf(`"msg":"audit head","seq":%d,"hash":"%s","node":"n1"`, last.Seq, last.Hash))
	})
	stop()
	if last.Node != "n1" || last.Time.IsZero() {
		t.Errorf("anchor %+v, want node n1 and a time", last)
	}
	// Each head is written once, however many intervals passed.
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var a audit.Anchor
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("anchor line %q: %v", line, err)
		}
		if seen[a.Seq]++; seen[a.Seq] > 1 {
			t.Errorf("head %d written more than once:\n%s", a.Seq, b)
		}
	}
	head := last.Head()
	if r := storeHead(t, dbPath, &head); !r.OK || !r.AnchorOK {
		t.Errorf("Verify with the published anchor = %+v", r)
	}
}

// TestAnchorWebhook: the head is POSTed as JSON to a webhook, which must
// be on a public address unless allow_private says otherwise.
func TestAnchorWebhook(t *testing.T) {
	t.Parallel()
	got := make(chan audit.Anchor, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a audit.Anchor
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &a) != nil {
			t.Errorf("webhook got %s %s %q", r.Method, r.Header.Get("Content-Type"), body)
		}
		select {
		case got <- a:
		default:
		}
	}))
	defer hook.Close()

	t.Run("loopback refused", func(t *testing.T) {
		_, _, logs, stop := anchorNode(t, fmt.Sprintf("audit: {anchor: {interval: 20ms, webhook: %q}}\n", hook.URL))
		waitFor(t, "the refused delivery in the log", func() bool {
			return strings.Contains(logs.String(), "a loopback address")
		})
		stop()
		select {
		case a := <-got:
			t.Fatalf("the webhook on loopback got %+v without allow_private", a)
		default:
		}
	})
	t.Run("allow_private", func(t *testing.T) {
		_, dbPath, _, stop := anchorNode(t, fmt.Sprintf("audit: {anchor: {interval: 20ms, webhook: %q, allow_private: true}}\n", hook.URL))
		var a audit.Anchor
		select {
		case a = <-got:
		case <-time.After(20 * time.Second):
			t.Fatal("the webhook got no anchor")
		}
		stop()
		head := a.Head()
		if r := storeHead(t, dbPath, &head); a.Node != "n1" || !r.OK || !r.AnchorOK {
			t.Errorf("anchor %+v: Verify with it = %+v", a, r)
		}
	})
}
