package workflow

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// HandoffSections are the sections every handoff must have, in the order
// Markdown writes them, each with a body that is not blank ("None" when
// there is nothing to say).
var HandoffSections = []string{"Context", "Findings", "Files Modified", "Open Questions", "Recommendations"}

// OptionalSections are the sections a handoff may add, which the final
// report's TEST RESULTS and SECURITY STATUS are made of.
var OptionalSections = []string{"Test Results", "Security Status"}

// HandoffPrefix starts the title of a handoff's heading:
// "## HANDOFF: from -> to".
const HandoffPrefix = "HANDOFF:"

// None is the body of a section that has nothing to say on purpose.
const None = "None"

// ErrNoHandoff is returned by ParseHandoff for a text without a
// "## HANDOFF: from -> to" heading.
var ErrNoHandoff = errors.New(`no "## HANDOFF: from -> to" heading`)

// field returns the pointer to the field of h that holds the section
// titled title (case-insensitive), or nil.
func (h *Handoff) field(title string) *string {
	switch strings.ToLower(strings.TrimSpace(title)) {
	case "context":
		return &h.Context
	case "findings":
		return &h.Findings
	case "files modified":
		return &h.FilesModified
	case "open questions":
		return &h.OpenQuestions
	case "recommendations":
		return &h.Recommendations
	case "test results":
		return &h.TestResults
	case "security status":
		return &h.SecurityStatus
	}
	return nil
}

// ParseHandoff reads the handoff in an agent's answer: the first level-2
// heading whose text starts with "HANDOFF:" ("## HANDOFF: from -> to", to
// possibly a comma-separated list) and, as its sections, the level-3
// headings under it (up to the next heading of level 2 or 1), matched
// case-insensitively, their bodies trimmed. Text before the heading (an
// agent's preamble) is ignored; so are sections it does not know. A
// section given twice keeps its first non-empty body. It returns
// ErrNoHandoff (wrapped) when there is no handoff heading; whether the
// handoff is complete is CheckHandoff's to say.
func ParseHandoff(text string) (*Handoff, error) {
	h, _, err := parseHandoff(text)
	return h, err
}

// parseHandoff is ParseHandoff, also saying which sections (lower-case
// titles) the handoff has.
func parseHandoff(text string) (*Handoff, map[string]bool, error) {
	src := []byte(text)
	hs := headings(src)
	at := -1
	for i, h := range hs {
		if h.level == 2 && hasHandoffPrefix(h.title) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil, nil, fmt.Errorf("parse handoff: %w", ErrNoHandoff)
	}
	h := &Handoff{}
	seen := map[string]bool{}
	h.From, h.To = splitHeading(hs[at].title)
	for i := at + 1; i < len(hs) && hs[i].level > 2; i++ {
		if hs[i].level != 3 {
			continue
		}
		if f := h.field(hs[i].title); f != nil {
			seen[strings.ToLower(strings.TrimSpace(hs[i].title))] = true
			if *f == "" {
				*f = body(src, hs, i)
			}
		}
	}
	return h, seen, nil
}

func hasHandoffPrefix(title string) bool {
	return len(title) >= len(HandoffPrefix) && strings.EqualFold(title[:len(HandoffPrefix)], HandoffPrefix)
}

// splitHeading splits a handoff heading's title into the sender and the
// next agents.
func splitHeading(title string) (from string, to []string) {
	rest := strings.TrimSpace(title[len(HandoffPrefix):])
	f, t, _ := strings.Cut(rest, "->")
	for _, name := range strings.Split(t, ",") {
		if name = strings.TrimSpace(name); name != "" {
			to = append(to, name)
		}
	}
	return strings.TrimSpace(f), to
}

// summarySection returns the body of the first heading titled SUMMARY (any
// level, case-insensitive, ATX or setext), and whether there is one.
func summarySection(text string) (string, bool) {
	src := []byte(text)
	hs := headings(src)
	for i, h := range hs {
		if strings.EqualFold(strings.TrimSpace(h.title), "SUMMARY") {
			return body(src, hs, i), true
		}
	}
	return "", false
}

