package workflow

import (
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/quick"
)

const goodHandoff = `I looked at the code first.

## HANDOFF: planner -> code-reviewer

### Context
Planned the feature.

### Findings
- The parser needs a new mode.
- Tests are missing.

### Files Modified
- ` + "`workflow/handoff.go`" + ` - new file
* workflow/report.go (the report)
1. docs/workflows.md — documented

### Open Questions
None

### Recommendations
Review the parser.

### Test Results
PASS: 12 tests
`

func TestParseHandoff(t *testing.T) {
	t.Parallel()
	h, err := ParseHandoff(goodHandoff)
	if err != nil {
		t.Fatal(err)
	}
	want := &Handoff{
		From: "planner", To: []string{"code-reviewer"},
		Context:         "Planned the feature.",
		Findings:        "- The parser needs a new mode.\n- Tests are missing.",
		FilesModified:   "- `workflow/handoff.go` - new file\n* workflow/report.go (the report)\n1. docs/workflows.md — documented",
		OpenQuestions:   "None",
		Recommendations: "Review the parser.",
		TestResults:     "PASS: 12 tests",
	}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("ParseHandoff:\n got %#v\nwant %#v", h, want)
	}
	if got, want := h.Files(), []string{"workflow/handoff.go", "workflow/report.go", "docs/workflows.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Files = %q, want %q", got, want)
	}
	if _, err := ParseHandoff("# nothing here\n\n## Handoff to review\n"); err == nil {
		t.Error("ParseHandoff without a heading: no error")
	}
}

func TestParseHandoffStructure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		want       *Handoff
	}{
		{"case-insensitive titles and several next", "## handoff: a -> b, c\n### CONTEXT\nx\n### findings\ny\n",
			&Handoff{From: "a", To: []string{"b", "c"}, Context: "x", Findings: "y"}},
		{"a code block hides headings", "## HANDOFF: a -> b\n### Context\n```\n## HANDOFF: z -> y\n### Findings\n```\n### Findings\nreal\n",
			&Handoff{From: "a", To: []string{"b"}, Context: "```\n## HANDOFF: z -> y\n### Findings\n```", Findings: "real"}},
		{"a level-2 heading ends the handoff", "## HANDOFF: a -> b\n### Context\nx\n## Other\n### Findings\ny\n",
			&Handoff{From: "a", To: []string{"b"}, Context: "x"}},
		{"level-4 headings stay in the body", "## HANDOFF: a -> b\n### Findings\n#### one\n\nx\n\n#### two\n\ny\n",
			&Handoff{From: "a", To: []string{"b"}, Findings: "#### one\n\nx\n\n#### two\n\ny"}},
		{"first handoff wins", "## HANDOFF: a -> b\n### Context\nfirst\n## HANDOFF: c -> d\n### Context\nsecond\n",
			&Handoff{From: "a", To: []string{"b"}, Context: "first"}},
		{"setext handoff heading", "HANDOFF: a -> b\n---\n### Context\nx\n",
			&Handoff{From: "a", To: []string{"b"}, Context: "x"}},
	}
	for _, c := range cases {
		h, err := ParseHandoff(c.text)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(h, c.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.name, h, c.want)
		}
	}
}

