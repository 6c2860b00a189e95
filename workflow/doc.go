// Package workflow composes agents into workflows: a known sequence of
// agents that pass validated handoffs to one another and end with one
// final report.
//
//   - Agent definitions (definition.go, definitions.go) are markdown files
//     with YAML front matter (name, description, tools, model and pactum's
//     runtime) and a role body, in the format of Claude Code's
//     .claude/agents/*.md subagent files, so that existing definitions
//     load as they are. ParseDefinition reads one file; Load reads
//     definition directories and Resolve finds a definition by its exact
//     name.
//   - The registry (registry.go) holds the built-in workflows (feature,
//     bugfix, refactor, security), the configured ones and custom.
//   - Handoffs (handoff.go) are parsed, checked against what a step must
//     hand over (CheckHandoff, Expect) and merged for a parallel phase in
//     declared order (Merge).
//   - A workflow is a contract pactum writes for it (check.go: Contract,
//     with a sections check and the handoff check this package registers);
//     a step's gate (Gate) runs that contract's gate around the agent, so
//     a malformed handoff is retried with its problems as feedback.
//   - A run (run.go: Runner) is a durable parent task whose children are
//     the agents; it keeps nothing between calls, so a run resumed after a
//     crash goes on from the store, and ends with the final report
//     (report.go: BuildReport, Text, ParseReport) as its artifact.
package workflow
