package a2aserver

import (
	"net/url"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/pactum/pactum/task"
)

// CapabilityProfileURI identifies the card extension in which pactum
// publishes an agent's capability profile: its action, whether it is
// sensitive or a dry run, and which envelope fields a caller must send.
const CapabilityProfileURI = "https://pactum.dev/ext/capability-profile/v1"

// Default media types of a card when the agent names none.
var defaultModes = []string{"text/plain"}

// capabilityProfile returns the params of the capability-profile extension
// for spec. Actor is always required (it defaults to "anonymous" when a
// caller sends none); a sensitive action also needs policyRef and
// approvalRef.
func capabilityProfile(spec task.AgentSpec, info AgentInfo) map[string]any {
	requires := []any{"actor"}
	if spec.Sensitive {
		requires = append(requires, "policyRef", "approvalRef")
	}
	fields := make([]any, len(envelopeFields))
	for i, f := range envelopeFields {
		fields[i] = f
	}
	return map[string]any{
		"agent": spec.Name,
		"actions": []any{map[string]any{
			"action":           spec.Action,
			"sensitive":        spec.Sensitive,
			"dryRun":           spec.DryRun,
			"requires":         requires,
			"streamsArtifacts": info.Streaming,
		}},
		"envelope": map[string]any{
			"metadataKey":  MetadataKey,
			"fields":       fields,
			"defaultActor": AnonymousActor,
		},
	}
}

// buildCard returns the card of an agent whose interfaces live at
// endpoint, an absolute URL. The card lists JSON-RPC and HTTP+JSON for
// protocol 1.0 and, at the same URL, for 0.3 (served to requests without an
// A2A-Version header).
// With bearer the card declares the bearer scheme and requires it.
func buildCard(spec task.AgentSpec, info AgentInfo, endpoint string, bearer bool) *a2a.AgentCard {
	desc := info.Description
	if desc == "" {
		desc = "pactum agent " + spec.Name + " (action " + spec.Action + ")"
	}
	version := info.Version
	if version == "" {
		version = "0.0.0"
	}
	in, out := info.InputModes, info.OutputModes
	if len(in) == 0 {
		in = defaultModes
	}
	if len(out) == 0 {
		out = defaultModes
	}
	skills := slices.Clone(info.Skills)
	if len(skills) == 0 {
		skills = []a2a.AgentSkill{{ID: spec.Action, Name: spec.Action, Description: desc, Tags: []string{"pactum"}}}
	}
	for i := range skills {
		if skills[i].Tags == nil {
			skills[i].Tags = []string{}
		}
	}
	card := &a2a.AgentCard{
		Name:        spec.Name,
		Description: desc,
		Version:     version,
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(endpoint, a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface(endpoint, a2a.TransportProtocolHTTPJSON),
			{URL: endpoint, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
			{URL: endpoint, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2av0.Version},
		},
		Capabilities: a2a.AgentCapabilities{
			Streaming:         true,
			PushNotifications: true,
			Extensions: []a2a.AgentExtension{{
				URI:         CapabilityProfileURI,
				Description: "pactum capability profile: the action this agent serves and the envelope fields (metadata." + MetadataKey + ") it requires",
				Params:      capabilityProfile(spec, info),
			}},
		},
		DefaultInputModes:  in,
		DefaultOutputModes: out,
		Skills:             skills,
	}
	if bearer {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{bearerScheme: a2a.HTTPAuthSecurityScheme{
			Scheme: "Bearer", Description: "a token pactum's configuration gives an actor (auth: bearer)",
		}}
		card.SecurityRequirements = a2a.SecurityRequirementsOptions{{bearerScheme: a2a.SecuritySchemeScopes{}}}
	}
	return card
}

// joinURL appends path segments to an absolute base URL.
func joinURL(base string, segments ...string) string {
	out := strings.TrimRight(base, "/")
	for _, s := range segments {
		out += "/" + url.PathEscape(s)
	}
	return out
}