// CheckHandoff reads the handoff in an agent's answer and says what is
// wrong with it against e: each problem one sentence the agent can act on
// (they are its feedback on a retry). Nil problems means the handoff is
// valid, and then the returned handoff is it. It checks:
//
//   - there is a "## HANDOFF: from -> to" heading;
//   - it names e.From as the sender;
//   - it names the next agent: one of e.To, or, when e.To has several
//     (the next phase is parallel), all of them separated by commas in any
//     order; when e.Last, any non-empty name (e.g. "done");
//   - each of HandoffSections is a level-3 heading under it, with a body
//     that is not blank (only space and HTML comments is blank; a section
//     with nothing to say says "None").
//
// When e.Last, the answer may instead be the final report's summary: a
// heading titled SUMMARY (any level, case-insensitive, ATX or setext)
// with a non-empty body, which is valid when the answer has no valid
// handoff, and gives Handoff{From: e.From, Summary: body}. Agent names
// compare case-insensitively.
func CheckHandoff(text string, e Expect) (*Handoff, []string) {
	h, seen, err := parseHandoff(text)
	var problems []string
	if err != nil {
		problems = []string{fmt.Sprintf("the answer has no handoff heading: start the handoff with the line %q%s", expectedHeading(e), lastHint(e))}
	} else {
		problems = h.problems(e, seen)
	}
	if len(problems) == 0 {
		return h, nil
	}
	if e.Last {
		if s, ok := summarySection(text); ok && s != "" {
			return &Handoff{From: e.From, Summary: s}, nil
		}
	}
	return h, problems
}

func lastHint(e Expect) string {
	if e.Last {
		return ", or answer with a SUMMARY section (the final report's summary)"
	}
	return ""
}

// expectedHeading is the heading line e asks for.
func expectedHeading(e Expect) string {
	to := strings.Join(e.To, ", ")
	if e.Last || to == "" {
		to = "done"
	}
	return "## HANDOFF: " + e.From + " -> " + to
}

func (h *Handoff) problems(e Expect, seen map[string]bool) []string {
	var out []string
	want := expectedHeading(e)
	if !strings.EqualFold(h.From, e.From) {
		got := h.From
		if got == "" {
			got = "no one"
		}
		out = append(out, fmt.Sprintf("the handoff heading names %q as the sender, but this agent is %q: write %q", got, e.From, want))
	}
	if !nextOK(h.To, e) {
		switch {
		case e.Last:
			out = append(out, fmt.Sprintf("the handoff heading names no next agent after \"->\": write %q", want))
		case len(e.To) > 1:
			out = append(out, fmt.Sprintf("the handoff heading names %q as the next agent, but the next phase runs %s in parallel: name one of them or all of them, as in %q",
				strings.Join(h.To, ", "), strings.Join(e.To, ", "), want))
		default:
			out = append(out, fmt.Sprintf("the handoff heading names %q as the next agent, but the next agent is %q: write %q",
				strings.Join(h.To, ", "), strings.Join(e.To, ", "), want))
		}
	}
	for _, s := range HandoffSections {
		if !blank(*h.field(s)) {
			continue
		}
		if seen[strings.ToLower(s)] {
			out = append(out, fmt.Sprintf("section %q is empty: write None when there is nothing to say", s))
		} else {
			out = append(out, fmt.Sprintf("section %q is missing: add \"### %s\" under the handoff heading (write None when there is nothing to say)", s, s))
		}
	}
	return out
}

func nextOK(got []string, e Expect) bool {
	if e.Last {
		return len(got) > 0
	}
	if len(got) == 1 {
		return slices.ContainsFunc(e.To, func(s string) bool { return strings.EqualFold(s, got[0]) })
	}
	if len(got) != len(e.To) || len(e.To) < 2 {
		return false
	}
	for _, w := range e.To {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.EqualFold(s, w) }) {
			return false
		}
	}
	return true
}

