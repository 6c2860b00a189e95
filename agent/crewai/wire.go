package crewai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// This file decodes what a CrewAI AMP crew sends: the bodies of
// POST /kickoff, GET /status/{kickoff_id}, GET /inputs and POST /resume,
// and its error bodies. They are outside input: the decoders accept any
// bytes without panicking (FuzzDecode*), and refuse what the runtime
// cannot act on with an error naming the field.

// State is what a status response says of an execution, reduced to what
// the runtime does about it.
type State int

// The states of an execution.
const (
	// Running: poll again. The document's "running"; also the queued,
	// pending and started states crews report before they run.
	Running State = iota
	// Completed: the result is the answer.
	Completed
	// Failed: the crew reported an error.
	Failed
	// AwaitingFeedback: a task with human_input=True finished and the
	// crew waits for POST /resume.
	AwaitingFeedback
)

// The status names each state is read from, after normalizing (lower
// case, spaces and hyphens as underscores). The OpenAPI document names
// running, completed and error; the HITL guide calls the paused state
// "Pending Human Input". The others are names crews and clients are seen
// to use for the same states.
var stateNames = map[string]State{
	"running": Running, "queued": Running, "pending": Running, "started": Running, "in_progress": Running,
	"completed": Completed, "complete": Completed, "success": Completed, "succeeded": Completed, "finished": Completed,
	"error": Failed, "failed": Failed, "failure": Failed,
	"pending_human_input": AwaitingFeedback, "awaiting_human_feedback": AwaitingFeedback,
	"awaiting_human_input": AwaitingFeedback, "human_input_required": AwaitingFeedback,
}

// Status is a decoded status response.
type Status struct {
	// Name is the status as the crew wrote it.
	Name  string
	State State
	// Result is the completed execution's result, as JSON: the document's
	// object {"output": "…", "tasks": […]}, or a JSON string.
	Result json.RawMessage
	// Output is the result's final output text (result.output, or the
	// string result); "" when there is none.
	Output string
	// Error is the failed execution's error message.
	Error string
	// Task is the task awaiting feedback (task_id, current_task, or the
	// last task result's task_id).
	Task string
	// TaskOutput is the output of the task awaiting feedback, what the
	// human is asked to review.
	TaskOutput string
}

// statusWire is the union of the document's ExecutionRunning,
// ExecutionCompleted and ExecutionError, plus the fields a paused
// execution may carry.
type statusWire struct {
	Status      *string         `json:"status"`
	State       *string         `json:"state"`
	CurrentTask string          `json:"current_task"`
	TaskID      string          `json:"task_id"`
	TaskOutput  json.RawMessage `json:"task_output"`
	Output      json.RawMessage `json:"output"`
	Result      json.RawMessage `json:"result"`
	Error       json.RawMessage `json:"error"`
}

// resultWire is the document's ExecutionCompleted.result.
type resultWire struct {
	Output json.RawMessage `json:"output"`
	Tasks  []struct {
		TaskID string          `json:"task_id"`
		Output json.RawMessage `json:"output"`
	} `json:"tasks"`
}

// DecodeStatus decodes the body of GET /status/{kickoff_id}.
func DecodeStatus(b []byte) (*Status, error) {
	var w statusWire
	if err := decodeObject(b, &w); err != nil {
		return nil, fmt.Errorf("status response: %w", err)
	}
	name := w.Status
	if name == nil {
		name = w.State
	}
	if name == nil {
		return nil, errors.New(`status response: no "status"`)
	}
	st, ok := stateNames[normalize(*name)]
	if !ok {
		return nil, fmt.Errorf("status response: unknown status %q", clip(*name))
	}
	s := &Status{Name: *name, State: st}
	var res resultWire
	if isNull(w.Result) {
		w.Result = nil
	} else {
		s.Result = w.Result
		if str, ok := jsonString(w.Result); ok {
			s.Output = str
		} else if err := json.Unmarshal(w.Result, &res); err != nil {
			return nil, fmt.Errorf(`status response: "result" is neither an object nor a string`)
		} else {
			s.Output = text(res.Output)
		}
	}
	switch st {
	case Completed:
		if s.Result == nil {
			// Some crews put the output next to the status.
			if isNull(w.Output) {
				return nil, fmt.Errorf("status response: %q with no result", clip(*name))
			}
			s.Result = w.Output
			s.Output = text(w.Output)
		}
	case Failed:
		s.Error = text(w.Error)
		if s.Error == "" {
			s.Error = "the crew reported an error without a message"
		}
	case AwaitingFeedback:
		s.Task = firstNonEmpty(w.TaskID, w.CurrentTask)
		s.TaskOutput = firstNonEmpty(text(w.TaskOutput), text(w.Output))
		if n := len(res.Tasks); n > 0 {
			last := res.Tasks[n-1]
			s.Task = firstNonEmpty(s.Task, last.TaskID)
			s.TaskOutput = firstNonEmpty(s.TaskOutput, text(last.Output))
		}
		s.TaskOutput = firstNonEmpty(s.TaskOutput, s.Output)
		if s.Task == "" {
			return nil, fmt.Errorf("status response: %q names no task (task_id or current_task) to resume", clip(*name))
		}
	}
	return s, nil
}

