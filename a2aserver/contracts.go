package a2aserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// ContractsURI names pactum's contracts extension (docs/a2a.md,
// "Contract discovery"): the card of an agent whose answers are checked
// against contracts declares it in capabilities.extensions with the
// contracts it honours (ContractsParams); a client that activates it
// (A2A-Extensions: ContractsURI) gets each verified result under this
// key too, in the task's metadata and its last artifact's.
const ContractsURI = "https://pactum.dev/ext/contracts/v1"

// legacyExtensionsHeader is the extensions header of A2A 0.3.
const legacyExtensionsHeader = "X-A2A-Extensions"

// maxEmbeddedContract bounds a contract embedded in a card: a larger one
// is named by its URL only.
const maxEmbeddedContract = 16 << 10

// ContractsInfo is what an agent's card declares of the contracts its
// answers are checked against: the params of the contracts extension.
type ContractsInfo struct {
	// Required makes the card declare the extension required: a call
	// that does not activate it is refused (ExtensionSupportRequired).
	Required bool
	// Contracts are the contracts the agent honours.
	Contracts []ContractRef
	// Produces and Requires are the resource types the agent's steps
	// create and consume.
	Produces, Requires []string
	// Validate, when set, serves POST /agents/NAME/contracts/validate
	// (a contract in, what the agent says of it out) and Negotiate
	// /agents/NAME/negotiations and below it, its request's URL path the
	// rest below /negotiations ("" or "/ID"). Both are behind the
	// server's authentication and body limit, and the card names their
	// URLs in the extension's params (validate, negotiate). Package
	// contract/negotiation provides them.
	Validate, Negotiate http.Handler
}

// ContractRef is one contract an agent honours, as its card names it.
type ContractRef struct {
	// ID and Version are the contract's.
	ID      string `json:"id"`
	Version string `json:"version"`
	// Digest is the digest of its canonical form ("sha256:…").
	Digest string `json:"digest"`
	// Steps are the ids of the steps the agent's answers are checked
	// against: one step on every answer, or every step of the contract,
	// each on the node of the same name (Nodes).
	Steps []string `json:"steps"`
	// Nodes says each step is checked on the node of the same name of the
	// graph the agent runs.
	Nodes bool `json:"nodes,omitempty"`
	// Canonical is the contract's canonical JSON (RFC 8785): embedded in
	// the card when small, always served at URL.
	Canonical json.RawMessage `json:"-"`
	// URL is where the contract's canonical JSON is served (set by the
	// server: /agents/NAME/contracts/DIGEST).
	URL string `json:"url"`
	// Contract is Canonical when embedded in the card.
	Contract json.RawMessage `json:"contract,omitempty"`
}

// ContractsParams is the params of the contracts extension on a card.
type ContractsParams struct {
	Contracts []ContractRef `json:"contracts"`
	Produces  []string      `json:"produces"`
	Requires  []string      `json:"requires"`
	// Validate is the URL a contract is POSTed to for the agent to say
	// whether it can honour it; Negotiate the URL a proposal is POSTed to
	// to negotiate one (docs/contracts.md, "Validate and negotiate").
	// Empty when the agent offers neither.
	Validate  string `json:"validate,omitempty"`
	Negotiate string `json:"negotiate,omitempty"`
}

// Paths of the contract endpoints below an agent's (ContractsInfo).
const (
	validatePath     = "/contracts/validate"
	negotiationsPath = "/negotiations"
)

