package workflow

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"testing/quick"

	"github.com/pactum/pactum/task"
)

func okHandoff(from, to, findings, files, questions string) *Handoff {
	return &Handoff{From: from, To: []string{to}, Context: "Worked on it.", Findings: findings, FilesModified: files,
		OpenQuestions: questions, Recommendations: "Carry on."}
}

func succeeded(h *Handoff) StepOutcome {
	return StepOutcome{Agent: h.From, State: StateSucceeded, Handoff: h, Attempts: 1}
}

type reportCase struct {
	name, workflow, task string
	agents               []string
	steps                []StepOutcome
	rec                  Recommendation
	reasons              []string
	golden               string
}

func reportCases() []reportCase {
	feature := []string{"planner", "code-reviewer", "security-reviewer"}
	planner := okHandoff("planner", "code-reviewer", "- Split the parser in two.\n- Keep the API.", "- `parser/lex.go` - new\n- parser/parse.go", "None")
	reviewer := okHandoff("code-reviewer", "security-reviewer", "None", "parser/parse.go\nparser/parse_test.go", "None")
	reviewer.Recommendations = "1. Merge it."
	reviewer.TestResults = "PASS (42 tests)"
	security := &Handoff{From: "security-reviewer", Summary: "The parser was split in two and reviewed; no security issues.\nReady to merge."}
	return []reportCase{
		{
			name: "ship", workflow: "feature", task: "Split the parser\ninto a lexer and a parser", agents: feature,
			steps: []StepOutcome{succeeded(planner), succeeded(reviewer), {Agent: "security-reviewer", State: StateSucceeded, Handoff: security}},
			rec:   Ship,
			golden: `INTEGRATION REPORT
====================
Workflow: feature
Task: Split the parser into a lexer and a parser
Agents: planner -> code-reviewer -> security-reviewer

SUMMARY
-------
The parser was split in two and reviewed; no security issues.
Ready to merge.

AGENT OUTPUTS
-------------
planner: Split the parser in two.
code-reviewer: Merge it.
security-reviewer: The parser was split in two and reviewed; no security issues.

FILES CHANGED
-------------
- parser/lex.go
- parser/parse.go
- parser/parse_test.go

TEST RESULTS
------------
PASS (42 tests)

SECURITY STATUS
---------------
NOT RUN

RECOMMENDATION
--------------
SHIP

`,
		},
		{
			name: "open question", workflow: "bugfix", task: "Fix the crash", agents: []string{"explorer", "code-reviewer"},
			steps: []StepOutcome{
				succeeded(okHandoff("explorer", "code-reviewer", "The crash is a nil map.", "None", "- Should empty input be an error?")),
				succeeded(okHandoff("code-reviewer", "done", "Fix looks right.", "None", "None")),
			},
			rec:     NeedsWork,
			reasons: []string{"explorer left open questions: Should empty input be an error?"},
			golden: `INTEGRATION REPORT
====================
Workflow: bugfix
Task: Fix the crash
Agents: explorer -> code-reviewer

SUMMARY
-------
2 of 2 agents delivered valid handoffs; no files changed; open questions from explorer.

AGENT OUTPUTS
-------------
explorer: The crash is a nil map.
code-reviewer: Fix looks right.

FILES CHANGED
-------------
None

TEST RESULTS
------------
NOT RUN

SECURITY STATUS
---------------
NOT RUN

RECOMMENDATION
--------------
NEEDS WORK
- explorer left open questions: Should empty input be an error?

`,
		},
		{
			name: "failing tests and findings", workflow: "review", task: "Review the change", agents: []string{"planner", "code-reviewer", "security-reviewer", "architect"},
			steps: func() []StepOutcome {
				cr := okHandoff("code-reviewer", "architect", "Two tests fail.", "a.go", "None")
				cr.TestResults = "FAILED: 2 of 40\nTestX, TestY"
				sr := okHandoff("security-reviewer", "architect", "SQL built by hand.", "b.go\na.go", "None")
				sr.SecurityStatus = "HIGH: SQL injection in b.go"
				ar := okHandoff("architect", "done", "Layering is fine.", "None", "None")
				ar.TestResults = "ok"
				ar.SecurityStatus = "Clean."
				return []StepOutcome{succeeded(okHandoff("planner", "code-reviewer", "Plan.", "None", "None")), succeeded(cr), succeeded(sr), succeeded(ar)}
			}(),
			rec: NeedsWork,
			reasons: []string{
				"code-reviewer reports failing tests: FAILED: 2 of 40; TestX, TestY.",
				"security-reviewer reports security findings: HIGH: SQL injection in b.go.",
			},
			golden: `INTEGRATION REPORT
====================
Workflow: review
Task: Review the change
Agents: planner -> code-reviewer -> security-reviewer -> architect

SUMMARY
-------
4 of 4 agents delivered valid handoffs; 2 files changed; no open questions.

AGENT OUTPUTS
-------------
planner: Plan.
code-reviewer: Two tests fail.
security-reviewer: SQL built by hand.
architect: Layering is fine.

FILES CHANGED
-------------
- a.go
- b.go

TEST RESULTS
------------
code-reviewer: FAILED: 2 of 40
TestX, TestY
architect: ok

SECURITY STATUS
---------------
security-reviewer: HIGH: SQL injection in b.go
architect: Clean.

RECOMMENDATION
--------------
NEEDS WORK
- code-reviewer reports failing tests: FAILED: 2 of 40; TestX, TestY.
- security-reviewer reports security findings: HIGH: SQL injection in b.go.

`,
		},
		{
			name: "blocked", workflow: "feature", task: "Add caching", agents: feature,
			steps: []StepOutcome{
				succeeded(okHandoff("planner", "code-reviewer", "Cache reads.", "cache.go", "None")),
				{Agent: "code-reviewer", State: "dead_letter", Attempts: 3,
					Reason: "contract violation: handoff: section \"Open Questions\" is empty: write None when there is nothing to say\n(attempt 3 of 3)"},
			},
			rec: Blocked,
			reasons: []string{
				`code-reviewer did not deliver a valid handoff (dead_letter): contract violation: handoff: section "Open Questions" is empty: write None when there is nothing to say (attempt 3 of 3).`,
				"security-reviewer did not run (its phase never started).",
			},
			golden: `INTEGRATION REPORT
====================
Workflow: feature
Task: Add caching
Agents: planner -> code-reviewer -> security-reviewer

SUMMARY
-------
1 of 3 agents delivered valid handoffs; 1 file changed; no open questions.

AGENT OUTPUTS
-------------
planner: Cache reads.
code-reviewer: dead_letter: contract violation: handoff: section "Open Questions" is empty: write None when there is nothing to say (attempt 3 of 3)
security-reviewer: not run

FILES CHANGED
-------------
- cache.go

TEST RESULTS
------------
NOT RUN

SECURITY STATUS
---------------
NOT RUN

RECOMMENDATION
--------------
BLOCKED
- code-reviewer did not deliver a valid handoff (dead_letter): contract violation: handoff: section "Open Questions" is empty: write None when there is nothing to say (attempt 3 of 3).
- security-reviewer did not run (its phase never started).

`,
		},
		{
			name: "failed and canceled", workflow: "security", task: "Audit", agents: []string{"security-reviewer", "code-reviewer"},
			steps: []StepOutcome{
				{Agent: "security-reviewer", State: "failed", Reason: "exit status 1"},
				{Agent: "code-reviewer", State: "canceled"},
			},
			rec: Blocked,
			reasons: []string{
				"security-reviewer did not deliver a valid handoff (failed): exit status 1.",
				"code-reviewer did not deliver a valid handoff (canceled).",
			},
		},
	}
}

