package config

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The methods below place problems found after parsing, by code that builds
// what the configuration describes (internal/node's Check and New), at
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
		if key, v, msg, ok := settingAt(a.Settings, err); ok {
			e.Line, e.Column, e.Path, e.Msg = v.Line, v.Column, e.Path+"."+key, msg
		}
	}
	return Errors{e}
}

// settingAt finds the setting a runtime's construction error names: a
// runtime names the offending setting first ("url: …"), under the
// registry's prefix ("agent "a" (webhook): "). It returns the key, its
// value's node and the message without the key.
func settingAt(settings *yaml.Node, err error) (key string, v *yaml.Node, msg string, ok bool) {
	inner := err
	if u := errors.Unwrap(err); u != nil && strings.HasSuffix(err.Error(), ": "+u.Error()) {
		inner = u
	}
	text := inner.Error()
	key, rest, found := strings.Cut(text, ": ")
	if !found || settings.Kind != yaml.MappingNode {
		return "", nil, "", false
	}
	// A dotted key names a setting inside a mapping ("oauth2.token_url"):
	// the deepest node of it that is written places the error.
	node := settings
	for i, seg := range strings.Split(key, ".") {
		next := valueOf(node, seg)
		if next == nil {
			if i == 0 {
				return "", nil, "", false
			}
			break
		}
		node = next
	}
	return key, node, rest, true
}

// valueOf returns the value of key in mapping n, or nil.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Err returns es as an error sorted in file order, or nil when es is empty
// (never a typed nil).
func (es Errors) Err() error { return es.err() }
