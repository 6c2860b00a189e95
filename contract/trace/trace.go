// Package trace is pactum's trace file: a task with its whole history, its
// artifacts, its execution record with the evidence stored on it, and its
// descendants (a multi-step run and its steps), as one versioned JSON
// document. `pactum tasks export` writes one (Export), `pactum verify`
// checks one against a contract without running anything (Verify), and
// `pactum tasks replay` and `pactum replay` compare a recorded task with
// its replay (Compare).
//
// The format is documented in docs/contracts.md, "Offline verification
// and the trace format". The package imports task, contract, the leaf
// internal/yamlnode (for its "did you mean" suggestions) and gowebpki/jcs
// (canonical JSON, to compare data parts) only.
package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pactum/pactum/internal/yamlnode"
	"github.com/pactum/pactum/task"
)

// Version is the trace format version this package writes: "MAJOR" or
// "MAJOR.MINOR". A minor version only adds optional fields; a reader
// refuses a major version it does not know.
const Version = "1.2"

// Major is the major version this package reads.
const Major = 1

// minor is the minor version of Version.
const minor = 2

// MaxDepth bounds how deeply children may nest in a trace.
const MaxDepth = 64

// Trace is a trace file: a task (Node) and when it was exported.
type Trace struct {
	// Version is the format's version ("pactumTrace").
	Version string `json:"pactumTrace"`
	// ExportedAt is when the trace was written.
	ExportedAt time.Time `json:"exportedAt"`
	// Contract names the contract the trace's steps were checked against
	// when they ran, as their gates recorded it (absent when no gate ran;
	// added in version 1.1).
	Contract *ContractRef `json:"contract,omitempty"`
	Node
}

// ContractRef names a contract: its id and the digest of its canonical
// form (contract.Compiled.Digest).
type ContractRef struct {
	ID     string `json:"id"`
	Digest string `json:"digest,omitempty"`
}

func (r ContractRef) String() string {
	if r.Digest == "" {
		return r.ID
	}
	return r.ID + " (" + r.Digest + ")"
}

// Node is one task of a trace with its execution record and its child
// tasks, each a Node itself.
type Node struct {
	// Task is the task as stored, with its whole history and every
	// artifact (task.Task's JSON).
	Task *task.Task `json:"task"`
	// Timeline is the task's execution record, oldest first, each record
	// with its evidence.
	Timeline []task.Record `json:"timeline"`
	// Children are the tasks it spawned, oldest first; absent for a task
	// without children.
	Children []*Node `json:"children,omitempty"`
}

// ErrVersion is what Decode's error wraps for a trace of a version this
// package cannot read.
var ErrVersion = errors.New("unsupported trace version")

