package parity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/task"
)

// The transports a trace runs over.
const (
	viaA2A = "a2a"
	viaMCP = "mcp"
)

const (
	// runTimeout bounds one run of one trace.
	runTimeout = 45 * time.Second
	// waitStateTimeout bounds one wait_state step; pollEvery is its pace.
	waitStateTimeout = 20 * time.Second
	pollEvery        = 10 * time.Millisecond
	// maxAudit bounds the audit entries read after a run.
	maxAudit = 10000
)

// runTrace runs tr over transport on a fresh node and returns the
// normalised canonical outcome as indented JSON. mutateMCP, when set,
// alters MCP tool arguments before they are sent.
func runTrace(t *testing.T, name string, tr *Trace, transport string, mutateMCP func(string, map[string]any)) ([]byte, error) {
	t.Helper()
	n := startNode(t, "parity-"+transport)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	var d driver
	switch transport {
	case viaA2A:
		d = newA2ADriver(n)
	case viaMCP:
		md, err := newMCPDriver(ctx, n, mutateMCP)
		if err != nil {
			return nil, err
		}
		d = md
	default:
		return nil, fmt.Errorf("unknown transport %q", transport)
	}
	defer d.close()
	r := &runner{d: d, ids: map[string]string{}, agents: map[string]string{}, continued: map[string]bool{}}
	for i, s := range tr.Steps {
		if err := r.step(ctx, i, s); err != nil {
			return nil, fmt.Errorf("%s: step %d (%s): %w", transport, i, s.Op, err)
		}
	}
	doc, err := canonical(ctx, name, n.store, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", transport, err)
	}
	return marshal(doc)
}

// runner runs a trace's steps over one driver and keeps what the
// transport answered.
type runner struct {
	d      driver
	ids    map[string]string // task name → task id
	agents map[string]string // task name → agent
	order  []string          // task names, in the order submits named them
	// continued holds the names of the tasks a continue step addressed.
	continued map[string]bool
	// answers are the answers to the steps, in order.
	answers []Answer
}

func (r *runner) step(ctx context.Context, i int, s Step) error {
	name := s.Task
	id, agent := r.ids[name], r.agents[name]
	var a answer
	var err error
	switch s.Op {
	case opSubmit:
		name = s.As
		a, err = r.d.submit(ctx, s)
		if err == nil {
			if prev, ok := r.ids[name]; ok && prev != a.TaskID {
				return fmt.Errorf("submit answered task %s, want %s (the task %q named earlier: a duplicate)", a.TaskID, prev, name)
			}
			if _, ok := r.ids[name]; !ok {
				r.order = append(r.order, name)
			}
			r.ids[name], r.agents[name] = a.TaskID, s.Agent
			id = a.TaskID
		}
	case opGet:
		a, err = r.d.get(ctx, id, agent)
	case opCancel:
		a, err = r.d.cancel(ctx, id, agent, s.Reason)
	case opRetry:
		a, err = r.d.retry(ctx, id, agent)
	case opWaitState:
		a, err = r.waitState(ctx, id, agent, s.State)
	case opContinue:
		r.continued[name] = true
		a, err = r.d.continueTask(ctx, id, agent, s)
	default:
		return fmt.Errorf("unknown op %q", s.Op)
	}
	rec := Answer{Step: i, Op: s.Op, Task: name}
	var ce *callError
	switch {
	case errors.As(err, &ce):
		rec.Error = ce.Code
	case err != nil:
		return err
	case a.TaskID != id:
		return fmt.Errorf("the answer is about task %s, want %s (%s)", a.TaskID, id, name)
	default:
		rec.State, rec.Rejected, rec.ErrorCode, rec.Reason = a.State, a.Rejected, a.ErrorCode, a.Reason
		rec.Attempt, rec.AttemptsTotal = a.Attempt, a.AttemptsTotal
		if (s.Op == opSubmit || s.Op == opContinue) && !s.Wait && !task.State(a.State).Settled() {
			// Whether a submit (or continue) that does not wait answers
			// in_progress (a free worker claimed the task in the call's
			// own transaction) or queued (the dispatcher claims it a
			// moment later) depends on the workers at that instant, on
			// either transport. The records are the same either way.
			rec.State, rec.Attempt, rec.AttemptsTotal = notFinal, 0, 0
		}
	}
	r.answers = append(r.answers, rec)
	if ce != nil && (s.Expect == nil || s.Expect.Error == "") {
		return fmt.Errorf("unexpected error: %w", ce)
	}
	return s.Expect.check(rec)
}

