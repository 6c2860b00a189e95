package contract

import (
	"context"
	"time"

	"github.com/pactum/pactum/task"
)

// Check is the machine-checkable part of an assertion. Type picks the
// check; Target picks what it looks at; the other fields are the check's
// parameters, each used by the check types named in its comment. Compile
// compiles every check once; a parameter that does not compile is an
// error at its path ("steps[0].assertions[2].check.pattern: error parsing
// regexp: …").
//
// Targets (default "output"):
//   - "output": the step's output: the text of its result (the artifacts'
//     and the status message's text parts, in order, joined by newlines;
//     a status message that only repeats the artifacts' text, as the
//     built-in runtimes' final message does, counts once); checks that
//     need JSON read the first data part, else that text parsed as JSON;
//   - "data": the output's first data part;
//   - "artifact:NAME": the artifact named (or with the id) NAME: its text,
//     or its first data part for checks that need JSON;
//   - "resource:ID": the contract resource ID (a file resource: the file's
//     content under the agent's working directory);
//   - any of these followed by "#" and a JSON pointer (RFC 6901), e.g.
//     "output#/summary": the value at that pointer.
//
// The text of a target without text parts is its first data part's JSON;
// the text of a pointer's value is the string itself, or the value's JSON.
// A target that is not there (no such artifact or resource, no value at
// the pointer, no output yet) fails the check with a reason saying so
// (`artifact "report" not found (artifacts: summary, log)`); so does a
// target that is not JSON for a check that needs JSON. An artifact name
// or resource id cannot contain "#".
//
// What each type holds true:
//   - schema_match: the target's JSON is valid against Schema (draft
//     2020-12, formats asserted; $ref only within the schema); the reason
//     names each failing instance location, Verdict.Path the first.
//   - exists: the target is there and not empty: a part with content
//     (non-blank text, data other than null, bytes, a URL); at a pointer,
//     a value other than null, "", [] and {}; a file resource: the file
//     exists under the working directory (a path leaving it, also through
//     a symbolic link, fails).
//   - regex: the target's text matches Pattern (RE2, unanchored).
//   - contains, not_contains: the target's text holds (does not hold) the
//     string Value.
//   - equals: a string Value equals the target's text, both trimmed of
//     surrounding space; any other Value equals the target's JSON (numbers
//     by value, objects by members).
//   - jsonpath: over the target's JSON, the RFC 9535 query Path selects:
//     without Value and Count, at least one node; with Count only, exactly
//     Count nodes; with Value only, exactly one node, equal to Value; with
//     both, nodes of which exactly Count equal Value.
//   - cel: Expression is true. It sees output (string: the output's text,
//     "" before the step ran), data (the output's JSON, null when it is
//     not JSON), artifacts (list of {id, name, text, data}), resources
//     (map id → {text, data, type, location}) and task ({id, agent,
//     attempt, state, input: the input's text}). Its type must be bool, or
//     dyn and a bool when it runs; an evaluation error (a missing key, the
//     cost limit, the gate's context ending) fails the check with it. It
//     takes no target.
//   - sections: each of Sections is a heading of the target's markdown
//     (CommonMark; a heading at the top level of the document, of any
//     level, compared case-insensitively and trimmed) whose body, up to the
//     next heading of the same or a higher level, is not blank (an HTML
//     comment is blank). A body of "None" says on purpose that there is
//     nothing, and passes. One non-blank occurrence of a repeated heading
//     is enough.
//   - max_duration: the step ran no longer than Max; a zero Input.Duration
//     (a pre-gate, a duration not measured) passes. It takes no target.
//   - media_type: every part of the target has a media type matching
//     MediaType ("type/subtype", "type/*", "*/*"; parameters ignored,
//     case-insensitive): a part's MediaType, else text/plain for text,
//     application/json for data, application/octet-stream for a file; a
//     resource's MediaType, else application/json with data, else
//     text/plain. A target with no parts fails; a pointer target is a
//     compile error.
type Check struct {
	// Type is one of schema_match, exists, regex, contains, not_contains,
	// equals, jsonpath, cel, sections, max_duration, media_type, or the
	// name of a custom validator (RegisterValidator).
	Type   string `json:"type" yaml:"type"`
	Target string `json:"target,omitempty" yaml:"target,omitempty"`
	// Schema (schema_match) is a JSON Schema, draft 2020-12.
	Schema map[string]any `json:"schema,omitempty" yaml:"schema,omitempty"`
	// Pattern (regex) is an RE2 regular expression the target must match.
	Pattern string `json:"pattern,omitempty" yaml:"pattern,omitempty"`
	// Value is the substring (contains, not_contains), the expected value
	// (equals: a string compares with the text, anything else with the
	// target's JSON; null cannot be expected, use cel), or the value a
	// JSONPath query must yield (jsonpath).
	Value any `json:"value,omitempty" yaml:"value,omitempty"`
	// Path (jsonpath) is an RFC 9535 query over the target's JSON.
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
	// Count (jsonpath) is how many nodes the query must select.
	Count *int `json:"count,omitempty" yaml:"count,omitempty"`
	// Expression (cel) is a CEL expression that must be true; it sees
	// output (text), data (the output's JSON, or null), artifacts,
	// resources and task.
	Expression string `json:"expression,omitempty" yaml:"expression,omitempty"`
	// Sections (sections) are markdown headings that must be present,
	// each with a non-empty body; a body of exactly "None" counts as
	// empty-by-intent and passes.
	Sections []string `json:"sections,omitempty" yaml:"sections,omitempty"`
	// Max (max_duration) is the longest the step's execution may take,
	// a Go duration ("30s").
	Max string `json:"max,omitempty" yaml:"max,omitempty"`
	// MediaType (media_type) is the media type the target's parts must
	// have ("application/json", "text/*").
	MediaType string `json:"mediaType,omitempty" yaml:"mediaType,omitempty"`
	// Config is a custom validator's configuration.
	Config map[string]any `json:"config,omitempty" yaml:"config,omitempty"`
}

