package contract_test

import (
	"reflect"
	"testing"

	"github.com/pactum/pactum/contract"
)

// head is the start of most test contracts: lines 1 and 2.
const head = "version: \"1.0\"\nid: c\n"

// TestValidateErrors: every structural rule, with its message, field
// path and line (LoadBytes places Validate's paths on lines).
func TestValidateErrors(t *testing.T) {
	t.Parallel()
	agents := map[string]bool{"writer": true, "reviewer": true}
	known := func(name string) bool { return agents[name] }
	for _, tc := range []struct {
		name, yaml string
		// checkAgents validates with a KnownAgent (writer, reviewer).
		checkAgents bool
		want        []string
	}{
		{name: "version missing", yaml: "id: c\nsteps: [{id: a}]\n",
			want: []string{`c.yaml:1: version: required (supported: "1.0")`}},
		{name: "version unsupported", yaml: "version: 2.0\nid: c\nsteps: [{id: a}]\n",
			want: []string{`c.yaml:1: version: unsupported version "2.0" (supported: "1.0")`}},
		{name: "id missing", yaml: "version: \"1.0\"\nsteps: [{id: a}]\n",
			want: []string{`c.yaml:1: id: required`}},
		{name: "id not a name", yaml: "version: \"1.0\"\nid: My Contract\nsteps: [{id: a}]\n",
			want: []string{`c.yaml:2: id: "My Contract" is not a valid contract id: use at most 128 lower-case letters, digits, '.', '_' and '-', starting with a letter or digit (it becomes a URL path segment)`}},
		{name: "id with a slash", yaml: "version: \"1.0\"\nid: a/b\nsteps: [{id: a}]\n",
			want: []string{`c.yaml:2: id: "a/b" is not a valid contract id: use at most 128 lower-case letters, digits, '.', '_' and '-', starting with a letter or digit (it becomes a URL path segment)`}},
		{name: "strictness", yaml: head + "strictness: lenient\nsteps: [{id: a}]\n",
			want: []string{`c.yaml:3: strictness: unknown strictness "lenient" (one of: strict, loose, permissive)`}},
		{name: "no steps", yaml: head + "steps: []\n",
			want: []string{`c.yaml:3: steps: a contract needs at least one step`}},
		{name: "steps missing", yaml: head,
			want: []string{`c.yaml:1: steps: a contract needs at least one step`}},
		{name: "step id missing", yaml: head + "steps:\n  - description: nameless\n",
			want: []string{`c.yaml:4: steps[0].id: required`}},
		{name: "duplicate step id", yaml: head + "steps:\n  - {id: a, agent: writer}\n  - {id: a, agent: writer}\n",
			want: []string{`c.yaml:5: steps[1].id: duplicate step id "a" (first at steps[0])`}},
		{name: "agent missing in a multi-step contract", yaml: head + "steps:\n  - id: a\n    agent: writer\n  - id: b\n",
			want: []string{`c.yaml:6: steps[1].agent: required in a contract with several steps (each step names the agent that runs it)`}},
		{name: "agent not configured", checkAgents: true, yaml: head + "steps:\n  - id: a\n    agent: writter\n",
			want: []string{`c.yaml:5: steps[0].agent: agent "writter" is not configured`}},
		{name: "one step without an agent is fine without agents checked", yaml: head + "steps:\n  - id: a\n"},
		{name: "onViolation", yaml: head + "steps:\n  - id: a\n    onViolation: retry-later\n",
			want: []string{`c.yaml:5: steps[0].onViolation: unknown policy "retry-later" (one of: retry, escalate, fail, continue)`}},
		{name: "dependsOn unknown step", yaml: head + "steps:\n  - {id: build, agent: writer}\n  - id: test\n    agent: writer\n    dependsOn: [biuld]\n",
			want: []string{`c.yaml:7: steps[1].dependsOn[0]: unknown step "biuld" (did you mean "build"?)`}},
		{name: "dependsOn itself", yaml: head + "steps:\n  - id: a\n    dependsOn:\n      - a\n",
			want: []string{`c.yaml:6: steps[0].dependsOn[0]: a step cannot depend on itself`}},
		{name: "dependsOn twice", yaml: head + "steps:\n  - {id: a, agent: w}\n  - id: b\n    agent: w\n    dependsOn:\n      - a\n      - a\n",
			want: []string{`c.yaml:9: steps[1].dependsOn[1]: "a" is listed twice`}},
		{name: "cycle of two", yaml: head + "steps:\n  - {id: build, agent: w, dependsOn: [test]}\n  - {id: test, agent: w, dependsOn: [build]}\n",
			want: []string{`c.yaml:3: steps: dependsOn cycle build → test → build`}},
		{name: "cycle of three after a good step", yaml: head + "steps:\n  - {id: fetch, agent: w}\n  - {id: a, agent: w, dependsOn: [fetch, c]}\n  - {id: b, agent: w, dependsOn: [a]}\n  - {id: c, agent: w, dependsOn: [b]}\n",
			want: []string{`c.yaml:3: steps: dependsOn cycle a → c → b → a`}},
		{name: "creates twice across steps", yaml: head + "steps:\n  - {id: a, agent: w, creates: [r]}\n  - {id: b, agent: w, creates: [r]}\n",
			want: []string{`c.yaml:5: steps[1].creates[0]: resource "r" is already created by step "a"`}},
		{name: "creates twice in a step", yaml: head + "steps:\n  - id: a\n    creates: [r, r]\n",
			want: []string{`c.yaml:5: steps[0].creates[1]: "r" is listed twice`}},
		{name: "consumes nobody creates", yaml: head + "steps:\n  - {id: a, agent: w, creates: [summary]}\n  - {id: b, agent: w, dependsOn: [a], consumes: [sumary]}\n",
			want: []string{`c.yaml:5: steps[1].consumes[0]: no step creates "sumary" and no resource declares it as an input (did you mean "summary"?)`}},
		{name: "consumes from a step it does not depend on", yaml: head + "steps:\n  - {id: a, agent: w, creates: [r]}\n  - {id: b, agent: w, consumes: [r]}\n",
			want: []string{`c.yaml:5: steps[1].consumes[0]: "r" is created by step "a", which step "b" does not depend on (add "a" to its dependsOn)`}},
		{name: "consumes what it creates", yaml: head + "steps:\n  - {id: a, creates: [r], consumes: [r]}\n",
			want: []string{`c.yaml:4: steps[0].consumes[0]: step "a" consumes "r", which it creates itself`}},
		{name: "consumes through a chain and a declared input", yaml: head + "steps:\n  - {id: a, agent: w, creates: [r], consumes: [in]}\n  - {id: b, agent: w, dependsOn: [a]}\n  - {id: c, agent: w, dependsOn: [b], consumes: [r, in]}\nresources:\n  - {id: in, type: file}\n  - {id: r, type: data}\n"},
		{name: "resource id missing and duplicate", yaml: head + "steps: [{id: a}]\nresources:\n  - type: file\n  - {id: r, type: data}\n  - {id: r, type: data}\n",
			want: []string{`c.yaml:5: resources[0].id: required`, `c.yaml:7: resources[2].id: duplicate resource id "r" (first at resources[1])`}},
		{name: "resource type", yaml: head + "steps: [{id: a}]\nresources:\n  - id: r\n  - id: s\n    type: blob\n",
			want: []string{`c.yaml:5: resources[0].type: required (one of: file, data, message, artifact)`, `c.yaml:7: resources[1].type: unknown resource type "blob" (one of: file, data, message, artifact)`}},
		{name: "assertion type", yaml: head + "steps:\n  - id: a\n    assertions:\n      - message: m\n        check: {type: contains, value: x}\n      - type: must\n        message: m\n        check: {type: contains, value: x}\n",
			want: []string{`c.yaml:6: steps[0].assertions[0].type: required (assert or suggest)`, `c.yaml:8: steps[0].assertions[1].type: unknown assertion type "must" (assert or suggest)`}},
		{name: "assertion message", yaml: head + "steps:\n  - id: a\n    assertions:\n      - type: assert\n        message: \"  \"\n        check: {type: contains, value: x}\n",
			want: []string{`c.yaml:7: steps[0].assertions[0].message: required: it says what the assertion means and is the feedback an agent gets on a retry`}},
		{name: "check type missing", yaml: head + "steps:\n  - id: a\n    assertions:\n      - type: assert\n        message: m\n        check: {value: x}\n",
			want: []string{`c.yaml:8: steps[0].assertions[0].check.type: required (one of: cel, contains, equals, exists, jsonpath, max_duration, media_type, not_contains, regex, schema_match, sections, or a registered validator's name)`}},
		{name: "check type unknown", yaml: head + "steps:\n  - id: a\n    assertions:\n      - type: assert\n        message: m\n        check:\n          type: containz\n          value: x\n",
			want: []string{`c.yaml:9: steps[0].assertions[0].check.type: unknown check type "containz" (did you mean "contains"?)`}},
		{name: "validator type", yaml: head + "steps: [{id: a}]\nvalidators:\n  - resourceTypes: [file]\n  - type: exist\n  - type: regex\n",
			want: []string{
				`c.yaml:5: validators[0].type: required`,
				`c.yaml:6: validators[1].type: unknown validator type "exist" (did you mean "exists"?)`,
				`c.yaml:7: validators[2].type: "regex" is a check type; a resource validator is exists, schema_match or a registered validator`,
			}},
		{name: "validator resource types", yaml: head + "steps: [{id: a}]\nvalidators:\n  - type: schema_match\n    resourceTypes: [data, \"*\", files]\n",
			want: []string{`c.yaml:6: validators[0].resourceTypes[2]: unknown resource type "files" (one of: file, data, message, artifact, or * for all)`}},
		{name: "every error of the file, in line order", checkAgents: true,
			yaml: "id: Bad\nsteps:\n  - id: a\n    agent: nobody\n    depends_on: [b]\n  - id: b\n    onViolation: panic\n",
			want: []string{
				`c.yaml:1: version: required (supported: "1.0")`,
				`c.yaml:1: id: "Bad" is not a valid contract id: use at most 128 lower-case letters, digits, '.', '_' and '-', starting with a letter or digit (it becomes a URL path segment)`,
				`c.yaml:4: steps[0].agent: agent "nobody" is not configured`,
				`c.yaml:5: steps[0].depends_on: unknown field "depends_on" (did you mean "dependsOn"?)`,
				`c.yaml:6: steps[1].agent: required in a contract with several steps (each step names the agent that runs it)`,
				`c.yaml:7: steps[1].onViolation: unknown policy "panic" (one of: retry, escalate, fail, continue)`,
			}},
		{name: "a field that did not decode is not reported again", yaml: head + "steps: nope\n",
			want: []string{`c.yaml:3: steps: expected a list, got "nope"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts contract.ValidateOptions
			if tc.checkAgents {
				opts.KnownAgent = known
			}
			c, compiled, err := contract.LoadBytes("c.yaml", []byte(tc.yaml), opts)
			if tc.want == nil {
				if err != nil || c == nil || compiled == nil {
					t.Fatalf("LoadBytes: %v", err)
				}
				return
			}
			if c != nil || compiled != nil {
				t.Errorf("LoadBytes returned a contract with an error")
			}
			assertErrors(t, err, tc.want...)
		})
	}
}

// TestValidateGo: a contract built in Go is validated without lines.
func TestValidateGo(t *testing.T) {
	t.Parallel()
	c := &contract.AgentContract{Version: "1.0", ID: "c", Steps: []contract.ContractStep{
		{ID: "a", Agent: "w", DependsOn: []string{"b"}},
		{ID: "b", Agent: "w", DependsOn: []string{"a"}},
	}}
	got := contract.Validate(c, contract.ValidateOptions{})
	want := contract.Errors{{Path: "steps", Msg: "dependsOn cycle a → b → a"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Validate: got %#v, want %#v", got, want)
	}
	c.Steps[0].DependsOn = nil
	if errs := contract.Validate(c, contract.ValidateOptions{KnownAgent: func(n string) bool { return n == "w" }}); errs != nil {
		t.Fatalf("Validate of a valid contract: %v", errs)
	}
}

// TestValidateTooManySteps: Validate refuses contracts over MaxSteps.
func TestValidateTooManySteps(t *testing.T) {
	t.Parallel()
	c := &contract.AgentContract{Version: "1.0", ID: "c", Steps: make([]contract.ContractStep, contract.MaxSteps+1)}
	errs := contract.Validate(c, contract.ValidateOptions{})
	if len(errs) != 1 || errs[0].Path != "steps" || errs[0].Msg != "1001 steps; a contract has at most 1000" {
		t.Fatalf("Validate: %v", errs)
	}
}

// TestLoadCompileErrors: Compile's errors are placed on the line of the
// parameter they name (or of the check, when the parameter is missing),
// among Validate's, in line order; a check whose type Validate already
// refused is not reported again by Compile.
func TestLoadCompileErrors(t *testing.T) {
	t.Parallel()
	_, _, err := contract.LoadBytes("c.yaml", []byte(head+`steps:
  - id: a
    onViolation: never
    assertions:
      - type: assert
        message: m
        check:
          type: regex
          pattern: "(unclosed"
      - type: assert
        message: m
        check: {type: max_duration, max: soon}
      - type: assert
        message: m
        check: {type: regex}
      - type: assert
        message: m
        check: {type: regexp, pattern: x}
`), contract.ValidateOptions{})
	assertErrors(t, err,
		`c.yaml:5: steps[0].onViolation: unknown policy "never" (one of: retry, escalate, fail, continue)`,
		"c.yaml:11: steps[0].assertions[0].check.pattern: error parsing regexp: missing closing ): `(unclosed`",
		`c.yaml:14: steps[0].assertions[1].check.max: time: invalid duration "soon"`,
		`c.yaml:17: steps[0].assertions[2].check.pattern: required`,
		`c.yaml:20: steps[0].assertions[3].check.type: unknown check type "regexp" (did you mean "regex"?)`,
	)
}
