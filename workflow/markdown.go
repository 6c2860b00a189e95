package workflow

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/pactum/pactum/contract"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// blockParser reads a document's block structure only (headings, code
// blocks, lists): a handoff needs where its headings are, not their inline
// content. A goldmark parser keeps a parse's state in the parse's
// context, so one serves every call.
var blockParser = parser.NewParser(
	parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
)

// atxOpening matches the start of an ATX heading's line; a heading whose
// line does not start so is a setext heading (its text, then a line of
// "=" or "-").
var atxOpening = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]|\r?$)`)

// heading is one heading at the top level of a markdown document (not in
// a list or a quote), placed in its source.
type heading struct {
	title string
	level int
	// start is the offset of its first line; end is the offset just after
	// its last line (a setext heading's underline included).
	start, end int
}

// headings returns the document's top-level headings, as the contract's
// sections check sees them (CommonMark, titles without inline markup), with
// their place in src. An empty heading ("##" alone) has no text to place
// it by and is left out.
func headings(src []byte) []heading {
	secs := contract.Sections(src)
	doc := blockParser.Parse(text.NewReader(src))
	var out []heading
	i := 0
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok {
			continue
		}
		title := ""
		if i < len(secs) && secs[i].Level == h.Level {
			title = secs[i].Title
		}
		i++
		lines := h.Lines()
		if lines.Len() == 0 {
			continue
		}
		first, last := lines.At(0), lines.At(lines.Len()-1)
		if last.Stop <= last.Start || first.Start >= len(src) {
			continue
		}
		start := lineStart(src, first.Start)
		end := lineEnd(src, last.Stop-1)
		if !atxOpening.Match(lineAt(src, start)) {
			end = lineEnd(src, end) // the setext underline
		}
		if title == "" {
			title = strings.TrimSpace(string(first.Value(src)))
		}
		out = append(out, heading{title: title, level: h.Level, start: start, end: end})
	}
	return out
}

// body returns the text under hs[i]: from the end of its line(s) to the
// next heading of the same or a higher level, trimmed.
func body(src []byte, hs []heading, i int) string {
	stop := len(src)
	for _, h := range hs[i+1:] {
		if h.level <= hs[i].level {
			stop = h.start
			break
		}
	}
	return strings.TrimSpace(string(src[hs[i].end:stop]))
}

func lineStart(src []byte, pos int) int {
	return bytes.LastIndexByte(src[:pos], '\n') + 1
}

// lineEnd returns the offset just after the line holding pos (after its
// newline, or the end of src).
func lineEnd(src []byte, pos int) int {
	if pos >= len(src) {
		return len(src)
	}
	if i := bytes.IndexByte(src[pos:], '\n'); i >= 0 {
		return pos + i + 1
	}
	return len(src)
}

func lineAt(src []byte, start int) []byte {
	end := lineEnd(src, start)
	return bytes.TrimSuffix(src[start:end], []byte("\n"))
}
