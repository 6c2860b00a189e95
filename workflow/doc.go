// Package workflow composes agents into workflows: a known sequence of
// agents that pass validated handoffs to one another and end with one
// final report.
//
// This first part holds agent definitions: markdown files with YAML front
// matter (name, description, tools, model and pactum's runtime) and a
// role body, in the format of Claude Code's .claude/agents/*.md subagent
// files, so that existing definitions load as they are. ParseDefinition
// reads one file; Load reads definition directories and Resolve finds a
// definition by its exact name. The workflow engine comes later.
package workflow
