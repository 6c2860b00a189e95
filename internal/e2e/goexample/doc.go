// Package goexample builds and runs the README's Go example as a test:
// the ```go block between the markers <!-- go-example:begin --> and
// <!-- go-example:end --> in README.md is written, as it stands, into
// main.go of a fresh module that requires pactum and replaces it with this
// checkout; the program is built and run, and its agent is read and called
// over HTTP with the official A2A Go client. The test fails when the block
// is not a gofmt-formatted complete program, when it does not build, when
// its card or answer differ from what the README says, or when it does not
// exit 0 on SIGTERM.
//
// The one change made to the text: the example's listen address
// (127.0.0.1:9000) becomes a free loopback port, so the test cannot meet
// a server another test (or a developer) has running.
package goexample
