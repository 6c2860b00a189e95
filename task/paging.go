package task

import "fmt"

// Page sizes of ListTasks, the one declaration every reader uses: the
// Coordinator, the A2A transport (JSON-RPC, HTTP+JSON, 0.3), the MCP
// list_tasks tool, `pactum tasks list --limit` and the store drivers. The
// values are A2A 1.0's (ListTasksRequest.page_size: "If unspecified, at most
// 50 tasks will be returned. The minimum value is 1. The maximum value is
// 100.").
const (
	// DefaultPageSize is the size of a page when the caller names none (a
	// page size of 0).
	DefaultPageSize = 50
	// MaxPageSize is the largest page a caller may ask for. A larger (or a
	// negative) size is refused with CodeInvalidArgument, not clamped: A2A
	// 1.0 answers pageSize=150 with a validation error ("Must be between 1
	// and 100 inclusive"), and a caller asking for more than it gets would
	// otherwise not know it.
	MaxPageSize = 100
)

// ResolvePageSize returns the page size a request for n tasks gets:
// DefaultPageSize for 0, n for 1..MaxPageSize. ok is false for a negative n
// or one above MaxPageSize, which the caller refuses, naming its own field
// (PageSizeError says it in the core's words).
func ResolvePageSize(n int) (size int, ok bool) {
	switch {
	case n == 0:
		return DefaultPageSize, true
	case n < 0 || n > MaxPageSize:
		return 0, false
	}
	return n, true
}

// PageSizeError is the message for a page size that ResolvePageSize refuses,
// naming field as the caller spelled it (pageSize, page_size, --limit).
func PageSizeError(field string, n int) string {
	return fmt.Sprintf("%s must be between 1 and %d, got %d", field, MaxPageSize, n)
}

// resolvePageSize applies ResolvePageSize to p.PageSize, refusing a size
// out of range with CodeInvalidArgument.
func (p *ListParams) resolvePageSize() error {
	size, ok := ResolvePageSize(p.PageSize)
	if !ok {
		return Errorf(CodeInvalidArgument, "%s", PageSizeError("pageSize", p.PageSize))
	}
	p.PageSize = size
	return nil
}
