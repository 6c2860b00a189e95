// Package frameworks runs docs/frameworks.md, the path from a framework's
// agent to a verified pactum agent, as written: a LangGraph graph on the
// real JS Agent Server, imported with `pactum contract import`, served by
// the real `pactum serve` with the imported contract on its agent, called
// by the official A2A JavaScript client (@a2a-js/sdk, pinned in
// internal/e2e/interop/js), and its run exported from the thread's history
// with `pactum contract trace` and judged offline by `pactum verify`. The
// package has no API.
//
// The test takes every file and command from the document's marked blocks
// (<!-- frameworks-NAME --> … <!-- /frameworks-NAME -->) and replaces only
// the documented addresses (127.0.0.1:2024, 127.0.0.1:9000) by free ones.
// Without node or the pinned npm packages it is skipped, or fails when
// PACTUM_REQUIRE_INTEROP=1 (CI sets it).
package frameworks
