// Package toolspec keeps the mapping from the tools pactum's agents call to
// the backend operations behind them from changing silently (the seed
// adapter-contract-assertions.md). A ToolSpec maps a tool to an operation
// of a tool adapter contract: a versioned (semver), possibly frozen list
// of the operations a backend offers, with their input and output
// schemas. Six assertions hold every mapping: at registration (the
// configuration), at every attempt (a pipeline step), and whenever a
// ToolSpec or an adapter contract changes. Catalogue changes are
// classified (MAJOR, MINOR, PATCH) against a lock file, so a change
// without the right version bump is refused wherever it is checked.
package toolspec
