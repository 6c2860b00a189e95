package crewai

import (
	"fmt"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// TaskOutput is what a CrewAI task produced (crewai.TaskOutput as JSON):
// its raw text, its JSON when the task asked for one, and the agent.
type TaskOutput struct {
	Description string         `json:"description,omitempty"`
	Raw         string         `json:"raw"`
	JSONDict    map[string]any `json:"json_dict,omitempty"`
	Agent       string         `json:"agent,omitempty"`
}

// ExtractResources implements contract.ProtocolAdapter: output is a
// TaskOutput (or its JSON) or a string (the raw output alone).
func (Adapter) ExtractResources(output any, step *contract.ContractStep) ([]contract.Resource, error) {
	if s, ok := output.(string); ok {
		return ExtractOutput(TaskOutput{Raw: s}, step), nil
	}
	o, err := contract.Decode[TaskOutput](output)
	if err != nil {
		return nil, fmt.Errorf("crewai: ExtractResources: %w", err)
	}
	return ExtractOutput(o, step), nil
}

// ExtractOutput returns what a task produced: its raw text, a message
// resource "output_STEP" (the text as Text); its json_dict, a data
// resource "data_STEP" (as Data); and the step's output file (metadata
// outputFile), the file resource the contract declares for it, without
// content (the file is on the crew's disk). Each resource's metadata
// names the step (createdByStep).
func ExtractOutput(o TaskOutput, step *contract.ContractStep) []contract.Resource {
	sid := ""
	var md map[string]any
	if step != nil {
		sid, md = step.ID, step.Metadata
	}
	var out []contract.Resource
	if o.Raw != "" {
		out = append(out, contract.Resource{ContractResource: contract.ContractResource{ID: convert.ID("output_", sid), Type: contract.ResourceMessage, Format: "text",
			Metadata: map[string]any{"createdByStep": sid}}, Text: o.Raw, MediaType: "text/plain"})
	}
	if o.JSONDict != nil {
		out = append(out, contract.Resource{ContractResource: contract.ContractResource{ID: convert.ID("data_", sid), Type: contract.ResourceData, Format: "json",
			Metadata: map[string]any{"createdByStep": sid}}, Data: convert.JSON(o.JSONDict), MediaType: "application/json"})
	}
	if f := convert.String(md, MetaOutputFile); f != "" {
		out = append(out, contract.Resource{ContractResource: contract.ContractResource{ID: convert.ID("file_", f), Type: contract.ResourceFile, Location: f, Format: formatOf(f),
			Metadata: map[string]any{"createdByStep": sid}}})
	}
	return out
}

// InjectContext implements contract.ProtocolAdapter; it returns the
// crew's kickoff inputs (Inputs).
func (Adapter) InjectContext(step *contract.ContractStep, available []contract.Resource) (any, error) {
	if step == nil {
		return nil, fmt.Errorf("crewai: InjectContext: nil step")
	}
	return Inputs(step, available), nil
}

// Inputs is what kickoff(inputs=...) gets for a step: the members of the
// run's input (the "inputs" resource's data) the step's placeholders
// name, and "context", the other available resources listed with their
// content (the text CrewAI puts in a task's context).
func Inputs(step *contract.ContractStep, available []contract.Resource) map[string]any {
	out := map[string]any{}
	var rest []contract.Resource
	for _, r := range available {
		if r.ID != InputsResource {
			rest = append(rest, r)
			continue
		}
		data, _ := convert.JSON(r.Data).(map[string]any)
		for _, name := range convert.Strings(step.Metadata, MetaPlaceholders) {
			if v, ok := data[name]; ok {
				out[name] = v
			}
		}
	}
	out["context"] = convert.ContextText(rest)
	return out
}
