package contract_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pactum/pactum/contract"
)

// FuzzParse: arbitrary bytes never panic Parse or LoadBytes; an error is
// always an Errors of placed FieldErrors; and what parses re-encodes to
// JSON that parses again to the same contract (once numbers have taken
// their JSON form: 1.0 becomes 1), which encodes to the same JSON.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "contract*.yaml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, seed := range []string{
		"",
		valid,
		`{"version": "1.0", "id": "x", "steps": [{"id": "a", "dependsOn": ["a"]}]}`,
		"version: 1.0\nid: x\nmetadata: {n: 3, f: 2.0, big: 123456789012345678901234567890, t: 2026-11-23}\nsteps: [{id: a}]\n",
		"steps:\n  - &s {id: a, assertions: [{type: assert, message: m, check: {type: jsonpath, count: 2}}]}\n  - {<<: *s, id: b}\n",
		"a: &a [*a, *a]\n",
		"metadata: &m {self: *m}\n",
		"%YAML 1.1\n---\nid: x\n...\n---\n",
		"id: !!binary aGVsbG8=\n",
		"steps:\n  - id: a\n    depends_on: [b]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := contract.Parse("fuzz.yaml", data)
		checkErr(t, c, err)
		_, _, lerr := contract.LoadBytes("fuzz.yaml", data, contract.ValidateOptions{KnownAgent: func(string) bool { return false }})
		if lerr != nil {
			var es contract.Errors
			if !errors.As(lerr, &es) || len(es) == 0 {
				t.Fatalf("LoadBytes error %v (%T) is not a non-empty Errors", lerr, lerr)
			}
		}
		if err != nil {
			return
		}
		j1, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("a parsed contract does not encode to JSON: %v", err)
		}
		c2, err := contract.Parse("fuzz.json", j1)
		if err != nil {
			t.Fatalf("its JSON does not parse: %v\n%s", err, j1)
		}
		j2, err := json.Marshal(c2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(j1, j2) {
			t.Fatalf("JSON round trip changed the contract:\n%s\n%s", j1, j2)
		}
		c3, err := contract.Parse("fuzz.json", j2)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c2, c3) {
			t.Fatalf("JSON round trip changed the contract:\n%#v\n%#v", c2, c3)
		}
	})
}

func checkErr(t *testing.T, c *contract.AgentContract, err error) {
	t.Helper()
	if err == nil {
		if c == nil {
			t.Fatal("Parse returned neither a contract nor an error")
		}
		return
	}
	if c != nil {
		t.Fatal("Parse returned a contract and an error")
	}
	var es contract.Errors
	if !errors.As(err, &es) || len(es) == 0 {
		t.Fatalf("Parse error %v (%T) is not a non-empty Errors", err, err)
	}
	for _, e := range es {
		if e.File != "fuzz.yaml" || e.Msg == "" {
			t.Fatalf("error %#v lacks its file or message", e)
		}
	}
}
