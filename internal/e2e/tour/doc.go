// Package tour runs the README's 30-second tour verbatim, as a test: the
// shell block between the markers <!-- tour:begin --> and <!-- tour:end -->
// in README.md, under bash -euo pipefail, in a fresh copy of the
// repository, with `go install` writing into a temporary GOBIN put first on
// PATH. The test fails when the tour exits non-zero, when it runs longer
// than three minutes, or when it leaves a process it started running.
//
// The one change made to the text: the tour's fixed loopback addresses
// (127.0.0.1:9000 and 127.0.0.1:9001) become two free ports below the
// kernel's ephemeral range, so the tour cannot meet a server another test
// (or a developer) has running, nor a port another test took with :0.
package tour