func TestBuildReport(t *testing.T) {
	t.Parallel()
	for _, c := range reportCases() {
		r := BuildReport(c.workflow, c.task, c.agents, c.steps)
		if r.Recommendation != c.rec || !reflect.DeepEqual(r.Reasons, c.reasons) {
			t.Errorf("%s: %s %q, want %s %q", c.name, r.Recommendation, r.Reasons, c.rec, c.reasons)
		}
		if c.golden != "" && r.Text() != c.golden {
			t.Errorf("%s: text:\n%s\nwant:\n%s", c.name, r.Text(), c.golden)
		}
		back, err := ParseReport(r.Text())
		if err != nil {
			t.Errorf("%s: ParseReport: %v", c.name, err)
			continue
		}
		back.Steps = r.Steps
		if !reflect.DeepEqual(back, r) {
			t.Errorf("%s: round trip:\n got %#v\nwant %#v", c.name, back, r)
		}
	}
}

func TestPassing(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"PASS": true, "passed: 12": true, "OK": true, "**Clean**": true, "None found": true, "ok.": true,
		"FAIL": false, "2 failures": false, "NOT RUN": false, "unclear": false, "": false, "passing": false,
	} {
		if got := passing(s); got != want {
			t.Errorf("passing(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestReportArtifact(t *testing.T) {
	t.Parallel()
	c := reportCases()[0]
	r := BuildReport(c.workflow, c.task, c.agents, c.steps)
	a := r.Artifact()
	if a.ID != ReportArtifact || a.Name != ReportArtifact || len(a.Parts) != 2 {
		t.Fatalf("artifact: %+v", a)
	}
	if a.Parts[0].Kind != task.PartText || a.Parts[0].Text != r.Text() {
		t.Errorf("text part: %+v", a.Parts[0])
	}
	var back Report
	if a.Parts[1].Kind != task.PartData || json.Unmarshal(a.Parts[1].Data, &back) != nil || !reflect.DeepEqual(&back, r) {
		t.Errorf("data part: %s", a.Parts[1].Data)
	}
	var raw map[string]any
	_ = json.Unmarshal(a.Parts[1].Data, &raw)
	for _, k := range []string{"workflow", "agentOutputs", "filesChanged", "testResults", "securityStatus", "recommendation"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("data part lacks %q: %s", k, a.Parts[1].Data)
		}
	}
}

func TestParseReportErrors(t *testing.T) {
	t.Parallel()
	c := reportCases()[3]
	good := BuildReport(c.workflow, c.task, c.agents, c.steps).Text()
	cases := []struct{ name, text, want string }{
		{"empty", "", `line 1: expected "INTEGRATION REPORT"`},
		{"rule", strings.Replace(good, "====================", "===", 1), `line 2: expected "===================="`},
		{"task", strings.Replace(good, "Task: ", "Job: ", 1), `line 4: expected "Task: …"`},
		{"no blank", strings.Replace(good, "security-reviewer\n\nSUMMARY", "security-reviewer\nSUMMARY", 1), "line 6: expected a blank line"},
		{"underline", strings.Replace(good, "SUMMARY\n-------", "SUMMARY\n---", 1), `line 8: expected "-------"`},
		{"section missing", strings.Replace(good, "TEST RESULTS\n------------\nNOT RUN\n\n", "", 1), `the FILES CHANGED section does not end: expected a blank line, then "TEST RESULTS"`},
		{"agent line", strings.Replace(good, "planner: Cache", "plan: Cache", 1), `line 13: expected "planner:"`},
		{"agent count", strings.Replace(good, "security-reviewer: not run\n", "", 1), "line 13: AGENT OUTPUTS has 2 lines, expected one per agent (3)"},
		{"file", strings.Replace(good, "- cache.go", "cache.go", 1), `line 19: expected a changed file as "- path"`},
		{"verdict", strings.Replace(good, "BLOCKED\n", "MAYBE\n", 1), `line 31: expected the recommendation (SHIP, NEEDS WORK or BLOCKED), got "MAYBE"`},
		{"reason", strings.Replace(good, "- security-reviewer did", "security-reviewer did", 1), `line 33: expected a reason as "- reason"`},
	}
	for _, c := range cases {
		_, err := ParseReport(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// randReport builds a report from random handoffs and outcomes, with
// bodies that look like the report's own structure.
func randReport(r *rand.Rand) *Report {
	n := 1 + r.Intn(5)
	agents := make([]string, n)
	var steps []StepOutcome
	tricky := []string{"SUMMARY\n-------", "\n\nAGENT OUTPUTS\n-------------\nx: y", "RECOMMENDATION", "  TEST RESULTS", "- SHIP", "", "None", "FAIL", "PASS", "ok\n\n\nmore"}
	pick := func() string { return tricky[r.Intn(len(tricky))] }
	stopped := false
	for i := range agents {
		agents[i] = randHandoff(r).From + string(rune('0'+i))
		if stopped {
			continue
		}
		switch r.Intn(6) {
		case 0:
			steps = append(steps, StepOutcome{Agent: agents[i], State: []string{"failed", "dead_letter", "canceled"}[r.Intn(3)], Reason: pick() + " reason " + pick()})
			stopped = true
		case 1:
			if i == n-1 {
				steps = append(steps, StepOutcome{Agent: agents[i], State: StateSucceeded, Handoff: &Handoff{From: agents[i], Summary: "sum " + pick() + "\n" + pick()}})
				continue
			}
			fallthrough
		default:
			h := randHandoff(r)
			h.From = agents[i]
			if r.Intn(3) == 0 {
				h.TestResults = pick() + "\n" + pick()
			}
			if r.Intn(3) == 0 {
				h.SecurityStatus = strings.TrimSpace(pick() + " " + pick())
			}
			if r.Intn(3) == 0 {
				h.FilesModified = "- `x.go` (new)\n- " + pick()
			}
			steps = append(steps, succeeded(h))
		}
	}
	return BuildReport(randHandoff(r).From, pick()+" task "+pick(), agents, steps)
}

func TestReportRoundTrip(t *testing.T) {
	t.Parallel()
	f := func(seed int64) bool {
		rep := randReport(rand.New(rand.NewSource(seed)))
		back, err := ParseReport(rep.Text())
		if err != nil {
			t.Logf("seed %d: %v\n%s", seed, err, rep.Text())
			return false
		}
		back.Steps = rep.Steps
		if !reflect.DeepEqual(back, rep) {
			t.Logf("seed %d:\n got %#v\nwant %#v\n%s", seed, back, rep, rep.Text())
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 300}); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseReport(f *testing.F) {
	for _, c := range reportCases() {
		f.Add(BuildReport(c.workflow, c.task, c.agents, c.steps).Text())
	}
	f.Add("INTEGRATION REPORT\n====================\nWorkflow:\nTask:\nAgents:\n\nSUMMARY\n-------\n\nAGENT OUTPUTS\n-------------\n\nFILES CHANGED\n-------------\nNone\n\nTEST RESULTS\n------------\n\nSECURITY STATUS\n---------------\n\nRECOMMENDATION\n--------------\nSHIP\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseReport(text)
		if err != nil {
			return
		}
		again, err := ParseReport(r.Text())
		if err != nil {
			t.Fatalf("re-rendered report does not parse: %v\n%s", err, r.Text())
		}
		if !reflect.DeepEqual(again, r) {
			t.Fatalf("re-parsed report differs:\n got %#v\nwant %#v", again, r)
		}
	})
}

// An agent that says its tests or security review did not run has not
// reported them: the report says NOT RUN and ships, as without the
// section.
func TestNotRunIsNotReported(t *testing.T) {
	t.Parallel()
	h := okHandoff("planner", "done", "Planned.", "None", "None")
	h.TestResults, h.SecurityStatus = "NOT RUN: no tests in this repository", "not run"
	r := BuildReport("feature", "x", []string{"planner"}, []StepOutcome{succeeded(h)})
	if r.Recommendation != Ship || r.TestResults != NotRunText || r.SecurityStatus != NotRunText {
		t.Fatalf("%s %q %q %v", r.Recommendation, r.TestResults, r.SecurityStatus, r.Reasons)
	}
}

// A first line that introduces a list is joined with the list's first
// item in AGENT OUTPUTS.
func TestOutputLineJoinsALeadIn(t *testing.T) {
	t.Parallel()
	for findings, want := range map[string]string{
		"Plan, in order (3 items):\n1. Parse the flag.\n2. Print JSON.": "Plan, in order (3 items): Parse the flag.",
		"- One finding.\n- Two.": "One finding.",
		"Received:\n\n> a quote": "Received: > a quote",
		"Only a lead-in:":        "Only a lead-in:",
	} {
		if got := outputLine(okHandoff("a", "b", findings, "None", "None")); got != want {
			t.Errorf("outputLine(%q) = %q, want %q", findings, got, want)
		}
	}
}
