// Package interop holds pactum's interoperability evidence: tests that build
// the pactum binary, run it as a real subprocess on loopback, and drive it
// with the official A2A clients — the Go SDK (github.com/a2aproject/a2a-go/v2)
// in interop_test.go and the JavaScript SDK (@a2a-js/sdk, pinned in
// js/package.json) through js/interop.mjs. The package has no API; see
// docs/interop.md for what is checked and how to run it.
package interop