// DecodeKickoff decodes the body of POST /kickoff: its kickoff_id.
func DecodeKickoff(b []byte) (string, error) {
	var w struct {
		KickoffID *string `json:"kickoff_id"`
	}
	if err := decodeObject(b, &w); err != nil {
		return "", fmt.Errorf("kickoff response: %w", err)
	}
	if w.KickoffID == nil || *w.KickoffID == "" {
		return "", errors.New(`kickoff response: no "kickoff_id"`)
	}
	if strings.ContainsAny(*w.KickoffID, "/?#%") || !printable(*w.KickoffID) || len(*w.KickoffID) > 256 {
		// It goes into the status URL's path.
		return "", fmt.Errorf("kickoff response: kickoff_id %q is not a usable id", clip(*w.KickoffID))
	}
	return *w.KickoffID, nil
}

// DecodeInputs decodes the body of GET /inputs: the names of the crew's
// required inputs.
func DecodeInputs(b []byte) ([]string, error) {
	var w struct {
		Inputs *[]string `json:"inputs"`
	}
	if err := decodeObject(b, &w); err != nil {
		return nil, fmt.Errorf("inputs response: %w", err)
	}
	if w.Inputs == nil {
		return nil, errors.New(`inputs response: no "inputs"`)
	}
	return *w.Inputs, nil
}

// DecodeResume decodes the body of POST /resume: its status (resumed,
// retrying or completed in the document).
func DecodeResume(b []byte) (string, error) {
	var w struct {
		Status string `json:"status"`
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "", nil
	}
	if err := decodeObject(b, &w); err != nil {
		return "", fmt.Errorf("resume response: %w", err)
	}
	return w.Status, nil
}

// ErrorBody is the document's Error and ValidationError: what a crew
// answers with a 4xx or 5xx.
type ErrorBody struct {
	Error   string
	Message string
	// Missing are the missing inputs a 422 names (details.missing_inputs).
	Missing []string
}

// DecodeError decodes an error response; ok is false when b is not one.
func DecodeError(b []byte) (e ErrorBody, ok bool) {
	var w struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Details struct {
			MissingInputs []string `json:"missing_inputs"`
		} `json:"details"`
	}
	if decodeObject(b, &w) != nil {
		return ErrorBody{}, false
	}
	e = ErrorBody{Error: text(w.Error), Message: firstNonEmpty(text(w.Message), text(w.Detail)), Missing: w.Details.MissingInputs}
	return e, e.Error != "" || e.Message != ""
}

// String returns the error as one line: "Error: message".
func (e ErrorBody) String() string {
	var parts []string
	for _, s := range []string{e.Error, e.Message} {
		if s != "" {
			parts = append(parts, clip(s))
		}
	}
	s := strings.Join(parts, ": ")
	if len(e.Missing) > 0 {
		s += fmt.Sprintf(" (missing inputs: %s)", strings.Join(e.Missing, ", "))
	}
	return s
}

// decodeObject decodes one JSON object into v; an array, a scalar,
// trailing data or a field of the wrong type is an error.
func decodeObject(b []byte, v any) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return errors.New("not a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("field %q: want %s, got %s", te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if d.More() {
		return errors.New("invalid JSON: more than one value")
	}
	return nil
}

// text returns a JSON string's value, or another JSON value's compact
// text; "" for none and null.
func text(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	if s, ok := jsonString(raw); ok {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return ""
	}
	return b.String()
}

func jsonString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func normalize(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer(" ", "_", "-", "_").Replace(s)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x21 || r == 0x7f {
			return false
		}
	}
	return true
}

// clip bounds a value the crew sent before it goes into an error.
func clip(s string) string {
	const n = 200
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
