package config

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/store"
)

// Check validates c's store DSN as the store driver would parse it to open
// it (store.Validate: nothing is opened, created or connected to), then
// builds every agent of c with agent.New, so that each runtime validates its
// own settings, and closes them again. It reports every
// problem, with positions, as Errors: an unknown runtime type at the agent's
// `type`, settings errors where they are, other construction errors at the
// agent. Only runtimes and store drivers linked into the program are known;
// the command line links the built-in ones (package agent/builtin,
// store/sqlite and store/postgres). An empty baseDir means the
// directory of the configuration file.
func Check(ctx context.Context, c *Config, baseDir string) error {
	var errs Errors
	if err := store.Validate(c.Store); err != nil {
		// The field path already says "store".
		msg := strings.TrimPrefix(err.Error(), "store: ")
		errs = append(errs, &Error{File: c.file, Line: c.storeLine, Column: c.storeCol, Path: "store", Msg: msg, Err: err})
	}
	known := agent.Types()
	for _, a := range c.Agents {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("config: check: %w", err)
		}
		path := c.agentPath(a)
		if !slices.Contains(known, a.Type) {
			errs = append(errs, &Error{
				File: c.file, Line: a.typeLine, Column: a.typeCol, Path: path + ".type",
				Msg: fmt.Sprintf("unknown runtime type %q (known: %s)", a.Type, quoteList(known)),
			})
			continue
		}
		ag, err := agent.New(ctx, c.AgentSpec(a, baseDir))
		if err != nil {
			errs = append(errs, c.agentError(a, path, err)...)
			continue
		}
		if err := agent.Close(ag); err != nil {
			errs = append(errs, c.agentError(a, path, fmt.Errorf("close: %w", err))...)
		}
	}
	return errs.err()
}

// agentError places an error from building agent a: settings errors already
// carry their positions; anything else is reported at the agent's settings,
// or at the agent when it has none.
func (c *Config) agentError(a Agent, path string, err error) Errors {
	var es Errors
	if errors.As(err, &es) && len(es) > 0 {
		return es
	}
	e := &Error{File: c.file, Line: a.Line, Column: a.column, Path: path, Msg: err.Error(), Err: err}
	if a.Settings != nil {
		e.Line, e.Column, e.Path = a.settingsLine, a.settingsCol, path+"."+a.Type
	}
	return Errors{e}
}
