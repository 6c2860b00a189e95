package workflow

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pactum/pactum/task"
)

// ReportArtifact is the id and name of a run's final artifact, the
// integration report.
const ReportArtifact = "integration-report"

// StateSucceeded is the StepOutcome.State of an agent that delivered a
// valid handoff.
const StateSucceeded = "succeeded"

// The report's section titles, in the order Text writes them.
const (
	titleSummary        = "SUMMARY"
	titleAgentOutputs   = "AGENT OUTPUTS"
	titleFilesChanged   = "FILES CHANGED"
	titleTestResults    = "TEST RESULTS"
	titleSecurityStatus = "SECURITY STATUS"
	titleRecommendation = "RECOMMENDATION"
	reportTitle         = "INTEGRATION REPORT"
	reportRule          = "===================="
)

var reportTitles = []string{titleSummary, titleAgentOutputs, titleFilesChanged, titleTestResults, titleSecurityStatus, titleRecommendation}

// maxLine bounds a one-line excerpt (an agent's output line, a reason's
// quote), in runes.
const maxLine = 200

// BuildReport builds a run's final report from its steps' outcomes (one
// per agent, in agents' order; an agent without an outcome counts as not
// run).
//
// The summary is the final agent's summary when it answered with one
// (several final agents' summaries are joined by blank lines), else one
// generated sentence: how many agents delivered valid handoffs, how many
// files changed, and who left open questions. AGENT OUTPUTS has one line
// per agent: the first non-empty line of its Findings (of its
// Recommendations when Findings is None), list marker removed; the first
// line of its summary; "<state>: <reason>" for a step that did not
// succeed; "not run" for one that never started. FILES CHANGED is the
// union of every handoff's Files Modified, in first-seen order. TEST
// RESULTS and SECURITY STATUS are the text of the handoffs that have the
// section ("<agent>: <text>" per agent when several do), else NOT RUN.
//
// The recommendation rule:
//
//   - BLOCKED when any step did not succeed (failed, dead_letter,
//     canceled, not run — e.g. a handoff that stayed invalid);
//   - else NEEDS WORK when any handoff's Open Questions is not "None", or
//     a Test Results section reports failure, or a Security Status
//     reports findings;
//   - else SHIP.
//
// Test Results and Security Status are classified by their first word,
// case-insensitive: PASS, PASSED, OK, CLEAN, NONE are passing (clean);
// anything else is failing (findings): an unclear result is work to do.
// A section that starts with NOT RUN counts as not reported (as a handoff
// without the section).
// The reasons say why, one sentence per cause naming the agent, for the
// causes of the verdict's own level.
func BuildReport(workflow, taskText string, agents []string, steps []StepOutcome) *Report {
	r := &Report{
		Workflow:     oneLine(workflow),
		Task:         oneLine(taskText),
		Agents:       []string{},
		AgentOutputs: []AgentOutput{},
		FilesChanged: []string{},
		Steps:        steps,
	}
	byAgent := map[string]StepOutcome{}
	for _, s := range steps {
		if _, dup := byAgent[s.Agent]; !dup {
			byAgent[s.Agent] = s
		}
	}
	outcomes := make([]StepOutcome, len(agents))
	for i, a := range agents {
		r.Agents = append(r.Agents, oneLine(a))
		s, ok := byAgent[a]
		if !ok {
			s = StepOutcome{Agent: a, State: NotRun}
		}
		outcomes[i] = s
	}

	var blocked, work, summaries, questions []string
	var tests, security []reported
	seenFile := map[string]bool{}
	valid := 0
	for i, s := range outcomes {
		a := r.Agents[i]
		h := s.Handoff
		if s.State != StateSucceeded || h == nil {
			blocked = append(blocked, blockedReason(a, s))
			r.AgentOutputs = append(r.AgentOutputs, AgentOutput{Agent: a, Summary: failedLine(s)})
			continue
		}
		valid++
		r.AgentOutputs = append(r.AgentOutputs, AgentOutput{Agent: a, Summary: outputLine(h)})
		if h.Summary != "" {
			summaries = append(summaries, strings.TrimSpace(h.Summary))
		}
		for _, f := range h.Files() {
			if f = oneLine(f); f != "" && !seenFile[f] {
				seenFile[f] = true
				r.FilesChanged = append(r.FilesChanged, f)
			}
		}
		if h.Summary == "" || !h.empty() {
			if oq := strings.TrimSpace(h.OpenQuestions); !strings.EqualFold(oq, None) {
				questions = append(questions, a)
				work = append(work, sentence(fmt.Sprintf("%s left open questions: %s", a, quote(oq))))
			}
		}
		if t := strings.TrimSpace(h.TestResults); t != "" && !notRun(t) {
			tests = append(tests, reported{a, t})
			if !passing(t) {
				work = append(work, sentence(fmt.Sprintf("%s reports failing tests: %s", a, quote(t))))
			}
		}
		if t := strings.TrimSpace(h.SecurityStatus); t != "" && !notRun(t) {
			security = append(security, reported{a, t})
			if !passing(t) {
				work = append(work, sentence(fmt.Sprintf("%s reports security findings: %s", a, quote(t))))
			}
		}
	}

	if len(summaries) > 0 {
		r.Summary = strings.Join(summaries, "\n\n")
	} else {
		r.Summary = generatedSummary(valid, len(agents), len(r.FilesChanged), questions)
	}
	r.TestResults = joinReported(tests)
	r.SecurityStatus = joinReported(security)
	switch {
	case len(blocked) > 0:
		r.Recommendation, r.Reasons = Blocked, blocked
	case len(work) > 0:
		r.Recommendation, r.Reasons = NeedsWork, work
	default:
		r.Recommendation = Ship
	}
	return r
}

