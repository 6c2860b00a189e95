package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// LocateDecodeError decodes raw into a new value of type t and, when that
// fails, returns the path of the innermost member that fails on its own
// (path names raw) and its error; "" when raw decodes. Objects are followed
// into struct fields (by JSON name) and map values, arrays into elements.
// It runs on the error path only.
func LocateDecodeError(t reflect.Type, raw json.RawMessage, path string) (string, error) {
	err := json.Unmarshal(raw, reflect.New(t).Interface())
	if err == nil {
		return "", nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) == nil {
			fields := jsonFields(t)
			for _, name := range slices.Sorted(maps.Keys(members)) {
				ft, ok := fields[name]
				if !ok {
					continue
				}
				if p, e := LocateDecodeError(ft, members[name], path+"."+name); p != "" {
					return p, e
				}
			}
		}
	case reflect.Map:
		var members map[string]json.RawMessage
		if t.Key().Kind() == reflect.String && json.Unmarshal(raw, &members) == nil {
			for _, name := range slices.Sorted(maps.Keys(members)) {
				if p, e := LocateDecodeError(t.Elem(), members[name], path+"."+name); p != "" {
					return p, e
				}
			}
		}
	case reflect.Slice:
		// Each element is tried as a one-element array of t, so that a
		// slice type that decodes itself (a2a-go's parts) decides.
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) == nil {
			for i, e := range elems {
				one := append(append([]byte{'['}, e...), ']')
				oneErr := json.Unmarshal(one, reflect.New(t).Interface())
				if oneErr == nil {
					continue
				}
				p := fmt.Sprintf("%s[%d]", path, i)
				if t.Elem().Kind() != reflect.Interface {
					if dp, de := LocateDecodeError(t.Elem(), e, p); dp != "" {
						return dp, de
					}
				}
				return p, decodeError(e, oneErr)
			}
		}
	}
	return path, decodeError(raw, err)
}

// decodeError words err, the error of decoding raw, for a caller: a
// mismatch of JSON kinds says what was sent and what is wanted.
func decodeError(raw json.RawMessage, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Type != nil && te.Field == "" {
		if want := wantKind(te.Type); want != "" {
			return fmt.Errorf("got %s, want %s", jsonKind(raw), want)
		}
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// wantKind names the JSON kind a value of Go type t is decoded from, or ""
// when the type decodes itself (its own error says more).
func wantKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map:
		return "an object"
	}
	return ""
}

// jsonFields maps the JSON member names of struct type t (exported fields,
// embedded structs flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			maps.Copy(out, jsonFields(f.Type))
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// jsonKind names the kind of JSON value raw is, for messages.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// ParamsError returns the InvalidParams error of raw (JSON that names the
// request's parameters: "params" of a JSON-RPC request, "body" of an
// HTTP+JSON one, root) that did not decode into a value of type t with
// err: it names the innermost member that does not decode, when one can be
// found, else it says what err says.
func ParamsError(t reflect.Type, raw json.RawMessage, root string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if t != nil && len(raw) > 0 {
		if path, perr := LocateDecodeError(t, raw, root); path != "" {
			msg = fmt.Sprintf("%s: %v", path, perr)
		}
	}
	return a2a.NewError(a2a.ErrInvalidParams, "invalid params: "+msg)
}
