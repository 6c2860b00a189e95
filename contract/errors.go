package contract

import (
	"fmt"
	"strings"
)

// FieldError is one thing wrong with a contract: the field path
// ("steps[1].assertions[0].check.schema") and what is wrong. Loaders add
// the file and line the path is at.
type FieldError struct {
	// File and Line place the field when the contract came from a file.
	File string
	Line int
	Path string
	Msg  string
}

func (e FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every FieldError of one contract, in file order.
type Errors []FieldError

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}
