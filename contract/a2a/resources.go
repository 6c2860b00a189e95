package a2a

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// ExtractResources implements contract.ProtocolAdapter: output is an
// *sdk.Task, *sdk.Message, *sdk.Artifact or []*sdk.Artifact (a value or a
// pointer), or a task, message or artifact as JSON, of A2A 1.0 or of the
// earlier 0.2 and 0.3 shapes (Upgrade). Each resource carries its content:
// see ExtractTask.
func (Adapter) ExtractResources(output any, step *contract.ContractStep) ([]contract.Resource, error) {
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
	v, err := DecodeOutput(output)
	if err != nil {
		return nil, fmt.Errorf("a2a: ExtractResources: %w", err)
	}
	return ExtractResources(v, step)
}

// ExtractResources returns what out (a *sdk.Task, *sdk.Message or
// *sdk.Artifact, as DecodeOutput returns) created, with content; any
// other value is an error wrapping contract.ErrUnsupportedInput.
func ExtractResources(out any, step *contract.ContractStep) ([]contract.Resource, error) {
	switch x := out.(type) {
	case *sdk.Task:
		return ExtractTask(x, step), nil
	case *sdk.Message:
		return ExtractMessage(x, step), nil
	case *sdk.Artifact:
		return ExtractArtifacts([]*sdk.Artifact{x}, step), nil
	}
	return nil, fmt.Errorf("%w: %T (want an A2A task, message or artifact)", contract.ErrUnsupportedInput, out)
}

// ExtractTask returns what a task produced: each artifact (an artifact
// resource, and a file resource for each file part in it), then each part
// of its status message (ExtractMessage). Each resource's metadata names
// the step (createdByStep), and each carries its content: an artifact its
// text parts joined (Text) and its first data part (Data); a part as
// ExtractMessage says.
func ExtractTask(t *sdk.Task, step *contract.ContractStep) []contract.Resource {
	if t == nil {
		return nil
	}
	out := ExtractArtifacts(t.Artifacts, step)
	if t.Status.Message != nil {
		out = append(out, ExtractMessage(t.Status.Message, step)...)
	}
	return dedupe(out)
}

// ExtractArtifacts returns artifacts as resources: each is an artifact
// resource (id ArtifactResourceID, as ToContract names the step's
// creates; location its name) whose Text is its text parts joined by
// newlines and whose Data is its first data part; each file part in it is
// a file resource too.
func ExtractArtifacts(as []*sdk.Artifact, step *contract.ContractStep) []contract.Resource {
	sid := stepID(step)
	var out []contract.Resource
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
		r := contract.Resource{ContractResource: contract.ContractResource{
			ID: ArtifactResourceID(a), Type: contract.ResourceArtifact,
			Location: artifactName(a), Format: partsFormat(a.Parts), Metadata: md,
		}}
		var texts []string
		for _, p := range a.Parts {
			switch x := contentOf(p).(type) {
			case sdk.Text:
				texts = append(texts, string(x))
			case sdk.Data:
				if r.Data == nil {
					r.Data = convert.JSON(x.Value)
				}
			}
		}
		r.Text = strings.Join(texts, "\n")
		switch {
		case r.Data != nil:
			r.MediaType = "application/json"
		case len(texts) > 0:
			r.MediaType = "text/plain"
		}
		out = append(out, r)
		for i, p := range a.Parts {
			if p == nil || partKind(p) != "file" {
				continue
			}
			fr := fileResource(p, sid, i)
			fr.Metadata[MetaArtifactID] = string(a.ID)
			out = append(out, fr)
		}
	}
	return dedupe(out)
}

func contentOf(p *sdk.Part) any {
	if p == nil {
		return nil
	}
	return p.Content
}

// ExtractMessage returns a message's parts as resources: a text part is a
// message resource (text_STEP_I, format text) with the text as Text; a
// data part a data resource (data_STEP_I, format json) with the value as
// Data and its JSON as Text; a file part a file resource (file_ and its
// file name, else file_STEP_I; location its URL) with, for bytes that are
// UTF-8, the bytes as Text. MediaType is the part's, else text/plain or
// application/json.
func ExtractMessage(m *sdk.Message, step *contract.ContractStep) []contract.Resource {
	if m == nil {
		return nil
	}
	sid := stepID(step)
	var out []contract.Resource
	for i, p := range m.Parts {
		if p == nil {
			continue
		}
		md := map[string]any{"createdByStep": sid}
		if p.MediaType != "" {
			md["mediaType"] = p.MediaType
		}
		switch x := p.Content.(type) {
		case sdk.Text:
			out = append(out, contract.Resource{
				ContractResource: contract.ContractResource{ID: convert.ID("text_", fmt.Sprintf("%s_%d", sid, i)), Type: contract.ResourceMessage, Format: "text", Metadata: md},
				Text:             string(x), MediaType: cmpOr(p.MediaType, "text/plain"),
			})
		case sdk.Data:
			r := contract.Resource{
				ContractResource: contract.ContractResource{ID: convert.ID("data_", fmt.Sprintf("%s_%d", sid, i)), Type: contract.ResourceData, Format: "json", Metadata: md},
				Data:             convert.JSON(x.Value), MediaType: cmpOr(p.MediaType, "application/json"),
			}
			if b, err := json.Marshal(x.Value); err == nil {
				r.Text = string(b)
			}
			out = append(out, r)
		case sdk.URL, sdk.Raw:
			out = append(out, fileResource(p, sid, i))
		}
	}
	return dedupe(out)
}

func fileResource(p *sdk.Part, sid string, i int) contract.Resource {
	id := convert.ID("file_", fmt.Sprintf("%s_%d", sid, i))
	if p.Filename != "" {
		id = convert.ID("file_", p.Filename)
	}
	md := map[string]any{"createdByStep": sid}
	if p.Filename != "" {
		md["filename"] = p.Filename
	}
	r := contract.Resource{
		ContractResource: contract.ContractResource{ID: id, Type: contract.ResourceFile, Location: string(p.URL()), Format: p.MediaType, Metadata: md},
		MediaType:        p.MediaType,
	}
	if raw, ok := p.Content.(sdk.Raw); ok && utf8.Valid(raw) {
		r.Text = string(raw)
	}
	return r
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func stepID(step *contract.ContractStep) string {
	if step == nil || step.ID == "" {
		return StepID
	}
	return step.ID
}

// dedupe makes resource ids unique, in order.
func dedupe(rs []contract.Resource) []contract.Resource {
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
