package answer

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParsePointer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		tokens  []string
		wantErr bool
	}{
		{in: "", tokens: nil},
		{in: "/", tokens: []string{""}},
		{in: "/a", tokens: []string{"a"}},
		{in: "/a/b", tokens: []string{"a", "b"}},
		{in: "/a~1b", tokens: []string{"a/b"}},
		{in: "/m~0n", tokens: []string{"m~n"}},
		{in: "/~01", tokens: []string{"~1"}},
		{in: "//", tokens: []string{"", ""}},
		{in: "a", wantErr: true},
		{in: "#/a", wantErr: true},
		{in: "/~", wantErr: true},
		{in: "/~2", wantErr: true},
		{in: "/a~", wantErr: true},
	}
	for _, tt := range tests {
		p, err := ParsePointer(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("ParsePointer(%q) = %v, want error", tt.in, p.tokens)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParsePointer(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(p.tokens, tt.tokens) {
			t.Errorf("ParsePointer(%q) tokens = %q, want %q", tt.in, p.tokens, tt.tokens)
		}
		if got := p.String(); got != tt.in {
			t.Errorf("ParsePointer(%q).String() = %q", tt.in, got)
		}
	}
}

// The examples of RFC 6901 section 5.
func TestPointerLookupRFC(t *testing.T) {
	t.Parallel()
	doc, err := Decode([]byte(`{
      "foo": ["bar", "baz"],
      "": 0,
      "a/b": 1,
      "c%d": 2,
      "e^f": 3,
      "g|h": 4,
      "i\\j": 5,
      "k\"l": 6,
      " ": 7,
      "m~n": 8
   }`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ptr  string
		want string // JSON of the value
	}{
		{"/foo", `["bar","baz"]`},
		{"/foo/0", `"bar"`},
		{"/foo/1", `"baz"`},
		{"/", `0`},
		{"/a~1b", `1`},
		{"/c%d", `2`},
		{"/e^f", `3`},
		{"/g|h", `4`},
		{"/i\\j", `5`},
		{"/k\"l", `6`},
		{"/ ", `7`},
		{"/m~0n", `8`},
	}
	for _, tt := range tests {
		v, ok := MustPointer(tt.ptr).Lookup(doc)
		if !ok {
			t.Errorf("Lookup(%q): not found", tt.ptr)
			continue
		}
		got, _ := json.Marshal(v)
		if string(got) != tt.want {
			t.Errorf("Lookup(%q) = %s, want %s", tt.ptr, got, tt.want)
		}
	}
	if v, ok := MustPointer("").Lookup(doc); !ok || !reflect.DeepEqual(v, doc) {
		t.Errorf("root Lookup = %v, %v; want the document", v, ok)
	}
	for _, missing := range []string{"/nope", "/foo/2", "/foo/-", "/foo/01", "/foo/-1", "/foo/x", "/foo/0/deeper", "/a~1b/c"} {
		if v, ok := MustPointer(missing).Lookup(doc); ok {
			t.Errorf("Lookup(%q) = %v, want not found", missing, v)
		}
	}
}

// FuzzParsePointer checks that every pointer that parses prints back to the
// same string, and that it finds a value placed at the path it names.
func FuzzParsePointer(f *testing.F) {
	for _, s := range []string{"", "/", "/a/b", "/a~1b/~0", "/0/1", "//", "/~", "x", "/~2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePointer(s)
		if err != nil {
			return
		}
		if got := p.String(); got != s {
			t.Fatalf("ParsePointer(%q).String() = %q", s, got)
		}
		again, err := ParsePointer(p.String())
		if err != nil || !reflect.DeepEqual(again.tokens, p.tokens) {
			t.Fatalf("round trip of %q: %q, %v", s, again.tokens, err)
		}
		// Build {t0: {t1: ... "leaf"}} and look the leaf up.
		var doc any = "leaf"
		for i := len(p.tokens) - 1; i >= 0; i-- {
			doc = map[string]any{p.tokens[i]: doc}
		}
		if v, ok := p.Lookup(doc); !ok || v != "leaf" {
			t.Fatalf("Lookup(%q) = %v, %v; want leaf", s, v, ok)
		}
	})
}
