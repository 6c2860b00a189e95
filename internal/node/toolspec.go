package node

import (
	"context"
	"errors"
	"fmt"
	"os"

	mcpagent "github.com/pactum/pactum/agent/mcp"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/toolspec"
)

// toolSpecs is a configuration's ToolSpecs, decoded and checked, and the
// source of the adapter contracts they are re-checked against before
// every attempt.
type toolSpecs struct {
	// byID holds the ToolSpecs that decoded, by tool_id.
	byID map[string]toolspec.ToolSpec
	// contracts is the registry of the default catalogue and the
	// `adapters:` files, re-read when a file changes; nil when the
	// configuration names no ToolSpec.
	contracts *toolspec.Reloader
}

// loadCatalogues reads the `adapters:` files of cfg and builds the
// registry of the default catalogue and them. Problems are placed: a file
// that cannot be read at its entry in the configuration, a catalogue's
// own errors in the catalogue file (file:line).
func loadCatalogues(cfg *config.Config, baseDir string) (*toolspec.Registry, config.Errors) {
	cats := []*toolspec.Catalogue{toolspec.Default()}
	var errs config.Errors
	for i := range cfg.Adapters {
		path, at := cfg.AdapterPath(i, baseDir)
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, at(fmt.Sprintf("read catalogue: %v", err), err))
			continue
		}
		c, err := toolspec.ParseCatalogue(path, data)
		if err != nil {
			errs = append(errs, parseErrors(err, at)...)
			continue
		}
		cats = append(cats, c)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	reg, err := toolspec.NewRegistry(cats...)
	if err != nil {
		return nil, parseErrors(err, nil)
	}
	return reg, nil
}

// parseErrors turns the errors of package toolspec's decoders into
// config errors at their file:line; other errors are placed by at.
func parseErrors(err error, at func(msg string, err error) *config.Error) config.Errors {
	var pes toolspec.ParseErrors
	if errors.As(err, &pes) && len(pes) > 0 {
		out := make(config.Errors, len(pes))
		for i, pe := range pes {
			out[i] = &config.Error{File: pe.File, Line: pe.Line, Path: pe.Path, Msg: pe.Msg, Err: err}
		}
		return out
	}
	if at == nil {
		return config.Errors{&config.Error{Msg: err.Error(), Err: err}}
	}
	return config.Errors{at(err.Error(), err)}
}

// loadToolSpecs decodes cfg's ToolSpecs and checks each against the
// adapter contracts (assertions 1–4; a live MCP one, adapter_id mcp, only
// once its agent's server is reached). Every violation is an error at
// the ToolSpec's field in the configuration, naming the assertion and the
// fix. ctx bounds the first read of the catalogues.
func loadToolSpecs(ctx context.Context, cfg *config.Config, baseDir string) (*toolSpecs, config.Errors) {
	out := &toolSpecs{byID: map[string]toolspec.ToolSpec{}}
	if len(cfg.ToolSpecs) == 0 && len(cfg.Adapters) == 0 {
		return out, nil
	}
	reg, errs := loadCatalogues(cfg, baseDir)
	for i := range cfg.ToolSpecs {
		src := cfg.ToolSpecSource(i)
		ts, es := decodeToolSpec(src)
		if es != nil {
			errs = append(errs, es...)
			continue
		}
		out.byID[ts.ToolID] = ts
		if toolspec.IsLive(ts) {
			// The server is the contract: assertion 1 here, the rest
			// where the server answers.
			if ts.ExecutionMode != toolspec.Remote {
				errs = append(errs, src.Error("execution_mode", fmt.Sprintf("assertion 1 (%s) failed for ToolSpec %q: adapter_id %q (the MCP server) is for remote ToolSpecs; fix: set execution_mode: remote", toolspec.AdapterIDRequired, ts.ToolID, ts.AdapterID), nil))
			}
			continue
		}
		if reg == nil {
			continue // the catalogues' errors are reported
		}
		for _, v := range reg.Check(ts) {
			errs = append(errs, src.Error(v.Field, v.Error(), v))
		}
	}
	if len(errs) > 0 {
		return out, errs
	}
	// The first build's contracts are the accepted ones; a reload that
	// changes a frozen contract without the bump it needs fails the
	// ToolSpecs of that adapter (assertion 5) until it is bumped or undone.
	guard := toolspec.NewBumpGuard(toolspec.CheckContractBump)
	build := func(context.Context) (toolspec.Checker, error) {
		reg, errs := loadCatalogues(cfg, baseDir)
		if len(errs) > 0 {
			return nil, errs
		}
		return guard.Admit(reg), nil
	}
	r, err := toolspec.NewReloader(ctx, CatalogueFiles(cfg, baseDir), build)
	if err != nil {
		return out, parseErrors(err, nil)
	}
	out.contracts = r
	return out, nil
}

// CatalogueFiles returns the `adapters:` catalogue files of cfg, resolved
// against baseDir (the configuration file's directory) as serve reads
// them.
func CatalogueFiles(cfg *config.Config, baseDir string) []string {
	files := make([]string, len(cfg.Adapters))
	for i := range cfg.Adapters {
		files[i], _ = cfg.AdapterPath(i, baseDir)
	}
	return files
}

// stepFor returns the "toolspec" pipeline step of agent ac built as a,
// nil when ac names no ToolSpec, or the error that ac cannot have its
// ToolSpec (a live MCP one on an agent that is not an MCP tool, or that
// maps another tool than the agent calls).
func (t *toolSpecs) stepFor(cfg *config.Config, ac config.Agent, a any) (task.Middleware, *config.Error) {
	if ac.ToolSpec == "" {
		return nil, nil
	}
	ts, ok := t.byID[ac.ToolSpec]
	if !ok {
		return nil, nil // its decoding errors are reported
	}
	if !toolspec.IsLive(ts) {
		if t.contracts == nil {
			return nil, nil // the catalogues' errors are reported
		}
		return toolspec.Step(ts, t.contracts), nil
	}
	rt, ok := a.(*mcpagent.Runtime)
	if !ok {
		return nil, cfg.ToolSpecError(ac, fmt.Sprintf("toolspec %q has adapter_id %s: its adapter contract is the MCP server the agent calls, so the agent must be of type mcp, not %s", ts.ToolID, toolspec.LiveAdapter, ac.Type), nil)
	}
	if rt.ToolName() != ts.AdapterOperation {
		return nil, cfg.ToolSpecError(ac, fmt.Sprintf("toolspec %q maps adapter_operation %q, but the agent calls tool %q; name the same tool in both", ts.ToolID, ts.AdapterOperation, rt.ToolName()), nil)
	}
	return toolspec.Step(ts, toolspec.LiveSource{List: liveTools(rt)}), nil
}

// liveTools lists an MCP runtime's tools as package toolspec takes them.
func liveTools(rt *mcpagent.Runtime) func(ctx context.Context) ([]toolspec.LiveTool, error) {
	return func(ctx context.Context) ([]toolspec.LiveTool, error) {
		tools, err := rt.Tools(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]toolspec.LiveTool, len(tools))
		for i, t := range tools {
			out[i] = toolspec.LiveTool{Name: t.Name, InputSchema: t.InputSchema}
		}
		return out, nil
	}
}
