package config

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Defaults, as documented on the fields of Config and in docs/config.md.
const (
	DefaultListen         = "127.0.0.1:9000"
	DefaultStore          = "sqlite://pactum.db"
	DefaultLogLevel       = "info"
	DefaultLogFormat      = "text"
	DefaultWorkers        = 16
	DefaultOtherWorkers   = 256
	DefaultLease          = 30 * time.Second
	DefaultIdempotencyTTL = 24 * time.Hour
	DefaultMaxBodyBytes   = 4 << 20
	DefaultMCPWaitTimeout = 5 * time.Minute
	DefaultPushAttempts   = 5
	DefaultPushTimeout    = 10 * time.Second
	DefaultAgentTimeout   = 5 * time.Minute
	DefaultRetryAttempts  = 3
	DefaultInitialBackoff = time.Second
	DefaultMaxBackoff     = time.Minute
	DefaultJitter         = 0.2
	DefaultPolicyVersion  = "1"
	DefaultMode           = "text/plain"
	DefaultAnchorInterval = time.Minute
	DefaultReadTimeout    = 30 * time.Second
	DefaultWriteTimeout   = 30 * time.Second
	DefaultIdleTimeout    = 2 * time.Minute
	DefaultMaxConnections = 1024
)

// Config is a parsed, validated pactum configuration with every default
// applied. Parse and Load produce it from YAML; Default gives the demo
// configuration used when there is no file.
type Config struct {
	// Listen is the host:port the server listens on (`listen`, default
	// "127.0.0.1:9000").
	Listen string `yaml:"listen"`
	// BaseURL is the absolute http(s) URL clients reach the server at, used
	// in agent cards (`base_url`, default "http://" + Listen, with
	// "localhost" for an empty or unspecified host). It has no query,
	// fragment or trailing slash.
	BaseURL string `yaml:"base_url"`
	// GRPCListen, when set, is the host:port of a listener of its own on
	// which the agents are also served over A2A 1.0's gRPC binding
	// (`grpc_listen`, default "": no gRPC; docs/a2a.md, "gRPC").
	GRPCListen string `yaml:"grpc_listen"`
	// GRPCURL is the host:port gRPC clients dial, written into the gRPC
	// interface of the agent cards (`grpc_url`; only with grpc_listen,
	// default GRPCListen with "localhost" for an empty or unspecified
	// host).
	GRPCURL string `yaml:"grpc_url"`
	// Store is the store DSN; its scheme picks the driver: sqlite://PATH or
	// postgres://… (`store`, default "sqlite://pactum.db"). Load makes a
	// relative SQLite path, the default's included, relative to the
	// configuration file's directory; without a file it is relative to the
	// working directory.
	Store string `yaml:"store"`
	// Node names this process in execution records (`node`). Default ""
	// meaning hostname-pid, filled in at run time.
	Node string `yaml:"node"`
	// Log configures logging (`log`).
	Log Log `yaml:"log"`
	// Workers bounds concurrent attempts on this node (`workers`): by
	// default 16 for the agents that start a process for each attempt
	// (exec) and 256 for the others, in pools of their own.
	Workers Workers `yaml:"workers"`
	// Lease is the lease on a claimed task, renewed while the agent runs
	// (`lease`, default 30s, at least 1s).
	Lease Duration `yaml:"lease"`
	// IdempotencyTTL is how long an (actor, idempotency key) pair names one
	// task (`idempotency_ttl`, default 24h; 0 disables idempotency).
	IdempotencyTTL Duration `yaml:"idempotency_ttl"`
	// MaxBodyBytes bounds request bodies (`max_body_bytes`, default 4 MiB,
	// 1 KiB..1 GiB).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// HTTP configures the HTTP edge of the listener: accepted Host and
	// Origin headers, timeouts and the connection cap (`http`).
	HTTP HTTP `yaml:"http"`
	// Push configures push-notification delivery (`push`).
	Push Push `yaml:"push"`
	// MCP configures the MCP endpoint (`mcp`).
	MCP MCP `yaml:"mcp"`
	// Migrate, when false, stops the server from migrating the store's
	// schema at start; the schema must then already be current (`pactum
	// migrate`). Default true.
	Migrate *bool `yaml:"migrate"`
	// DefaultAgent names the agent served at the root agent card
	// (`default_agent`, default the first agent).
	DefaultAgent string `yaml:"default_agent"`
	// Agents are the agents served (`agents`, at least one unless
	// Definitions is set: the definitions are then the agents).
	Agents []Agent `yaml:"agents"`
	// Contracts are contract files served as agents, each named by its
	// contract's id, whose tasks are runs of the contract (`contracts`,
	// default none).
	Contracts []Contract `yaml:"-"`
	// Definitions are the directories of agent definition files served as
	// agents, and the runtimes that run them (`definitions`, default nil:
	// no definitions). docs/workflows.md describes the files.
	Definitions *Definitions `yaml:"-" json:"-"`
	// Workflows are the configured workflows (`workflows`, default none),
	// added to the built-in ones; one named like a built-in replaces it.
	Workflows []Workflow `yaml:"-" json:"-"`
	// ToolSpecs are the ToolSpecs agents may name (`toolspecs`, default
	// none): each checked against the adapter contracts when the
	// configuration is checked and before every attempt of an agent that
	// names it (docs/toolspecs.md, "Where the checks run").
	ToolSpecs []ToolSpecEntry `yaml:"-" json:"-"`
	// Adapters are catalogue files of adapter contracts added to the
	// default catalogue (`adapters`, default none); re-read when they
	// change.
	Adapters []AdapterFile `yaml:"-" json:"-"`
	// Actors say which callers may call which actions (`actors`). Empty
	// means every caller may call every action.
	Actors []Actor `yaml:"actors"`
	// Auth is how callers of the A2A and MCP endpoints are authenticated
	// (`auth`): AuthNone (default), anyone may call, as any actor;
	// AuthBearer, every call needs an actor's bearer token and acts as that
	// actor; AuthOIDC, every call needs a JWT of OIDC's issuer whose actor
	// claim names an actor's subject (the mapping form of `auth`, whose
	// mode is oidc). Agent cards, /healthz, /readyz and /metrics stay open.
	Auth string `yaml:"auth"`
	// OIDC configures auth: oidc (the other keys of the `auth` mapping);
	// zero for the other modes.
	OIDC OIDC `yaml:"-"`
	// Policy holds the approvals that sensitive actions need (`policy`).
	Policy Policy `yaml:"policy"`
	// Audit configures the audit log (`audit`).
	Audit Audit `yaml:"audit"`
	// Negotiation configures contract negotiation (`negotiation`).
	Negotiation Negotiation `yaml:"negotiation"`
	// Cards configures the agent cards: the keys that sign them
	// (`cards`, default unsigned).
	Cards Cards `yaml:"cards"`

	// file is the name given to Parse, used in errors from AgentSpec and
	// Check; storeLine and storeCol are where the store is set (0 when
	// it is not).
	file                string
	storeLine, storeCol int
	// jwksLine and jwksCol are where auth.jwks_file is set.
	jwksLine, jwksCol int
	// deferred are actions actors name that no agent serves, left for
	// UnknownActions when contracts are configured.
	deferred []deferredAction
	// deferredDefault is the error for a default_agent that names no
	// agent when definitions are configured (it may name a definition),
	// left for UnknownDefaultAgent.
	deferredDefault *Error
}

