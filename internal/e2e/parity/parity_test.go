package parity

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pactum/pactum/mcpserver"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the runs (when A2A and MCP agree)")

// requiredTraces are the traces the suite must hold (docs/mcp.md, "Parity
// with A2A").
var requiredTraces = []string{
	"01_submit", "02_duplicate_submit", "03_status", "04_cancel_running",
	"05_dead_letter", "06_retry_dead_letter", "07_sensitive_without_approval", "08_forbidden_actor",
	"09_input_required_continue",
}

// TestParity runs every golden trace through A2A and through MCP, each on
// a fresh node and store, and requires the canonical outcomes — execution
// records, audit entries and the answers in pactum's terms — to be equal
// to each other and to the golden file.
func TestParity(t *testing.T) {
	t.Parallel()
	names, err := traceNames()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr, err := loadTrace(name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			runs := map[string][]byte{}
			for _, via := range []string{viaA2A, viaMCP} {
				doc, err := runTrace(t, name, tr, via, nil)
				if err != nil {
					t.Fatal(err)
				}
				runs[via] = doc
			}
			if d := compare("A2A", runs[viaA2A], "MCP", runs[viaMCP]); d != "" {
				t.Fatalf("trace %s leaves different canonical records through MCP than through A2A:\n%s", name, d)
			}
			golden := filepath.Join(goldenDir, name+".json")
			if *update {
				if err := os.WriteFile(golden, runs[viaA2A], 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (create it with go test ./internal/e2e/parity -update)", err)
			}
			for _, via := range []string{viaA2A, viaMCP} {
				if d := compare("golden "+golden, want, strings.ToUpper(via)+" run", runs[via]); d != "" {
					t.Errorf("trace %s through %s differs from its golden file (if the change is intended, regenerate with go test ./internal/e2e/parity -update and review the diff):\n%s", name, strings.ToUpper(via), d)
				}
			}
		})
	}
}

