package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/trace"
)

// newTasksExportCmd is `tasks export`; cf are the tasks command's store
// flags.
func newTasksExportCmd(cf *configFlags) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export TASK_ID",
		Short: "Write a task and its descendants, with their histories, artifacts and records, as a trace file",
		Long: `Export writes the trace of a task: the task with its whole history and
artifacts, its execution record with the evidence stored on each record,
and the same for every task below it (a multi-step run and its steps), as
one versioned JSON document (docs/contracts.md, "Offline verification and
the trace format"). ` + "`pactum verify`" + ` checks a trace against a contract.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := openCore(cmd.Context(), cf, readOnly)
			if err != nil {
				return err
			}
			defer done()
			tr, err := trace.Export(cmd.Context(), c, args[0], time.Now())
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := tr.Encode(&buf); err != nil {
				return fmt.Errorf("encode trace: %w", err)
			}
			if out == "" || out == "-" {
				_, err := cmd.OutOrStdout().Write(buf.Bytes())
				return err
			}
			if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
				return fmt.Errorf("write trace: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "file to write the trace to (default: standard output)")
	return cmd
}

// usageError is an exit status 2 error: the input cannot be used (a bad
// contract, a bad trace), as opposed to a check that failed (status 1).
func usageError(err error) error { return &exitErr{code: 2, err: err} }

// withExitCode gives err exit status code unless it sets one already (a
// failed check's 1); nil stays nil.
func withExitCode(code int, err error) error {
	var ee *exitErr
	if err == nil || errors.As(err, &ee) {
		return err
	}
	return &exitErr{code: code, err: err}
}

// exitErr is an error that sets the exit status.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return e.err.Error() }
func (e *exitErr) Unwrap() error { return e.err }

func newVerifyCmd() *cobra.Command {
	var (
		contractPath, tracePath, step, workDir, wfName string
		asJSON                                         bool
	)
	cf := &configFlags{local: true}
	cmd := &cobra.Command{
		Use:   "verify (--contract FILE | --workflow NAME) --trace FILE",
		Short: "Check a recorded trace against a contract without running anything",
		Long: `Verify checks a trace (` + "`pactum tasks export`" + `) against a contract: for each
step of the contract it finds the task that ran it (in a trace of a
multi-step run, the child whose step is the step's id; in a trace of one
task, that task, as --step or its only step), and runs the step's
pre-gate and post-gate on what the task recorded: its final artifacts and
status message as the output, its last attempt's duration, the resources
earlier steps created and which steps succeeded. It prints each step's
verdict with every failed assertion and its reason; a step no task ran is
reported as not run.

A workflow run (pactum run, MCP run_workflow) is checked with --workflow
NAME: against the contract pactum writes for the workflow of the
configuration (--config, default ./pactum.yaml when it exists; for custom,
the agents the run recorded), the one pactum contract show workflow.NAME
prints.

A trace records the contract it ran under (its id and digest): verifying
it against another contract is refused.