// Log configures logging.
type Log struct {
	// Level is debug, info, warn or error (`level`, default info).
	Level string `yaml:"level" check:"oneof=debug|info|warn|error"`
	// Format is text or json (`format`, default text).
	Format string `yaml:"format" check:"oneof=text|json"`
}

// MCP configures the MCP endpoint at /mcp and `pactum mcp`.
type MCP struct {
	// Disabled turns the /mcp endpoint off (`disabled`, default false).
	Disabled bool `yaml:"disabled"`
	// PerAgentTools adds one tool per agent for one-shot calls
	// (`per_agent_tools`, default false).
	PerAgentTools bool `yaml:"per_agent_tools"`
	// AllowedHosts is an alias of HTTP.AllowedHosts, kept for older
	// configurations (`allowed_hosts`): its hosts are allowed on every
	// route, as if listed under http.allowed_hosts.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// WaitTimeout bounds how long submit_task waits for a result
	// (`wait_timeout`, default 5m).
	WaitTimeout Duration `yaml:"wait_timeout"`
}

// HTTP configures the HTTP edge of the listener (docs/a2a.md, "Host,
// Origin and content type").
type HTTP struct {
	// AllowedHosts are host names or addresses, optionally with a port,
	// that requests may name in their Host header besides loopback names
	// and the host of base_url (`allowed_hosts`, default none). A request
	// that arrives on a loopback address with any other Host is refused
	// (DNS-rebinding protection); when this list is not empty, requests on
	// other addresses are checked too (they may also name an IP address).
	// MCP.AllowedHosts adds to it.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// CORSOrigins are the origins (scheme://host[:port]) whose web pages
	// may call the server, and get CORS headers (`cors_origins`, default
	// none: cross-origin requests are refused). "*" allows every origin and
	// needs auth: bearer.
	CORSOrigins []string `yaml:"cors_origins"`
	// ReadTimeout bounds how long a request body may take to arrive
	// (`read_timeout`, default 30s, > 0).
	ReadTimeout Duration `yaml:"read_timeout"`
	// WriteTimeout bounds writing an ordinary response, and each write of
	// a stream, so a stream lasts as long as its client reads it
	// (`write_timeout`, default 30s, > 0).
	WriteTimeout Duration `yaml:"write_timeout"`
	// IdleTimeout closes a keep-alive connection idle this long
	// (`idle_timeout`, default 2m, > 0).
	IdleTimeout Duration `yaml:"idle_timeout"`
	// MaxConnections caps the connections open at once; more wait until
	// one closes (`max_connections`, default 1024, 1..1048576).
	MaxConnections int `yaml:"max_connections"`
}