// waitState polls the task with get until it is in state.
func (r *runner) waitState(ctx context.Context, id, agent, state string) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, waitStateTimeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		a, err := r.d.get(ctx, id, agent)
		if err != nil {
			return a, err
		}
		if a.State == state {
			return a, nil
		}
		select {
		case <-ctx.Done():
			return a, fmt.Errorf("task %s is still %s, want %s: %w", id, a.State, state, ctx.Err())
		case <-tick.C:
		}
	}
}

// notFinal stands for the state of a task a submit or continue that does
// not wait answered before it was final (queued or in_progress).
const notFinal = "<not final>"

// check compares a step's answer with the expectation; a nil Expect
// accepts any answer.
func (e *Expect) check(a Answer) error {
	if e == nil {
		return nil
	}
	var bad []string
	if e.Error != a.Error {
		bad = append(bad, fmt.Sprintf("error %q, want %q", a.Error, e.Error))
	}
	if e.State != "" && e.State != a.State {
		bad = append(bad, fmt.Sprintf("state %q, want %q", a.State, e.State))
	}
	if e.Rejected != nil && *e.Rejected != a.Rejected {
		bad = append(bad, fmt.Sprintf("rejected %v, want %v", a.Rejected, *e.Rejected))
	}
	if e.ErrorCode != "" && e.ErrorCode != a.ErrorCode {
		bad = append(bad, fmt.Sprintf("error_code %q, want %q", a.ErrorCode, e.ErrorCode))
	}
	if e.Attempt != nil && *e.Attempt != a.Attempt {
		bad = append(bad, fmt.Sprintf("attempt %d, want %d", a.Attempt, *e.Attempt))
	}
	if e.AttemptsTotal != nil && *e.AttemptsTotal != a.AttemptsTotal {
		bad = append(bad, fmt.Sprintf("attempts_total %d, want %d", a.AttemptsTotal, *e.AttemptsTotal))
	}
	if len(bad) > 0 {
		return fmt.Errorf("unexpected answer: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Canonical is what a run leaves behind, normalised: the golden file's
// content.
type Canonical struct {
	Trace string `json:"trace"`
	// Answers are what the transport answered to each step.
	Answers []Answer `json:"answers"`
	// Records are the execution records of every task, task by task in
	// the order the trace named them, each in sequence order.
	Records []Record `json:"records"`
	// Audit is the whole audit log in sequence order.
	Audit []AuditEntry `json:"audit"`
	// Conversations are the stored messages of every task a continue
	// step addressed, in the order the trace named the tasks: the
	// answers a continue delivers are recorded nowhere else (neither in
	// the records nor in the audit log). Absent when no step continues
	// a task.
	Conversations []Conversation `json:"conversations,omitempty"`
	// Chain is audit.Verify's verdict on the log.
	Chain Chain `json:"audit_chain"`
}

// Answer is a step's answer in pactum's terms.
type Answer struct {
	Step      int    `json:"step"`
	Op        string `json:"op"`
	Task      string `json:"task"`
	State     string `json:"state,omitempty"`
	Rejected  bool   `json:"rejected,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Attempt is the attempt within the current turn, AttemptsTotal the
	// attempts over all turns.
	Attempt       int `json:"attempt,omitempty"`
	AttemptsTotal int `json:"attempts_total,omitempty"`
	// Error is the domain code of an error answer.
	Error string `json:"error,omitempty"`
}

// Record is a task.Record without its time and node.
type Record struct {
	Task          string `json:"task"`
	Seq           int    `json:"seq"`
	From          string `json:"from"`
	To            string `json:"to"`
	Attempt       int    `json:"attempt"`
	Reason        string `json:"reason,omitempty"`
	ErrorCode     string `json:"error_code,omitempty"`
	PolicyVersion string `json:"policy_version,omitempty"`
}

// AuditEntry is a task.AuditEntry without its time and hashes, its data
// normalised.
type AuditEntry struct {
	Seq   int64  `json:"seq"`
	Kind  string `json:"kind"`
	Task  string `json:"task,omitempty"`
	Actor string `json:"actor,omitempty"`
	Data  any    `json:"data,omitempty"`
}

// Conversation is a task's history: its messages as stored, in order,
// normalised.
type Conversation struct {
	Task     string `json:"task"`
	Messages []any  `json:"messages"`
}

// Chain is the outcome of audit.Verify.
type Chain struct {
	OK      bool `json:"ok"`
	Entries int  `json:"entries"`
}

// canonical reads what the run left in st, straight from the store, and
// normalises it.
func canonical(ctx context.Context, trace string, st task.Store, r *runner) (*Canonical, error) {
	rep, err := audit.Verify(ctx, st)
	if err != nil {
		return nil, err
	}
	if !rep.OK {
		return nil, fmt.Errorf("audit chain broken at entry %d: %s", rep.FirstBad, rep.Problem)
	}
	entries, err := st.AuditEntries(ctx, 0, maxAudit)
	if err != nil {
		return nil, err
	}
	if len(entries) != rep.Entries {
		return nil, fmt.Errorf("read %d audit entries, Verify checked %d", len(entries), rep.Entries)
	}
	// Name the tasks: the trace's names, then any task the trace did not
	// name (a transport that started one too many) in audit order.
	names := map[string]string{}
	var order []string
	for _, name := range r.order {
		names[r.ids[name]] = name
		order = append(order, r.ids[name])
	}
	for _, e := range entries {
		if _, ok := names[e.TaskID]; e.TaskID != "" && !ok {
			names[e.TaskID] = fmt.Sprintf("unnamed-%d", len(order)-len(r.order)+1)
			order = append(order, e.TaskID)
		}
	}
	n := &normaliser{ids: map[string]string{}}
	for _, id := range order {
		n.ids[id] = "<task:" + names[id] + ">"
	}
	for _, id := range order {
		t, err := st.GetTask(ctx, id, 0)
		if err != nil {
			return nil, fmt.Errorf("read task %s: %w", id, err)
		}
		if _, ok := n.ids[t.ContextID]; !ok {
			n.ids[t.ContextID] = "<context:" + names[id] + ">"
		}
	}

	doc := &Canonical{Trace: trace, Records: []Record{}, Audit: []AuditEntry{}, Chain: Chain{OK: rep.OK, Entries: rep.Entries}}
	for _, a := range r.answers {
		a.Reason = n.str(a.Reason)
		doc.Answers = append(doc.Answers, a)
	}
	for _, id := range order {
		recs, err := st.Records(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("read the records of %s: %w", id, err)
		}
		for _, rec := range recs {
			doc.Records = append(doc.Records, Record{
				Task: names[id], Seq: rec.Seq, From: string(rec.From), To: string(rec.To), Attempt: rec.Attempt,
				Reason: n.str(rec.Reason), ErrorCode: string(rec.ErrorCode), PolicyVersion: rec.PolicyVersion,
			})
		}
	}
	for _, id := range order {
		if !r.continued[names[id]] {
			continue
		}
		t, err := st.GetTask(ctx, id, -1)
		if err != nil {
			return nil, fmt.Errorf("read task %s: %w", id, err)
		}
		c := Conversation{Task: names[id], Messages: []any{}}
		for i, m := range t.History {
			v, err := jsonValue(m)
			if err != nil {
				return nil, fmt.Errorf("task %s: message %d: %w", id, i, err)
			}
			c.Messages = append(c.Messages, n.value(v))
		}
		doc.Conversations = append(doc.Conversations, c)
	}
	for _, e := range entries {
		ae := AuditEntry{Seq: e.Seq, Kind: string(e.Kind), Task: names[e.TaskID], Actor: e.Actor}
		if len(e.Data) > 0 {
			dec := json.NewDecoder(bytes.NewReader(e.Data))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, fmt.Errorf("audit entry %d: data is not JSON: %w", e.Seq, err)
			}
			ae.Data = n.value(v)
		}
		doc.Audit = append(doc.Audit, ae)
	}
	return doc, nil
}

// jsonValue returns v encoded as JSON and decoded again, numbers kept as
// written.
func jsonValue(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// marshal encodes doc as the golden files hold it: indented, keys sorted,
// no HTML escaping, a final newline.
func marshal(doc any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// normaliser replaces what differs between runs of the same trace by
// placeholders: task and context ids by the trace's names, other generated
// ids, times, node names and lease owners by fixed strings.
type normaliser struct {
	ids map[string]string // id → placeholder
}

var uuidRE = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// value normalises a decoded JSON value, recursively.
func (n *normaliser) value(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			s, isString := e.(string)
			switch {
			case k == "node" && isString && s != "":
				out[k] = "<node>"
			case k == "leaseOwner" && isString && s != "":
				out[k] = "<lease-owner>"
			default:
				out[k] = n.value(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = n.value(e)
		}
		return out
	case string:
		return n.str(v)
	}
	return v
}

// str normalises one string: known ids anywhere in it become their
// placeholders, other UUIDs "<id>", and a string that is a timestamp
// "<time>".
func (n *normaliser) str(s string) string {
	if s == "" {
		return s
	}
	if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return "<time>"
	}
	return uuidRE.ReplaceAllStringFunc(s, func(id string) string {
		if p, ok := n.ids[id]; ok {
			return p
		}
		return "<id>"
	})
}