Exit status: 0 when every step passed, 1 when any failed, was blocked by
its pre-gate or did not run, 2 when the contract or the trace cannot be
used.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (contractPath == "") == (wfName == "") || tracePath == "" {
				return usageError(errors.New("verify needs --contract FILE or --workflow NAME, and --trace FILE"))
			}
			data, err := os.ReadFile(tracePath)
			if err != nil {
				return usageError(fmt.Errorf("trace: %w", err))
			}
			tr, err := trace.Decode(data)
			if err != nil {
				return usageError(fmt.Errorf("trace %s:\n%w", tracePath, indentErr(err)))
			}
			var compiled *contract.Compiled
			if wfName != "" {
				cfg, baseDir, err := cf.load()
				if err != nil {
					return usageError(err)
				}
				w, err := workflowForTrace(cfg, baseDir, wfName, tr)
				if err != nil {
					return usageError(err)
				}
				if compiled, err = contract.Compile(w.Contract()); err != nil {
					return usageError(fmt.Errorf("the contract of workflow %s: %w", wfName, err))
				}
			} else if _, compiled, err = contract.LoadWith(contractPath, contract.ValidateOptions{}); err != nil {
				return usageError(fmt.Errorf("contract %s:\n%w", contractPath, indentErr(err)))
			}
			rep, err := trace.Verify(cmd.Context(), compiled, tr, trace.Options{Step: step, WorkDir: workDir})
			if err != nil {
				return usageError(err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := printJSON(out, rep); err != nil {
					return err
				}
			} else {
				printVerifyReport(out, rep, tracePath)
			}
			if !rep.Passed {
				return &exitErr{code: 1, err: fmt.Errorf("contract %s not met: %s", rep.Contract, failedSummary(rep))}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&contractPath, "contract", "", "contract file (YAML or JSON)")
	cmd.Flags().StringVar(&wfName, "workflow", "", "check a workflow run against the contract of this workflow of the configuration")
	cmd.Flags().StringVarP(&cf.path, "config", "c", "", "configuration file whose workflow --workflow names (default: ./"+localConfig+" when it exists, else the built-in default)")
	cmd.Flags().StringVar(&tracePath, "trace", "", "trace file (pactum tasks export)")
	cmd.Flags().StringVar(&step, "step", "", "check only this step (for a trace of one task: the step it ran)")
	cmd.Flags().StringVar(&workDir, "workdir", "", "directory file resources are read from (default: the current directory)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report, with each step's verified result, as JSON")
	return cmd
}

// indentErr puts each line of a multi-line error under its heading.
func indentErr(err error) error {
	return errors.New("  " + strings.ReplaceAll(err.Error(), "\n", "\n  "))
}

// printVerifyReport prints a verification report: a line per step with its
// verdict, then the failed checks under it.
func printVerifyReport(out io.Writer, rep *trace.Report, tracePath string) {
	fmt.Fprintf(out, "contract %s, trace %s (task %s)\n", rep.Contract, tracePath, rep.TaskID)
	width := 0
	for _, s := range rep.Steps {
		width = max(width, len(s.Step))
	}
	for _, s := range rep.Steps {
		verdict := strings.ReplaceAll(string(s.Status), "_", " ")
		line := fmt.Sprintf("step %-*s  %-7s", width, s.Step, verdict)
		if s.TaskID != "" {
			line += fmt.Sprintf("  task %s (agent %s, %s)", s.TaskID, s.Agent, s.State)
		}
		if vr := s.VerifiedResult; vr != nil {
			n := len(vr.Verification.PostGate.Results)
			line += "  " + plural(n, "check", "checks")
			if vr.Executed {
				line += ", ran " + msDuration(vr.Verification.Timing.ExecutionMs)
			}
		}
		fmt.Fprintln(out, strings.TrimRight(line, " "))
		if s.Status == trace.StatusNotRun {
			fmt.Fprintf(out, "  not run  %s\n", s.Reason)
			continue
		}
		vr := s.VerifiedResult
		if vr == nil {
			continue
		}
		printGateProblems(out, vr.Verification)
	}
	passed := 0
	for _, s := range rep.Steps {
		if s.Status == trace.StatusPassed {
			passed++
		}
	}
	verdict := "passed"
	if !rep.Passed {
		verdict = "failed"
	}
	fmt.Fprintf(out, "%s: %d of %s passed\n", verdict, passed, plural(len(rep.Steps), "step", "steps"))
}

// failedSummary names the steps that did not pass: "review failed,
// summarize not run".
func failedSummary(rep *trace.Report) string {
	var parts []string
	for _, s := range rep.Steps {
		if s.Status != trace.StatusPassed {
			parts = append(parts, s.Step+" "+strings.ReplaceAll(string(s.Status), "_", " "))
		}
	}
	return strings.Join(parts, ", ")
}
