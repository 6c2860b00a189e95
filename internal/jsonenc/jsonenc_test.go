package jsonenc_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/jsonenc"
)

// check compares what jsonenc appends for v with json.Marshal(v).
func check(t *testing.T, v any) {
	t.Helper()
	got, err := jsonenc.Value([]byte("x"), v)
	want, werr := json.Marshal(v)
	if (err != nil) != (werr != nil) || (err == nil && string(got) != "x"+string(want)) {
		t.Fatalf("%#v: got %s, %v; json.Marshal %s, %v", v, got, err, want, werr)
	}
}

func TestValueIsJSONMarshal(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		nil, "", "plain", "<&>", "quote\" back\\ nl\n", "\x00\x1f\x7f", "é日本", "\xff\xfe", "\u2028\u2029",
		true, false, 0, -1, 1 << 62, int64(math.MinInt64),
		0.0, -0.0, 1.5, 1e20, 1e21, 1e-6, 1e-7, -123456.789, math.MaxFloat64, math.SmallestNonzeroFloat64,
		map[string]any{}, map[string]any{"b": 1, "a": []any{nil, "x", 2.5, map[string]any{"<": ">"}}, "": "empty"},
		[]any{}, []any(nil), map[string]any(nil),
		json.RawMessage(`{"b": 1, "a": "<x>"}`), map[string]string{"z": "1", "a": "2"}, []int{1}, uint8(3), float32(0.1),
		math.NaN(), math.Inf(-1), map[string]any{"f": func() {}},
	} {
		check(t, v)
	}
}

func FuzzValue(f *testing.F) {
	f.Add(`{"a":[1.5,-0,1e-7,1e21,"x",null,true,{"z":{}}],"é":"\ud800<"}`)
	f.Add(`"\u2028"`)
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			v = doc
		}
		check(t, v)
	})
}

func TestTimeIsMarshalJSON(t *testing.T) {
	t.Parallel()
	for _, at := range []time.Time{
		{}, time.Date(2026, 11, 28, 2, 3, 4, 567891000, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("e", 3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("odd", 24*3600+60)),
	} {
		got, err := jsonenc.Time(nil, at)
		want, werr := at.MarshalJSON()
		if (err != nil) != (werr != nil) || string(got) != string(want) {
			t.Errorf("%v: got %s, %v; MarshalJSON %s, %v", at, got, err, want, werr)
		}
	}
}

// checkRaw compares Valid with json.Valid and RawMessage with
// json.Marshal(json.RawMessage(raw)).
func checkRaw(t *testing.T, raw []byte) {
	t.Helper()
	if got, want := jsonenc.Valid(raw), json.Valid(raw); got != want {
		t.Fatalf("Valid(%q) = %v, json.Valid %v", raw, got, want)
	}
	got, err := jsonenc.RawMessage([]byte("x"), raw)
	want, werr := json.Marshal(json.RawMessage(raw))
	if (err != nil) != (werr != nil) || (err == nil && string(got) != "x"+string(want)) {
		t.Fatalf("RawMessage(%q): got %q, %v; json.Marshal %q, %v", raw, got, err, want, werr)
	}
}

func TestRawIsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		``, ` `, `null`, `true`, `false`, `nul`, `truex`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `-12.5e+30`, `.5`, `+1`,
		`""`, `"a"`, `"\u00e9\n\"\\\/\b\f\r\t"`, `"\u12"`, `"\u12g4"`, `"\x"`, "\"\x01\"", "\"\x7f\xff\"", `"<a & b>"`, "\"\u2028\u2029\"",
		"\"\xe2\x80\"", `"unterminated`, `"\`, `{}`, `[]`, `{ }`, `[ ]`, ` {"a":1} `, `{"a":1,}`, `[1,]`, `[,1]`, `{"a" 1}`, `{1:2}`,
		`{"a":[1,{"b":null}],"c":"d"}`, "{\n\t\"a\" : [1 , 2]\r\n}", `[1 2]`, `[1][2]`, `{"a":1}}`, `[[[]]]`, `[[[]]`, `"<"x`,
		`{"step":"contract","kind":"verdict","outcome":"pass","durationNs":238945,"data":{"x":[0.094831,-1e-7]}}`,
	} {
		checkRaw(t, []byte(raw))
	}
	checkRaw(t, nil)
}

func TestValidNestingLimit(t *testing.T) {
	t.Parallel()
	for _, n := range []int{9999, 10000, 10001} {
		checkRaw(t, []byte(strings.Repeat("[", n)+strings.Repeat("]", n)))
		checkRaw(t, []byte(strings.Repeat(`{"a":`, n)+"1"+strings.Repeat("}", n)))
	}
}

func FuzzRawMessage(f *testing.F) {
	for _, s := range []string{`{"a":[1,"<b>",null,true,-0.5e3]}`, " [1, 2] ", `"\u2028"`, `{"a":"\ud800"}`, `01`, `"\x01"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkRaw(t, raw)
	})
}

// appender is a value that appends its own JSON, as json.Marshal writes it.
type appender string

func (a appender) AppendJSON(b []byte) []byte   { return append(b, a...) }
func (a appender) MarshalJSON() ([]byte, error) { return []byte(a), nil }

// An Appender is written as it appends itself: what json.Marshal writes
// for it when its bytes are Marshal's.
func TestValueAppender(t *testing.T) {
	t.Parallel()
	check(t, map[string]any{"v": appender(`{"a":"\u003cb\u003e","n":[1,null]}`), "w": []any{appender(`"x"`)}})
}