// Error is one thing wrong with a trace: where (a JSON path such as
// "children[1].timeline[3].to") and what.
type Error struct {
	Path string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem Decode found, in document order (object members
// by name).
type Errors []*Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the errors, for errors.Is (ErrVersion).
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// maxErrors bounds how many problems Decode reports.
const maxErrors = 50

// Encode writes t as indented JSON.
func (t *Trace) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(t)
}

// Read decodes a trace from r (Decode).
func Read(r io.Reader) (*Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	return Decode(data)
}

// Decode parses a trace file and checks it strictly:
//
//   - it is one JSON object; pactumTrace is "MAJOR" or "MAJOR.MINOR" and
//     its major version is one this package reads (else an error
//     wrapping ErrVersion, and nothing else is checked);
//   - every member has the type the format gives it, and under the minor
//     version this package writes or an older one no member is unknown (a
//     later minor version's members are ignored);
//   - exportedAt, and in every node task and timeline, are present; a
//     task has an id, an agent and a valid state; each record is the
//     task's, with valid states and increasing sequence numbers; each
//     piece of evidence names its step and kind; each child names its
//     parent's task as its parent and a step no sibling has; children
//     nest at most MaxDepth levels.
//
// The error is an Errors, each problem with its JSON path.
func Decode(data []byte) (*Trace, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, Errors{{Msg: "not JSON: " + err.Error()}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Errors{{Msg: "not one JSON document: data follows it"}}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, Errors{{Msg: "want a JSON object, got " + kindOf(doc)}}
	}
	v, present := obj["pactumTrace"]
	if !present {
		return nil, Errors{{Path: "pactumTrace", Msg: "missing: not a pactum trace (its first member is \"pactumTrace\": \"" + Version + "\")"}}
	}
	s, ok := v.(string)
	if !ok {
		return nil, Errors{{Path: "pactumTrace", Msg: "want a string, got " + kindOf(v)}}
	}
	major, min, ok := parseVersion(s)
	if !ok {
		return nil, Errors{{Path: "pactumTrace", Msg: fmt.Sprintf("version %q is not MAJOR or MAJOR.MINOR", s), Err: ErrVersion}}
	}
	if major != Major {
		return nil, Errors{{Path: "pactumTrace", Msg: fmt.Sprintf("trace version %s is not supported: this pactum reads version %d traces", s, Major), Err: ErrVersion}}
	}
	d := &decoder{strict: min <= minor}
	d.shape("", reflect.TypeFor[Trace](), doc)
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	var t Trace
	if err := json.Unmarshal(data, &t); err != nil {
		// The shape check passed, so this is a value out of range (a
		// number too large, a time or base64 string json refuses).
		return nil, Errors{{Msg: err.Error()}}
	}
	if t.ExportedAt.IsZero() {
		d.add("exportedAt", "missing: when the trace was exported")
	}
	d.node("", &t.Node, 0)
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	return &t, nil
}

func parseVersion(s string) (major, minor int, ok bool) {
	ma, mi, dotted := strings.Cut(s, ".")
	major, ok = number(ma)
	if !ok || major == 0 {
		return 0, 0, false
	}
	if dotted {
		if minor, ok = number(mi); !ok {
			return 0, 0, false
		}
	}
	return major, minor, true
}

// number parses a decimal number without sign or leading zeros.
func number(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

type decoder struct {
	strict bool
	errs   Errors
}

func (d *decoder) add(path, format string, args ...any) {
	if len(d.errs) < maxErrors {
		d.errs = append(d.errs, &Error{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// required are the members of the format's own objects that must be
// present (a missing one would decode as empty).
var required = map[reflect.Type][]string{
	reflect.TypeFor[Trace](): {"exportedAt", "task", "timeline"},
	reflect.TypeFor[Node]():  {"task", "timeline"},
}

// shape checks that v (a JSON value decoded with UseNumber) has the shape
// of Go type t as encoding/json reads it.
func (d *decoder) shape(path string, t reflect.Type, v any) {
	if len(d.errs) >= maxErrors {
		return
	}
	switch {
	case t == timeType:
		s, ok := v.(string)
		if !ok {
			d.add(path, "want a time (RFC 3339 string), got %s", kindOf(v))
			return
		}
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			d.add(path, "not an RFC 3339 time: %q", s)
		}
		return
	case t == rawType:
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v == nil {
			return
		}
		d.shape(path, t.Elem(), v)
	case reflect.Interface:
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			d.add(path, "want an object, got %s", kindOf(v))
			return
		}
		fields := jsonFields(t)
		for _, name := range required[t] {
			if _, ok := obj[name]; !ok || obj[name] == nil {
				d.add(join(path, name), "missing")
			}
		}
		for _, k := range sortedKeys(obj) {
			f, ok := fields[k]
			if !ok {
				if d.strict {
					d.add(join(path, k), "unknown member%s", suggestion(k, fields))
				}
				continue
			}
			if obj[k] == nil && (f.Kind() == reflect.Struct && f != timeType) {
				d.add(join(path, k), "want an object, got null")
				continue
			}
			d.shape(join(path, k), f, obj[k])
		}
	case reflect.Map:
		if v == nil {
			return
		}
		obj, ok := v.(map[string]any)
		if !ok {
			d.add(path, "want an object, got %s", kindOf(v))
			return
		}
		for _, k := range sortedKeys(obj) {
			d.shape(join(path, k), t.Elem(), obj[k])
		}
	case reflect.Slice:
		if v == nil {
			return
		}
		if t.Elem().Kind() == reflect.Uint8 {
			if _, ok := v.(string); !ok {
				d.add(path, "want a base64 string, got %s", kindOf(v))
			}
			return
		}
		arr, ok := v.([]any)
		if !ok {
			d.add(path, "want an array, got %s", kindOf(v))
			return
		}
		for i, e := range arr {
			d.shape(fmt.Sprintf("%s[%d]", path, i), t.Elem(), e)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			d.add(path, "want a string, got %s", kindOf(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			d.add(path, "want true or false, got %s", kindOf(v))
		}
	case reflect.Int, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			d.add(path, "want an integer, got %s", kindOf(v))
			return
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); err != nil || (t.Kind() == reflect.Int && !fitsInt(string(n))) {
			d.add(path, "want an integer, got %s", n)
		}
	case reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			d.add(path, "want a number, got %s", kindOf(v))
		}
	default:
		d.add(path, "cannot be read (Go type %s)", t)
	}
}

func fitsInt(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && int64(int(n)) == n
}

// jsonFields returns the JSON member names of struct t (with embedded
// structs' members promoted) and their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// suggestion names the known member a misspelt one is closest to, as the
// configuration and contract files do (yamlnode.Suggester), ignoring case.
func suggestion(k string, fields map[string]reflect.Type) string {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	return yamlnode.Suggester{Fold: strings.ToLower, MaxLen: 64}.Suggest(k, names)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// node checks what the types cannot say about n and its descendants.
func (d *decoder) node(path string, n *Node, depth int) {
	if n.Task == nil {
		return // reported as missing
	}
	if n.Timeline == nil {
		n.Timeline = []task.Record{}
	}
	t := n.Task
	if t.ID == "" {
		d.add(join(path, "task.id"), "missing: a task has an id")
	}
	if t.Agent == "" {
		d.add(join(path, "task.agent"), "missing: a task has an agent")
	}
	if !t.State.Valid() {
		d.add(join(path, "task.state"), "unknown state %q", t.State)
	}
	last := 0
	for i, r := range n.Timeline {
		p := fmt.Sprintf("%s[%d]", join(path, "timeline"), i)
		if r.TaskID != t.ID {
			d.add(p+".taskId", "record of task %q in the timeline of task %q", r.TaskID, t.ID)
		}
		if r.Seq <= last {
			d.add(p+".seq", "sequence number %d does not follow %d", r.Seq, last)
		}
		last = max(last, r.Seq)
		if !r.From.Valid() {
			d.add(p+".from", "unknown state %q", r.From)
		}
		if !r.To.Valid() {
			d.add(p+".to", "unknown state %q", r.To)
		}
		for j, e := range r.Evidence {
			ep := fmt.Sprintf("%s.evidence[%d]", p, j)
			if e.Step == "" {
				d.add(ep+".step", "missing: evidence names the pipeline step that recorded it")
			}
			if e.Kind == "" {
				d.add(ep+".kind", "missing: evidence has a kind")
			}
		}
	}
	if len(n.Children) == 0 {
		n.Children = nil
		return
	}
	if depth >= MaxDepth {
		d.add(join(path, "children"), "children nested deeper than %d levels", MaxDepth)
		return
	}
	steps := map[string]int{}
	for i, k := range n.Children {
		p := fmt.Sprintf("%s[%d]", join(path, "children"), i)
		if k == nil {
			d.add(p, "want an object, got null")
			continue
		}
		if k.Task != nil {
			env := k.Task.Envelope
			if env.ParentTaskID != t.ID {
				d.add(p+".task.envelope.parentTaskId", "%q, want the parent's id %q", env.ParentTaskID, t.ID)
			}
			if env.Step == "" {
				d.add(p+".task.envelope.step", "missing: a child names the step it performs")
			} else if j, dup := steps[env.Step]; dup {
				d.add(p+".task.envelope.step", "step %q is also children[%d]'s", env.Step, j)
			} else {
				steps[env.Step] = i
			}
		}
		d.node(p, k, depth+1)
	}
}