func TestCheckHandoff(t *testing.T) {
	t.Parallel()
	full := func(heading string) string {
		return heading + "\n\n### Context\nc\n\n### Findings\nf\n\n### Files Modified\nNone\n\n### Open Questions\nNone\n\n### Recommendations\nr\n"
	}
	next := Expect{From: "planner", To: []string{"code-reviewer"}}
	par := Expect{From: "planner", To: []string{"code-reviewer", "security-reviewer"}}
	last := Expect{From: "architect", Last: true}
	cases := []struct {
		name     string
		text     string
		e        Expect
		problems []string
	}{
		{"valid", full("## HANDOFF: planner -> code-reviewer"), next, nil},
		{"valid with preamble", "Thinking...\n\n" + full("## HANDOFF: planner -> code-reviewer"), next, nil},
		{"missing heading", "### Context\nc\n", next,
			[]string{`the answer has no handoff heading: start the handoff with the line "## HANDOFF: planner -> code-reviewer"`}},
		{"wrong sender", full("## HANDOFF: plan -> code-reviewer"), next,
			[]string{`the handoff heading names "plan" as the sender, but this agent is "planner": write "## HANDOFF: planner -> code-reviewer"`}},
		{"wrong next", full("## HANDOFF: planner -> architect"), next,
			[]string{`the handoff heading names "architect" as the next agent, but the next agent is "code-reviewer": write "## HANDOFF: planner -> code-reviewer"`}},
		{"parallel: one of them", full("## HANDOFF: planner -> security-reviewer"), par, nil},
		{"parallel: all in any order", full("## HANDOFF: planner -> security-reviewer, code-reviewer"), par, nil},
		{"parallel: some but not all", full("## HANDOFF: planner -> code-reviewer, architect"), par,
			[]string{`the handoff heading names "code-reviewer, architect" as the next agent, but the next phase runs code-reviewer, security-reviewer in parallel: name one of them or all of them, as in "## HANDOFF: planner -> code-reviewer, security-reviewer"`}},
		{"last: anything", full("## HANDOFF: architect -> done"), last, nil},
		{"last: nothing", full("## HANDOFF: architect ->"), last,
			[]string{`the handoff heading names no next agent after "->": write "## HANDOFF: architect -> done"`}},
		{"missing and empty sections", "## HANDOFF: planner -> code-reviewer\n### Context\n\n### Findings\nf\n### Open Questions\n<!-- todo -->\n### Recommendations\nNone\n", next,
			[]string{
				`section "Context" is empty: write None when there is nothing to say`,
				`section "Files Modified" is missing: add "### Files Modified" under the handoff heading (write None when there is nothing to say)`,
				`section "Open Questions" is empty: write None when there is nothing to say`,
			}},
		{"summary for the last", "SUMMARY\n-------\nAll done.\n", last, nil},
		{"summary not for the middle", "## Summary\nAll done.\n", next,
			[]string{`the answer has no handoff heading: start the handoff with the line "## HANDOFF: planner -> code-reviewer"`}},
		{"empty summary", "# SUMMARY\n\n# Next\n", last,
			[]string{`the answer has no handoff heading: start the handoff with the line "## HANDOFF: architect -> done", or answer with a SUMMARY section (the final report's summary)`}},
	}
	for _, c := range cases {
		h, problems := CheckHandoff(c.text, c.e)
		if !reflect.DeepEqual(problems, c.problems) {
			t.Errorf("%s: problems\n got %q\nwant %q", c.name, problems, c.problems)
			continue
		}
		if problems == nil && (h == nil || h.From == "") {
			t.Errorf("%s: valid without a handoff: %#v", c.name, h)
		}
	}
	h, problems := CheckHandoff("Done.\n\nSUMMARY\n-------\nAll done.\n\nShipped it.\n", last)
	if problems != nil || !reflect.DeepEqual(h, &Handoff{From: "architect", Summary: "All done.\n\nShipped it."}) {
		t.Fatalf("summary: %#v %q", h, problems)
	}
	if got, want := h.Markdown(), "## SUMMARY\n\nAll done.\n\nShipped it.\n"; got != want {
		t.Errorf("summary Markdown = %q, want %q", got, want)
	}
	back, problems := CheckHandoff(h.Markdown(), last)
	if problems != nil || !reflect.DeepEqual(back, h) {
		t.Errorf("summary round trip: %#v %q", back, problems)
	}
}

func TestFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []string
	}{
		{"None", nil},
		{"none", nil},
		{"", nil},
		{"a.go\n\nb.go", []string{"a.go", "b.go"}},
		{"- `a.go` — rewritten\n+ b/c.go (new)\n  * d.go - moved\n10. e.go", []string{"a.go", "b/c.go", "d.go", "e.go"}},
		{"- path with-dash.go", []string{"path with-dash.go"}},
	}
	for _, c := range cases {
		if got := (&Handoff{FilesModified: c.in}).Files(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Files(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	h := &Handoff{From: "a", To: []string{"b", "c"}, Context: "ctx", Findings: "- one\n- two", FilesModified: "None",
		OpenQuestions: "None", Recommendations: "go", SecurityStatus: "CLEAN"}
	want := "## HANDOFF: a -> b, c\n\n### Context\n\nctx\n\n### Findings\n\n- one\n- two\n\n### Files Modified\n\nNone\n\n" +
		"### Open Questions\n\nNone\n\n### Recommendations\n\ngo\n\n### Security Status\n\nCLEAN\n"
	if got := h.Markdown(); got != want {
		t.Fatalf("Markdown:\n%s\nwant:\n%s", got, want)
	}
}

// randHandoff makes a handoff whose bodies are markdown an agent could
// write: paragraphs, lists, code blocks, level-4 headings.
func randHandoff(r *rand.Rand) *Handoff {
	name := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyz"
		n := 1 + r.Intn(10)
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteByte(letters[r.Intn(len(letters))])
			if i > 0 && i < n-1 && r.Intn(5) == 0 {
				b.WriteByte("-._"[r.Intn(3)])
			}
		}
		return b.String()
	}
	words := []string{"fix", "the", "parser", "`code`", "*emph*", "ok", "PASS", "FAIL", "None", "SUMMARY", "é", "->", "#1", "a.go", "[link](x)"}
	line := func() string {
		n := 1 + r.Intn(6)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[r.Intn(len(words))]
		}
		return strings.Join(ws, " ")
	}
	body := func(optional bool) string {
		if optional && r.Intn(2) == 0 {
			return ""
		}
		switch r.Intn(6) {
		case 0:
			return None
		case 1:
			return "- " + line() + "\n- " + line()
		case 2:
			return line() + "\n\n" + line()
		case 3:
			return "```\n## HANDOFF: x -> y\n### Context\n```"
		case 4:
			return "#### " + name() + "\n\n" + line()
		}
		return line()
	}
	h := &Handoff{From: name(), Context: body(false), Findings: body(false), FilesModified: body(false),
		OpenQuestions: body(false), Recommendations: body(false), TestResults: body(true), SecurityStatus: body(true)}
	for i := r.Intn(3); i >= 0; i-- {
		h.To = append(h.To, name())
	}
	return h
}

