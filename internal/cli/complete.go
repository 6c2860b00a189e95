package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// completeLimit is how many recent tasks a completion offers.
const completeLimit = 50

// completeTimeout bounds the store reads of one completion: a shell waits
// for it on every Tab.
const completeTimeout = 2 * time.Second

// completeTaskIDs completes a task id argument (or flag) with the ids of
// the newest tasks in the store the command's --config or --store names,
// each described by its agent and state.
func completeTaskIDs(cf *configFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 { // every TASK_ID command takes one
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return taskCompletions(cmd.Context(), cf, toComplete, func(*task.Task) bool { return true }, task.ListParams{PageSize: completeLimit})
	}
}

// completeRunIDs completes the RUN_ID of `runs report` with the newest
// workflow runs.
func completeRunIDs(cf *configFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := []string{workflow.Custom}
		for _, w := range workflow.Builtins() {
			names = append(names, w.Name)
		}
		if cfg, _, err := cf.load(); err == nil {
			for _, w := range cfg.Workflows {
				names = append(names, w.Name)
			}
		}
		slices.Sort(names)
		var out []cobra.Completion
		for _, n := range slices.Compact(names) {
			c, _ := taskCompletions(cmd.Context(), cf, toComplete, func(*task.Task) bool { return true },
				task.ListParams{Agent: workflow.RunAgent(n), PageSize: completeLimit})
			out = append(out, c...)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// taskCompletions lists the tasks p selects whose id starts with prefix,
// as "ID\tagent state". It offers nothing, and creates nothing, when the
// store cannot be opened or an SQLite store's file does not exist.
func taskCompletions(ctx context.Context, cf *configFlags, prefix string, keep func(*task.Task) bool, p task.ListParams) ([]cobra.Completion, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	// Opened read-only, a missing store is an error, never created; a TAB
	// does not wait for the integrity check to read the whole file.
	c, done, err := openCore(ctx, cf, glance)
	if err != nil {
		return nil, none
	}
	defer done()
	res, err := c.List(ctx, p)
	if err != nil {
		return nil, none
	}
	var out []cobra.Completion
	for _, t := range res.Tasks {
		if strings.HasPrefix(t.ID, prefix) && keep(t) {
			out = append(out, cobra.CompletionWithDesc(t.ID, fmt.Sprintf("%s %s %s", t.Agent, t.State, t.UpdatedAt.Format(time.DateTime))))
		}
	}
	return out, none
}

// completeStates completes --state with the task states; the flag takes a
// comma-separated list, so the part after the last comma is completed.
func completeStates(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	done, cur := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, cur = toComplete[:i+1], toComplete[i+1:]
	}
	var out []cobra.Completion
	for _, s := range task.States() {
		if strings.HasPrefix(string(s), cur) {
			out = append(out, done+string(s))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeAgents completes an agent name with the agents the command's
// configuration (or the built-in demo one) defines.
func completeAgents(cf *configFlags) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, _, err := cf.load()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, a := range cfg.Agents {
			if strings.HasPrefix(a.Name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(a.Name, a.Type))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