// Push configures delivery of push notifications to client webhooks.
type Push struct {
	// AllowPrivate permits push URLs on addresses that are not globally
	// routable: loopback, private, link-local, carrier-grade NAT, …
	// (`allow_private`, default false).
	AllowPrivate bool `yaml:"allow_private"`
	// MaxAttempts bounds the attempts at one notification (`max_attempts`,
	// default 5, 1..100).
	MaxAttempts int `yaml:"max_attempts" check:"min=1,max=100"`
	// Timeout bounds one delivery attempt (`timeout`, default 10s, > 0).
	Timeout Duration `yaml:"timeout" check:"min=1ns"`
}

// Negotiation configures how the node negotiates contracts
// (docs/contracts.md, "Validate and negotiate").
type Negotiation struct {
	// SigningKeyFile is a PEM file holding the node's Ed25519 private key
	// (PKCS #8), which signs the contracts the node negotiates, as
	// provider for its agents and as proposer for `pactum contract
	// negotiate` (`signing_key_file`, default none: the node validates
	// contracts but cannot negotiate). A relative path is relative to the
	// configuration file. Its content is never logged.
	SigningKeyFile string `yaml:"signing_key_file"`

	line, col int
}

// NegotiationKey returns the negotiation signing key file, resolved against
// the configuration file's directory (or baseDir), and a way to place a
// problem with it (a file that does not hold a key) at its key in the
// configuration. file is "" when none is set.
func (c *Config) NegotiationKey(baseDir string) (file string, place func(msg string, err error) *Error) {
	n := c.Negotiation
	file = n.SigningKeyFile
	if dir := c.baseDir(baseDir); file != "" && !filepath.IsAbs(file) && dir != "" {
		file = filepath.Join(dir, file)
	}
	cfgFile := c.file
	return file, func(msg string, err error) *Error {
		return &Error{File: cfgFile, Line: n.line, Column: n.col, Path: "negotiation.signing_key_file", Msg: msg, Err: err}
	}
}

