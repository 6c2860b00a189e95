package node

import (
	"context"
	"fmt"
	"slices"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/oidcauth"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// Check validates what config.Parse cannot: cfg's store DSN as the store
// driver would parse it to open it (store.Validate: nothing is opened,
// created or connected to), and every agent's runtime, built with agent.New
// so that each runtime validates its own settings, then closed again, and
// every contract of the contracts list, read, validated and compiled, and
// the definitions and workflows sections (definitions.go): the
// definition files read and each built on its runtime, workflow steps
// checked against the agents and definitions, and the card signing keys
// (cards.go) loaded. It
// reports every problem, with positions, as config.Errors: an unknown
// runtime type at the agent's `type`, settings errors where they are, other
// construction errors at the agent's settings (or the agent). The runtimes
// and store drivers known are those linked into the program: this package
// links the built-in ones. An empty baseDir means the directory of the
// configuration file. `pactum config check` runs it; New reports the same
// agent errors.
func Check(ctx context.Context, cfg *config.Config, baseDir string) error {
	var errs config.Errors
	if err := store.Validate(cfg.Store); err != nil {
		errs = append(errs, cfg.StoreError(err))
	}
	built, agentErrs, err := buildAgents(ctx, cfg, baseDir)
	errs = append(errs, agentErrs...)
	var reg *workflow.Registry
	if err == nil {
		var defs definitionSet
		var derrs config.Errors
		defs, reg, derrs, err = checkDefinitions(ctx, cfg, baseDir)
		errs = append(errs, derrs...)
		built = append(built, defs.built...)
	}
	_, contractErrs := loadContracts(cfg, baseDir, workflowActions(reg))
	errs = append(errs, contractErrs...)
	_, keyErrs := cardSigner(cfg, baseDir, nil)
	errs = append(errs, keyErrs...)
	if path, place := cfg.OIDCJWKS(baseDir); cfg.Auth == config.AuthOIDC && path != "" {
		if _, jerr := oidcauth.ReadJWKS(path); jerr != nil {
			errs = append(errs, place("cannot use the JWKS: "+jerr.Error(), jerr))
		}
	}
	for _, b := range built {
		if cerr := agent.Close(b.agent); cerr != nil {
			errs = append(errs, cfg.AgentError(b.config, fmt.Errorf("close: %w", cerr))...)
		}
	}
	if err != nil {
		return err
	}
	return errs.Err()
}

// builtAgent is an agent of the configuration, its runtime, its
// ToolSpec's check (nil without a toolspec) and its contract's gate (nil
// without a contract): what agentSpec builds its specs from, as itself
// and as a step of a run.
type builtAgent struct {
	config config.Agent
	agent  agent.Agent
	tool   task.Middleware
	gate   task.Middleware
	// contracts is what its card declares of its gate's contract (nil
	// without one).
	contracts *a2aserver.ContractsInfo
	// own is its own contract, and gateOpts the options its gate was
	// built with (nil and zero without one): what a negotiation of its
	// contract is decided and pinned by.
	own      *agentGate
	gateOpts contract.GateOptions
}

// buildAgents builds the runtime of every agent of cfg, in order, and
// returns those it built with every failure, placed in the file. err is set
// only when ctx ends. The caller closes what was built.
func buildAgents(ctx context.Context, cfg *config.Config, baseDir string) (built []builtAgent, errs config.Errors, err error) {
	known := agent.Types()
	tools, errs := loadToolSpecs(ctx, cfg, baseDir)
	for _, ac := range cfg.Agents {
		if err := ctx.Err(); err != nil {
			return built, errs, fmt.Errorf("build agents: %w", err)
		}
		// The contract is compiled whether or not the runtime builds, so
		// that one check reports both.
		gate, cerrs := buildContract(cfg, ac, baseDir)
		errs = append(errs, cerrs...)
		if !slices.Contains(known, ac.Type) {
			errs = append(errs, cfg.AgentTypeError(ac, known))
			continue
		}
		a, err := agent.New(ctx, agent.Spec(cfg.AgentSpec(ac, baseDir)))
		if err != nil {
			errs = append(errs, cfg.AgentError(ac, err)...)
			continue
		}
		b := builtAgent{config: ac, agent: a}
		if gate != nil {
			if cerr := gate.check(ac, a); cerr != nil {
				errs = append(errs, cerr)
				_ = agent.Close(a)
				continue
			}
			// File resources are looked for where the agent works.
			b.own, b.gateOpts = gate, contract.GateOptions{WorkDir: b.workDir(cfg, baseDir)}
			b.gate = gate.middleware(a, b.gateOpts)
			b.contracts = gate.contracts()
		}
		tool, terr := tools.stepFor(cfg, ac, a)
		if terr != nil {
			errs = append(errs, terr)
		}
		b.tool = tool
		built = append(built, b)
	}
	return built, errs, nil
}
