package answer

import (
	"encoding/json"
	"fmt"

	"github.com/pactum/pactum/task"
)

// FromJSON returns the result for v, the answer picked from the JSON
// document doc. When ask is not nil and points to the boolean true in doc,
// the agent is asking for input: the result pauses the task in
// input_required with v as the question (see Question) and holds no
// artifacts. Otherwise it is Value(id, name, v). False, null or nothing at
// ask is an ordinary answer; any other value at ask is a permanent error,
// since the same agent output cannot read differently on a retry.
//
// Runtimes call it with ask set from their input_required setting, so that
// they read the flag the same way.
func FromJSON(id, name string, doc, v any, ask *Pointer) (*task.Result, error) {
	if ask != nil {
		asking, err := InputRequired(*ask, doc)
		if err != nil {
			return nil, err
		}
		if asking {
			return Question(v)
		}
	}
	return Value(id, name, v)
}

// InputRequired reports whether p points to the JSON boolean true in doc, a
// value decoded by encoding/json into any. The boolean false, null and a
// pointer that names nothing give false; any other value is a permanent
// error naming p and the type found.
func InputRequired(p Pointer, doc any) (bool, error) {
	v, ok := p.Lookup(doc)
	if !ok {
		return false, nil
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case nil:
		return false, nil
	}
	return false, task.Permanent(fmt.Errorf("input_required pointer %q names %s, want a boolean (true or false)", p, jsonType(v)))
}

// Question returns a result that pauses the task for input, with v, an
// answer decoded from JSON, as the agent's question: a string is a text
// part, an object or an array a data part, a number, boolean or null the
// text of its JSON. The question is the status message only; the result
// holds no artifacts.
func Question(v any) (*task.Result, error) {
	part, _, err := partOf(v)
	if err != nil {
		return nil, err
	}
	return &task.Result{
		InputRequired: true,
		Message:       &task.Message{ID: NewID(), Role: task.RoleAgent, Parts: []task.Part{part}},
	}, nil
}

// jsonType names the JSON type of v, with its article, for errors.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case json.Number, float64, float32, int, int64:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("a %T", v)
}
