package negotiation_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/negotiation"
)

// base is a valid contract of two steps.
const base = `{"version":"1.0","id":"greeting","steps":[
 {"id":"greet","agent":"echo","assertions":[{"type":"assert","message":"says hello","check":{"type":"regex","target":"output","pattern":"hello"}}]},
 {"id":"sign","agent":"echo","dependsOn":["greet"],"metadata":{"a/b":1,"c~d":2}}]}`

func parse(t *testing.T, s string) *contract.AgentContract {
	t.Helper()
	c, err := contract.Parse("test", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestApply(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		mods string
		// check inspects the result; wantErr is a substring of the error
		// (and wantPath the path it names).
		check    func(c *contract.AgentContract) bool
		wantErr  string
		wantPath string
	}{
		{name: "change a member", mods: `[{"op":"change","path":"/steps/0/agent","value":"other","reason":"r"}]`,
			check: func(c *contract.AgentContract) bool { return c.Steps[0].Agent == "other" }},
		{name: "add a member", mods: `[{"op":"add","path":"/description","value":"d","reason":"r"}]`,
			check: func(c *contract.AgentContract) bool { return c.Description == "d" }},
		{name: "append to an array", mods: `[{"op":"add","path":"/steps/0/assertions/-","value":{"type":"suggest","message":"m","check":{"type":"regex","target":"output","pattern":"x"}},"reason":"r"}]`,
			check: func(c *contract.AgentContract) bool {
				return len(c.Steps[0].Assertions) == 2 && c.Steps[0].Assertions[1].Message == "m"
			}},
		{name: "insert into an array", mods: `[{"op":"add","path":"/steps/0/assertions/0","value":{"type":"suggest","message":"m","check":{"type":"regex","target":"output","pattern":"x"}},"reason":"r"}]`,
			check: func(c *contract.AgentContract) bool {
				return c.Steps[0].Assertions[0].Message == "m" && c.Steps[0].Assertions[1].Message == "says hello"
			}},
		{name: "remove an element", mods: `[{"op":"remove","path":"/steps/1","reason":"r"}]`,
			check: func(c *contract.AgentContract) bool { return len(c.Steps) == 1 }},
		{name: "escaped tokens", mods: `[{"op":"remove","path":"/steps/1/metadata/a~1b","reason":"r"},{"op":"change","path":"/steps/1/metadata/c~0d","value":3,"reason":"r"}]`,
			check: func(c *contract.AgentContract) bool {
				_, gone := c.Steps[1].Metadata["a/b"]
				return !gone && c.Steps[1].Metadata["c~d"] == 3
			}},
		{name: "in order", mods: `[{"op":"add","path":"/steps/0/description","value":"x","reason":"r"},{"op":"change","path":"/steps/0/description","value":"y","reason":"r"}]`,
			check: func(c *contract.AgentContract) bool { return c.Steps[0].Description == "y" }},
		{name: "no reason", mods: `[{"op":"remove","path":"/steps/1","reason":" "}]`, wantErr: "reason is required", wantPath: "/steps/1"},
		{name: "unknown op", mods: `[{"op":"move","path":"/steps/1","reason":"r"}]`, wantErr: "not add, remove or change"},
		{name: "add without value", mods: `[{"op":"add","path":"/x","reason":"r"}]`, wantErr: "needs a value"},
		{name: "remove with value", mods: `[{"op":"remove","path":"/steps/1","value":1,"reason":"r"}]`, wantErr: "takes no value"},
		{name: "not a pointer", mods: `[{"op":"remove","path":"steps/1","reason":"r"}]`, wantErr: "must start with /"},
		{name: "bad escape", mods: `[{"op":"remove","path":"/steps/~2","reason":"r"}]`, wantErr: "~ must be followed"},
		{name: "whole contract", mods: `[{"op":"remove","path":"","reason":"r"}]`, wantErr: "not at it"},
		{name: "missing member", mods: `[{"op":"change","path":"/nope","value":1,"reason":"r"}]`, wantErr: `no member "nope"`},
		{name: "add an existing member", mods: `[{"op":"add","path":"/id","value":"x","reason":"r"}]`, wantErr: "exists already"},
		{name: "index out of range", mods: `[{"op":"remove","path":"/steps/2","reason":"r"}]`, wantErr: "out of range"},
		{name: "leading zero", mods: `[{"op":"remove","path":"/steps/01","reason":"r"}]`, wantErr: "not an array index"},
		{name: "below a scalar", mods: `[{"op":"change","path":"/id/x","value":1,"reason":"r"}]`, wantErr: "neither an object nor an array"},
		{name: "invalid result names the field", mods: `[{"op":"remove","path":"/steps/0","reason":"r"}]`, wantErr: "invalid", wantPath: "steps[0].dependsOn[0]"},
		{name: "unknown field in the result", mods: `[{"op":"add","path":"/colour","value":"red","reason":"r"}]`, wantErr: "colour"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := parse(t, base)
			before, _ := contract.Canonical(c)
			var mods []negotiation.Modification
			if err := json.Unmarshal([]byte(tc.mods), &mods); err != nil {
				t.Fatal(err)
			}
			got, compiled, err := negotiation.Apply(c, mods)
			if after, _ := contract.Canonical(c); string(after) != string(before) {
				t.Errorf("Apply changed its input")
			}
			if tc.wantErr != "" {
				var me *negotiation.ModificationError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &me) {
					t.Fatalf("err = %v, want a *ModificationError with %q", err, tc.wantErr)
				}
				if tc.wantPath != "" && me.Path != tc.wantPath {
					t.Errorf("path = %q, want %q", me.Path, tc.wantPath)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(got) || compiled == nil || compiled.Contract() != got {
				b, _ := json.Marshal(got)
				t.Errorf("result %s", b)
			}
		})
	}
}
