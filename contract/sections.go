package contract

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// A sections check needs a document's block structure (headings, code
// blocks, lists, HTML) and the inline content of its headings only: blocks
// parses the structure without inline parsing (which is half the cost of
// a parse); a heading whose text has inline markup is parsed again, alone,
// by the full parser. A goldmark parser keeps a parse's state in the
// parse's context, so each serves every check.
var (
	blocks = parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
	markdown = goldmark.DefaultParser()
)

// inlineMarkup are the characters that can start inline markup (or an
// escape or entity): a heading without them is its own text.
const inlineMarkup = "`*_[]<>!&\\~"

func compileSections(c *Check) (CheckFunc, error) {
	t, err := checkTarget(c)
	if err != nil {
		return nil, err
	}
	if len(c.Sections) == 0 {
		return nil, badParam("sections", "required (the headings that must be present)")
	}
	want := make([]string, len(c.Sections))
	for i, s := range c.Sections {
		want[i] = strings.TrimSpace(s)
		if want[i] == "" {
			return nil, badParam(fmt.Sprintf("sections[%d]", i), "is empty")
		}
	}
	return func(_ context.Context, in *Input) Verdict {
		v, bad := t.get(in)
		if bad != nil {
			return *bad
		}
		return sectionsVerdict(v.label, []byte(v.text), want)
	}, nil
}

// section is one heading of a markdown document and its body's text.
type section struct {
	title string
	level int
	body  string
}

// Section is one heading of a markdown document: its title (the heading's
// text, inline markup removed), its level (1 to 6; a setext heading is
// level 1 or 2) and its body's text, trimmed. Body is what the sections
// check reads to tell a blank body from a filled one: the text of the
// body's blocks, with block markup (list markers, quote markers, code
// fences) and HTML comments left out and lines of consecutive blocks not
// always separated; it is not the body's markdown.
type Section struct {
	Title string
	Level int
	Body  string
}

// Sections returns the headings at the top level of a markdown document
// (CommonMark; not those inside a list or a quote), in order, each with
// the text of its body: everything up to the next heading of the same or a
// higher level (a lower-level heading and its body belong to it; an HTML
// comment is left out). It reads a document as the sections check does.
func Sections(src []byte) []Section {
	secs := markdownSections(src)
	out := make([]Section, len(secs))
	for i, s := range secs {
		out[i] = Section{Title: s.title, Level: s.level, Body: s.body}
	}
	return out
}

// markdownSections returns the document's headings (those at the top of
// the document, not inside a list or a quote), each with the text of its
// body: everything up to the next heading of the same or a higher level
// (a lower-level heading and its body belong to it).
func markdownSections(src []byte) []section {
	doc := blocks.Parse(text.NewReader(src))
	var top []ast.Node
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		top = append(top, n)
	}
	var out []section
	for i, n := range top {
		h, ok := n.(*ast.Heading)
		if !ok {
			continue
		}
		var body strings.Builder
		for _, m := range top[i+1:] {
			if mh, ok := m.(*ast.Heading); ok && mh.Level <= h.Level {
				break
			}
			blockText(m, src, &body)
		}
		out = append(out, section{title: headingText(h, src), level: h.Level, body: strings.TrimSpace(body.String())})
	}
	return out
}

// blockText appends the source lines of block n and of the blocks inside
// it, leaving out HTML comments.
func blockText(n ast.Node, src []byte, b *strings.Builder) {
	if n.Type() != ast.TypeBlock {
		return
	}
	if hb, ok := n.(*ast.HTMLBlock); ok && hb.HTMLBlockType == ast.HTMLBlockType2 {
		return
	}
	if h, ok := n.(*ast.Heading); ok {
		b.WriteString(headingText(h, src))
		b.WriteByte('\n')
		return
	}
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(src))
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		blockText(c, src, b)
	}
}

// headingText is a heading's title: its raw text when that has no inline
// markup, else the text of its inline content (without emphasis and code
// markers, links' targets, escapes).
func headingText(h *ast.Heading, src []byte) string {
	var raw []byte
	lines := h.Lines()
	if lines.Len() == 1 {
		seg := lines.At(0)
		raw = seg.Value(src)
	} else {
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			if i > 0 {
				raw = append(raw, ' ')
			}
			raw = append(raw, bytes.TrimSpace(seg.Value(src))...)
		}
	}
	raw = bytes.TrimSpace(raw)
	if !bytes.ContainsAny(raw, inlineMarkup) {
		return string(raw)
	}
	line := append([]byte("# "), raw...)
	doc := markdown.Parse(text.NewReader(line))
	if hh, ok := doc.FirstChild().(*ast.Heading); ok {
		return strings.TrimSpace(inlineText(hh, line))
	}
	return string(raw)
}

// inlineText is the text of a block's inline content.
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch x := c.(type) {
			case *ast.Text:
				b.Write(x.Segment.Value(src))
				if x.SoftLineBreak() || x.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(x.Value)
			case *ast.AutoLink:
				b.Write(x.Label(src))
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}

// sectionsVerdict checks that every wanted heading is in src with a body
// that is not blank. Headings compare case-insensitively, surrounding
// space trimmed; when a heading appears more than once, one non-empty
// occurrence is enough. "None" is a body like any other: it is how an
// agent says on purpose that a section has nothing, which a blank body
// does not say.
func sectionsVerdict(label string, src []byte, want []string) Verdict {
	secs := markdownSections(src)
	var problems []string
	for _, w := range want {
		found, filled := false, false
		for _, s := range secs {
			if strings.EqualFold(s.title, w) {
				found = true
				if s.body != "" {
					filled = true
					break
				}
			}
		}
		switch {
		case !found:
			problems = append(problems, fmt.Sprintf("missing section %q", w))
		case !filled:
			problems = append(problems, fmt.Sprintf("section %q is empty (write None when there is nothing to say)", w))
		}
	}
	if len(problems) == 0 {
		return pass
	}
	const listed = 12
	titles := make([]string, 0, min(len(secs), listed+1))
	for i, s := range secs {
		if i == listed {
			titles = append(titles, fmt.Sprintf("and %d more", len(secs)-listed))
			break
		}
		titles = append(titles, excerptRaw(s.title))
	}
	have := "no headings"
	if len(titles) > 0 {
		have = "headings: " + strings.Join(titles, ", ")
	}
	return fail("%s: %s (%s)", label, strings.Join(problems, "; "), have)
}
