package contract

// AgentContract is a contract: the steps of a piece of agent work, the
// resources they create and consume, the resource validators, and how
// strictly its assertions are held.
type AgentContract struct {
	// Version is the contract format's version ("1.0").
	Version string `json:"version" yaml:"version"`
	// ID names the contract (a configured contract is served under it).
	ID string `json:"id" yaml:"id"`
	// Protocol names the protocol the contract was made from or for
	// ("a2a", "autogen", "crewai", "langgraph", "mcp", "specwright"; empty
	// for pactum's own).
	Protocol    string `json:"protocol,omitempty" yaml:"protocol,omitempty"`
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Strictness says which failed assertions fail a step (default loose).
	Strictness Strictness         `json:"strictness,omitempty" yaml:"strictness,omitempty"`
	Steps      []ContractStep     `json:"steps" yaml:"steps"`
	Resources  []ContractResource `json:"resources,omitempty" yaml:"resources,omitempty"`
	// Validators check resources by type after each step that creates
	// them (and before each step that consumes them).
	Validators []ResourceValidator `json:"validators,omitempty" yaml:"validators,omitempty"`
	Metadata   map[string]any      `json:"metadata,omitempty" yaml:"metadata,omitempty"`
}

// ContractStep is one step: which agent runs it, what it creates and
// consumes (resource ids), which steps must have succeeded before it, the
// assertions its output must satisfy, and what a violation does.
type ContractStep struct {
	ID          string              `json:"id" yaml:"id"`
	Agent       string              `json:"agent,omitempty" yaml:"agent,omitempty"`
	Description string              `json:"description,omitempty" yaml:"description,omitempty"`
	Creates     []string            `json:"creates,omitempty" yaml:"creates,omitempty"`
	Consumes    []string            `json:"consumes,omitempty" yaml:"consumes,omitempty"`
	DependsOn   []string            `json:"dependsOn,omitempty" yaml:"dependsOn,omitempty"`
	Assertions  []ContractAssertion `json:"assertions,omitempty" yaml:"assertions,omitempty"`
	// OnViolation is what a failed post-gate does (default fail).
	OnViolation Violation      `json:"onViolation,omitempty" yaml:"onViolation,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty" yaml:"metadata,omitempty"`
}

// ResourceType is what kind of thing a resource is.
type ResourceType string

// Resource types.
const (
	ResourceFile     ResourceType = "file"     // a file under the agent's working directory
	ResourceData     ResourceType = "data"     // structured data (a data part)
	ResourceMessage  ResourceType = "message"  // a message's text
	ResourceArtifact ResourceType = "artifact" // a named artifact
)

// ContractResource is something a step creates and later steps consume.
type ContractResource struct {
	ID   string       `json:"id" yaml:"id"`
	Type ResourceType `json:"type" yaml:"type"`
	// Location is where it is: a file's path (relative to the working
	// directory), an artifact's name.
	Location string `json:"location,omitempty" yaml:"location,omitempty"`
	// Format names its format ("json", "markdown", "typescript", …).
	Format string `json:"format,omitempty" yaml:"format,omitempty"`
	// Schema is a JSON Schema (2020-12) its content must match.
	Schema   map[string]any `json:"schema,omitempty" yaml:"schema,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty" yaml:"metadata,omitempty"`
}

// AssertionType says how much an assertion weighs (see Strictness).
type AssertionType string

// Assertion types.
const (
	Assert  AssertionType = "assert"
	Suggest AssertionType = "suggest"
)

// ContractAssertion is one thing a step's output must hold: Message says
// it for people (and is the feedback an agent gets on a retry), Condition
// optionally restates it, Check makes it machine-checkable.
type ContractAssertion struct {
	Type      AssertionType `json:"type" yaml:"type"`
	Condition string        `json:"condition,omitempty" yaml:"condition,omitempty"`
	Message   string        `json:"message" yaml:"message"`
	Check     Check         `json:"check" yaml:"check"`
}

// ResourceValidator applies the check named by Type (exists, schema_match,
// or a custom validator's name) to every resource whose type is in
// ResourceTypes ("*" for all).
type ResourceValidator struct {
	Type          string         `json:"type" yaml:"type"`
	ResourceTypes []string       `json:"resourceTypes,omitempty" yaml:"resourceTypes,omitempty"`
	Config        map[string]any `json:"config,omitempty" yaml:"config,omitempty"`
}

// Strictness says which failed assertions fail a gate.
type Strictness string

// Strictness levels.
const (
	// Strict fails on any failed assertion, suggest included.
	Strict Strictness = "strict"
	// Loose fails only on a failed assert; a failed suggest is recorded.
	Loose Strictness = "loose"
	// Permissive records every result and never fails.
	Permissive Strictness = "permissive"
)

// Violation is what a step's failed gate does.
type Violation string

// Violation policies.
const (
	// ViolationRetry runs the step again with the failed assertions'
	// messages added to the agent's next input as a user turn, bounded by
	// the agent's attempts.
	ViolationRetry Violation = "retry"
	// ViolationEscalate moves the task to input_required with the
	// violation as its question; an answer resumes it.
	ViolationEscalate Violation = "escalate"
	// ViolationFail fails the task with task.CodeContractViolation.
	ViolationFail Violation = "fail"
	// ViolationContinue records the verdict and delivers the answer.
	ViolationContinue Violation = "continue"
)
