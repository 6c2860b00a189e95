// Package mcpagent is the "mcp" agent runtime: it makes one tool of an MCP
// (Model Context Protocol) server a pactum agent. Each attempt of a task
// calls the tool once with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) and maps the tool's result onto
// the domain: artifacts, a final agent message, or an error that says
// whether a retry can help.
//
// The server is either a program that speaks MCP on its standard input and
// output (Settings.Command), started by the runtime, or a streamable-HTTP
// endpoint (Settings.URL).
//
// # Sessions
//
// A runtime holds at most one client session, opened by the first attempt
// that needs it and shared by all later and concurrent ones; Close ends it
// (and stops the server program). A session whose server went away (the
// program exited, the connection broke) is dropped: the attempt that saw it
// fails with a retryable error, unless its request never left pactum, in
// which case it is sent again on a new session at once. The next attempt
// starts the server again. The first restart after a good call is
// immediate; further ones in a row wait Settings.RestartBackoff, doubled
// each time up to Settings.MaxRestartBackoff, so that a server that keeps
// crashing is not restarted in a tight loop.
//
// The server program runs in its own process group. Closing a session
// closes the program's standard input, waits up to five seconds for it to
// exit, then sends SIGTERM and SIGKILL; whatever the program left running
// in its group is killed when it is gone. Its standard error is logged at
// debug level and the end of it is quoted in errors.
//
// # Mapping
//
// A message with a JSON data part holding an object calls the tool with
// that object as its arguments. Otherwise the text of the message goes into
// one argument: Settings.Argument, or the tool's only required argument
// that is a string. Settings.Arguments are defaults that the message's
// arguments are merged over.
//
// The tool's result becomes one artifact named "output": text content as
// text parts, images, audio and embedded resources as file parts with
// their bytes, resource links as file parts by URI, and structured content
// as a data part. The final agent message carries the text. Progress
// notifications of a streamed attempt become chunks of a second artifact,
// named "progress", one line each.
//
// # Errors
//
// A result flagged isError fails the attempt permanently with the tool's
// text: the server ran the tool and said no. So do a tool the server does
// not list, arguments the message cannot supply and protocol errors about
// the request itself (invalid params, method not found). Transport
// failures and the server's internal errors are retryable.
package mcpagent
