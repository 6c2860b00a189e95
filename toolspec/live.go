package toolspec

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// LiveAdapter is the adapter_id of a ToolSpec whose adapter contract is
// the MCP server its agent calls: no catalogue holds it; the server's
// tools/list is the interface, each tool an operation whose input schema
// is the tool's inputSchema. Only `mcp` agents may name such a ToolSpec.
const LiveAdapter = "mcp"

// IsLive reports whether ts's adapter contract is a live MCP server.
func IsLive(ts ToolSpec) bool { return ts.AdapterID == LiveAdapter }

// LiveTool is one tool of an MCP server's tools/list.
type LiveTool struct {
	Name        string
	InputSchema map[string]any
}

// CheckLive checks ts against the tools an MCP server lists now:
// assertion 1 (a remote ToolSpec), assertion 3 (adapter_operation is one
// of the tools) and, when ts records an input_schema, assertion 4 on the
// operation's signature, as Registry.Check does for a catalogue: the
// ToolSpec's input_schema must be compatible with the live tool's
// (InputCompat). MCP tools have no version, so adapter_contract_version
// is not compared.
func CheckLive(ts ToolSpec, tools []LiveTool) []Violation {
	v := func(a Assertion, field, msg, fix string) Violation {
		return Violation{Assertion: a, ToolID: ts.ToolID, AdapterID: ts.AdapterID, Field: field, Msg: msg, Fix: fix}
	}
	if ts.ExecutionMode != Remote {
		return []Violation{v(AdapterIDRequired, "execution_mode", fmt.Sprintf("adapter_id %q (the MCP server) is for remote ToolSpecs, this one is %q", ts.AdapterID, ts.ExecutionMode), "set execution_mode: remote")}
	}
	names := make([]string, 0, len(tools))
	var found *LiveTool
	for i := range tools {
		names = append(names, tools[i].Name)
		if tools[i].Name == ts.AdapterOperation {
			found = &tools[i]
		}
	}
	sort.Strings(names)
	if found == nil {
		return []Violation{v(OperationExists, "adapter_operation", fmt.Sprintf("the MCP server has no tool %q", ts.AdapterOperation), "name one of its tools: "+strings.Join(names, ", "))}
	}
	if ts.InputSchema == nil {
		return nil
	}
	var out []Violation
	for _, p := range InputCompat(ts.InputSchema, found.InputSchema) {
		out = append(out, v(VersionCompatible, "input_schema", fmt.Sprintf("tool %q changed: %s", found.Name, p), "update the ToolSpec's input_schema to the tool's inputSchema (and review the callers)"))
	}
	return out
}

// InputCompat compares a ToolSpec's recorded input schema with the live
// tool's and returns the breaking differences, in CompareSchemas' order:
// the changes from the ToolSpec's schema to the tool's that
// CompareSchemas(Input, …) classifies MAJOR (a property the tool requires
// that the ToolSpec does not know or does not require, a property the
// ToolSpec knows that the tool no longer has, a type narrowed or changed,
// …), each as its detail ("input.b: required property \"b\" added"). It is
// the catalogue's classification (Classify), so a live tool and a
// catalogue operation break in the same cases.
func InputCompat(spec, live map[string]any) []string {
	var out []string
	for _, c := range CompareSchemas(Input, spec, live) {
		if c.Bump == Major {
			out = append(out, c.Detail)
		}
	}
	return out
}

// LiveSource is a Source whose Checker is the tools an MCP server lists
// when the attempt starts. A failure to list is not a violation: the
// attempt fails with a retryable error (Unavailable), as a call to the
// server would.
type LiveSource struct {
	List func(ctx context.Context) ([]LiveTool, error)
}

// Current lists the tools and returns a Checker over them.
func (s LiveSource) Current(ctx context.Context) (Checker, error) {
	tools, err := s.List(ctx)
	if err != nil {
		return nil, Unavailable(fmt.Errorf("list the MCP server's tools: %w", err))
	}
	return CheckerFunc(func(ts ToolSpec) []Violation { return CheckLive(ts, tools) }), nil
}

// Unavailable marks an error of a Source as the contract being out of
// reach for now (a server down), not broken: Step returns it as it is,
// retryable unless it is permanent, instead of as a violation.
func Unavailable(err error) error { return &unavailable{err} }

type unavailable struct{ err error }

func (u *unavailable) Error() string { return u.err.Error() }
func (u *unavailable) Unwrap() error { return u.err }

func isUnavailable(err error) bool {
	var u *unavailable
	return errors.As(err, &u)
}

// LiveContract returns the adapter contract an MCP server's tools make:
// adapter id, version 0.0.0 (MCP tools have none), draft, one operation
// per tool with its input schema. A lock can record it like a catalogue's
// contract.
func LiveContract(id string, tools []LiveTool) AdapterContract {
	c := AdapterContract{AdapterID: id, Version: "0.0.0", Status: Draft, Operations: map[string]Operation{}}
	for _, t := range tools {
		c.Operations[t.Name] = Operation{InputSchema: t.InputSchema}
	}
	return c
}
