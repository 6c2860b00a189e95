package parity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pactum/pactum/task"
)

// A Trace is one golden trace: steps run in order, each finished before the
// next starts, so that the audit log's global sequence is the same in every
// run. The file format is this struct as JSON; unknown fields are refused.
type Trace struct {
	// Description says what the trace proves.
	Description string `json:"description"`
	Steps       []Step `json:"steps"`
}

// Step operations.
const (
	opSubmit    = "submit"     // a new task (A2A SendMessage, MCP submit_task)
	opGet       = "get"        // read a task (A2A GetTask, MCP get_task)
	opCancel    = "cancel"     // cancel a task (A2A CancelTask, MCP cancel_task)
	opRetry     = "retry"      // retry a task (Coordinator.Retry on the A2A run, MCP retry_task)
	opWaitState = "wait_state" // poll with get until the task is in State
	opContinue  = "continue"   // answer a task in input_required (A2A SendMessage naming the task, MCP continue_task)
)

// A Step is one operation of a trace.
type Step struct {
	Op string `json:"op"`

	// submit: the agent, the input text and the envelope fields. MessageID
	// is required, so that both transports submit the same message (the
	// idempotency key defaults to it). continue takes text, message_id,
	// data and wait too: the answer to the task.
	Agent string `json:"agent,omitempty"`
	Text  string `json:"text,omitempty"`
	// Data, a JSON object, is sent as a structured-data part after the
	// text (A2A: a data part; MCP: the data argument). Numbers travel as
	// written.
	Data           json.RawMessage `json:"data,omitempty"`
	MessageID      string          `json:"message_id,omitempty"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	Actor          string          `json:"actor,omitempty"`
	Matter         string          `json:"matter,omitempty"`
	Resource       string          `json:"resource,omitempty"`
	PolicyRef      string          `json:"policy_ref,omitempty"`
	ApprovalRef    string          `json:"approval_ref,omitempty"`
	CorrelationID  string          `json:"correlation_id,omitempty"`
	ContextID      string          `json:"context_id,omitempty"`
	// Wait (submit, continue): A2A blocking SendMessage, MCP wait=true;
	// otherwise A2A returnImmediately, MCP wait=false.
	Wait bool `json:"wait,omitempty"`
	// As names the submitted task for later steps. Naming a task that an
	// earlier step named asserts that the submit answered that task (an
	// idempotent duplicate).
	As string `json:"as,omitempty"`

	// get, cancel, retry, wait_state, continue: the task, by the name a
	// submit gave it.
	Task string `json:"task,omitempty"`
	// cancel: the reason to record (A2A metadata.pactum.reason, MCP
	// reason); empty for the Coordinator's default.
	Reason string `json:"reason,omitempty"`
	// wait_state: the pactum state to wait for.
	State string `json:"state,omitempty"`

	// Expect is checked against the transport's answer.
	Expect *Expect `json:"expect,omitempty"`
}

// Expect is what a step's answer must say, in pactum's terms.
type Expect struct {
	State     string `json:"state,omitempty"`
	Rejected  *bool  `json:"rejected,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`
	// Attempt is the attempt within the current turn; AttemptsTotal the
	// attempts over all turns.
	Attempt       *int `json:"attempt,omitempty"`
	AttemptsTotal *int `json:"attempts_total,omitempty"`
	// Error is the domain error code the call must fail with (A2A: the
	// error's pactumCode; MCP: the tool error's code).
	Error string `json:"error,omitempty"`
}

// tracesDir holds the traces; goldenDir their canonical outcomes.
var (
	tracesDir = filepath.Join("testdata", "traces")
	goldenDir = filepath.Join("testdata", "golden")
)

// traceNames returns the names of the traces (file names without .json),
// sorted.
func traceNames() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(tracesDir, "*.json"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	slices.Sort(names)
	return names, nil
}

// loadTrace reads and checks the trace called name.
func loadTrace(name string) (*Trace, error) {
	data, err := os.ReadFile(filepath.Join(tracesDir, name+".json"))
	if err != nil {
		return nil, err
	}
	return parseTrace(data)
}

// parseTrace decodes a trace strictly and checks that its steps make sense.
func parseTrace(data []byte) (*Trace, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var tr Trace
	if err := dec.Decode(&tr); err != nil {
		return nil, fmt.Errorf("decode trace: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode trace: more than one JSON value")
	}
	if len(tr.Steps) == 0 {
		return nil, fmt.Errorf("trace has no steps")
	}
	named := map[string]bool{}
	for i, s := range tr.Steps {
		if err := s.check(named); err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i, s.Op, err)
		}
		if s.Op == opSubmit {
			named[s.As] = true
		}
	}
	return &tr, nil
}

func (s Step) check(named map[string]bool) error {
	// message: the fields of a message, which submit and continue send.
	message := s.Text != "" || s.Data != nil || s.MessageID != "" || s.Wait
	// envelope: the fields only submit takes.
	envelope := s.Agent != "" || s.IdempotencyKey != "" || s.Actor != "" || s.Matter != "" || s.Resource != "" ||
		s.PolicyRef != "" || s.ApprovalRef != "" || s.CorrelationID != "" || s.ContextID != "" || s.As != ""
	switch s.Op {
	case opSubmit:
		switch {
		case s.Agent == "" || s.Text == "":
			return fmt.Errorf("submit needs agent and text")
		case s.MessageID == "":
			return fmt.Errorf("submit needs message_id, so that both transports send the same message")
		case s.As == "":
			return fmt.Errorf("submit needs as, the name later steps use")
		case s.Task != "" || s.State != "" || s.Reason != "":
			return fmt.Errorf("submit takes no task, state or reason")
		}
		return s.checkData()
	case opContinue:
		switch {
		case envelope || s.State != "" || s.Reason != "":
			return fmt.Errorf("continue takes only task, text, message_id, data and wait")
		case s.Task == "":
			return fmt.Errorf("continue needs task")
		case !named[s.Task]:
			return fmt.Errorf("task %q is not named by an earlier submit", s.Task)
		case s.Text == "":
			return fmt.Errorf("continue needs text")
		case s.MessageID == "":
			return fmt.Errorf("continue needs message_id, so that both transports send the same message")
		}
		return s.checkData()
	case opGet, opCancel, opRetry, opWaitState:
		switch {
		case message || envelope:
			return fmt.Errorf("%s takes only task (and reason for cancel, state for wait_state)", s.Op)
		case s.Task == "":
			return fmt.Errorf("%s needs task", s.Op)
		case !named[s.Task]:
			return fmt.Errorf("task %q is not named by an earlier submit", s.Task)
		case s.Reason != "" && s.Op != opCancel:
			return fmt.Errorf("only cancel takes a reason")
		case (s.State != "") != (s.Op == opWaitState):
			return fmt.Errorf("wait_state, and only wait_state, takes state")
		}
		if s.Op == opWaitState {
			if _, err := task.ParseState(s.State); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown op %q (known: submit, get, cancel, retry, wait_state, continue)", s.Op)
}

// checkData checks that Data, when given, is a JSON object.
func (s Step) checkData() error {
	if s.Data == nil {
		return nil
	}
	_, err := s.dataObject()
	return err
}

// dataObject decodes Data as a JSON object, keeping numbers exactly as
// written (json.Number), for either transport to send.
func (s Step) dataObject() (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(s.Data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("data must be a JSON object: %s", s.Data)
	}
	return m, nil
}
