package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/trace"
	"github.com/pactum/pactum/task"
)

// exampleTrace is the trace recorded from a real run of the example
// contract: `pactum contract run` serving examples/contract.yaml as the
// agent document-review (internal/cli's TestVerifyExample -update writes
// it).
func exampleTrace(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "contract-trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// minimal is the smallest valid trace: a task without records.
const minimal = `{"pactumTrace": "1", "exportedAt": "2026-11-23T10:00:00Z",
 "task": {"id": "t1", "agent": "echo", "state": "queued"}, "timeline": []}`

func TestDecodeExample(t *testing.T) {
	t.Parallel()
	tr, err := trace.Decode(exampleTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Version != trace.Version || tr.ExportedAt.IsZero() || tr.Task.Agent != "document-review" || len(tr.Children) != 3 ||
		tr.Contract == nil || tr.Contract.ID != "document-review" || !strings.HasPrefix(tr.Contract.Digest, "sha256:") {
		t.Fatalf("decoded %+v", tr)
	}
	for _, k := range tr.Children {
		if k.Task.Envelope.ParentTaskID != tr.Task.ID || len(k.Timeline) == 0 || len(k.Timeline[len(k.Timeline)-1].Evidence) == 0 {
			t.Errorf("child %s: parent %s, %d records", k.Task.ID, k.Task.Envelope.ParentTaskID, len(k.Timeline))
		}
	}
	// What is encoded decodes the same.
	var buf bytes.Buffer
	if err := tr.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	again, err := trace.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var buf2 bytes.Buffer
	if err := again.Encode(&buf2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
		t.Error("re-encoding the decoded trace changed it")
	}
}

// TestDecodeErrors: each malformed trace is refused with the JSON path of
// what is wrong.
func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	set := func(path string, v any) string {
		var doc map[string]any
		if err := json.Unmarshal([]byte(minimal), &doc); err != nil {
			t.Fatal(err)
		}
		cur := doc
		keys := strings.Split(path, ".")
		for _, k := range keys[:len(keys)-1] {
			cur = cur[k].(map[string]any)
		}
		if v == nil {
			delete(cur, keys[len(keys)-1])
		} else {
			cur[keys[len(keys)-1]] = v
		}
		b, _ := json.Marshal(doc)
		return string(b)
	}
	rec := func(taskID string, seq int, from, to string) map[string]any {
		return map[string]any{"taskId": taskID, "seq": seq, "from": from, "to": to, "at": "2026-11-23T10:00:00Z", "attempt": 0}
	}
	child := func(id, parent, step string) map[string]any {
		return map[string]any{"task": map[string]any{"id": id, "agent": "echo", "state": "succeeded",
			"envelope": map[string]any{"parentTaskId": parent, "step": step}}, "timeline": []any{}}
	}
	for _, tc := range []struct {
		name, doc string
		want      []string
		version   bool
	}{
		{"not JSON", `{"pactumTrace": `, []string{"not JSON: unexpected EOF"}, false},
		{"two documents", minimal + " {}", []string{"not one JSON document: data follows it"}, false},
		{"array", `[]`, []string{"want a JSON object, got an array"}, false},
		{"no version", `{"task": {}}`, []string{`pactumTrace: missing: not a pactum trace (its first member is "pactumTrace": "1.2")`}, false},
		{"version number", set("pactumTrace", 1), []string{"pactumTrace: want a string, got a number"}, false},
		{"major 2", set("pactumTrace", "2"), []string{"pactumTrace: trace version 2 is not supported: this pactum reads version 1 traces"}, true},
		{"major 2 minor", set("pactumTrace", "2.1"), []string{"pactumTrace: trace version 2.1 is not supported: this pactum reads version 1 traces"}, true},
		{"bad version", set("pactumTrace", "v1"), []string{`pactumTrace: version "v1" is not MAJOR or MAJOR.MINOR`}, true},
		{"leading zero", set("pactumTrace", "01"), []string{`pactumTrace: version "01" is not MAJOR or MAJOR.MINOR`}, true},
		{"no task", set("task", nil), []string{"task: missing"}, false},
		{"null task", set("task", "x"), []string{"task: want an object, got a string"}, false},
		{"no timeline", set("timeline", nil), []string{"timeline: missing"}, false},
		{"no exportedAt", set("exportedAt", nil), []string{"exportedAt: missing"}, false},
		{"bad time", set("exportedAt", "yesterday"), []string{`exportedAt: not an RFC 3339 time: "yesterday"`}, false},
		{"unknown member", set("timline", []any{}), []string{`timline: unknown member (did you mean "timeline"?)`}, false},
		{"unknown task member", set("task.stat", "queued"), []string{`task.stat: unknown member (did you mean "state"?)`}, false},
		{"wrong type deep", set("task.artifacts", []any{map[string]any{"id": "a", "parts": []any{map[string]any{"kind": 1}}}}),
			[]string{"task.artifacts[0].parts[0].kind: want a string, got a number"}, false},
		{"float attempt", set("task.attempt", 1.5), []string{"task.attempt: want an integer, got 1.5"}, false},
		{"no id", set("task.id", ""), []string{"task.id: missing: a task has an id"}, false},
		{"bad state", set("task.state", "done"), []string{`task.state: unknown state "done"`}, false},
		{"record of another task", set("timeline", []any{rec("t2", 1, "requested", "validated")}),
			[]string{`timeline[0].taskId: record of task "t2" in the timeline of task "t1"`}, false},
		{"records out of order", set("timeline", []any{rec("t1", 2, "requested", "validated"), rec("t1", 2, "validated", "queued")}),
			[]string{"timeline[1].seq: sequence number 2 does not follow 2"}, false},
		{"record state", set("timeline", []any{rec("t1", 1, "requested", "done")}), []string{`timeline[0].to: unknown state "done"`}, false},
		{"record missing time", set("timeline", []any{map[string]any{"taskId": "t1", "seq": 1, "from": "requested", "to": "validated", "at": 5}}),
			[]string{"timeline[0].at: want a time (RFC 3339 string), got a number"}, false},
		{"evidence without kind", set("timeline", []any{func() map[string]any {
			r := rec("t1", 1, "requested", "validated")
			r["evidence"] = []any{map[string]any{"step": "contract"}}
			return r
		}()}), []string{"timeline[0].evidence[0].kind: missing: evidence has a kind"}, false},
		{"child of another parent", set("children", []any{child("c1", "t9", "a")}),
			[]string{`children[0].task.envelope.parentTaskId: "t9", want the parent's id "t1"`}, false},
		{"child without step", set("children", []any{child("c1", "t1", "")}),
			[]string{"children[0].task.envelope.step: missing: a child names the step it performs"}, false},
		{"two children one step", set("children", []any{child("c1", "t1", "a"), child("c2", "t1", "a")}),
			[]string{`children[1].task.envelope.step: step "a" is also children[0]'s`}, false},
		{"null child", set("children", []any{nil}), []string{"children[0]: want an object, got null"}, false},
		{"child without task", set("children", []any{map[string]any{"timeline": []any{}}}), []string{"children[0].task: missing"}, false},
		{"several", set("task", map[string]any{"id": 1, "agent": true}),
			[]string{"task.agent: want a string, got a boolean", "task.id: want a string, got a number"}, false},
	} {
		_, err := trace.Decode([]byte(tc.doc))
		if err == nil {
			t.Errorf("%s: decoded", tc.name)
			continue
		}
		var es trace.Errors
		if !errors.As(err, &es) {
			t.Errorf("%s: error %T %v, want trace.Errors", tc.name, err, err)
			continue
		}
		if got := strings.Split(err.Error(), "\n"); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
		if errors.Is(err, trace.ErrVersion) != tc.version {
			t.Errorf("%s: errors.Is(ErrVersion) = %v", tc.name, !tc.version)
		}
	}
}

// TestDecodeVersions: a later minor version of the known major is read,
// its unknown members ignored; the version written is Version.
func TestDecodeVersions(t *testing.T) {
	t.Parallel()
	later := strings.Replace(minimal, `"pactumTrace": "1"`, `"pactumTrace": "1.4", "signature": "abc"`, 1)
	later = strings.Replace(later, `"agent": "echo"`, `"agent": "echo", "cost": {"usd": 0.1}`, 1)
	tr, err := trace.Decode([]byte(later))
	if err != nil {
		t.Fatalf("a 1.4 trace with new members: %v", err)
	}
	if tr.Version != "1.4" || tr.Task.ID != "t1" {
		t.Errorf("decoded %+v", tr)
	}
	if _, err := trace.Decode([]byte(strings.Replace(minimal, `"1"`, `"1.0"`, 1))); err != nil {
		t.Errorf("1.0: %v", err)
	}
	if _, err := trace.Decode([]byte(strings.Replace(minimal, `"task": {`, `"extra": 1, "task": {`, 1))); err == nil {
		t.Error("a version 1 trace with an unknown member decoded")
	}
	tr, err = trace.Decode([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Timeline == nil || len(tr.Children) != 0 {
		t.Errorf("timeline %v, children %v", tr.Timeline, tr.Children)
	}
}

// TestDecodeDepth: children nest at most MaxDepth levels.
func TestDecodeDepth(t *testing.T) {
	t.Parallel()
	build := func(levels int) []byte {
		root := &trace.Node{Task: &task.Task{ID: "n0", Agent: "a", State: task.StateSucceeded}, Timeline: []task.Record{}}
		cur := root
		for i := 1; i <= levels; i++ {
			id := "n" + strings.Repeat("x", i)
			k := &trace.Node{Task: &task.Task{ID: id, Agent: "a", State: task.StateSucceeded,
				Envelope: task.Envelope{ParentTaskID: cur.Task.ID, Step: "s"}}, Timeline: []task.Record{}}
			cur.Children = []*trace.Node{k}
			cur = k
		}
		var buf bytes.Buffer
		tr := &trace.Trace{Version: trace.Version, ExportedAt: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), Node: *root}
		if err := tr.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	if _, err := trace.Decode(build(trace.MaxDepth)); err != nil {
		t.Errorf("%d levels: %v", trace.MaxDepth, err)
	}
	_, err := trace.Decode(build(trace.MaxDepth + 1))
	if err == nil || !strings.HasSuffix(err.Error(), "children: children nested deeper than 64 levels") {
		t.Errorf("%d levels: %v", trace.MaxDepth+1, err)
	}
}

// FuzzDecodeTrace: Decode never panics, and what it decodes encodes to a
// trace that decodes to the same encoding.
func FuzzDecodeTrace(f *testing.F) {
	f.Add(exampleTrace(f))
	f.Add([]byte(minimal))
	f.Add([]byte(strings.Replace(minimal, `"1"`, `"1.7"`, 1)))
	f.Add([]byte(`{"pactumTrace": "1", "exportedAt": "2026-11-23T10:00:00+02:00", "task": {"id": "t", "agent": "a", "state": "failed",
	 "metadata": {"n": 1e300, "x": [null, {"y": "\u00e9"}]}, "artifacts": [{"id": "a", "parts": [{"kind": "raw", "raw": "AAEC"}, {"kind": "data", "data": {"k": [1, 2]}}]}]},
	 "timeline": [{"taskId": "t", "seq": 3, "from": "requested", "to": "validated", "at": "2026-11-23T10:00:00.123456789Z", "attempt": 1,
	 "evidence": [{"step": "contract", "kind": "verdict", "durationNs": 12, "data": {"passed": true}}]}],
	 "children": [{"task": {"id": "c", "agent": "a", "state": "queued", "envelope": {"parentTaskId": "t", "step": "s"}}, "timeline": []}]}`))
	f.Add([]byte(`{"pactumTrace": "2"}`))
	f.Add([]byte(`{"pactumTrace": "1", "task": null, "timeline": null, "children": [null]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Decode(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		var first bytes.Buffer
		if err := tr.Encode(&first); err != nil {
			t.Fatalf("encode what decoded: %v", err)
		}
		again, err := trace.Decode(first.Bytes())
		if err != nil {
			t.Fatalf("what decoded re-encodes to a trace that does not decode: %v\n%s", err, first.Bytes())
		}
		var second bytes.Buffer
		if err := again.Encode(&second); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("decode → encode → decode → encode changed the trace:\n%s\n---\n%s", first.Bytes(), second.Bytes())
		}
	})
}

// TestVerifyExampleAsLive: the example trace, recorded from a real run,
// checked offline by Verify, says for every step what its live gate said
// (the verified result on the record ending the step's attempt), check by
// check, with the same resources created.
func TestVerifyExampleAsLive(t *testing.T) {
	t.Parallel()
	_, compiled, err := contract.Load(filepath.Join("..", "..", "examples", "contract.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Decode(exampleTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := trace.Verify(context.Background(), compiled, tr, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed || len(rep.Steps) != 3 {
		t.Fatalf("report %+v", rep)
	}
	checks := func(vr *contract.VerifiedResult) []contract.ValidationResult {
		return append(append([]contract.ValidationResult{}, vr.Verification.PreGate.Results...), vr.Verification.PostGate.Results...)
	}
	for i, s := range rep.Steps {
		k := tr.Children[i]
		live, err := contract.Newest(k.Timeline)
		if err != nil || live == nil {
			t.Fatalf("step %s: no live verified result (%v)", s.Step, err)
		}
		// Resources created compared as JSON: the live ones were decoded
		// from the record, the offline ones come from the contract.
		got, _ := json.Marshal(s.VerifiedResult.Verification.ResourcesCreated)
		want, _ := json.Marshal(live.Verification.ResourcesCreated)
		if s.Step != k.Task.Envelope.Step || s.Status != trace.StatusPassed || !reflect.DeepEqual(checks(s.VerifiedResult), checks(live)) || string(got) != string(want) {
			t.Errorf("step %s (%s): offline %+v\nlive %+v", s.Step, s.Status, s.VerifiedResult, live)
		}
	}
}