// Markdown renders the handoff canonically: its heading, the five
// required sections in order, then the optional ones that are not empty;
// a summary-only handoff (Summary set, as the final agent may answer)
// renders as "## SUMMARY" and the summary. ParseHandoff reads a handoff's
// rendering back to the same handoff.
func (h *Handoff) Markdown() string {
	var b strings.Builder
	if h.Summary != "" && h.empty() {
		b.WriteString("## SUMMARY\n\n")
		b.WriteString(h.Summary)
		b.WriteByte('\n')
		return b.String()
	}
	b.WriteString("## HANDOFF: ")
	b.WriteString(h.From)
	b.WriteString(" -> ")
	b.WriteString(strings.Join(h.To, ", "))
	b.WriteString("\n")
	for _, s := range HandoffSections {
		writeSection(&b, s, *h.field(s))
	}
	for _, s := range OptionalSections {
		if v := *h.field(s); v != "" {
			writeSection(&b, s, v)
		}
	}
	return b.String()
}

func writeSection(b *strings.Builder, title, body string) {
	b.WriteString("\n### ")
	b.WriteString(title)
	b.WriteString("\n\n")
	if body != "" {
		b.WriteString(body)
		b.WriteByte('\n')
	}
}

// empty reports whether none of h's sections has a body.
func (h *Handoff) empty() bool {
	for _, s := range HandoffSections {
		if *h.field(s) != "" {
			return false
		}
	}
	return h.TestResults == "" && h.SecurityStatus == ""
}

// htmlComment matches an HTML comment, which a reader does not see.
var htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)

// blank reports whether a section's body says nothing: it is empty or
// holds only space and HTML comments (a template's placeholders), as the
// contract's sections check sees it.
func blank(body string) bool {
	return strings.TrimSpace(htmlComment.ReplaceAllString(body, "")) == ""
}

// listMarker matches a list item's marker at the start of a line.
var listMarker = regexp.MustCompile(`^(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)`)

// fileNote matches a note after a path: " - note", " — note", " (note)".
var fileNote = regexp.MustCompile(`(?:\s+(?:-|—|–)\s.*|\s+\(.*\))$`)

// Files returns the paths listed in Files Modified: one per list item or
// non-empty line, with list markers ("-", "*", "+", "1.") and surrounding
// backticks removed, and a trailing note (" - note", " — note",
// " (note)") cut off. "None" (any case) gives nil.
func (h *Handoff) Files() []string {
	if strings.EqualFold(strings.TrimSpace(h.FilesModified), None) {
		return nil
	}
	var out []string
	for _, line := range strings.Split(h.FilesModified, "\n") {
		p := strings.TrimSpace(line)
		p = strings.TrimSpace(listMarker.ReplaceAllString(p, ""))
		p = strings.TrimSpace(fileNote.ReplaceAllString(p, ""))
		p = strings.TrimSpace(strings.Trim(p, "`"))
		if p == "" || strings.EqualFold(p, None) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Merge merges the handoffs of a parallel phase into one: hs[i] was
// written by agents[i], in the phase's declared order (never the order
// they completed in). From is the agents joined by ", ", To is to; each
// section is, for each agent in order, "#### <agent>" and that agent's
// body, joined by blank lines; an optional section holds the agents that
// gave it (and is empty when none did). A nil handoff contributes
// nothing. The same inputs give a byte-identical Markdown.
func Merge(agents []string, hs []*Handoff, to []string) *Handoff {
	m := &Handoff{From: strings.Join(agents, ", "), To: slices.Clone(to)}
	for _, s := range append(slices.Clone(HandoffSections), OptionalSections...) {
		optional := slices.Contains(OptionalSections, s)
		var parts []string
		for i, a := range agents {
			if i >= len(hs) || hs[i] == nil {
				continue
			}
			v := *hs[i].field(s)
			if v == "" && hs[i].Summary != "" && s == "Findings" {
				v = hs[i].Summary // a final agent's summary is its findings
			}
			if optional && v == "" {
				continue
			}
			parts = append(parts, strings.TrimSpace("#### "+a+"\n\n"+v))
		}
		*m.field(s) = strings.Join(parts, "\n\n")
	}
	return m
}
