package workflow

// This file holds the types the parts of the workflow engine share: the
// registry (registry.go), handoffs and their merge (handoff.go), the final
// report (report.go) and the run's decision logic (run.go).

// Workflow is a named sequence of phases: each phase one agent, or a
// parallel phase of several agents that run at once on the same prior
// handoffs.
type Workflow struct {
	// Name names the workflow ("feature", or a configured workflow's
	// name). The run's agent is served as RunAgent(Name).
	Name string `json:"name"`
	// Description says what it is for ("" when none).
	Description string `json:"description,omitempty"`
	// Phases run in order; a phase starts when every agent of the
	// previous one has delivered a valid handoff.
	Phases []Phase `json:"phases"`
	// Builtin is true for the built-in workflows (feature, bugfix,
	// refactor, security).
	Builtin bool `json:"builtin,omitempty"`
	// File and Line place a configured workflow in its configuration
	// file ("" and 0 for a built-in).
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// Phase is one phase of a workflow: the agents (definition names or
// configured agents' names) that run in it, in declared order. One agent
// is a sequential phase; several are a parallel phase.
type Phase struct {
	Agents []string `json:"agents"`
}

// Parallel reports whether the phase runs several agents at once.
func (p Phase) Parallel() bool { return len(p.Agents) > 1 }

// Agents returns the workflow's agents in order, a parallel phase's in
// declared order.
func (w *Workflow) Agents() []string {
	var out []string
	for _, p := range w.Phases {
		out = append(out, p.Agents...)
	}
	return out
}

// Handoff is what one agent hands to the next: the document under a
// "## HANDOFF: from -> to" heading, split into its sections.
type Handoff struct {
	// From is the agent named before "->"; a merged handoff names every
	// agent of its parallel phase, joined by ", ".
	From string `json:"from"`
	// To are the names after "->", split on commas, trimmed.
	To []string `json:"to"`
	// The required sections' bodies, trimmed ("None" when the agent said
	// there is nothing).
	Context         string `json:"context"`
	Findings        string `json:"findings"`
	FilesModified   string `json:"filesModified"`
	OpenQuestions   string `json:"openQuestions"`
	Recommendations string `json:"recommendations"`
	// The optional sections ("" when absent).
	TestResults    string `json:"testResults,omitempty"`
	SecurityStatus string `json:"securityStatus,omitempty"`
	// Summary is set instead of the sections when the final agent
	// answered with the final report's summary (a SUMMARY section) rather
	// than a handoff.
	Summary string `json:"summary,omitempty"`
}

// Expect is what the handoff of one step of a run must name.
type Expect struct {
	// From is the agent that writes it.
	From string `json:"from"`
	// To are the agents of the next phase, in declared order (empty for
	// the last step). The heading must name one of them, or, when there
	// are several, all of them separated by commas (any order).
	To []string `json:"to,omitempty"`
	// Last is true for the final phase's agents: the heading may name
	// anything after "->" (e.g. "done"), and the answer may be a summary
	// (a SUMMARY section) instead of a handoff.
	Last bool `json:"last,omitempty"`
}

// Recommendation is the final report's verdict.
type Recommendation string

// Recommendations (docs/workflows.md, "The recommendation").
const (
	Ship      Recommendation = "SHIP"
	NeedsWork Recommendation = "NEEDS WORK"
	Blocked   Recommendation = "BLOCKED"
)

// StepOutcome is how one agent of a run ended: the input of BuildReport.
type StepOutcome struct {
	// Agent is the agent (the step's name).
	Agent string `json:"agent"`
	// Task is the step's child task id ("" when it never started).
	Task string `json:"task,omitempty"`
	// State is the child's final state ("succeeded", "failed",
	// "dead_letter", "canceled"), or "not_run" for an agent whose phase
	// never started.
	State string `json:"state"`
	// Reason is the child's reason when it did not succeed (the handoff
	// violation, the agent's error).
	Reason string `json:"reason,omitempty"`
	// Handoff is the valid handoff it delivered (nil unless succeeded).
	Handoff *Handoff `json:"handoff,omitempty"`
	// Attempts is how many attempts the step took.
	Attempts int `json:"attempts,omitempty"`
	// DurationMs is how long the step took from its first attempt to
	// settling.
	DurationMs float64 `json:"durationMs,omitempty"`
}

// NotRun is the StepOutcome.State of an agent whose phase never started.
const NotRun = "not_run"

// Report is the final report of a run: the seed's INTEGRATION REPORT,
// as data. Text renders it; ParseReport reads the text back.
type Report struct {
	Workflow string `json:"workflow"`
	Task     string `json:"task"`
	// Agents are the workflow's agents in order (a parallel phase's in
	// declared order).
	Agents []string `json:"agents"`
	// Summary is one paragraph.
	Summary string `json:"summary"`
	// AgentOutputs has one line per agent, in Agents' order.
	AgentOutputs []AgentOutput `json:"agentOutputs"`
	// FilesChanged is the union of every handoff's Files Modified,
	// deduplicated, in first-seen order (empty when none).
	FilesChanged []string `json:"filesChanged"`
	// TestResults and SecurityStatus are what the handoffs reported in
	// their optional sections ("NOT RUN" when none did).
	TestResults    string `json:"testResults"`
	SecurityStatus string `json:"securityStatus"`
	// Recommendation is SHIP, NEEDS WORK or BLOCKED by the documented
	// rule; Reasons say why (empty for SHIP).
	Recommendation Recommendation `json:"recommendation"`
	Reasons        []string       `json:"reasons,omitempty"`
	// Steps are the outcomes the report was built from.
	Steps []StepOutcome `json:"steps,omitempty"`
}

// AgentOutput is one line of AGENT OUTPUTS.
type AgentOutput struct {
	Agent   string `json:"agent"`
	Summary string `json:"summary"`
}

// NotRunText is what TEST RESULTS and SECURITY STATUS say when no handoff
// reported them.
const NotRunText = "NOT RUN"
