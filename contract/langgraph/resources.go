package langgraph

import (
	"fmt"
	"maps"
	"slices"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// ExtractResources implements contract.ProtocolAdapter: output is what a
// node returned (a state update) or a run's final state, as a
// map[string]any or its JSON.
func (Adapter) ExtractResources(output any, step *contract.ContractStep) ([]contract.Resource, error) {
	state, err := contract.Decode[map[string]any](output)
	if err != nil {
		return nil, fmt.Errorf("langgraph: ExtractResources: %w", err)
	}
	return ExtractState(state, step), nil
}

// ExtractState returns what a state update created: the update itself
// is a data resource "state_STEP" (format json, metadata keys: the state
// channels it wrote; the update as Data); when it holds messages, the
// last one's text content is a message resource "message_STEP" (metadata
// role: its role or type; the text as Text). Each resource's metadata
// names the step (createdByStep).
func ExtractState(state map[string]any, step *contract.ContractStep) []contract.Resource {
	sid := ""
	if step != nil {
		sid = step.ID
	}
	if len(state) == 0 {
		return nil
	}
	keys := make([]any, 0, len(state))
	for _, k := range slices.Sorted(maps.Keys(state)) {
		keys = append(keys, k)
	}
	out := []contract.Resource{{ContractResource: contract.ContractResource{
		ID: convert.ID("state_", sid), Type: contract.ResourceData, Format: "json",
		Metadata: map[string]any{"keys": keys, "createdByStep": sid},
	}, Data: convert.JSON(state), MediaType: "application/json"}}
	msgs, _ := convert.JSON(state["messages"]).([]any)
	if len(msgs) == 0 {
		return out
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	text, _ := last["content"].(string)
	if text == "" {
		return out
	}
	role := convert.String(last, "role")
	if role == "" {
		role = convert.String(last, "type")
	}
	return append(out, contract.Resource{ContractResource: contract.ContractResource{
		ID: convert.ID("message_", sid), Type: contract.ResourceMessage, Format: "text",
		Metadata: map[string]any{"role": role, "createdByStep": sid},
	}, Text: text, MediaType: "text/plain"})
}

// InjectContext implements contract.ProtocolAdapter; it returns the
// run's input (Input).
func (Adapter) InjectContext(step *contract.ContractStep, available []contract.Resource) (any, error) {
	if step == nil {
		return nil, fmt.Errorf("langgraph: InjectContext: nil step")
	}
	return Input(step, available), nil
}

// Input is the input of a run that gives a node the resources earlier
// steps created: {"messages": [{"role": "user", "content": TEXT}]} (the
// MessagesAnnotation / MessagesState shape), TEXT listing each resource
// and its content (convert.ContextText) after the step's description.
func Input(step *contract.ContractStep, available []contract.Resource) map[string]any {
	text := convert.ContextText(available)
	if step.Description != "" {
		text = step.Description + "\n\n" + text
	}
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}
}
