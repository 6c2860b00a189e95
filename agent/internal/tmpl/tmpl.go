// Package tmpl fills runtime settings with values that are only known later:
// Go text/templates over the fields of one request (an exec command's
// arguments, a webhook's body), and ${VAR} references to pactum's own
// environment (exec env values, webhook header values).
package tmpl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/task"
)

// Data is what a template sees of one attempt.
type Data struct {
	// Input is the text of the newest user message; for an attempt after
	// feedback, the whole task as one text (task.Request.Text): the
	// turn's request, the rejected answer and what to fix.
	Input string
	// Original, Rejected and Feedback are the three parts of an attempt
	// after feedback, each as text (task.Render); on any other attempt
	// Original is Input and the other two are empty.
	Original string
	Rejected string
	Feedback string
	// TaskID and ContextID identify the task and its conversation.
	TaskID    string
	ContextID string
	// Attempt counts the task's attempts, from 1.
	Attempt int
	// Action and Actor come from the task's envelope.
	Action string
	Actor  string
	// Data is the JSON of the first data part of the message the attempt
	// acts on (after feedback, the turn's request), or "null".
	Data string
	// Message is the newest user message; {{json .Message}} writes it.
	Message task.Message
	// Metadata is the envelope's metadata.
	Metadata map[string]any
	// History is the task's conversation so far, oldest first, the newest
	// user message included: after input_required, the earlier turns too.
	History []task.Message
	// Transcript is History as text, one "role: text" line per message
	// that has text (a message's text parts joined by newlines), for
	// agents that take the whole conversation as one prompt.
	Transcript string
	// Arguments is the arguments string of the workflow run the task is a
	// step of (pactum run --arguments, run_workflow's arguments), or of
	// any task whose input message carries one, under
	// metadata.pactum.arguments; "" when there is none.
	Arguments string
	// System, Tools and Model are what the agent definition the agent
	// serves gives it: its role body, its tools and its model, as the
	// runtime resolves it. Empty for an agent that is not a definition;
	// the runtime fills them in (NewData does not).
	System string
	Tools  List
	Model  string
}

// List is a list of names that a template writes comma-separated, with
// no spaces ({{.Tools}} is "Read,Grep,Glob", the form of claude's
// --allowedTools); {{range .Tools}} walks it and {{json .Tools}} writes a
// JSON array.
type List []string

// String joins l with commas.
func (l List) String() string { return strings.Join(l, ",") }

// argumentsKey is the key of a task's input metadata under which the
// arguments sit (metadata.pactum.arguments): package workflow's
// MetadataKey, which a run writes into each step's input.
const argumentsKey = "pactum"

// arguments returns the arguments string in's metadata carries, or "".
func arguments(in task.Message) string {
	md, _ := in.Metadata[argumentsKey].(map[string]any)
	s, _ := md["arguments"].(string)
	return s
}

// SetRole fills System, Tools and Model from the agent definition ro
// the agent serves (nothing when ro is nil); model is the model the
// runtime makes of the definition's (an exec runtime's models map).
func (d *Data) SetRole(ro *agent.Role, model func(string) string) {
	if ro == nil {
		return
	}
	d.System, d.Tools, d.Model = ro.System, List(ro.Tools), ro.Model
	if model != nil {
		d.Model = model(ro.Model)
	}
}

// NewData returns the template data of req.
func NewData(req *task.Request) Data {
	orig := req.Message
	d := Data{
		Input:     req.Message.Text(),
		TaskID:    req.TaskID,
		ContextID: req.ContextID,
		Attempt:   req.Attempt,
		Action:    req.Envelope.Action,
		Actor:     req.Envelope.Actor,
		Data:      "null",
		Message:   req.Message,
		Metadata:  req.Envelope.Metadata,
		History:   req.History,
		Arguments: arguments(req.Envelope.Input),
	}
	var tr strings.Builder
	for _, m := range req.History {
		text := m.Text()
		if text == "" {
			continue
		}
		if tr.Len() > 0 {
			tr.WriteByte('\n')
		}
		tr.WriteString(string(m.Role))
		tr.WriteString(": ")
		tr.WriteString(text)
	}
	d.Transcript = tr.String()
	if rt := req.Retry(); rt != nil {
		orig = rt.Request
		d.Input = rt.Text()
		d.Original = rt.Request.Text()
		if rt.Answer != nil {
			d.Rejected = task.Render(*rt.Answer)
		}
		d.Feedback = rt.FeedbackText()
	} else {
		d.Original = d.Input
	}
	for _, p := range orig.Parts {
		if p.Kind == task.PartData && len(p.Data) > 0 {
			d.Data = string(p.Data)
			break
		}
	}
	return d
}

// funcs are the functions every template may call.
var funcs = template.FuncMap{
	// json writes a value as JSON: {{json .Input}} is a quoted string.
	"json": func(v any) (string, error) {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil {
			return "", err
		}
		return strings.TrimSuffix(b.String(), "\n"), nil
	},
}

// Template is a parsed template over Data.
type Template struct {
	t *template.Template
	// literal is the text itself when it holds no actions, so executing it
	// costs nothing.
	literal string
	static  bool
}

// Parse parses text and executes it once on empty Data, so that a
// misspelled field is a configuration error rather than a failed task.
// Missing keys of .Metadata are not errors: {{json .Metadata.k}} is null.
func Parse(name, text string) (*Template, error) {
	if !strings.Contains(text, "{{") {
		return &Template{literal: text, static: true}, nil
	}
	t, err := template.New(name).Funcs(funcs).Parse(text)
	if err != nil {
		return nil, err
	}
	tp := &Template{t: t}
	if _, err := tp.Execute(Data{}); err != nil {
		return nil, err
	}
	return tp, nil
}

// Execute fills the template with d.
func (t *Template) Execute(d Data) (string, error) {
	if t.static {
		return t.literal, nil
	}
	var b strings.Builder
	if err := t.t.Execute(&b, d); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ExpandEnv replaces each ${NAME} in s with the value lookup returns for
// NAME. A "$" not followed by "{NAME}" is kept as it is. A name that lookup
// does not know is an error that names it (and never the value of anything).
func ExpandEnv(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 || !validName(s[i+2:i+2+end]) {
			b.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		name := s[i+2 : i+2+end]
		v, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", name)
		}
		b.WriteString(s[:i])
		b.WriteString(v)
		s = s[i+2+end+1:]
	}
}

func validName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// ExpandEnvList returns env's entries with ${VAR} references replaced from
// lookup (ExpandEnv), as NAME=value strings in name order. An error names
// the setting "env.NAME".
func ExpandEnvList(env map[string]string, lookup func(string) (string, bool)) ([]string, error) {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	var out []string
	for _, k := range names {
		v, err := ExpandEnv(env[k], lookup)
		if err != nil {
			return nil, fmt.Errorf("env.%s: %w", k, err)
		}
		out = append(out, k+"="+v)
	}
	return out, nil
}