func TestHandoffMarkdownRoundTrip(t *testing.T) {
	t.Parallel()
	f := func(seed int64) bool {
		h := randHandoff(rand.New(rand.NewSource(seed)))
		got, err := ParseHandoff(h.Markdown())
		if err != nil || !reflect.DeepEqual(got, h) {
			t.Logf("seed %d:\n%s\ngot %#v (%v)\nwant %#v", seed, h.Markdown(), got, err, h)
			return false
		}
		if _, problems := CheckHandoff(h.Markdown(), Expect{From: h.From, To: h.To}); problems != nil {
			t.Logf("seed %d: %q", seed, problems)
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 300}); err != nil {
		t.Fatal(err)
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	cr := &Handoff{From: "code-reviewer", To: []string{"architect"}, Context: "reviewed", Findings: "- bug in x", FilesModified: "x.go",
		OpenQuestions: "None", Recommendations: "fix x", TestResults: "FAIL: 1"}
	sr := &Handoff{From: "security-reviewer", To: []string{"architect"}, Context: "audited", Findings: "None", FilesModified: "None",
		OpenQuestions: "Is y exposed?", Recommendations: "None", SecurityStatus: "CLEAN"}
	agents := []string{"code-reviewer", "security-reviewer"}
	m := Merge(agents, []*Handoff{cr, sr}, []string{"architect"})
	want := &Handoff{
		From: "code-reviewer, security-reviewer", To: []string{"architect"},
		Context:         "#### code-reviewer\n\nreviewed\n\n#### security-reviewer\n\naudited",
		Findings:        "#### code-reviewer\n\n- bug in x\n\n#### security-reviewer\n\nNone",
		FilesModified:   "#### code-reviewer\n\nx.go\n\n#### security-reviewer\n\nNone",
		OpenQuestions:   "#### code-reviewer\n\nNone\n\n#### security-reviewer\n\nIs y exposed?",
		Recommendations: "#### code-reviewer\n\nfix x\n\n#### security-reviewer\n\nNone",
		TestResults:     "#### code-reviewer\n\nFAIL: 1",
		SecurityStatus:  "#### security-reviewer\n\nCLEAN",
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("Merge:\n got %#v\nwant %#v", m, want)
	}
	// The merged handoff is itself a valid handoff for the next phase, and
	// reads back as itself.
	if back, problems := CheckHandoff(m.Markdown(), Expect{From: m.From, To: []string{"architect"}}); problems != nil || !reflect.DeepEqual(back, m) {
		t.Fatalf("merged handoff: %#v %q", back, problems)
	}
	// Deterministic: the same inputs give byte-identical markdown, however
	// the inputs were built (completion order is not an input).
	r := rand.New(rand.NewSource(1))
	first := m.Markdown()
	for i := 0; i < 20; i++ {
		hs := []*Handoff{cr, sr}
		done := slices.Clone(hs)
		r.Shuffle(len(done), func(a, b int) { done[a], done[b] = done[b], done[a] })
		byAgent := map[string]*Handoff{}
		for _, h := range done {
			byAgent[h.From] = h
		}
		ordered := []*Handoff{byAgent[agents[0]], byAgent[agents[1]]}
		if got := Merge(agents, ordered, []string{"architect"}).Markdown(); got != first {
			t.Fatalf("run %d: merged markdown differs:\n%s\nvs\n%s", i, got, first)
		}
	}
	if got := Merge(agents, []*Handoff{cr, nil}, nil); got.SecurityStatus != "" || !strings.Contains(got.Context, "reviewed") || strings.Contains(got.Context, "security-reviewer") {
		t.Errorf("Merge with a nil handoff: %#v", got)
	}
}

func FuzzParseHandoff(f *testing.F) {
	f.Add(goodHandoff)
	f.Add("## HANDOFF: a -> b, c\n### Context\n```\n### x\n```\n")
	f.Add("SUMMARY\n=======\nok\n")
	f.Add("## HANDOFF:\n###\n##\n")
	f.Add("HANDOFF: a -> b\n---\n### Findings\r\nx\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		h, err := ParseHandoff(text)
		CheckHandoff(text, Expect{From: "a", To: []string{"b", "c"}})
		if s, problems := CheckHandoff(text, Expect{From: "a", Last: true}); problems == nil && s == nil {
			t.Fatal("valid without a handoff")
		}
		if err != nil {
			return
		}
		h.Files()
		Merge([]string{"a", "b"}, []*Handoff{h, h}, []string{"c"}).Markdown()
		// A handoff's rendering reads back to a handoff.
		if _, err := ParseHandoff(h.Markdown()); err != nil && h.From != "" {
			t.Fatalf("rendering of %#v does not parse: %v\n%s", h, err, h.Markdown())
		}
	})
}
