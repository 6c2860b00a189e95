package python

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The worker protocol: JSON lines, one message a line. pactum writes
// requests to the worker's standard input; the worker writes replies to
// its standard output. docs/runtimes.md ("python") describes it.

// Request ops.
const (
	opInvoke = "invoke"
	opCancel = "cancel"
	opPing   = "ping" // answered by pong from the event loop
)

// Reply ops.
const (
	opReady    = "ready"    // once, after the object was imported
	opFatal    = "fatal"    // once, instead of ready: the object cannot be used
	opChunk    = "chunk"    // a streamed piece of an invocation's answer
	opResult   = "result"   // an invocation's answer
	opError    = "error"    // an invocation raised an exception
	opCanceled = "canceled" // an invocation was canceled
	opPong     = "pong"     // the answer to a ping
)

// request is a line pactum writes.
type request struct {
	Op     string `json:"op"`
	ID     string `json:"id"`
	Stream bool   `json:"stream,omitempty"`
	Input  *input `json:"input,omitempty"`
}

// input is what an invocation gets.
type input struct {
	// Text is the attempt's request as one text (task.Request.Text).
	Text string `json:"text"`
	// Data is the message's first data part that holds a JSON object.
	Data json.RawMessage `json:"data,omitempty"`
	// History is the conversation before Text, oldest first.
	History   []turn `json:"history,omitempty"`
	ContextID string `json:"context_id,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
	// Resume says Text answers the question the object asked (an
	// input_required result): a LangGraph graph with a checkpointer
	// resumes its thread with it.
	Resume bool `json:"resume,omitempty"`
}

// turn is one earlier message of the conversation.
type turn struct {
	Role string `json:"role"` // "user" or "assistant"
	Text string `json:"text"`
}

// reply is a line the worker writes.
type reply struct {
	Op string `json:"op"`
	ID string `json:"id,omitempty"`
	// Text is a chunk's text.
	Text string `json:"text,omitempty"`
	// Output is a result's answer: a JSON value.
	Output json.RawMessage `json:"output,omitempty"`
	// InputRequired says a result's Output is a question to the caller:
	// the task waits for the reply (a LangGraph interrupt(), an
	// InputRequired exception).
	InputRequired bool `json:"input_required,omitempty"`
	// Error is an error's or a fatal's message (the last line of the
	// Python traceback); Type the exception's class.
	Error     string `json:"error,omitempty"`
	Type      string `json:"type,omitempty"`
	Traceback string `json:"traceback,omitempty"`
	// Ready's: what the worker found and runs.
	Framework string `json:"framework,omitempty"`
	Streaming bool   `json:"streaming,omitempty"`
	Python    string `json:"python,omitempty"`
	PID       int    `json:"pid,omitempty"`
	// Description is the first paragraph of a function's docstring.
	Description string `json:"description,omitempty"`
}

// errBadReply is wrapped by every error of decodeReply.
var errBadReply = errors.New("python: bad line from the worker")

// maxLine bounds one line from the worker.
const maxLine = 64 << 20

// decodeReply decodes and checks one line the worker wrote (without its
// newline).
func decodeReply(line []byte) (reply, error) {
	var r reply
	if len(line) > maxLine {
		return r, fmt.Errorf("%w: longer than %d bytes", errBadReply, maxLine)
	}
	d := json.NewDecoder(bytes.NewReader(line))
	if err := d.Decode(&r); err != nil {
		return reply{}, fmt.Errorf("%w: %w", errBadReply, err)
	}
	if d.More() {
		return reply{}, fmt.Errorf("%w: more than one value", errBadReply)
	}
	switch r.Op {
	case opReady, opFatal:
		if r.Op == opFatal && r.Error == "" {
			return reply{}, fmt.Errorf("%w: fatal without an error", errBadReply)
		}
		return r, nil
	case opChunk, opCanceled, opError, opPong:
	case opResult:
		if len(r.Output) == 0 {
			// "output": null decodes to the literal null, absent to nothing.
			r.Output = json.RawMessage("null")
		}
	default:
		return reply{}, fmt.Errorf("%w: unknown op %q", errBadReply, r.Op)
	}
	if r.ID == "" {
		return reply{}, fmt.Errorf("%w: %s without an id", errBadReply, r.Op)
	}
	if r.Op == opError && r.Error == "" {
		r.Error = "the Python code raised an exception"
	}
	return r, nil
}

// encodeRequest returns req as one line, newline included.
func encodeRequest(req *request) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(req); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