// contractsExtension returns the card's contracts extension for info,
// whose contracts are served under base (the agent's endpoint URL).
func contractsExtension(ci *ContractsInfo, base string) a2a.AgentExtension {
	p := ContractsParams{Contracts: make([]ContractRef, len(ci.Contracts)), Produces: ci.Produces, Requires: ci.Requires}
	if p.Produces == nil {
		p.Produces = []string{}
	}
	if p.Requires == nil {
		p.Requires = []string{}
	}
	if ci.Validate != nil {
		p.Validate = base + validatePath
	}
	if ci.Negotiate != nil {
		p.Negotiate = base + negotiationsPath
	}
	for i, c := range ci.Contracts {
		c.URL = joinURL(base, "contracts", c.Digest)
		if len(c.Canonical) <= maxEmbeddedContract {
			c.Contract = c.Canonical
		}
		p.Contracts[i] = c
	}
	var params map[string]any
	b, _ := json.Marshal(p) // a ContractsParams always encodes
	_ = json.Unmarshal(b, &params)
	desc := "pactum contracts: the contracts this agent's answers are verified against; activate it (A2A-Extensions: " + ContractsURI + ") to receive each verified result under this key in task and artifact metadata"
	return a2a.AgentExtension{URI: ContractsURI, Description: desc, Required: ci.Required, Params: params}
}

// requestedExtensions returns the extension URIs a call asks to activate:
// its A2A-Extensions service parameter (X-A2A-Extensions on 0.3), each
// value a comma-separated list.
func requestedExtensions(ctx context.Context) []string {
	ext, ok := a2asrv.ExtensionsFrom(ctx)
	if !ok {
		return nil
	}
	var out []string
	for _, v := range ext.RequestedURIs() {
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); u != "" {
				out = append(out, u)
			}
		}
	}
	return out
}

// extensions applies the extensions a call asks for: the contracts
// extension, when the agent declares it and the call requests it, is
// activated (contractsActive then reports it, and the HTTP answer names
// it in its A2A-Extensions header); an agent that requires it refuses a
// call that does not request it.
func (h *Handler) extensions(ctx context.Context) error {
	if h.contracts == nil {
		return nil
	}
	if slices.Contains(requestedExtensions(ctx), ContractsURI) {
		if ext, ok := a2asrv.ExtensionsFrom(ctx); ok {
			ext.Activate(&a2a.AgentExtension{URI: ContractsURI})
		}
		return nil
	}
	if h.contracts.Required {
		return a2a.NewError(a2a.ErrExtensionSupportRequired, fmt.Sprintf(
			"agent %s requires the contracts extension: send the header A2A-Extensions: %s (X-A2A-Extensions on A2A 0.3)", h.agent, ContractsURI))
	}
	return nil
}

// contractsActive reports whether the call activated the contracts
// extension.
func contractsActive(ctx context.Context) bool {
	ext, ok := a2asrv.ExtensionsFrom(ctx)
	return ok && ext.Active(activeContracts)
}

// activeContracts is what contractsActive looks for, made once.
var activeContracts = &a2a.AgentExtension{URI: ContractsURI}

// withExtensionVerified adds vr under the contracts extension's key of
// meta when the call activated it, copying nothing: meta is the answer's
// own (taskToA2A built it).
func withExtensionVerified(ctx context.Context, meta map[string]any, vr any) map[string]any {
	if vr == nil || !contractsActive(ctx) {
		return meta
	}
	return addExtensionVerified(meta, vr)
}

// addExtensionVerified adds vr under the contracts extension's key of
// meta (a new map when nil) and returns it.
func addExtensionVerified(meta map[string]any, vr any) map[string]any {
	if meta == nil {
		meta = map[string]any{}
	}
	meta[ContractsURI] = map[string]any{VerifiedKey: vr}
	return meta
}

// artifactWithExtensionVerified is withExtensionVerified for an
// artifact whose metadata may be shared with the stored task.
func artifactWithExtensionVerified(ctx context.Context, a *a2a.Artifact, vr any) {
	if vr == nil || a == nil || !contractsActive(ctx) {
		return
	}
	a.Metadata = addExtensionVerified(maps.Clone(a.Metadata), vr)
}

// echoExtensions names the extensions the call activated in the
// answer's extensions header (X-A2A-Extensions on A2A 0.3).
func echoExtensions(ctx context.Context, h http.Header, legacy bool) {
	ext, ok := a2asrv.ExtensionsFrom(ctx)
	if !ok {
		return
	}
	if uris := ext.ActivatedURIs(); len(uris) > 0 {
		name := a2a.SvcParamExtensions
		if legacy {
			name = legacyExtensionsHeader
		}
		h.Set(name, strings.Join(uris, ", "))
	}
}
