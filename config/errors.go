package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is one problem in a configuration file. It names the file, the
// position of the offending YAML node and the field path to it, e.g.
//
//	pactum.yaml:14:7: agents[1].exec.comand: unknown field "comand"
type Error struct {
	// File is the file name given to Parse or Load ("" when unknown).
	File string
	// Line and Column are 1-based; 0 when the position is unknown (a YAML
	// syntax error carries a line but no column).
	Line, Column int
	// Path is the field path, e.g. "agents[1].retry.max_attempts" ("" for
	// the document itself).
	Path string
	// Msg says what is wrong.
	Msg string
	// Err is the underlying cause, if any; Msg already includes its text.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, "%d:", e.Column)
		}
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem found in a configuration, in file order. Parse,
// Check and the settings decoder return it (as error) so that one run shows
// all mistakes at once.
type Errors []*Error

// Error implements error: one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the individual errors, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// err returns es as an error, or nil when it is empty (never a typed nil).
func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	es.sort()
	return es
}

// sort orders es by file position, keeping the walk order for ties.
func (es Errors) sort() {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}