// Audit configures the audit log.
type Audit struct {
	// Anchor publishes the audit chain's head outside the store
	// (`anchor`); off unless a sink is set.
	Anchor AuditAnchor `yaml:"anchor"`
}

// AuditAnchor makes the node read the audit chain's head record at an
// interval and publish {seq, hash, time, node} to each sink set, skipping
// a sink that already has the current head. docs/storage.md says what an
// anchored head proves.
type AuditAnchor struct {
	// Interval is how often the head is read (`interval`, default 1m, >
	// 0).
	Interval Duration `yaml:"interval"`
	// File gets each head appended as one JSON line and synced (`file`,
	// default none; a relative path is relative to the config file).
	File string `yaml:"file"`
	// Log logs each head at INFO, message "audit head" (`log`, default
	// false).
	Log bool `yaml:"log"`
	// Webhook is an http(s) URL each head is POSTed to as JSON
	// (`webhook`, default none).
	Webhook string `yaml:"webhook"`
	// AllowPrivate lets the webhook be on a loopback, private or
	// link-local address (`allow_private`, default false).
	AllowPrivate bool `yaml:"allow_private"`
}

// Enabled reports whether a sink is set.
func (a AuditAnchor) Enabled() bool { return a.File != "" || a.Log || a.Webhook != "" }

// Agent is one served agent.
type Agent struct {
	// Name identifies the agent, in URLs (/agents/{name}) too: letters,
	// digits, '.', '_' and '-', at most 64, starting with a letter or digit.
	// Required and unique.
	Name string `yaml:"name"`
	// Description is shown on the agent card (default "").
	Description string `yaml:"description"`
	// Version is the agent's own version, shown on its card (`version`,
	// default "": the card says "0.0.0"). When set, not empty, at most 64
	// characters, without control characters or surrounding spaces.
	Version string `yaml:"version"`
	// Type is the runtime type, e.g. echo, exec, webhook, a2a. Required.
	Type string `yaml:"type"`
	// Action is the capability name callers ask for (default Name; same
	// character rules as Name). Unique across agents.
	Action string `yaml:"action"`
	// Timeout bounds one attempt (default 5m, > 0).
	Timeout Duration `yaml:"timeout"`
	// Retry says how failed attempts are retried.
	Retry Retry `yaml:"retry"`
	// Sensitive actions need an approval from Policy (default false).
	Sensitive bool `yaml:"sensitive"`
	// DryRun records the policy decision and succeeds without calling the
	// agent (`dry_run`). Nil (not set) means the default: true for a
	// Sensitive agent whose action no approval in Policy covers ("simulation
	// by default"), false otherwise; Config.DryRun resolves it.
	DryRun *bool `yaml:"dry_run"`
	// Skills are advertised on the agent card (default one skill with the
	// agent's name as id and name, its description, and its type as tag).
	Skills []Skill `yaml:"skills"`
	// InputModes and OutputModes are media types (`input_modes`,
	// `output_modes`, default ["text/plain"]).
	InputModes  []string `yaml:"input_modes"`
	OutputModes []string `yaml:"output_modes"`
	// Contract is the contract step every attempt of the agent is checked
	// against (`contract`): inline, or a step of a contract file; nil
	// when the agent has none. Build it through Config.ContractSpec.
	Contract *AgentContract `yaml:"-" json:"-"`
	// ToolSpec is the tool_id of the entry of the top-level toolspecs the
	// agent's tool is checked against before every attempt (`toolspec`,
	// default none).
	ToolSpec string `yaml:"-" json:"-"`
	// Settings is the runtime's own mapping: the value of the key named
	// after Type (e.g. `exec:` for type exec); nil if absent. Decode it
	// through Config.AgentSpec, which reports errors with positions.
	Settings *yaml.Node `yaml:"-" json:"-"`
	// Line is the line the agent is defined at.
	Line int `yaml:"-"`

	// index is the agent's position in Config.Agents (-1 when the Agent
	// was not produced by Parse); the positions place errors that AgentSpec
	// and Check report.
	index                     int
	column                    int
	path                      string // the field path when not agents[i] (a definitions runtime)
	typeLine, typeCol         int
	settingsLine, settingsCol int
	toolSpecLine, toolSpecCol int
}

