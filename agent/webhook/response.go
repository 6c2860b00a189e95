package webhook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/pactum/pactum/agent/internal/answer"
	"github.com/pactum/pactum/task"
)

// readResponse turns a successful response into the attempt's result,
// emitting chunks for streamed responses when emit is not nil.
func (r *Runtime) readResponse(resp *http.Response, body io.Reader, emit task.Emit) (*task.Result, error) {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/event-stream":
		return r.readStream(emit, func(on func(string) error) error { return readSSE(body, on) })
	case mt == "application/x-ndjson" || mt == "application/jsonl" || mt == "application/json-lines":
		return r.readStream(emit, func(on func(string) error) error { return readJSONValues(json.NewDecoder(body), on) })
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return r.readJSON(body, emit)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	switch {
	case len(b) == 0:
		return &task.Result{}, nil
	case mt == "" && json.Valid(b):
		return r.readJSON(bytes.NewReader(b), nil)
	case mt == "" || strings.HasPrefix(mt, "text/"):
		return answer.Text(answer.NewID(), artifactName, string(b)), nil
	}
	// Anything else is a file.
	return &task.Result{Artifacts: []task.Artifact{{
		ID:    answer.NewID(),
		Name:  artifactName,
		Parts: []task.Part{{Kind: task.PartRaw, Raw: b, MediaType: mt}},
	}}}, nil
}

// readStream reads a stream of events with read, emitting each event's
// text as a chunk; the result holds all the text (nothing when there was
// none, like an empty body).
func (r *Runtime) readStream(emit task.Emit, read func(on func(data string) error) error) (*task.Result, error) {
	id := answer.NewID()
	stream := answer.NewStream(emit, id, artifactName)
	var all strings.Builder
	err := read(func(data string) error {
		text, err := r.chunkText(data)
		if err != nil || text == "" {
			return err
		}
		all.WriteString(text)
		return stream.Write(text)
	})
	if err != nil {
		return nil, err
	}
	if err := stream.Close(); err != nil {
		return nil, err
	}
	if all.Len() == 0 {
		return &task.Result{}, nil
	}
	return answer.Text(id, artifactName, all.String()), nil
}

// readJSON reads a JSON response. One document is the answer. Several
// documents in a row are a stream, as n8n sends when its webhook streams
// (it labels the stream application/json): the first document is held
// until the second shows which it is.
func (r *Runtime) readJSON(body io.Reader, emit task.Emit) (*task.Result, error) {
	dec := json.NewDecoder(body)
	dec.UseNumber()
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		if errors.Is(err, io.EOF) {
			return &task.Result{}, nil
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if !dec.More() {
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("invalid JSON after the first value: %v", err)
		}
		doc, err := answer.Decode(first)
		if err != nil {
			return nil, err
		}
		in, v, err := r.pick(doc)
		if err != nil {
			return nil, err
		}
		return answer.FromJSON(answer.NewID(), artifactName, in, v, r.ask)
	}
	return r.readStream(emit, func(on func(string) error) error {
		if err := on(string(first)); err != nil {
			return err
		}
		return readJSONValues(dec, on)
	})
}

// pick selects the answer in a JSON document. It also returns the value the
// pointers apply to, which the input_required pointer is looked up in too:
// the document itself with an answer pointer; without one, the single item
// of a one-element array, else the document.
func (r *Runtime) pick(doc any) (in, v any, err error) {
	if r.hasAnswer {
		v, ok := r.answer.Lookup(doc)
		if !ok {
			return nil, nil, fmt.Errorf("the response has no value at answer pointer %q", r.answer)
		}
		return doc, v, nil
	}
	in = doc
	if a, ok := doc.([]any); ok && len(a) == 1 {
		in = a[0] // n8n's "all incoming items" with one item
	}
	for _, p := range defaultAnswers {
		if v, ok := p.Lookup(in); ok {
			return in, v, nil
		}
	}
	return in, doc, nil
}

// chunkText returns the text one streamed event carries: for a JSON object
// the answer field (see Settings.Answer), for a JSON string its value,
// otherwise the data itself. Events without text give "". An n8n error
// event fails the attempt.
func (r *Runtime) chunkText(data string) (string, error) {
	t := strings.TrimSpace(data)
	switch {
	case t == "", t == "[DONE]":
		return "", nil
	case t[0] == '"':
		var s string
		if json.Unmarshal([]byte(t), &s) == nil {
			return s, nil
		}
	case t[0] == '{':
		var m map[string]any
		if json.Unmarshal([]byte(t), &m) != nil {
			break
		}
		if m["type"] == "error" {
			return "", fmt.Errorf("the stream reported an error: %s", excerpt([]byte(t)))
		}
		if r.hasAnswer {
			s, _ := lookupString(r.answer, m)
			return s, nil
		}
		for _, f := range chunkFields {
			if s, ok := m[f].(string); ok {
				return s, nil
			}
		}
		return "", nil
	}
	return data, nil
}

func lookupString(p answer.Pointer, doc any) (string, bool) {
	v, ok := p.Lookup(doc)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// readJSONValues calls on with each JSON value dec reads, until the end.
func readJSONValues(dec *json.Decoder, on func(string) error) error {
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("invalid JSON in stream: %w", err)
		}
		if err := on(string(v)); err != nil {
			return err
		}
	}
}

// readSSE calls on with the data of each server-sent event in r
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): the
// event's "data:" lines joined by newlines. Other fields and comments are
// ignored; an event cut off by the end of the stream still counts.
func readSSE(r io.Reader, on func(string) error) error {
	br := bufio.NewReader(r)
	var data strings.Builder
	has := false
	dispatch := func() error {
		if !has {
			return nil
		}
		d := data.String()
		data.Reset()
		has = false
		return on(d)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		eof := err != nil
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		switch {
		case line == "":
			if derr := dispatch(); derr != nil {
				return derr
			}
		case line[0] == ':':
			// comment
		default:
			field, value, _ := strings.Cut(line, ":")
			if field == "data" {
				if has {
					data.WriteByte('\n')
				}
				data.WriteString(strings.TrimPrefix(value, " "))
				has = true
			}
		}
		if eof {
			return dispatch()
		}
	}
}
