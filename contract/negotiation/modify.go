package negotiation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pactum/pactum/contract"
)

// Op is what a Modification does at its path.
type Op string

// Modification operations.
const (
	// OpAdd adds Value at Path: a member an object does not have yet, or
	// an array element at an index ("-" appends).
	OpAdd Op = "add"
	// OpRemove removes what is at Path.
	OpRemove Op = "remove"
	// OpChange replaces what is at Path with Value.
	OpChange Op = "change"
)

// MaxModifications bounds the modifications of one round.
const MaxModifications = 256

// maxReason bounds a modification's reason, in bytes.
const maxReason = 1024

// Modification is one change to a contract: an operation at a JSON
// pointer (RFC 6901) into the contract's JSON, the value it adds or
// changes to, and why.
type Modification struct {
	Op     Op              `json:"op"`
	Path   string          `json:"path"`
	Value  json.RawMessage `json:"value,omitempty"`
	Reason string          `json:"reason"`
}

// check reports what is wrong with m on its own, before it is applied.
func (m *Modification) check() error {
	switch m.Op {
	case OpAdd, OpChange:
		if len(m.Value) == 0 {
			return fmt.Errorf("%s needs a value", m.Op)
		}
		if !json.Valid(m.Value) {
			return errors.New("value is not valid JSON")
		}
	case OpRemove:
		if len(m.Value) != 0 {
			return errors.New("remove takes no value")
		}
	default:
		return fmt.Errorf("op %q is not add, remove or change", m.Op)
	}
	if strings.TrimSpace(m.Reason) == "" {
		return errors.New("reason is required: say why")
	}
	if len(m.Reason) > maxReason {
		return fmt.Errorf("reason is longer than %d bytes", maxReason)
	}
	if m.Path == "" {
		return errors.New("path must point into the contract, not at it (\"/steps/0/agent\")")
	}
	_, err := parsePointer(m.Path)
	return err
}

// ModificationError is Apply's error: the modification (its index and
// path) that could not be applied, or the contract it produced, with what
// is wrong.
type ModificationError struct {
	// Index is the modification's index in the round; -1 when the
	// modifications applied but the contract they produce is invalid.
	Index int
	// Path is the modification's path, or the contract's field path of
	// the first problem (Errors holds them all).
	Path string
	Msg  string
	// Errors are the resulting contract's problems (Index -1).
	Errors contract.Errors
}

func (e *ModificationError) Error() string {
	if e.Index < 0 {
		return "the modified contract is invalid: " + e.Errors.Error()
	}
	return fmt.Sprintf("modifications[%d] (%s): %s", e.Index, e.Path, e.Msg)
}

// Apply applies mods, in order, to c's canonical JSON and returns the
// contract they produce, which must parse, validate (contract.Validate)
// and compile (contract.Compile). c is not changed. The error is a
// *ModificationError naming the modification or the contract's field.
func Apply(c *contract.AgentContract, mods []Modification) (*contract.AgentContract, *contract.Compiled, error) {
	if len(mods) > MaxModifications {
		return nil, nil, &ModificationError{Index: MaxModifications, Msg: fmt.Sprintf("more than %d modifications in one round", MaxModifications)}
	}
	canonical, err := contract.Canonical(c)
	if err != nil {
		return nil, nil, err
	}
	doc, err := decodeJSON(canonical)
	if err != nil {
		return nil, nil, err
	}
	for i := range mods {
		m := &mods[i]
		if err := m.check(); err != nil {
			return nil, nil, &ModificationError{Index: i, Path: m.Path, Msg: err.Error()}
		}
		var val any
		if len(m.Value) > 0 {
			if val, err = decodeJSON(m.Value); err != nil {
				return nil, nil, &ModificationError{Index: i, Path: m.Path, Msg: err.Error()}
			}
		}
		tokens, _ := parsePointer(m.Path)
		if doc, err = apply(doc, tokens, m.Op, val); err != nil {
			return nil, nil, &ModificationError{Index: i, Path: m.Path, Msg: err.Error()}
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, err
	}
	return parseContract(b)
}

// parseContract parses, validates and compiles a contract received as
// JSON, naming every problem (*ModificationError, Index -1).
func parseContract(b []byte) (*contract.AgentContract, *contract.Compiled, error) {
	_, compiled, err := contract.LoadBytes("contract", b, contract.ValidateOptions{})
	if err != nil {
		var ces contract.Errors
		if !errors.As(err, &ces) {
			ces = contract.Errors{{Msg: err.Error()}}
		}
		for i := range ces {
			ces[i].File, ces[i].Line = "", 0
		}
		return nil, nil, &ModificationError{Index: -1, Path: ces[0].Path, Msg: ces[0].Msg, Errors: ces}
	}
	return compiled.Contract(), compiled, nil
}

// decodeJSON decodes one JSON value, numbers kept exact.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// parsePointer splits a JSON pointer (RFC 6901) into its reference
// tokens, unescaped.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("path %q is not a JSON pointer: it must start with /", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		for j := 0; j < len(s); j++ {
			if s[j] == '~' && (j+1 == len(s) || (s[j+1] != '0' && s[j+1] != '1')) {
				return nil, fmt.Errorf("path %q: ~ must be followed by 0 or 1 (RFC 6901)", p)
			}
		}
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

// arrayIndex parses an array index token: "0" or digits without a
// leading zero, below n (at most n with end).
func arrayIndex(tok string, n int, end bool) (int, error) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') || strings.TrimLeft(tok, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not an array index", tok)
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i > n || (i == n && !end) {
		return 0, fmt.Errorf("index %s is out of range (length %d)", tok, n)
	}
	return i, nil
}

// apply applies op at tokens below doc and returns the new doc.
func apply(doc any, tokens []string, op Op, val any) (any, error) {
	if len(tokens) == 0 {
		return nil, errors.New("cannot modify the whole contract")
	}
	tok, rest := tokens[0], tokens[1:]
	switch d := doc.(type) {
	case map[string]any:
		cur, ok := d[tok]
		if len(rest) > 0 {
			if !ok {
				return nil, fmt.Errorf("no member %q", tok)
			}
			v, err := apply(cur, rest, op, val)
			if err != nil {
				return nil, err
			}
			d[tok] = v
			return d, nil
		}
		switch {
		case op == OpAdd && ok:
			return nil, fmt.Errorf("member %q exists already: change it", tok)
		case op != OpAdd && !ok:
			return nil, fmt.Errorf("no member %q", tok)
		case op == OpRemove:
			delete(d, tok)
		default:
			d[tok] = val
		}
		return d, nil
	case []any:
		if len(rest) > 0 {
			i, err := arrayIndex(tok, len(d), false)
			if err != nil {
				return nil, err
			}
			v, err := apply(d[i], rest, op, val)
			if err != nil {
				return nil, err
			}
			d[i] = v
			return d, nil
		}
		if op == OpAdd && tok == "-" {
			return append(d, val), nil
		}
		i, err := arrayIndex(tok, len(d), op == OpAdd)
		if err != nil {
			return nil, err
		}
		switch op {
		case OpAdd:
			d = append(d, nil)
			copy(d[i+1:], d[i:])
			d[i] = val
		case OpRemove:
			d = append(d[:i], d[i+1:]...)
		default:
			d[i] = val
		}
		return d, nil
	default:
		return nil, fmt.Errorf("%q is below a value that is neither an object nor an array", tok)
	}
}
