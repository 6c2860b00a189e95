package ui_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/ui"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

var olderLink = regexp.MustCompile(`href="(/ui/\?[^"]*page=[^"]+)"`)

// BenchmarkTaskList100k renders the task list of a store of 100,000
// tasks (built once, outside the timer, straight through the store): the
// first page, the 20th page (reached by following "Older" links, the
// page token), and a filter that matches one task in a hundred. The list
// pages by keyset, so a deep page costs what the first does.
func BenchmarkTaskList100k(b *testing.B) {
	ctx := b.Context()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(b.TempDir(), "pactum.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	text := strings.Repeat("payload ", 40)
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := range 100_000 {
		id := task.NewID()
		agent := "echo"
		if i%100 == 0 {
			agent = "rare"
		}
		if _, err := st.CreateTask(ctx, task.CreateParams{
			Task: &task.Task{ID: id, ContextID: "c", Agent: agent, MaxAttempts: 1, Envelope: task.Envelope{
				TaskID: id, Actor: "alice", Action: agent,
				Input: task.Message{ID: "m" + id, Role: task.RoleUser, Parts: []task.Part{task.TextPart(text)}},
			}},
			Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
			Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id, Actor: "alice"}},
			Now:   start.Add(time.Duration(i) * time.Millisecond),
		}); err != nil {
			b.Fatal(err)
		}
	}
	coord, err := task.NewCoordinator(task.Options{Store: st, Agents: []task.AgentSpec{
		{Name: "echo", Runner: task.RunnerFunc(nil)}, {Name: "rare", Runner: task.RunnerFunc(nil)},
	}})
	if err != nil {
		b.Fatal(err)
	}
	u, err := ui.New(ui.Options{Coordinator: coord})
	if err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B, path string) string {
		rec := httptest.NewRecorder()
		u.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:9000"+path, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}
	deep := "/ui/"
	for range 19 {
		m := olderLink.FindStringSubmatch(get(b, deep))
		if m == nil {
			b.Fatalf("no Older link on %s", deep)
		}
		deep = strings.ReplaceAll(m[1], "&amp;", "&")
	}
	for _, c := range []struct{ name, path string }{
		{"first", "/ui/"},
		{"page20", deep},
		{"agent=rare", "/ui/?agent=rare"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				get(b, c.path)
			}
		})
	}

}
