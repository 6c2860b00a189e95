// Package jsonenc appends JSON values to a byte slice exactly as
// encoding/json's Marshal writes them, without its reflection, for the
// encoders that write pactum's hot results field by field (a2aserver's
// answers and events, the store's records, messages and envelopes).
// What it does not write itself (floats in exponent form, values of other
// types) it leaves to encoding/json, so the bytes are always Marshal's;
// a value Marshal refuses is an error, and callers then encode the whole
// result with encoding/json to report its error.
package jsonenc

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"time"
)

// ErrUnsupported is returned for a value encoding/json refuses.
var ErrUnsupported = errors.New("jsonenc: value encoding/json refuses")

// String appends s as encoding/json writes a string: printable ASCII that
// needs no escape (encoding/json escapes <, > and & too) as it is,
// anything else through json.Marshal.
func String(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Strings appends ss as a JSON array of strings (null when nil).
func Strings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, s)
	}
	return append(b, ']')
}

// Time appends t as time.Time's MarshalJSON writes it (RFC 3339 with
// nanoseconds), and fails where it fails (a year outside 0–9999).
func Time(b []byte, t time.Time) ([]byte, error) {
	if _, off := t.Zone(); off == 0 && t.Year() >= 0 && t.Year() <= 9999 {
		b = append(b, '"')
		b = t.AppendFormat(b, time.RFC3339Nano)
		return append(b, '"'), nil
	}
	q, err := t.MarshalJSON()
	if err != nil {
		return nil, ErrUnsupported
	}
	return append(b, q...), nil
}

// Marshal appends json.Marshal(v).
func Marshal(b []byte, v any) ([]byte, error) {
	q, err := json.Marshal(v)
	if err != nil {
		return nil, ErrUnsupported
	}
	return append(b, q...), nil
}

// Value appends v: the types encoding/json decodes into and pactum's
// metadata holds (strings, bools, ints, float64s, map[string]any, []any)
// written here, an Appender as it appends itself, others through
// json.Marshal.
func Value(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return String(b, v), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case float64:
		return Float64(b, v)
	case map[string]any:
		return Object(b, v)
	case Appender:
		return v.AppendJSON(b), nil
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = Value(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	return Marshal(b, v)
}

// Appender is a value that appends its own JSON exactly as json.Marshal
// writes it (a2aserver.CompactJSON, a verified result as the gate
// encoded it): Value appends it without encoding/json's validating copy
// of a json.Marshaler's output. Bytes that are not what json.Marshal
// would write make JSON that is not Marshal's.
type Appender interface {
	AppendJSON(b []byte) []byte
}

// Float64 appends f as encoding/json writes a float64: 'f' inside
// [1e-6, 1e21), else its exponent form, which is left to it (and NaN and
// the infinities, which it refuses).
func Float64(b []byte, f float64) ([]byte, error) {
	if a := math.Abs(f); math.IsInf(f, 0) || math.IsNaN(f) || (a != 0 && (a < 1e-6 || a >= 1e21)) {
		return Marshal(b, f)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64), nil
}

// Object appends m as encoding/json writes a map: keys sorted.
func Object(b []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	var stack [16]string
	keys := stack[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, k)
		b = append(b, ':')
		var err error
		if b, err = Value(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}