// Retry says how an agent's failed attempts are retried.
type Retry struct {
	// MaxAttempts counts the first attempt (`max_attempts`, default 3,
	// 1..100).
	MaxAttempts int `yaml:"max_attempts"`
	// InitialBackoff is the wait before the second attempt, doubling after
	// each (`initial_backoff`, default 1s, > 0).
	InitialBackoff Duration `yaml:"initial_backoff"`
	// MaxBackoff caps the wait (`max_backoff`, default 1m, >= InitialBackoff).
	MaxBackoff Duration `yaml:"max_backoff"`
	// Jitter randomizes each wait by ± this fraction (`jitter`, default 0.2,
	// 0..1).
	Jitter float64 `yaml:"jitter"`
}

// Skill is one skill advertised on an agent card.
type Skill struct {
	// ID is required and unique within the agent.
	ID string `yaml:"id"`
	// Name defaults to ID.
	Name string `yaml:"name"`
	// Description defaults to the agent's description, else Name.
	Description string `yaml:"description"`
	// Tags are keywords (default the agent's type).
	Tags []string `yaml:"tags"`
	// Examples are sample prompts (default none).
	Examples []string `yaml:"examples"`
}

// Actor is a caller and the actions it may call.
type Actor struct {
	// Name identifies the caller (required, unique).
	Name string `yaml:"name"`
	// Actions it may call; "*" means all (required, each a known action).
	Actions []string `yaml:"actions"`
	// TokenSHA256 is the hex SHA-256 of the actor's bearer token
	// (`token_sha256`), so that the configuration holds no secret. With
	// auth: bearer an actor has it or TokenEnv (not both); without, neither.
	TokenSHA256 string `yaml:"token_sha256"`
	// TokenEnv names the environment variable that holds the actor's
	// bearer token (`token_env`), read when the server starts.
	TokenEnv string `yaml:"token_env"`
	// Subject is the value of OIDC.ActorClaim in the tokens that act as
	// this actor (`subject`), e.g. the OAuth client id of a client
	// credentials client. With auth: oidc every actor has one (unique);
	// without, none has.
	Subject string `yaml:"subject"`
}

// OIDC is the auth: oidc mode: callers send JWTs (OAuth access tokens or
// ID tokens) that an OpenID provider signed.
type OIDC struct {
	// Issuer is the provider's issuer URL (`issuer`, required): tokens
	// must carry it as iss, and its /.well-known/openid-configuration
	// names the JWKS, fetched when the node starts and again whenever a
	// token names a key it does not hold (key rotation). https, or http
	// on a loopback host.
	Issuer string
	// Audience lists the values a token's aud must hold one of
	// (`audience`, a string or a list, required).
	Audience []string
	// JWKSFile is a JSON Web Key Set file (`jwks_file`, relative to the
	// configuration's directory) holding the issuer's public keys: no
	// discovery and no fetch, for air-gapped nodes and for pactum auth
	// check. Default "": discover the JWKS from Issuer.
	JWKSFile string
	// Algorithms are the signature algorithms accepted (`algorithms`,
	// default [RS256, ES256, EdDSA]); only asymmetric ones may be named,
	// never none nor HS*.
	Algorithms []string
	// Leeway is the clock skew allowed for exp and nbf (`leeway`, default
	// 30s, at most 5m).
	Leeway Duration
	// ActorClaim names the claim whose value is matched against the
	// actors' subject (`actor_claim`, default "sub"; e.g. client_id).
	ActorClaim string
	// ActionsClaim names the claim (a space-separated string, as scope,
	// or a list of strings, as roles) whose values pactum:ACTION grant
	// ACTION and pactum:* every action (`actions_claim`). A token may then
	// call only the actions it grants that its actor may call. Default "":
	// the actor's actions, whatever the token holds.
	ActionsClaim string
	// TokenURL is the provider's token endpoint where callers get their
	// tokens by the client credentials grant (`token_url`, same rules as
	// issuer): cards then declare an oauth2 scheme with that flow and the
	// token URL (scopes pactum:ACTION with actions_claim) instead of
	// openIdConnect — for a provider without a discovery document, or
	// callers that only speak OAuth 2.0. Default "": openIdConnect.
	TokenURL string
	// MCPAudience lists the audiences a token used on the MCP endpoint
	// must hold one of (`mcp_audience`, a string or a list), binding MCP
	// tokens to that resource as the MCP authorization specification
	// asks (the protected resource metadata's resource is the endpoint's
	// URL). Default: Audience, as every binding.
	MCPAudience []string
}

