package toolspec

// ExecutionMode says where a tool runs.
type ExecutionMode string

// Execution modes.
const (
	// Local tools run in the agent's process and have no adapter.
	Local ExecutionMode = "local"
	// Remote tools call a backend through an adapter.
	Remote ExecutionMode = "remote"
)

// ToolSpec maps a tool to the adapter operation it calls. The field names
// are the seed's (snake_case): users and their tools write them.
type ToolSpec struct {
	ToolID        string        `json:"tool_id" yaml:"tool_id"`
	ExecutionMode ExecutionMode `json:"execution_mode" yaml:"execution_mode"`
	// AdapterID names the adapter contract (remote tools only), matching
	// ^[a-z0-9-]+$.
	AdapterID        string `json:"adapter_id,omitempty" yaml:"adapter_id,omitempty"`
	AdapterOperation string `json:"adapter_operation,omitempty" yaml:"adapter_operation,omitempty"`
	// AdapterContractVersion is the adapter contract version the ToolSpec
	// was written against (semver); its MAJOR must equal the contract's.
	AdapterContractVersion string `json:"adapter_contract_version,omitempty" yaml:"adapter_contract_version,omitempty"`
	// InputSchema and OutputSchema are JSON Schemas (2020-12) of what the
	// tool takes and gives.
	InputSchema  map[string]any `json:"input_schema,omitempty" yaml:"input_schema,omitempty"`
	OutputSchema map[string]any `json:"output_schema,omitempty" yaml:"output_schema,omitempty"`
}

// Status says whether an adapter contract may change.
type Status string

// Adapter contract statuses.
const (
	// Frozen contracts change only with a version bump that matches the
	// change (assertion 5).
	Frozen Status = "frozen"
	// Draft contracts may change freely.
	Draft Status = "draft"
)

// AdapterContract is the versioned interface of one backend adapter.
type AdapterContract struct {
	AdapterID string `json:"adapter_id" yaml:"adapter_id"`
	// Version is the contract's semantic version (MAJOR.MINOR.PATCH).
	Version    string               `json:"version" yaml:"version"`
	Status     Status               `json:"status" yaml:"status"`
	Operations map[string]Operation `json:"operations" yaml:"operations"`
}

// Operation is one operation of an adapter contract.
type Operation struct {
	InputSchema  map[string]any `json:"input_schema,omitempty" yaml:"input_schema,omitempty"`
	OutputSchema map[string]any `json:"output_schema,omitempty" yaml:"output_schema,omitempty"`
	Description  string         `json:"description,omitempty" yaml:"description,omitempty"`
}

// Catalogue is a set of adapter contracts: a catalogue file is a YAML (or
// JSON) document `{adapters: [AdapterContract…]}`.
type Catalogue struct {
	Adapters []AdapterContract `json:"adapters" yaml:"adapters"`
	// Source names where the catalogue came from (a file name, or
	// "default" for the built-in one), for errors; not part of the file.
	Source string `json:"-" yaml:"-"`
}

// Assertion numbers the six assertions of the seed.
type Assertion int

// The six assertions.
const (
	// AdapterIDRequired: a remote ToolSpec names an adapter_id matching
	// ^[a-z0-9-]+$; a local one names none.
	AdapterIDRequired Assertion = 1
	// AdapterExists: the adapter is in the registry.
	AdapterExists Assertion = 2
	// OperationExists: the operation is in the adapter's interface.
	OperationExists Assertion = 3
	// VersionCompatible: same MAJOR, and the operation still exists in
	// the current version.
	VersionCompatible Assertion = 4
	// FrozenUnchanged: a frozen contract does not change without a version
	// bump that matches the change.
	FrozenUnchanged Assertion = 5
	// Revalidated: the mapping is validated at registration and again
	// whenever the ToolSpec or the adapter contract changes.
	Revalidated Assertion = 6
)

// Violation is one failed assertion: which, for which ToolSpec (or
// adapter), on which field, and what would fix it.
type Violation struct {
	Assertion Assertion `json:"assertion"`
	ToolID    string    `json:"tool_id,omitempty"`
	AdapterID string    `json:"adapter_id,omitempty"`
	Field     string    `json:"field,omitempty"`
	Msg       string    `json:"message"`
	Fix       string    `json:"fix,omitempty"`
}

// Change kinds, as the seed classifies them.
type Bump int

// Version bumps, smallest first.
const (
	None Bump = iota
	Patch
	Minor
	Major
)