// reported is one handoff's optional section.
type reported struct{ agent, text string }

func joinReported(rs []reported) string {
	switch len(rs) {
	case 0:
		return NotRunText
	case 1:
		return rs[0].text
	}
	parts := make([]string, len(rs))
	for i, x := range rs {
		parts[i] = x.agent + ": " + x.text
	}
	return strings.Join(parts, "\n")
}

// notRun reports whether a Test Results or Security Status text says
// the agent did not run them: the same as not reporting.
func notRun(s string) bool {
	return len(s) >= len(NotRunText) && strings.EqualFold(s[:len(NotRunText)], NotRunText)
}

// passing reports whether a Test Results or Security Status text says
// passing (clean) by its first word.
func passing(s string) bool {
	f := strings.Fields(s)
	if len(f) == 0 {
		return false
	}
	w := strings.ToUpper(strings.TrimFunc(f[0], func(r rune) bool { return !unicode.IsLetter(r) }))
	switch w {
	case "PASS", "PASSED", "OK", "CLEAN", "NONE":
		return true
	}
	return false
}

func blockedReason(agent string, s StepOutcome) string {
	state := s.State
	if state == "" {
		state = NotRun
	}
	if state == NotRun {
		return fmt.Sprintf("%s did not run (its phase never started).", agent)
	}
	if state == StateSucceeded { // succeeded without a handoff
		return fmt.Sprintf("%s delivered no valid handoff.", agent)
	}
	if s.Reason == "" {
		return fmt.Sprintf("%s did not deliver a valid handoff (%s).", agent, state)
	}
	return sentence(fmt.Sprintf("%s did not deliver a valid handoff (%s): %s", agent, state, excerpt(s.Reason)))
}

// failedLine is the AGENT OUTPUTS line of a step that did not succeed.
func failedLine(s StepOutcome) string {
	switch {
	case s.State == NotRun || s.State == "":
		return "not run"
	case s.State == StateSucceeded:
		return "succeeded: no valid handoff"
	case s.Reason == "":
		return s.State
	}
	return excerpt(s.State + ": " + s.Reason)
}

// outputLine is the AGENT OUTPUTS line of a valid handoff.
func outputLine(h *Handoff) string {
	if h.Summary != "" && h.empty() {
		return excerpt(firstLine(h.Summary))
	}
	src := h.Findings
	if strings.EqualFold(strings.TrimSpace(src), None) {
		src = h.Recommendations
	}
	return excerpt(firstLine(src))
}

// firstLine is the first non-empty line of s, its list marker removed;
// a line that ends with a colon only introduces what follows, so the
// next non-empty line is added to it ("Plan (3 items): parse the flag").
func firstLine(s string) string {
	var lead string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		m := strings.TrimSpace(listMarker.ReplaceAllString(line, ""))
		switch {
		case m == "":
		case lead != "":
			return lead + " " + m
		case strings.HasSuffix(m, ":"):
			lead = m
		default:
			return m
		}
	}
	return lead
}

// quote is a section's text on one line for a reason: its non-empty
// lines, list markers removed, joined by "; ", cut to maxLine runes.
func quote(s string) string {
	var parts []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if m := strings.TrimSpace(listMarker.ReplaceAllString(line, "")); m != "" {
			parts = append(parts, m)
		}
	}
	return excerpt(strings.Join(parts, "; "))
}

// sentence ends s with a full stop unless it ends with punctuation.
func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "…") {
		return s
	}
	return s + "."
}

// oneLine collapses s's whitespace (newlines included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// excerpt is s on one line, cut to maxLine runes.
func excerpt(s string) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) <= maxLine {
		return s
	}
	return string([]rune(s)[:maxLine-1]) + "…"
}

