package config

import (
	"errors"
	"fmt"
	"strings"
)

// The methods below place problems found after parsing, by code that builds
// what the configuration describes (internal/server's Check and New), at
// the position of the key they concern, so that they read like parse
// errors: file:line:column and field path.

// StoreError places err, a problem with the store DSN (such as
// store.Validate's), at the `store` key.
func (c *Config) StoreError(err error) *Error {
	// The field path already says "store".
	msg := strings.TrimPrefix(err.Error(), "store: ")
	return &Error{File: c.file, Line: c.storeLine, Column: c.storeCol, Path: "store", Msg: msg, Err: err}
}

// AgentTypeError reports that agent a's runtime type is not one of known
// (the runtime types linked into the program), at the agent's `type`.
func (c *Config) AgentTypeError(a Agent, known []string) *Error {
	return &Error{
		File: c.file, Line: a.typeLine, Column: a.typeCol, Path: c.agentPath(a) + ".type",
		Msg: fmt.Sprintf("unknown runtime type %q (known: %s)", a.Type, quoteList(known)),
	}
}

// AgentError places err, from building agent a's runtime, as Errors:
// settings errors (from the spec's Decode) already carry their positions;
// anything else is reported at the agent's settings key, or at the agent
// when it has no settings.
func (c *Config) AgentError(a Agent, err error) Errors {
	var es Errors
	if errors.As(err, &es) && len(es) > 0 {
		return es
	}
	path := c.agentPath(a)
	e := &Error{File: c.file, Line: a.Line, Column: a.column, Path: path, Msg: err.Error(), Err: err}
	if a.Settings != nil {
		e.Line, e.Column, e.Path = a.settingsLine, a.settingsCol, path+"."+a.Type
	}
	return Errors{e}
}

// Err returns es as an error sorted in file order, or nil when es is empty
// (never a typed nil).
func (es Errors) Err() error { return es.err() }
