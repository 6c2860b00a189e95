package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/pactum/pactum/task"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"when":  when,
	"dur":   dur,
	"short": short,
	"json":  prettyJSON,
	"text":  func(m task.Message) string { return m.Text() },
	"ago":   func(t time.Time) string { return dur(time.Since(t)) + " ago" },
	"lower": strings.ToLower,
	"recClass": func(r string) string {
		return strings.ReplaceAll(strings.ToLower(r), " ", "-")
	},
	"taskDur": func(t *task.Task) string { return dur(t.UpdatedAt.Sub(t.CreatedAt)) },
	"cancelable": func(t *task.Task) bool {
		return t.State.Cancelable()
	},
	"retryable": func(t *task.Task) bool {
		return !t.Rejected && (t.State == task.StateFailed || t.State == task.StateDeadLetter)
	},
	"rfc3339": func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
	"ms":      func(f float64) string { return fmt.Sprintf("%.1f ms", f) },
}

// when formats a time for people, in UTC with milliseconds.
func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}

// dur formats a duration at a precision that reads well.
func dur(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// short shortens an id or a hash for a table cell; the full value is in
// the title attribute or the link.
func short(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

// prettyJSON indents raw JSON (or encodes a value) for a <pre>.
func prettyJSON(v any) string {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		raw = b
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}
