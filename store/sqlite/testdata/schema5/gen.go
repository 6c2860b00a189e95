//go:build ignore

// gen.go writes pactum.db.gz and want.json.gz to DIR: a database at
// schema version 5 (migrations 0001–0005) with tasks that carry messages
// and artifacts, small and large, and what GetTask and ListTasks returned
// from it. TestSchema5Upgrade opens a copy with today's binary, which
// migrates it, and compares what it reads back with want.json. Both are
// gzipped: the large texts repeat a line, so 1 MB takes some 20 KB.
//
// It must run at a commit whose newest migration is 0005 (7e1bac6, main
// before migration 0006), with that commit's store:
//
//	git worktree add /tmp/schema5 7e1bac6
//	cp store/sqlite/testdata/schema5/gen.go /tmp/schema5/gen5.go
//	(cd /tmp/schema5 && go run gen5.go "$OLDPWD/store/sqlite/testdata/schema5")
//	git worktree remove /tmp/schema5
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// text returns n bytes of text that differ from one call to the next.
func text(tag string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s line %d: the quick brown fox jumps over the lazy dog. ", tag, i)
	}
	return b.String()[:n]
}

func msg(id string, role task.Role, s string) task.Message {
	return task.Message{ID: id, Role: role, Parts: []task.Part{task.TextPart(s)}}
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: go run gen.go DIR")
	}
	dir := os.Args[1]
	if sqlite.SchemaVersion() != 5 {
		log.Fatalf("schema version %d: run this at a commit whose newest migration is 0005", sqlite.SchemaVersion())
	}
	path := filepath.Join(dir, "pactum.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
	ctx := context.Background()
	s, err := sqlite.Open(ctx, "sqlite://"+path, nil)
	if err != nil {
		log.Fatal(err)
	}
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	must := func(_ any, err error) {
		if err != nil {
			log.Fatal(err)
		}
	}
	create := func(id string, input task.Message) {
		in := &task.Task{ID: id, ContextID: "ctx-" + id[:1], Agent: "echo", MaxAttempts: 3, Envelope: task.Envelope{
			TaskID: id, Actor: "alice", Action: "echo", Input: input,
		}}
		in.History = []task.Message{input}
		must(s.CreateTask(ctx, task.CreateParams{
			Task: in, Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
			Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id, Actor: "alice"}},
			Now:   now,
		}))
		now = now.Add(time.Second)
	}
	claim := func(id string) {
		must(s.Claim(ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, Limit: 1, TaskID: id}))
	}
	settle := func(id string, to task.State, ms []task.Message, as []task.Artifact) {
		must(s.Transition(ctx, task.TransitionParams{
			TaskID: id, From: task.StateInProgress, To: to, LeaseOwner: "w", Now: now,
			Messages: ms, Artifacts: as,
		}))
		now = now.Add(time.Second)
	}

	// A blocking echo: one message each way and one artifact.
	create("small", msg("m-small", task.RoleUser, "hello"))
	claim("small")
	settle("small", task.StateSucceeded,
		[]task.Message{msg("r-small", task.RoleAgent, "hello")},
		[]task.Artifact{{ID: "a", Parts: []task.Part{task.TextPart("hello")}}})

	// 50 KB each way and a 50 KB artifact: overflow pages in either
	// table layout.
	create("large", msg("m-large", task.RoleUser, text("in", 50_000)))
	claim("large")
	settle("large", task.StateSucceeded,
		[]task.Message{msg("r-large", task.RoleAgent, text("out", 50_000))},
		[]task.Artifact{{ID: "big", Name: "report", Parts: []task.Part{task.TextPart(text("art", 50_000))}}})

	// Turns: messages around the ~1,000 bytes a WITHOUT ROWID row keeps
	// in its leaf, an artifact replaced under its id (it keeps its
	// position) and one added after it.
	create("turns", msg("m-turns-1", task.RoleUser, text("q1", 900)))
	claim("turns")
	settle("turns", task.StateInputRequired,
		[]task.Message{msg("r-turns-1", task.RoleAgent, text("a1", 1_100))},
		[]task.Artifact{{ID: "draft", Parts: []task.Part{task.TextPart(text("draft1", 3_000))}},
			{ID: "notes", Parts: []task.Part{task.TextPart("notes")}}})
	must(s.Transition(ctx, task.TransitionParams{
		TaskID: "turns", From: task.StateInputRequired, To: task.StateQueued, NewTurn: true, Now: now,
		Messages: []task.Message{msg("m-turns-2", task.RoleUser, text("q2", 5_000))},
	}))
	now = now.Add(time.Second)
	claim("turns")
	settle("turns", task.StateSucceeded,
		[]task.Message{msg("r-turns-2", task.RoleAgent, text("a2", 20_000))},
		[]task.Artifact{{ID: "draft", Name: "final", Parts: []task.Part{task.TextPart(text("draft2", 1_500))}},
			{ID: "summary", Parts: []task.Part{task.TextPart("done")}}})

	// Still queued: its input only.
	create("waiting", msg("m-waiting", task.RoleUser, "later"))

	want := map[string]any{}
	for _, id := range []string{"small", "large", "turns", "waiting"} {
		for _, n := range []int{-1, 1} {
			t, err := s.GetTask(ctx, id, n)
			if err != nil {
				log.Fatal(err)
			}
			want[fmt.Sprintf("GetTask %s %d", id, n)] = t
		}
	}
	page, err := s.ListTasks(ctx, task.ListParams{HistoryLength: 2, IncludeArtifacts: true})
	if err != nil {
		log.Fatal(err)
	}
	want["ListTasks"] = page
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
	b, err := json.MarshalIndent(want, "", "\t")
	if err != nil {
		log.Fatal(err)
	}
	db, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		log.Fatal(err)
	}
	writeGzip(path+".gz", db)
	writeGzip(filepath.Join(dir, "want.json.gz"), append(b, '\n'))
}

func writeGzip(path string, data []byte) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		log.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
