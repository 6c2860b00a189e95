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

// TrustModelURI identifies the card extension in which pactum states its
// trust model: whether callers are authenticated, where the actor of a
// task comes from, and whose tasks a caller may address. Seed 001 asks for
// an explicit trust model on the card; an extension is where a client
// finds it by machine (A2A 1.0 has securitySchemes for how to
// authenticate, but no field that says a server authenticates no one).
const TrustModelURI = "https://pactum.dev/ext/trust-model/v1"

// Default media types of a card when the agent names none.
var defaultModes = []string{"text/plain"}

// capabilityProfile returns the params of the capability-profile extension
// for spec. Actor is always required (it defaults to "anonymous" when a
// caller sends none); a sensitive action also needs policyRef and
// approvalRef, unless it runs as a simulation that needs no approval
// (task.NeedsApproval, the Coordinator's rule).
func capabilityProfile(spec task.AgentSpec, info AgentInfo, policy task.PolicyEngine) map[string]any {
	requires := []any{"actor"}
	if task.NeedsApproval(&spec, policy) {
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

// trustModel returns the params and description of the trust-model
// extension. Without authentication the actor is whatever the caller
// writes in metadata.pactum.actor, and any caller may address any task by
// its id; with bearer tokens (pactum's own, or an OpenID provider's JWTs)
// the token decides the actor, and a caller sees only its own tasks.
func trustModel(o *Options) (map[string]any, string) {
	if o.Authenticate != nil {
		name, how := bearerScheme, "a bearer token"
		mode := "bearer"
		switch {
		case o.Scheme.TokenURL != "":
			name, how, mode = oauth2Scheme, "an access token of an OAuth 2.0 client credentials grant", "oidc"
		case o.Scheme.OpenIDConnectURL != "":
			name, how, mode = oidcScheme, "a JWT of an OpenID provider", "oidc"
		}
		return map[string]any{
				"authentication": mode,
				"securityScheme": string(name),
				"actor":          "token",
				"taskAccess":     "own",
			}, "pactum trust model: callers authenticate with " + how + " (securitySchemes." + string(name) +
				"); the token's actor is the task's actor, naming another is forbidden, and a caller sees only its own tasks"
	}
	return map[string]any{
			"authentication": "none",
			"actor":          "self-asserted",
			"defaultActor":   AnonymousActor,
			"taskAccess":     "any",
		}, "pactum trust model: callers are not authenticated; the actor (metadata." + MetadataKey +
			".actor, default " + AnonymousActor + ") is self-asserted, and any caller may address any task by its id"
}

// Scheme says which security scheme cards declare for Options.
// Authenticate. The zero Scheme is HTTP bearer (pactum's own tokens).
type Scheme struct {
	// OpenIDConnectURL, when set, is the discovery URL of the OpenID
	// provider whose JWTs callers send (the issuer followed by
	// /.well-known/openid-configuration): cards declare an openIdConnect
	// scheme with it.
	OpenIDConnectURL string
	// TokenURL, when set, is the token endpoint of an OAuth 2.0 client
	// credentials grant: cards declare an oauth2 scheme with that flow
	// instead (Scopes its scopes, name → description).
	TokenURL string
	Scopes   map[string]string
}

// oauth2Scheme names the security scheme cards declare with
// Scheme.TokenURL.
const oauth2Scheme a2a.SecuritySchemeName = "oauth2"

// oidcScheme names the security scheme cards declare with
// Scheme.OpenIDConnectURL.
const oidcScheme a2a.SecuritySchemeName = "oidc"

// simulationNote is added to the description of an agent in dry run.
const simulationNote = "Simulation (dry run): tasks succeed without calling the agent; the action is not performed."

// buildCard returns the card of an agent whose interfaces live at
// endpoint, an absolute URL. The card lists JSON-RPC and HTTP+JSON for
// protocol 1.0, then gRPC for 1.0 at o.GRPCAddress with the agent's name
// as tenant when that is set, then JSON-RPC and HTTP+JSON at endpoint for
// 0.3 (served to requests without an A2A-Version header). With
// o.Authenticate the card declares the scheme of o.Scheme (bearer, or
// openIdConnect) and requires it; either way its trust-model extension
// says how callers are (or are not) authenticated.
func buildCard(spec task.AgentSpec, info AgentInfo, endpoint string, o *Options) *a2a.AgentCard {
	desc := info.Description
	if desc == "" {
		desc = "pactum agent " + spec.Name + " (action " + spec.Action + ")"
	}
	if spec.DryRun {
		desc = strings.TrimRight(desc, " ") + " " + simulationNote
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
	trust, trustDesc := trustModel(o)
	card := &a2a.AgentCard{
		Name:                spec.Name,
		Description:         desc,
		Version:             version,
		SupportedInterfaces: interfaces(spec.Name, endpoint, o.GRPCAddress),
		Capabilities: a2a.AgentCapabilities{
			Streaming:         true,
			PushNotifications: true,
			Extensions: []a2a.AgentExtension{{
				URI:         CapabilityProfileURI,
				Description: "pactum capability profile: the action this agent serves and the envelope fields (metadata." + MetadataKey + ") it requires",
				Params:      capabilityProfile(spec, info, o.Policy),
			}, {
				URI:         TrustModelURI,
				Description: trustDesc,
				Params:      trust,
			}},
		},
		DefaultInputModes:  in,
		DefaultOutputModes: out,
		Skills:             skills,
	}
	if info.Contracts != nil {
		card.Capabilities.Extensions = append(card.Capabilities.Extensions, contractsExtension(info.Contracts, endpoint))
	}
	switch {
	case o.Authenticate != nil && o.Scheme.TokenURL != "":
		scopes := o.Scheme.Scopes
		if scopes == nil {
			scopes = map[string]string{}
		}
		card.SecuritySchemes = a2a.NamedSecuritySchemes{oauth2Scheme: a2a.OAuth2SecurityScheme{
			Flows:       a2a.ClientCredentialsOAuthFlow{TokenURL: o.Scheme.TokenURL, Scopes: scopes},
			Description: "an access token (a JWT) of the client credentials grant at this token URL, whose subject pactum's configuration gives an actor (auth: oidc)",
		}}
		card.SecurityRequirements = a2a.SecurityRequirementsOptions{{oauth2Scheme: a2a.SecuritySchemeScopes{}}}
	case o.Authenticate != nil && o.Scheme.OpenIDConnectURL != "":
		card.SecuritySchemes = a2a.NamedSecuritySchemes{oidcScheme: a2a.OpenIDConnectSecurityScheme{
			OpenIDConnectURL: o.Scheme.OpenIDConnectURL,
			Description:      "a JWT (access token) of this OpenID provider whose subject pactum's configuration gives an actor (auth: oidc)",
		}}
		card.SecurityRequirements = a2a.SecurityRequirementsOptions{{oidcScheme: a2a.SecuritySchemeScopes{}}}
	case o.Authenticate != nil:
		card.SecuritySchemes = a2a.NamedSecuritySchemes{bearerScheme: a2a.HTTPAuthSecurityScheme{
			Scheme: "Bearer", Description: "a token pactum's configuration gives an actor (auth: bearer)",
		}}
		card.SecurityRequirements = a2a.SecurityRequirementsOptions{{bearerScheme: a2a.SecuritySchemeScopes{}}}
	}
	return card
}

// interfaces returns the interfaces of the agent named name (see
// buildCard).
func interfaces(name, endpoint, grpcAddress string) []*a2a.AgentInterface {
	out := []*a2a.AgentInterface{
		a2a.NewAgentInterface(endpoint, a2a.TransportProtocolJSONRPC),
		a2a.NewAgentInterface(endpoint, a2a.TransportProtocolHTTPJSON),
	}
	if grpcAddress != "" {
		out = append(out, &a2a.AgentInterface{URL: grpcAddress, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2a.Version, Tenant: name})
	}
	return append(out,
		&a2a.AgentInterface{URL: endpoint, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
		&a2a.AgentInterface{URL: endpoint, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2av0.Version},
	)
}

// joinURL appends path segments to an absolute base URL.
func joinURL(base string, segments ...string) string {
	out := strings.TrimRight(base, "/")
	for _, s := range segments {
		out += "/" + url.PathEscape(s)
	}
	return out
}
