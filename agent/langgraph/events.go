package langgraph

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pactum/pactum/internal/lgstate"
)

// maxEventBytes bounds one server-sent event (its data lines together); a
// larger one fails the attempt. Final states with long conversations are
// the largest events.
const maxEventBytes = 32 << 20

// event is one server-sent event of a run stream.
type event struct {
	// Name is the event field: the stream mode ("values", "messages",
	// "updates", ...), "metadata", "error" or "end". A subgraph's events
	// are named "mode|namespace".
	Name string
	// Data is the data lines joined by newlines: JSON.
	Data string
}

var errEventTooLarge = errors.New("a server-sent event exceeds 32 MiB")

// readSSE calls on with each event in r
// (https://html.spec.whatwg.org/multipage/server-sent-events.html). Events
// without data are skipped; an event cut off by the end of the stream
// still counts.
func readSSE(r io.Reader, on func(event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventBytes)
	var (
		name string
		data strings.Builder
		has  bool
	)
	dispatch := func() error {
		if !has {
			name = ""
			return nil
		}
		ev := event{Name: name, Data: data.String()}
		name, has = "", false
		data.Reset()
		return on(ev)
	}
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if err := dispatch(); err != nil {
				return err
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment, e.g. a heartbeat
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			name = value
		case "data":
			if has {
				data.WriteByte('\n')
			}
			if data.Len()+len(value) > maxEventBytes {
				return errEventTooLarge
			}
			data.WriteString(value)
			has = true
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return errEventTooLarge
		}
		return err
	}
	return dispatch()
}

// interrupt is a pending interrupt of a graph: what it asks the caller.
type interrupt struct {
	ID    string          `json:"id,omitempty"`
	Value json.RawMessage `json:"value"`
}

// streamError is the data of an "error" event.
type streamError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

func (e streamError) String() string {
	switch {
	case e.Error != "" && e.Message != "":
		return e.Error + ": " + e.Message
	case e.Message != "":
		return e.Message
	case e.Error != "":
		return e.Error
	}
	return "no details given"
}

// run is what the events of one run stream said.
type run struct {
	// ID is the run's id, from the "metadata" event.
	ID string
	// Values is the latest full state (a "values" event that is not only
	// an interrupt), nil before one.
	Values map[string]json.RawMessage
	// Interrupts are the pending interrupts the run ended with.
	Interrupts []interrupt
	// Err is set by an "error" event.
	Err *streamError

	// sent is the text of each message emitted so far (messages mode
	// sends the text so far, not the new piece).
	sent map[string]string

	// node, when set, is called with each node's state update as its
	// "updates" event arrives (the root graph's nodes only); seen names
	// the nodes it was called for. An error it returns ends the stream
	// and is kept in stop.
	node func(name string, update any) error
	seen map[string]bool
	stop error
}

// chunkFunc receives a piece of AI message text as the model writes it.
type chunkFunc func(text string) error

// handle takes in one event of the run stream. Malformed JSON in an event
// the runtime relies on is an error; events it does not use are ignored.
func (r *run) handle(ev event, chunk chunkFunc) error {
	name := ev.Name
	if strings.Contains(name, "|") {
		return nil // a subgraph's event; the root graph's state is the answer
	}
	switch name {
	case "metadata":
		var m struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
			return fmt.Errorf("metadata event: %w", err)
		}
		if m.RunID != "" {
			r.ID = m.RunID
		}
	case "values":
		var v map[string]json.RawMessage
		if err := json.Unmarshal([]byte(ev.Data), &v); err != nil {
			return fmt.Errorf("values event: %w", err)
		}
		if raw, ok := v["__interrupt__"]; ok {
			its, err := decodeInterrupts(raw)
			if err != nil {
				return fmt.Errorf("values event: %w", err)
			}
			r.addInterrupts(its)
			if len(v) == 1 {
				return nil
			}
			delete(v, "__interrupt__")
		}
		r.Values = v
	case "updates":
		var v map[string]json.RawMessage
		if err := json.Unmarshal([]byte(ev.Data), &v); err != nil {
			return fmt.Errorf("updates event: %w", err)
		}
		if raw, ok := v["__interrupt__"]; ok {
			its, err := decodeInterrupts(raw)
			if err != nil {
				return fmt.Errorf("updates event: %w", err)
			}
			r.addInterrupts(its)
		}
		return r.nodes(v)
	case "messages":
		// messages-tuple: [message chunk, metadata].
		var tuple []json.RawMessage
		if err := json.Unmarshal([]byte(ev.Data), &tuple); err != nil {
			return fmt.Errorf("messages event: %w", err)
		}
		if len(tuple) == 0 {
			return nil
		}
		m, err := decodeMessage(tuple[0])
		if err != nil {
			return fmt.Errorf("messages event: %w", err)
		}
		if m.isAI() {
			return emit(chunk, m.text())
		}
	case "messages/partial", "messages/complete":
		// messages: the messages so far, each with its whole text.
		var ms []json.RawMessage
		if err := json.Unmarshal([]byte(ev.Data), &ms); err != nil {
			return fmt.Errorf("%s event: %w", name, err)
		}
		for _, raw := range ms {
			m, err := decodeMessage(raw)
			if err != nil {
				return fmt.Errorf("%s event: %w", name, err)
			}
			if !m.isAI() {
				continue
			}
			text := m.text()
			if r.sent == nil {
				r.sent = map[string]string{}
			}
			// A text that is not the continuation of what was sent (the
			// server rewrote it) cannot be appended; the answer at the end
			// holds the final text either way.
			if done := r.sent[m.ID]; strings.HasPrefix(text, done) {
				if err := emit(chunk, text[len(done):]); err != nil {
					return err
				}
			}
			r.sent[m.ID] = text
		}
	case "error":
		var e streamError
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			// Not JSON: the text is the message.
			e = streamError{Message: ev.Data}
		}
		r.Err = &e
	}
	return nil
}

