package a2a

import (
	"fmt"
	"path"
	"strings"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// ExtractResources implements contract.ProtocolAdapter: output is an
// *sdk.Task, *sdk.Message, *sdk.Artifact or []*sdk.Artifact (a value or a
// pointer), or a task, message or artifact as JSON.
func (Adapter) ExtractResources(output any, step *contract.ContractStep) ([]contract.ContractResource, error) {
	switch x := output.(type) {
	case *sdk.Task:
		return ExtractTask(x, step), nil
	case sdk.Task:
		return ExtractTask(&x, step), nil
	case *sdk.Message:
		return ExtractMessage(x, step), nil
	case sdk.Message:
		return ExtractMessage(&x, step), nil
	case *sdk.Artifact:
		return ExtractArtifacts([]*sdk.Artifact{x}, step), nil
	case sdk.Artifact:
		return ExtractArtifacts([]*sdk.Artifact{&x}, step), nil
	case []*sdk.Artifact:
		return ExtractArtifacts(x, step), nil
	}
	m, ok := contract.JSONObject(output)
	if !ok {
		return nil, fmt.Errorf("a2a: ExtractResources: %w: %T (want an A2A task, message or artifact)", contract.ErrUnsupportedInput, output)
	}
	switch {
	case isObjectWith(m, "artifactId"):
		a, err := contract.Decode[sdk.Artifact](output)
		if err != nil {
			return nil, fmt.Errorf("a2a: ExtractResources: %w", err)
		}
		return ExtractArtifacts([]*sdk.Artifact{&a}, step), nil
	case isObjectWith(m, "role") && isObjectWith(m, "parts"):
		msg, err := contract.Decode[sdk.Message](output)
		if err != nil {
			return nil, fmt.Errorf("a2a: ExtractResources: %w", err)
		}
		return ExtractMessage(&msg, step), nil
	case isObjectWith(m, "status") || isObjectWith(m, "artifacts"):
		t, err := contract.Decode[sdk.Task](output)
		if err != nil {
			return nil, fmt.Errorf("a2a: ExtractResources: %w", err)
		}
		return ExtractTask(&t, step), nil
	}
	return nil, fmt.Errorf("a2a: ExtractResources: %w: a JSON object that is not an A2A task, message or artifact", contract.ErrUnsupportedInput)
}

// ExtractTask describes what a task produced: each artifact (an artifact
// resource, and a file resource for each file part in it), then each part
// of its status message (ExtractMessage). Each resource's metadata names
// the step (createdByStep).
func ExtractTask(t *sdk.Task, step *contract.ContractStep) []contract.ContractResource {
	if t == nil {
		return nil
	}
	out := ExtractArtifacts(t.Artifacts, step)
	if t.Status.Message != nil {
		out = append(out, ExtractMessage(t.Status.Message, step)...)
	}
	return dedupe(out)
}

// ExtractArtifacts describes artifacts: each is an artifact resource (id
// ArtifactResourceID, as ToContract names the step's creates; location
// its name), and each file part in it is a file resource too.
func ExtractArtifacts(as []*sdk.Artifact, step *contract.ContractStep) []contract.ContractResource {
	sid := stepID(step)
	var out []contract.ContractResource
	for _, a := range as {
		if a == nil {
			continue
		}
		md := map[string]any{MetaArtifactID: string(a.ID), "createdByStep": sid}
		if a.Name != "" {
			md["name"] = a.Name
		}
		if a.Description != "" {
			md["description"] = a.Description
		}
		out = append(out, contract.ContractResource{
			ID: ArtifactResourceID(a), Type: contract.ResourceArtifact,
			Location: artifactName(a), Format: partsFormat(a.Parts), Metadata: md,
		})
		for i, p := range a.Parts {
			if p == nil || partKind(p) != "file" {
				continue
			}
			r := fileResource(p, sid, i)
			r.Metadata[MetaArtifactID] = string(a.ID)
			out = append(out, r)
		}
	}
	return dedupe(out)
}

// ExtractMessage describes a message's parts: a text part is a message
// resource (text_STEP_I, format text), a data part a data resource
// (data_STEP_I, format json), a file part a file resource (file_ and its
// file name, else file_STEP_I; location its URL).
func ExtractMessage(m *sdk.Message, step *contract.ContractStep) []contract.ContractResource {
	if m == nil {
		return nil
	}
	sid := stepID(step)
	var out []contract.ContractResource
	for i, p := range m.Parts {
		if p == nil {
			continue
		}
		md := map[string]any{"createdByStep": sid}
		if p.MediaType != "" {
			md["mediaType"] = p.MediaType
		}
		switch partKind(p) {
		case "text":
			out = append(out, contract.ContractResource{ID: convert.ID("text_", fmt.Sprintf("%s_%d", sid, i)), Type: contract.ResourceMessage, Format: "text", Metadata: md})
		case "data":
			out = append(out, contract.ContractResource{ID: convert.ID("data_", fmt.Sprintf("%s_%d", sid, i)), Type: contract.ResourceData, Format: "json", Metadata: md})
		case "file":
			out = append(out, fileResource(p, sid, i))
		}
	}
	return dedupe(out)
}

func fileResource(p *sdk.Part, sid string, i int) contract.ContractResource {
	id := convert.ID("file_", fmt.Sprintf("%s_%d", sid, i))
	if p.Filename != "" {
		id = convert.ID("file_", p.Filename)
	}
	md := map[string]any{"createdByStep": sid}
	if p.Filename != "" {
		md["filename"] = p.Filename
	}
	return contract.ContractResource{ID: id, Type: contract.ResourceFile, Location: string(p.URL()), Format: p.MediaType, Metadata: md}
}

func stepID(step *contract.ContractStep) string {
	if step == nil || step.ID == "" {
		return StepID
	}
	return step.ID
}

// dedupe makes resource ids unique, in order.
func dedupe(rs []contract.ContractResource) []contract.ContractResource {
	seen := map[string]bool{}
	for i := range rs {
		rs[i].ID = convert.Unique(seen, rs[i].ID)
	}
	return rs
}

// InjectContext implements contract.ProtocolAdapter; it returns an
// *sdk.Message (InjectMessage).
func (Adapter) InjectContext(step *contract.ContractStep, available []contract.Resource) (any, error) {
	return InjectMessage(step, available), nil
}

// InjectMessage gives a step the resources earlier steps created as a
// user message: a text part listing them ("Context from previous steps:"
// and "- ID: TYPE (FORMAT)" a line each), then one part per resource: a
// data part for one with Data, a text part for one with Text, a file part
// for a file whose location is a URL. Each of those parts has the
// resource's id in its metadata (resourceId).
func InjectMessage(step *contract.ContractStep, available []contract.Resource) *sdk.Message {
	var b strings.Builder
	b.WriteString("Context from previous steps:")
	if len(available) == 0 {
		b.WriteString(" none")
	}
	parts := sdk.ContentParts{nil}
	for _, r := range available {
		format := r.Format
		if format == "" {
			format = "unknown format"
		}
		fmt.Fprintf(&b, "\n- %s: %s (%s)", r.ID, r.Type, format)
		var p *sdk.Part
		switch {
		case r.Data != nil:
			p = sdk.NewDataPart(r.Data)
		case r.Text != "":
			p = sdk.NewTextPart(r.Text)
		case r.Type == contract.ResourceFile && strings.Contains(r.Location, "://"):
			p = sdk.NewFileURLPart(sdk.URL(r.Location), r.Format)
			p.Filename = path.Base(r.Location)
		default:
			continue
		}
		if r.MediaType != "" {
			p.MediaType = r.MediaType
		}
		p.SetMeta("resourceId", r.ID)
		parts = append(parts, p)
	}
	parts[0] = sdk.NewTextPart(b.String())
	m := sdk.NewMessage(sdk.MessageRoleUser, parts...)
	if step != nil {
		m.SetMeta("step", step.ID)
	}
	return m
}
