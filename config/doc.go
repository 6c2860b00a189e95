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
// would open, is checked where the node is assembled (internal/server: Check,
// which `pactum config check` runs, and New). Those checks place their
// errors with Config.StoreError, AgentTypeError and AgentError, so they read
// like parse errors: file:line:column and field path.
//
// The file is plain YAML: there is no environment-variable expansion here;
// runtimes expand ${VAR} in their own settings where they document it. YAML
// anchors, aliases and merge keys (<<: *base) work as usual.
//
// docs/config.md is the reference for every key.
package config