// nodes hands the node updates of one "updates" event to r.node, in the
// order of the nodes' names (nodes of one step run in parallel). An update
// of null is a node that has not run, as in a thread's history
// (lgstate.ThreadTask.Ran).
func (r *run) nodes(v map[string]json.RawMessage) error {
	if r.node == nil {
		return nil
	}
	names := make([]string, 0, len(v))
	for name := range v {
		if lgstate.UserNode(name) && name != "__interrupt__" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		var update any
		if err := json.Unmarshal(v[name], &update); err != nil {
			return fmt.Errorf("updates event: node %s: %w", name, err)
		}
		if update == nil {
			continue
		}
		if r.seen == nil {
			r.seen = map[string]bool{}
		}
		r.seen[name] = true
		if err := r.node(name, update); err != nil {
			r.stop = err
			return err
		}
	}
	return nil
}

// addInterrupts records interrupts not seen before: parallel nodes report
// theirs in separate updates, and the final values repeat them.
func (r *run) addInterrupts(its []interrupt) {
	for _, it := range its {
		seen := false
		for _, have := range r.Interrupts {
			if have.ID == it.ID && (it.ID != "" || bytes.Equal(have.Value, it.Value)) {
				seen = true
				break
			}
		}
		if !seen {
			r.Interrupts = append(r.Interrupts, it)
		}
	}
}

func emit(chunk chunkFunc, text string) error {
	if chunk == nil || text == "" {
		return nil
	}
	return chunk(text)
}

// decodeInterrupts reads the list of interrupts of "__interrupt__" (older
// servers send one object).
func decodeInterrupts(raw json.RawMessage) ([]interrupt, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var one interrupt
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, fmt.Errorf("__interrupt__: %w", err)
		}
		return []interrupt{one}, nil
	}
	var its []interrupt
	if err := json.Unmarshal(raw, &its); err != nil {
		return nil, fmt.Errorf("__interrupt__: %w", err)
	}
	return its, nil
}

// message is a LangChain message as the Agent Server serialises it.
type message struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func decodeMessage(raw json.RawMessage) (message, error) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		return message{}, err
	}
	return m, nil
}

// isAI reports whether the message is the model's (or a node's answer):
// type "ai" or "AIMessageChunk", or role "assistant"/"ai".
func (m message) isAI() bool {
	switch m.Type {
	case "ai", "AIMessage", "AIMessageChunk":
		return true
	case "":
		return m.Role == "assistant" || m.Role == "ai"
	}
	return false
}

// text returns the message's text: the content string, or the text blocks
// of a content list joined.
func (m message) text() string {
	return contentText(m.Content)
}

func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '[':
		var blocks []json.RawMessage
		if json.Unmarshal(raw, &blocks) != nil {
			return ""
		}
		var b strings.Builder
		for _, bl := range blocks {
			var s string
			if json.Unmarshal(bl, &s) == nil {
				b.WriteString(s)
				continue
			}
			var tb struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(bl, &tb) == nil && (tb.Type == "text" || tb.Type == "text_delta") {
				b.WriteString(tb.Text)
			}
		}
		return b.String()
	}
	return ""
}

// lastAIText returns the text of the last AI message in a state's
// "messages", and whether there is one.
func lastAIText(values map[string]json.RawMessage) (string, bool) {
	raw, ok := values["messages"]
	if !ok {
		return "", false
	}
	var ms []json.RawMessage
	if json.Unmarshal(raw, &ms) != nil {
		return "", false
	}
	for i := len(ms) - 1; i >= 0; i-- {
		m, err := decodeMessage(ms[i])
		if err == nil && m.isAI() {
			return m.text(), true
		}
	}
	return "", false
}
