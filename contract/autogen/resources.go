package autogen

import (
	"fmt"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// TaskResult is what team.run() returns (autogen_agentchat.base.TaskResult
// as JSON): the conversation's messages and why it stopped.
type TaskResult struct {
	Messages   []Message `json:"messages"`
	StopReason string    `json:"stop_reason,omitempty"`
}

// Message is one message of a conversation: who said it (source), its
// type (TextMessage, ToolCallSummaryMessage, HandoffMessage, …) and its
// content (text for text messages; other types carry structured content).
type Message struct {
	Source  string `json:"source"`
	Type    string `json:"type,omitempty"`
	Content any    `json:"content"`
}

// ExtractResources implements contract.ProtocolAdapter: output is a
// TaskResult or its JSON.
func (Adapter) ExtractResources(output any, step *contract.ContractStep) ([]contract.Resource, error) {
	r, err := contract.Decode[TaskResult](output)
	if err != nil {
		return nil, fmt.Errorf("autogen: ExtractResources: %w", err)
	}
	return ExtractResult(r, step), nil
}

// ExtractResult returns what the step's participant said: its last
// text message in the conversation is a message resource "message_STEP"
// (metadata source, type, stopReason, createdByStep; the text as Text). A
// participant that said nothing created nothing.
func ExtractResult(r TaskResult, step *contract.ContractStep) []contract.Resource {
	if step == nil {
		return nil
	}
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if s, ok := m.Content.(string); !ok || s == "" || m.Source != step.Agent && m.Source != step.ID {
			continue
		}
		md := map[string]any{"source": m.Source, "createdByStep": step.ID}
		if m.Type != "" {
			md["type"] = m.Type
		}
		if r.StopReason != "" {
			md["stopReason"] = r.StopReason
		}
		return []contract.Resource{{ContractResource: contract.ContractResource{ID: convert.ID("message_", step.ID), Type: contract.ResourceMessage, Format: "text", Metadata: md},
			Text: m.Content.(string), MediaType: "text/plain"}}
	}
	return nil
}

// InjectContext implements contract.ProtocolAdapter; it returns the task
// for team.run(task=...), a string (Task).
func (Adapter) InjectContext(step *contract.ContractStep, available []contract.Resource) (any, error) {
	if step == nil {
		return nil, fmt.Errorf("autogen: InjectContext: nil step")
	}
	return Task(step, available), nil
}

// Task is the task a team runs for a step: the step's description, then
// the resources earlier steps created, each with its content.
func Task(step *contract.ContractStep, available []contract.Resource) string {
	text := convert.ContextText(available)
	if step.Description != "" {
		text = step.Description + "\n\n" + text
	}
	return text
}