// DefaultOIDCAlgorithms are the algorithms auth: oidc accepts by default.
var DefaultOIDCAlgorithms = []string{"RS256", "ES256", "EdDSA"}

// OIDCAlgorithms are the algorithms auth: oidc may accept: asymmetric
// signatures only.
var OIDCAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// OIDCJWKS returns auth.jwks_file resolved against the configuration
// file's directory (or baseDir), and a way to place a problem with it (a
// file that does not hold a JWKS of public keys) at its key in the
// configuration. file is "" when none is set.
func (c *Config) OIDCJWKS(baseDir string) (file string, place func(msg string, err error) *Error) {
	file = c.OIDC.JWKSFile
	if dir := c.baseDir(baseDir); file != "" && !filepath.IsAbs(file) && dir != "" {
		file = filepath.Join(dir, file)
	}
	cfgFile, line, col := c.file, c.jwksLine, c.jwksCol
	return file, func(msg string, err error) *Error {
		return &Error{File: cfgFile, Line: line, Column: col, Path: "auth.jwks_file", Msg: msg, Err: err}
	}
}

// Auth modes.
const (
	AuthNone   = "none"
	AuthBearer = "bearer"
	AuthOIDC   = "oidc"
)

// Policy holds the approvals that sensitive actions need.
type Policy struct {
	// Version labels this policy (default "1"). Callers of sensitive
	// actions cite it as their policy reference, and it is recorded with
	// every policy decision.
	Version string `yaml:"version"`
	// Approvals grant sensitive actions.
	Approvals []Approval `yaml:"approvals"`
}

// Covers reports whether an approval in p names action or "*": whether
// governance is in place for the action, approvals revoked or expired
// included (they were put in place). A sensitive action that no approval
// covers runs as a simulation unless its agent sets dry_run: false.
func (p *Policy) Covers(action string) bool {
	for _, a := range p.Approvals {
		if slices.Contains(a.Actions, action) || slices.Contains(a.Actions, "*") {
			return true
		}
	}
	return false
}

// DryRun resolves a's dry_run: its own setting when given, else the default
// (simulation by default for a sensitive action that no approval covers).
// byDefault reports that a runs as a simulation only because of that
// default.
func (c *Config) DryRun(a *Agent) (dryRun, byDefault bool) {
	if a.DryRun != nil {
		return *a.DryRun, false
	}
	if a.Sensitive && !c.Policy.Covers(a.Action) {
		return true, true
	}
	return false, false
}

// Approval lets actors call sensitive actions; callers cite its ID.
type Approval struct {
	// ID is what callers cite as their approval reference (required,
	// unique).
	ID string `yaml:"id"`
	// Actions it covers: each a sensitive action, or "*" for all
	// (required).
	Actions []string `yaml:"actions"`
	// Actors it covers; empty means any. When Config.Actors is set, each
	// must be one of them.
	Actors []string `yaml:"actors"`
	// Expires ends the approval (RFC 3339 timestamp, or a date meaning
	// midnight UTC); nil never expires.
	Expires *time.Time `yaml:"expires"`
	// Revoked withdraws the approval (default false).
	Revoked bool `yaml:"revoked"`
}

