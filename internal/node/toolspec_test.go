package node_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// missingOperation is a configuration whose ToolSpec maps an operation
// the meilisearch adapter of the default catalogue does not have.
const missingOperation = `agents:
  - name: finder
    type: echo
    toolspec: find_docs
toolspecs:
  - tool_id: find_docs
    execution_mode: remote
    adapter_id: meilisearch
    adapter_operation: find
    adapter_contract_version: 1.0.0
`

// TestToolSpecViolationRefused: config check and New refuse a ToolSpec
// that names an operation its adapter lacks, at file:line, naming the
// assertion and the fix.
func TestToolSpecViolationRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := fmt.Sprintf("store: sqlite://%s\n%s", filepath.Join(dir, "p.db"), missingOperation)
	cfg, err := config.Parse([]byte(src), "ts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`ts.yaml:10:24: toolspecs[0].adapter_operation: assertion 3 (adapter operation) failed for ToolSpec "find_docs"`, `fix: use one of: `, `search`}
	check := func(what string, err error) {
		t.Helper()
		var es config.Errors
		if !errors.As(err, &es) || len(es) != 1 {
			t.Fatalf("%s = %v, want one config error", what, err)
		}
		for _, w := range want {
			if !strings.Contains(es[0].Error(), w) {
				t.Errorf("%s: %q does not contain %q", what, es[0].Error(), w)
			}
		}
	}
	check("Check", node.Check(t.Context(), cfg, dir))
	srv, err := node.New(t.Context(), cfg, dir, nil, nil)
	if err == nil {
		_ = srv.Stop(t.Context())
		t.Fatal("New accepted an invalid ToolSpec")
	}
	check("New", err)
}

// TestToolSpecCatalogueErrorsPlaced: a catalogue file that does not parse
// is reported in that file, with its line.
func TestToolSpecCatalogueErrorsPlaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte("adapters:\n  - adapter_id: Bad_Id\n    version: 1.0.0\n    status: frozen\n    operations: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte("agents:\n  - {name: a, type: echo}\nadapters: [mine.yaml, none.yaml]\n"), filepath.Join(dir, "p.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	err = node.Check(t.Context(), cfg, "")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "mine.yaml")+":2") || !strings.Contains(err.Error(), "p.yaml:3:23: adapters[1]: read catalogue") {
		t.Fatalf("Check = %v", err)
	}
}

// catalogue is an adapter catalogue with one adapter, "wiki", whose
// operations are ops.
func catalogue(ops ...string) string {
	var b strings.Builder
	b.WriteString("adapters:\n  - adapter_id: wiki\n    version: 1.0.0\n    status: draft\n    operations:\n")
	for _, op := range ops {
		fmt.Fprintf(&b, "      %s:\n        input_schema: {type: object, properties: {q: {type: string}}}\n", op)
	}
	return b.String()
}