func generatedSummary(valid, total, files int, questions []string) string {
	fs := "no files changed"
	switch {
	case files == 1:
		fs = "1 file changed"
	case files > 1:
		fs = fmt.Sprintf("%d files changed", files)
	}
	qs := "no open questions"
	if len(questions) > 0 {
		qs = "open questions from " + strings.Join(questions, ", ")
	}
	return fmt.Sprintf("%d of %d agents delivered valid handoffs; %s; %s.", valid, total, fs, qs)
}

// Text renders the report in the seed's structure: "INTEGRATION REPORT",
// a rule of 20 "=", the Workflow, Task and Agents lines, a blank line,
// then SUMMARY, AGENT OUTPUTS, FILES CHANGED, TEST RESULTS, SECURITY
// STATUS and RECOMMENDATION, each a title line, an underline of "-" as
// long as the title, the body and a blank line. A body line that reads as
// a section title (spaces before it aside) is written with one more
// leading space, which ParseReport removes, so any body reads back as
// written.
func (r *Report) Text() string {
	var b strings.Builder
	b.WriteString(reportTitle + "\n" + reportRule + "\n")
	b.WriteString(labelLine("Workflow:", r.Workflow))
	b.WriteString(labelLine("Task:", r.Task))
	b.WriteString(labelLine("Agents:", strings.Join(r.Agents, " -> ")))
	b.WriteByte('\n')
	section := func(title, body string) {
		b.WriteString(title + "\n" + strings.Repeat("-", len(title)) + "\n")
		if body != "" {
			b.WriteString(body)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	section(titleSummary, escapeBody(r.Summary))
	var outs []string
	for _, o := range r.AgentOutputs {
		outs = append(outs, labelLine(o.Agent+":", o.Summary))
	}
	section(titleAgentOutputs, strings.TrimSuffix(strings.Join(outs, ""), "\n"))
	files := None
	if len(r.FilesChanged) > 0 {
		files = "- " + strings.Join(r.FilesChanged, "\n- ")
	}
	section(titleFilesChanged, files)
	section(titleTestResults, escapeBody(r.TestResults))
	section(titleSecurityStatus, escapeBody(r.SecurityStatus))
	rec := string(r.Recommendation)
	for _, reason := range r.Reasons {
		rec += "\n- " + reason
	}
	section(titleRecommendation, rec)
	return b.String()
}

func labelLine(label, v string) string {
	if v == "" {
		return label + "\n"
	}
	return label + " " + v + "\n"
}

// isTitleLine reports whether line, leading spaces aside, is a report
// section title.
func isTitleLine(line string) bool {
	t := strings.TrimLeft(line, " ")
	for _, title := range reportTitles {
		if t == title {
			return true
		}
	}
	return false
}

func escapeBody(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if isTitleLine(l) {
			lines[i] = " " + l
		}
	}
	return strings.Join(lines, "\n")
}

func unescapeLines(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.HasPrefix(l, " ") && isTitleLine(l) {
			l = l[1:]
		}
		out[i] = l
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// Artifact returns the report as the run's final artifact: id and name
// ReportArtifact, a text part (Text) and a data part (the Report as
// JSON).
func (r *Report) Artifact() task.Artifact {
	data, err := json.Marshal(r)
	if err != nil { // a Report is plain data; this cannot happen
		data = []byte("null")
	}
	return task.Artifact{
		ID:   ReportArtifact,
		Name: ReportArtifact,
		Parts: []task.Part{
			task.TextPart(r.Text()),
			task.DataPart(data),
		},
	}
}

// ParseReport reads a report written by Text back: it checks the
// structure line by line and says, for the first line that does not fit,
// its number and what was expected there. Sections are read in their
// fixed order: a section's body runs up to a blank line followed by the
// next section's title and underline (a body line that reads as a title
// was written indented by one space, which ParseReport removes). The
// report's Steps are not in its text and stay nil.
func ParseReport(text string) (*Report, error) {
	p := &reportParser{lines: strings.Split(text, "\n")}
	r := &Report{Agents: []string{}, AgentOutputs: []AgentOutput{}, FilesChanged: []string{}}
	if err := p.exact(0, reportTitle); err != nil {
		return nil, err
	}
	if err := p.exact(1, reportRule); err != nil {
		return nil, err
	}
	var err error
	if r.Workflow, err = p.label(2, "Workflow:"); err != nil {
		return nil, err
	}
	if r.Task, err = p.label(3, "Task:"); err != nil {
		return nil, err
	}
	agents, err := p.label(4, "Agents:")
	if err != nil {
		return nil, err
	}
	if agents != "" {
		r.Agents = strings.Split(agents, " -> ")
	}
	if err := p.exact(5, ""); err != nil {
		return nil, err
	}
	at := 6
	bodies := make([][]string, len(reportTitles))
	starts := make([]int, len(reportTitles))
	for i, title := range reportTitles {
		if err := p.exact(at, title); err != nil {
			return nil, err
		}
		if err := p.exact(at+1, strings.Repeat("-", len(title))); err != nil {
			return nil, err
		}
		start := at + 2
		starts[i] = start
		if i == len(reportTitles)-1 {
			end := len(p.lines)
			for end > start && p.lines[end-1] == "" {
				end--
			}
			bodies[i] = p.lines[start:end]
			break
		}
		next := reportTitles[i+1]
		end := -1
		for j := start; j+2 < len(p.lines); j++ {
			if p.lines[j] == "" && p.lines[j+1] == next && p.lines[j+2] == strings.Repeat("-", len(next)) {
				end = j
				break
			}
		}
		if end < 0 {
			return nil, fmt.Errorf("parse report: line %d: the %s section does not end: expected a blank line, then %q and its underline of %d \"-\"",
				start+1, title, next, len(next))
		}
		bodies[i] = p.lines[start:end]
		at = end + 1
	}

	r.Summary = unescapeLines(bodies[0])

	outs := bodies[1]
	if len(outs) != len(r.Agents) {
		return nil, fmt.Errorf("parse report: line %d: AGENT OUTPUTS has %d lines, expected one per agent (%d)", starts[1]+1, len(outs), len(r.Agents))
	}
	for i, line := range outs {
		a := r.Agents[i]
		rest, ok := strings.CutPrefix(line, a+":")
		if !ok {
			return nil, fmt.Errorf("parse report: line %d: expected %q and the agent's output, got %q", starts[1]+i+1, a+":", excerpt(line))
		}
		r.AgentOutputs = append(r.AgentOutputs, AgentOutput{Agent: a, Summary: strings.TrimSpace(rest)})
	}

	files := bodies[2]
	if !(len(files) == 1 && files[0] == None) {
		if len(files) == 0 {
			return nil, fmt.Errorf("parse report: line %d: FILES CHANGED is empty, expected \"- path\" lines or None", starts[2]+1)
		}
		for i, line := range files {
			path, ok := strings.CutPrefix(line, "- ")
			if path = strings.TrimSpace(path); !ok || path == "" {
				return nil, fmt.Errorf("parse report: line %d: expected a changed file as \"- path\" (or None alone), got %q", starts[2]+i+1, excerpt(line))
			}
			r.FilesChanged = append(r.FilesChanged, path)
		}
	}

	r.TestResults = unescapeLines(bodies[3])
	r.SecurityStatus = unescapeLines(bodies[4])

	rec := bodies[5]
	if len(rec) == 0 {
		return nil, fmt.Errorf("parse report: line %d: expected the recommendation (SHIP, NEEDS WORK or BLOCKED)", starts[5]+1)
	}
	switch v := Recommendation(rec[0]); v {
	case Ship, NeedsWork, Blocked:
		r.Recommendation = v
	default:
		return nil, fmt.Errorf("parse report: line %d: expected the recommendation (SHIP, NEEDS WORK or BLOCKED), got %q", starts[5]+1, excerpt(rec[0]))
	}
	for i, line := range rec[1:] {
		reason, ok := strings.CutPrefix(line, "- ")
		if reason = strings.TrimSpace(reason); !ok || reason == "" {
			return nil, fmt.Errorf("parse report: line %d: expected a reason as \"- reason\", got %q", starts[5]+i+2, excerpt(line))
		}
		r.Reasons = append(r.Reasons, reason)
	}
	return r, nil
}

type reportParser struct{ lines []string }

func (p *reportParser) exact(i int, want string) error {
	if i >= len(p.lines) {
		return fmt.Errorf("parse report: line %d: expected %q, got the end of the text", i+1, want)
	}
	if p.lines[i] != want {
		if want == "" {
			return fmt.Errorf("parse report: line %d: expected a blank line, got %q", i+1, excerpt(p.lines[i]))
		}
		return fmt.Errorf("parse report: line %d: expected %q, got %q", i+1, want, excerpt(p.lines[i]))
	}
	return nil
}

func (p *reportParser) label(i int, label string) (string, error) {
	if i >= len(p.lines) {
		return "", fmt.Errorf("parse report: line %d: expected %q, got the end of the text", i+1, label)
	}
	rest, ok := strings.CutPrefix(p.lines[i], label)
	if !ok || (rest != "" && rest[0] != ' ') {
		return "", fmt.Errorf("parse report: line %d: expected %q, got %q", i+1, label+" …", excerpt(p.lines[i]))
	}
	return strings.TrimSpace(rest), nil
}