// TestTraceFiles: the required traces exist and parse, and every golden
// file belongs to a trace.
func TestTraceFiles(t *testing.T) {
	t.Parallel()
	names, err := traceNames()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range requiredTraces {
		if !slices.Contains(names, want) {
			t.Errorf("trace %s is missing from %s", want, tracesDir)
		}
	}
	for _, name := range names {
		if _, err := loadTrace(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	goldens, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range goldens {
		if name := strings.TrimSuffix(filepath.Base(g), ".json"); !slices.Contains(names, name) {
			t.Errorf("golden file %s has no trace %s.json", g, name)
		}
	}
}

// TestRunnerDetectsDivergence proves the suite can fail: an MCP mapping
// broken on purpose (a rewritten actor, a dropped idempotency key, a
// continue's dropped message id or rewritten answer) runs
// without any step failing, and the comparison with the A2A run answers a
// diff that names the field that differs.
func TestRunnerDetectsDivergence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		trace  string
		mutate func(tool string, args map[string]any)
		// field and value are a key and value the diff must show on an
		// added (+) line.
		field, value string
	}{
		{
			name: "actor rewritten", trace: "01_submit", field: `"actor"`, value: `"bob"`,
			mutate: func(tool string, args map[string]any) {
				if tool == mcpserver.ToolSubmitTask {
					args["actor"] = "bob"
				}
			},
		},
		{
			name: "idempotency key dropped", trace: "01_submit", field: `"idempotencyKey"`, value: `"msg-submit-1"`,
			mutate: func(tool string, args map[string]any) {
				if tool == mcpserver.ToolSubmitTask {
					delete(args, "idempotency_key")
				}
			},
		},
		{
			name: "continue message id dropped", trace: "09_input_required_continue", field: `"id"`, value: `"<id>"`,
			mutate: func(tool string, args map[string]any) {
				if tool == mcpserver.ToolContinueTask {
					delete(args, "message_id")
				}
			},
		},
		{
			name: "continue answer rewritten", trace: "09_input_required_continue", field: `"text"`, value: `"Eve"`,
			mutate: func(tool string, args map[string]any) {
				if tool == mcpserver.ToolContinueTask && args["text"] == "Ada" {
					args["text"] = "Eve"
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr, err := loadTrace(tc.trace)
			if err != nil {
				t.Fatal(err)
			}
			viaA2A, err := runTrace(t, tc.trace, tr, viaA2A, nil)
			if err != nil {
				t.Fatal(err)
			}
			broken, err := runTrace(t, tc.trace, tr, viaMCP, tc.mutate)
			if err != nil {
				t.Fatalf("the broken mapping should still run the trace: %v", err)
			}
			d := compare("A2A", viaA2A, "MCP (broken)", broken)
			if d == "" {
				t.Fatalf("compare found no difference with a broken MCP mapping (%s)", tc.name)
			}
			named := false
			for _, l := range strings.Split(d, "\n") {
				if strings.HasPrefix(l, "+") && strings.Contains(l, tc.field+": "+tc.value) {
					named = true
				}
			}
			if !named {
				t.Errorf("the diff does not show %s: %s on an added line:\n%s", tc.field, tc.value, d)
			}
			t.Logf("the diff the suite would report:\n%s", d)
		})
	}
}

// TestRunnerDetectsGoldenChange proves that a golden file pins the
// semantics: the cancel trace compared with a golden file that records
// A2A's former cancel reason ("canceled by A2A CancelTask", before both
// transports left the reason to the Coordinator) fails with a diff naming
// the reason.
func TestRunnerDetectsGoldenChange(t *testing.T) {
	t.Parallel()
	const name = "04_cancel_running"
	tr, err := loadTrace(name)
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join(goldenDir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	const now, before = `"reason": "canceled by request"`, `"reason": "canceled by A2A CancelTask"`
	if !strings.Contains(string(golden), now) {
		t.Fatalf("golden file %s no longer records %s", name, now)
	}
	mutated := []byte(strings.ReplaceAll(string(golden), now, before))
	run, err := runTrace(t, name, tr, viaMCP, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := compare("golden (mutated)", mutated, "MCP run", run)
	if d == "" {
		t.Fatal("compare found no difference with a mutated golden file")
	}
	if !strings.Contains(d, "-      "+before) {
		t.Errorf("the diff does not show the golden file's reason on a removed line:\n%s", d)
	}
	if !strings.Contains(d, "+      "+now) {
		t.Errorf("the diff does not show the run's reason on an added line:\n%s", d)
	}
}

// TestParseTrace: the trace parser refuses what the runner cannot run.
func TestParseTrace(t *testing.T) {
	t.Parallel()
	submit := `{"op":"submit","agent":"echo","text":"hi","message_id":"m","as":"t1"}`
	for _, tc := range []struct {
		name, src, want string
	}{
		{"ok", `{"steps":[` + submit + `,{"op":"get","task":"t1"},{"op":"wait_state","task":"t1","state":"succeeded"}]}`, ""},
		{"continue ok", `{"steps":[` + submit + `,{"op":"continue","task":"t1","text":"Ada","message_id":"m2","data":{"k":1},"wait":true}]}`, ""},
		{"no steps", `{"steps":[]}`, "no steps"},
		{"unknown field", `{"steps":[{"op":"get","task":"t1","taks":"x"}]}`, "unknown field"},
		{"unknown op", `{"steps":[{"op":"list"}]}`, "unknown op"},
		{"submit without message id", `{"steps":[{"op":"submit","agent":"echo","text":"hi","as":"t1"}]}`, "message_id"},
		{"submit without name", `{"steps":[{"op":"submit","agent":"echo","text":"hi","message_id":"m"}]}`, "needs as"},
		{"unnamed task", `{"steps":[` + submit + `,{"op":"get","task":"t2"}]}`, "not named"},
		{"get with submit fields", `{"steps":[` + submit + `,{"op":"get","task":"t1","actor":"a"}]}`, "takes only task"},
		{"reason outside cancel", `{"steps":[` + submit + `,{"op":"retry","task":"t1","reason":"r"}]}`, "only cancel"},
		{"wait_state without state", `{"steps":[` + submit + `,{"op":"wait_state","task":"t1"}]}`, "takes state"},
		{"unknown state", `{"steps":[` + submit + `,{"op":"wait_state","task":"t1","state":"done"}]}`, "unknown task state"},
		{"continue without task", `{"steps":[` + submit + `,{"op":"continue","text":"Ada","message_id":"m2"}]}`, "continue needs task"},
		{"continue of an unnamed task", `{"steps":[` + submit + `,{"op":"continue","task":"t2","text":"Ada","message_id":"m2"}]}`, "not named"},
		{"continue without text", `{"steps":[` + submit + `,{"op":"continue","task":"t1","message_id":"m2"}]}`, "continue needs text"},
		{"continue without message id", `{"steps":[` + submit + `,{"op":"continue","task":"t1","text":"Ada"}]}`, "message_id"},
		{"continue with envelope fields", `{"steps":[` + submit + `,{"op":"continue","task":"t1","text":"Ada","message_id":"m2","actor":"a"}]}`, "continue takes only"},
		{"continue with a name", `{"steps":[` + submit + `,{"op":"continue","task":"t1","text":"Ada","message_id":"m2","as":"t3"}]}`, "continue takes only"},
		{"continue with a reason", `{"steps":[` + submit + `,{"op":"continue","task":"t1","text":"Ada","message_id":"m2","reason":"r"}]}`, "continue takes only"},
		{"continue with a state", `{"steps":[` + submit + `,{"op":"continue","task":"t1","text":"Ada","message_id":"m2","state":"queued"}]}`, "continue takes only"},
		{"continue data not an object", `{"steps":[` + submit + `,{"op":"continue","task":"t1","text":"Ada","message_id":"m2","data":"x"}]}`, "data must be a JSON object"},
		{"get with message fields", `{"steps":[` + submit + `,{"op":"get","task":"t1","text":"hi"}]}`, "takes only task"},
		{"cancel with wait", `{"steps":[` + submit + `,{"op":"cancel","task":"t1","wait":true}]}`, "takes only task"},
		{"data not an object", `{"steps":[{"op":"submit","agent":"echo","text":"hi","message_id":"m","as":"t1","data":[1]}]}`, "data must be a JSON object"},
		{"two documents", `{"steps":[` + submit + `]} {}`, "more than one"},
	} {
		_, err := parseTrace([]byte(tc.src))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}