// TestToolSpecCatalogueChangesUnderServer: the adapter contract an
// agent's ToolSpec maps changes while the node runs; the next attempt
// re-checks the ToolSpec against the re-read catalogue and fails with
// toolspec_violation, and the record and the audit trail say why.
func TestToolSpecCatalogueChangesUnderServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catFile := filepath.Join(dir, "wiki.yaml")
	if err := os.WriteFile(catFile, []byte(catalogue("lookup", "edit")), 0o600); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, "pactum.db")
	src := fmt.Sprintf(`store: sqlite://%s
adapters: [wiki.yaml]
agents:
  - name: wiki
    type: echo
    retry: {max_attempts: 3, initial_backoff: 10ms, max_backoff: 10ms}
    toolspec: wiki_lookup
toolspecs:
  - tool_id: wiki_lookup
    execution_mode: remote
    adapter_id: wiki
    adapter_operation: lookup
    adapter_contract_version: 1.0.0
    input_schema: {type: object, properties: {q: {type: string}}}
`, dbPath)
	cfg, err := config.Parse([]byte(src), filepath.Join(dir, "pactum.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv, err := node.New(ctx, cfg, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			if err := srv.Stop(ctx); err != nil {
				t.Errorf("Stop: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	run := func(text string) *task.Task {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		res, err := srv.Coordinator().SubmitAndWait(wctx, task.SubmitRequest{Envelope: task.Envelope{
			Actor: "alice", Action: "wiki", Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart(text)}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Task
	}
	if tk := run("before"); tk.State != task.StateSucceeded {
		t.Fatalf("before the change: %s %s %s", tk.State, tk.ErrorCode, tk.Reason)
	}
	// The operation is removed (the file's size changes, so the change is
	// seen whatever the file system's clock granularity).
	if err := os.WriteFile(catFile, []byte(catalogue("edit")), 0o600); err != nil {
		t.Fatal(err)
	}
	tk := run("after")
	if tk.State != task.StateFailed || tk.ErrorCode != task.CodeToolspecViolation || tk.Attempt != 1 {
		t.Fatalf("after the change: state %s, code %s, attempt %d, reason %q", tk.State, tk.ErrorCode, tk.Attempt, tk.Reason)
	}
	if !strings.Contains(tk.Reason, "assertion 3 (adapter operation)") || !strings.Contains(tk.Reason, `"lookup"`) {
		t.Errorf("reason %q does not name the assertion and the operation", tk.Reason)
	}
	recs, err := srv.Coordinator().Timeline(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if last.To != task.StateFailed || len(last.Evidence) != 1 {
		t.Fatalf("last record %s → %s, evidence %+v", last.From, last.To, last.Evidence)
	}
	ev := last.Evidence[0]
	if ev.Step != "toolspec" || ev.Kind != task.EvidenceDecision || ev.Outcome != "violation" || !strings.Contains(ev.Message, "assertion 3") {
		t.Errorf("evidence %+v", ev)
	}
	var data struct {
		ToolID     string `json:"tool_id"`
		Violations []struct {
			Assertion int    `json:"assertion"`
			Field     string `json:"field"`
		} `json:"violations"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || data.ToolID != "wiki_lookup" || len(data.Violations) != 1 ||
		data.Violations[0].Assertion != 3 || data.Violations[0].Field != "adapter_operation" {
		t.Errorf("evidence data %s: %v", ev.Data, err)
	}
	stop()

	// The audit chain verifies, and the failed transition's entry carries
	// the evidence.
	st, err := sqlite.Open(ctx, "sqlite://"+dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep, err := audit.VerifyWith(ctx, st, audit.Options{})
	if err != nil || !rep.OK {
		t.Fatalf("audit: %+v, %v", rep, err)
	}
	entries, err := st.AuditEntries(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if e.TaskID != tk.ID || e.Kind != task.AuditTransition {
			continue
		}
		var r task.Record
		if err := json.Unmarshal(e.Data, &r); err != nil {
			t.Fatal(err)
		}
		if r.To == task.StateFailed && len(r.Evidence) == 1 && r.Evidence[0].Outcome == "violation" {
			found = true
		}
	}
	if !found {
		t.Fatal("no audit entry of the failed transition carries the toolspec evidence")
	}
}

// TestToolSpecFrozenChangedWithoutBump: a frozen contract rewritten
// under a running server with a change (an optional input added, MINOR)
// but no version bump fails the next attempt of the agents whose
// ToolSpec maps it with toolspec_violation naming assertion 5; bumping
// the version repairs them.
func TestToolSpecFrozenChangedWithoutBump(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catFile := filepath.Join(dir, "wiki.yaml")
	frozen := func(version, props, tail string) string {
		return "adapters:\n  - adapter_id: wiki\n    version: " + version + "\n    status: frozen\n    operations:\n" +
			"      lookup:\n        input_schema: {type: object, properties: {" + props + "}}\n" + tail
	}
	if err := os.WriteFile(catFile, []byte(frozen("1.0.0", "q: {type: string}", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf(`store: sqlite://%s
adapters: [wiki.yaml]
agents:
  - name: wiki
    type: echo
    toolspec: wiki_lookup
toolspecs:
  - tool_id: wiki_lookup
    execution_mode: remote
    adapter_id: wiki
    adapter_operation: lookup
    adapter_contract_version: 1.0.0
`, filepath.Join(dir, "pactum.db"))), filepath.Join(dir, "pactum.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv, err := node.New(ctx, cfg, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	run := func() *task.Task {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		res, err := srv.Coordinator().SubmitAndWait(wctx, task.SubmitRequest{Envelope: task.Envelope{
			Actor: "alice", Action: "wiki", Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart("q")}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Task
	}
	if tk := run(); tk.State != task.StateSucceeded {
		t.Fatalf("before the change: %s %s %s", tk.State, tk.ErrorCode, tk.Reason)
	}
	// An optional input added, version unchanged (the file grows, so the
	// change is seen whatever the clock's granularity).
	if err := os.WriteFile(catFile, []byte(frozen("1.0.0", "q: {type: string}, lang: {type: string}", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	tk := run()
	if tk.State != task.StateFailed || tk.ErrorCode != task.CodeToolspecViolation || tk.Attempt != 1 {
		t.Fatalf("after the change: state %s, code %s, attempt %d, reason %q", tk.State, tk.ErrorCode, tk.Attempt, tk.Reason)
	}
	if !strings.Contains(tk.Reason, "assertion 5 (contract immutability)") || !strings.Contains(tk.Reason, "needs a MINOR bump") {
		t.Errorf("reason %q does not name assertion 5 and the bump", tk.Reason)
	}
	recs, err := srv.Coordinator().Timeline(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev := recs[len(recs)-1].Evidence; len(ev) != 1 || ev[0].Step != "toolspec" || ev[0].Outcome != "violation" || !strings.Contains(ev[0].Message, "assertion 5") {
		t.Errorf("evidence %+v", ev)
	}
	// Bumped to 1.1.0: accepted.
	if err := os.WriteFile(catFile, []byte(frozen("1.1.0", "q: {type: string}, lang: {type: string}", "# bumped\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if tk := run(); tk.State != task.StateSucceeded {
		t.Fatalf("after the bump: %s %s %s", tk.State, tk.ErrorCode, tk.Reason)
	}
}
