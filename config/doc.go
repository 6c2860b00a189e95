// Package config reads pactum's configuration file (pactum.yaml) into a
// Config: the server's settings, the agents it serves, the actors allowed to
// call them and the approvals that sensitive actions need.
//
// Parsing is strict and complete: unknown keys, wrong types, bad durations,
// out-of-range numbers and inconsistent references are all reported in one
// go, each as an Error naming the file, line, column and field path:
//
//	pactum.yaml:14:7: agents[1].exec.comand: unknown field "comand" (did you mean "command"?)
//
// Every default is applied by Parse, so a Config is ready to use. Each agent's
// runtime settings (the mapping under the key named after its type, such as
// `exec:`) stay a yaml.Node until the runtime decodes them through the
// RuntimeSpec that Config.AgentSpec returns, with the same strictness and
// positions.
//
// Package config imports no other pactum package: parsing never builds a
// runtime or opens a store. Whether each agent's runtime type is linked in
// and accepts its settings, and whether the store DSN is one its driver
// would open, is checked where the node is assembled (internal/node: Check,
// which `pactum config check` runs, and New). Those checks place their
// errors with Config.StoreError, AgentTypeError and AgentError, so they read
// like parse errors: file:line:column and field path.
//
// The file is plain YAML: there is no environment-variable expansion here;
// runtimes expand ${VAR} in their own settings where they document it. YAML
// anchors, aliases and merge keys (<<: *base) work as usual.
//
// # Adding a section
//
// A new top-level section (such as `contracts:` or `workflows:`) needs no
// walker code of its own. Declare its struct, with a `yaml` tag on every
// field, a doc comment that says its default, and a `check` tag for the
// constraints on a value:
//
//	type Contracts struct {
//		// Mode is enforce or observe (`mode`, default enforce).
//		Mode string `yaml:"mode" check:"oneof=enforce|observe"`
//		// Attempts … (`attempts`, default 3, 1..10).
//		Attempts int `yaml:"attempts" check:"min=1,max=10"`
//		// Every … (`every`, default 1m, > 0).
//		Every Duration `yaml:"every" check:"min=1ns"`
//	}
//
// then add it to Config and one line to the top-level handlers in parse.go:
//
//	"contracts": func(n *yaml.Node, path string) { w.section(n, path, &c.Contracts) },
//
// w.section decodes by the `yaml` tags (nested structs, lists and maps
// too): unknown keys are errors with a "did you mean" suggestion, wrong
// types, bad durations ("30s") and values outside `check` are errors, each
// at file:line:column and field path, as everywhere else; aliases and merge
// keys work; a null or absent key leaves the field as it was. The `check`
// constraints are min and max for integers, min for durations (0: not
// negative, 1ns: positive), oneof (values separated by |) and nonempty for
// strings. Apply defaults in setDefaults (defaults.go) and checks that span
// fields or sections after the walk, as crossCheck does. The push and log
// sections are decoded this way; section_internal_test.go shows the errors.
//
// docs/config.md is the reference for every key.
package config