// Parse parses and validates a configuration. filename is used only in error
// messages. The error, if any, is an Errors listing every problem found, each
// naming file, line, column and field path.
func Parse(data []byte, filename string) (*Config, error) {
	c, err := ParsePartial(data, filename)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ParsePartial is Parse for a checker that reports every problem at once:
// with errors it returns, beside them, the configuration as far as it could
// be read, so that the checks that need a parsed configuration (such as
// internal/node's Check: runtimes, contracts, definitions) can still
// run on the parts that parsed. That configuration must not be served. The
// configuration is nil only when data is not a YAML document.
func ParsePartial(data []byte, filename string) (*Config, error) {
	root, err := parseDocument(data, filename)
	if err != nil {
		return nil, err
	}
	w := newWalker(filename)
	c := &Config{file: filename}
	w.run(func() { w.config(root, c) })
	return c, w.errs.err()
}

// LoadPartial reads the configuration file at path and parses it with
// ParsePartial, resolving its store as Load does.
func LoadPartial(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := ParsePartial(data, path)
	if c != nil {
		c.Store = resolveStore(c.Store, filepath.Dir(path))
	}
	return c, err
}

// Load reads and parses the configuration file at path. A relative
// sqlite:// store path (written or the default) is resolved against the
// file's directory, so every command that reads the file finds the same
// store from any working directory. Parse, which has no file, leaves it
// as written.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	c.Store = resolveStore(c.Store, filepath.Dir(path))
	return c, nil
}

// resolveStore returns dsn with a relative sqlite:// file path joined to
// dir (percent-encoded as the driver decodes it); any other DSN, and one
// whose path does not decode, unchanged.
func resolveStore(dsn, dir string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok || !strings.EqualFold(scheme, "sqlite") {
		return dsn
	}
	rawPath, query, hasQuery := strings.Cut(rest, "?")
	p, err := url.PathUnescape(rawPath)
	if err != nil || p == "" || filepath.IsAbs(p) || p == ":memory:" || strings.HasPrefix(p, "file:") {
		return dsn
	}
	out := scheme + "://" + (&url.URL{Path: filepath.Join(dir, p)}).EscapedPath()
	if hasQuery {
		out += "?" + query
	}
	return out
}

// defaultYAML is the configuration served when there is no file.
const defaultYAML = `# pactum's built-in demo configuration.
agents:
  - name: echo
    type: echo
    description: Replies with the text it receives.
  - name: slow-echo
    type: echo
    description: Replies with the text it receives, after two seconds.
    echo:
      delay: 2s
      prefix: "slow: "
`

// Default returns the demo configuration used when there is no file: an
// `echo` agent (the default agent) and a `slow-echo` agent, with every other
// setting at its default.
func Default() *Config {
	c, err := Parse([]byte(defaultYAML), "<default>")
	if err != nil {
		panic("config: default configuration does not parse: " + err.Error())
	}
	return c
}

// File returns the file name the configuration was parsed from.
func (c *Config) File() string { return c.file }

// Agent returns the agent named name.
func (c *Config) Agent(name string) (Agent, bool) {
	for _, a := range c.Agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// baseDir resolves an empty base directory to the config file's directory.
func (c *Config) baseDir(dir string) string {
	if dir != "" || c.file == "" || c.file[0] == '<' {
		return dir
	}
	return filepath.Dir(c.file)
}

// Workers bounds the attempts that run at once on this node. Written
// `workers: N` it is one bound, N, for every agent's attempts together
// (All). Written as a mapping, or left out, the agents that start an
// operating-system process for each attempt (the exec runtime: a command,
// claude -p, codex exec) share one pool of Processes slots and every
// other agent (in process, or a call over the network) one of Others: a
// fast agent never waits for a slot that a process-spawning one holds,
// and the machine runs at most Processes such processes at once.
type Workers struct {
	// Processes bounds the attempts of process-spawning agents together
	// (`workers.processes`, default 16, 1..1024).
	Processes int `yaml:"processes" check:"min=1,max=1024"`
	// Others bounds the attempts of every other agent together
	// (`workers.others`, default 256, 1..1024).
	Others int `yaml:"others" check:"min=1,max=1024"`
	// All, set by `workers: N` (1..1024), is one bound for every agent;
	// Processes and Others are then 0.
	All int `yaml:"-"`
}