// Input is what a gate's checks look at.
type Input struct {
	// Task is the task the step runs as.
	Task *task.Task
	// Result is what the step's agent produced (nil in a pre-gate).
	Result *task.Result
	// Duration is how long the agent ran (zero in a pre-gate).
	Duration time.Duration
	// WorkDir is where file resources are looked for.
	WorkDir string
	// Resources are the contract resources available to the step: those
	// earlier steps created, and (in a post-gate) those this step created,
	// by id.
	Resources map[string]Resource
	// Done says which steps of the contract have succeeded (for a pre-gate
	// of a multi-step run; nil otherwise).
	Done map[string]bool
	// Tool is the MCP tool a bridge step calls, as read from its server
	// (a pre-gate of a bridge step; nil otherwise).
	Tool *BridgeTool

	// memo holds what a gate has resolved already (set by the gates).
	memo *memo
}

// Resource is a contract resource with its content as produced.
type Resource struct {
	ContractResource
	// Text is its content as text (a file's bytes, a message's text).
	Text string `json:"text,omitempty"`
	// Data is its content as JSON when it is structured.
	Data any `json:"data,omitempty"`
	// MediaType is its content's media type when known.
	MediaType string `json:"mediaType,omitempty"`
}

// Verdict is what one check said.
type Verdict struct {
	Passed bool
	// Reason says why it failed: expected against actual, the JSON Schema
	// instance path and error, the missing section.
	Reason string
	// Path is where in the target it failed (a JSON pointer or instance
	// path), when the check knows.
	Path string
}

// CheckFunc is a compiled check.
type CheckFunc func(ctx context.Context, in *Input) Verdict

// Validator is a custom check registered from Go: it gets the check (its
// Target and Config) and the input.
type Validator func(ctx context.Context, c *Check, in *Input) Verdict
