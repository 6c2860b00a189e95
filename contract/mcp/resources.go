package mcp

import (
	"fmt"
	"maps"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// ExtractResources implements contract.ProtocolAdapter: output is an
// *sdk.CallToolResult (or a value, or its JSON); see ExtractResult.
func (Adapter) ExtractResources(output any, step *contract.ContractStep) ([]contract.Resource, error) {
	r, err := contract.Decode[sdk.CallToolResult](output)
	if err != nil {
		return nil, fmt.Errorf("mcp: ExtractResources: %w", err)
	}
	return ExtractResult(&r, step), nil
}

// ExtractResult returns what a tool call produced, with content: its
// structured content is a data resource (data_STEP, format json, the
// value as Data); each text content a message resource (text_STEP_I,
// format text, the text as Text); each embedded resource or resource link
// a file resource when its URI is a file: URI (or has no scheme), else an
// artifact resource (id "resource_" and its URI, location as in the
// mapping table, format its MIME type; an embedded resource's text as
// Text); each image or audio content an artifact resource (image_STEP_I,
// audio_STEP_I; its bytes are not copied). A result with IsError set
// created nothing. Each resource's metadata names the step
// (createdByStep).
func ExtractResult(r *sdk.CallToolResult, step *contract.ContractStep) []contract.Resource {
	if r == nil || r.IsError {
		return nil
	}
	sid := "step"
	if step != nil && step.ID != "" {
		sid = step.ID
	}
	md := func() map[string]any { return map[string]any{"createdByStep": sid} }
	seen := map[string]bool{}
	var out []contract.Resource
	add := func(cr contract.Resource) {
		cr.ID = convert.Unique(seen, cr.ID)
		out = append(out, cr)
	}
	if r.StructuredContent != nil {
		add(contract.Resource{
			ContractResource: contract.ContractResource{ID: convert.ID("data_", sid), Type: contract.ResourceData, Format: "json", Metadata: md()},
			Data:             convert.JSON(r.StructuredContent), MediaType: "application/json",
		})
	}
	for i, c := range r.Content {
		at := fmt.Sprintf("%s_%d", sid, i)
		switch x := c.(type) {
		case *sdk.TextContent:
			add(contract.Resource{
				ContractResource: contract.ContractResource{ID: convert.ID("text_", at), Type: contract.ResourceMessage, Format: "text", Metadata: md()},
				Text:             x.Text, MediaType: "text/plain",
			})
		case *sdk.EmbeddedResource:
			if x.Resource == nil {
				continue
			}
			cr := uriResource(x.Resource.URI, x.Resource.MIMEType, md())
			cr.Text = x.Resource.Text
			add(cr)
		case *sdk.ResourceLink:
			m := md()
			if x.Name != "" {
				m["name"] = x.Name
			}
			add(uriResource(x.URI, x.MIMEType, m))
		case *sdk.ImageContent:
			add(contract.Resource{ContractResource: contract.ContractResource{ID: convert.ID("image_", at), Type: contract.ResourceArtifact, Format: x.MIMEType, Metadata: md()}, MediaType: x.MIMEType})
		case *sdk.AudioContent:
			add(contract.Resource{ContractResource: contract.ContractResource{ID: convert.ID("audio_", at), Type: contract.ResourceArtifact, Format: x.MIMEType, Metadata: md()}, MediaType: x.MIMEType})
		}
	}
	return out
}

func uriResource(uri, mime string, md map[string]any) contract.Resource {
	typ, loc := resourceType(uri)
	md["uri"] = uri
	return contract.Resource{ContractResource: contract.ContractResource{ID: convert.ID("resource_", uri), Type: typ, Location: loc, Format: mime, Metadata: md}, MediaType: mime}
}

// InjectContext implements contract.ProtocolAdapter; it returns the call's
// arguments, a map[string]any (InjectArguments).
func (Adapter) InjectContext(step *contract.ContractStep, available []contract.Resource) (any, error) {
	if step == nil {
		return nil, fmt.Errorf("mcp: InjectContext: nil step")
	}
	return InjectArguments(step, available), nil
}

// InjectArguments gives a tool call the resources earlier steps created:
// the step's arguments (metadata mcpArguments), plus, for each available
// resource whose id is a property of the tool's input schema that the
// arguments do not set, that property set to the resource's Data (else
// its Text); plus "_context", a list of every available resource's id,
// type and location, unless the input schema forbids properties it does
// not list (additionalProperties: false) and does not list _context.
func InjectArguments(step *contract.ContractStep, available []contract.Resource) map[string]any {
	args := map[string]any{}
	if a, ok := step.Metadata[MetaArguments].(map[string]any); ok {
		args = maps.Clone(a)
	} else if a := convert.Object(step.Metadata[MetaArguments]); a != nil {
		args = a
	}
	schema := convert.Object(step.Metadata[MetaInputSchema])
	props, _ := schema["properties"].(map[string]any)
	for _, r := range available {
		if _, ok := props[r.ID]; !ok {
			continue
		}
		if _, set := args[r.ID]; set {
			continue
		}
		if r.Data != nil {
			args[r.ID] = r.Data
		} else {
			args[r.ID] = r.Text
		}
	}
	_, declared := props["_context"]
	closed := schema["additionalProperties"] == false
	if len(available) > 0 && (declared || !closed) {
		ctx := make([]any, 0, len(available))
		for _, r := range available {
			e := map[string]any{"id": r.ID, "type": string(r.Type)}
			if r.Location != "" {
				e["location"] = r.Location
			}
			ctx = append(ctx, e)
		}
		args["_context"] = ctx
	}
	return args
}
