package toolspec_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/toolspec"
)

func TestStepPassesAndRefuses(t *testing.T) {
	t.Parallel()
	ts := toolspec.ToolSpec{ToolID: "search", ExecutionMode: toolspec.Remote, AdapterID: "meilisearch", AdapterOperation: "search"}
	ok := toolspec.CheckerFunc(func(toolspec.ToolSpec) []toolspec.Violation { return nil })
	bad := toolspec.CheckerFunc(func(ts toolspec.ToolSpec) []toolspec.Violation {
		return []toolspec.Violation{{Assertion: toolspec.OperationExists, ToolID: ts.ToolID, AdapterID: ts.AdapterID, Field: "adapter_operation", Msg: "no operation search", Fix: "name one of: index"}}
	})
	ran := false
	next := func(context.Context) (*task.Result, error) { ran = true; return &task.Result{}, nil }

	a := &task.Attempt{}
	if _, err := toolspec.Step(ts, toolspec.Static{Checker: ok}).Handle(context.Background(), a, next); err != nil || !ran {
		t.Fatalf("pass: err %v, ran %v", err, ran)
	}
	if ev := a.Evidence(); len(ev) != 1 || ev[0].Outcome != "pass" || ev[0].Kind != task.EvidenceDecision {
		t.Fatalf("pass evidence: %+v", ev)
	}

	ran = false
	a = &task.Attempt{}
	_, err := toolspec.Step(ts, toolspec.Static{Checker: bad}).Handle(context.Background(), a, next)
	if ran {
		t.Fatal("the runner ran despite a violation")
	}
	if !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeToolspecViolation {
		t.Fatalf("err = %v (permanent %v, code %q)", err, task.IsPermanent(err), task.ErrorCode(err))
	}
	ev := a.Evidence()
	if len(ev) != 1 || ev[0].Outcome != "violation" || !strings.Contains(ev[0].Message, "assertion 3 (adapter operation)") {
		t.Fatalf("violation evidence: %+v", ev)
	}
	var data struct {
		Violations []toolspec.Violation `json:"violations"`
	}
	if err := json.Unmarshal(ev[0].Data, &data); err != nil || len(data.Violations) != 1 || data.Violations[0].Assertion != toolspec.OperationExists {
		t.Fatalf("data %s: %v", ev[0].Data, err)
	}
}

func TestReloaderRebuildsOnChange(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "cat.yaml")
	if err := os.WriteFile(f, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	build := func(context.Context) (toolspec.Checker, error) {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if string(b) == "broken" {
			return nil, errors.New("broken catalogue")
		}
		content := string(b)
		return toolspec.CheckerFunc(func(toolspec.ToolSpec) []toolspec.Violation {
			if content == "a" {
				return nil
			}
			return []toolspec.Violation{{Assertion: toolspec.AdapterExists, Msg: content}}
		}), nil
	}
	ctx := context.Background()
	r, err := toolspec.NewReloader(ctx, []string{f}, build)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if c, err := r.Current(ctx); err != nil || len(c.Check(toolspec.ToolSpec{})) != 0 {
			t.Fatalf("unchanged: %v", err)
		}
	}
	if r.Loads() != 1 {
		t.Fatalf("an unchanged file was re-read: %d loads", r.Loads())
	}
	// A different size is a change whatever the clock says.
	if err := os.WriteFile(f, []byte("bb"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := r.Current(ctx); err != nil || len(c.Check(toolspec.ToolSpec{})) != 1 {
		t.Fatalf("changed: %v", err)
	}
	if err := os.WriteFile(f, []byte("broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Current(ctx); err == nil {
		t.Fatal("a broken catalogue was not reported")
	}
	// Reload forces a rebuild.
	if err := os.WriteFile(f, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if c, err := r.Current(ctx); err != nil || len(c.Check(toolspec.ToolSpec{})) != 0 {
		t.Fatalf("after reload: %v", err)
	}
}
