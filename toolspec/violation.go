package toolspec

import (
	"fmt"
	"strings"
)

// String names the assertion as the seed does.
func (a Assertion) String() string {
	switch a {
	case AdapterIDRequired:
		return "required adapter_id"
	case AdapterExists:
		return "adapter existence"
	case OperationExists:
		return "adapter operation"
	case VersionCompatible:
		return "contract version"
	case FrozenUnchanged:
		return "contract immutability"
	case Revalidated:
		return "ToolSpec → adapter mapping"
	}
	return fmt.Sprintf("assertion %d", int(a))
}

// Error says which assertion failed, for which ToolSpec (or adapter), on
// which field, what is wrong and what would fix it:
//
//	assertion 3 (adapter operation) failed for ToolSpec "vector-search", adapter_operation: … ; fix: …
func (v Violation) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "assertion %d (%s) failed", int(v.Assertion), v.Assertion)
	switch {
	case v.ToolID != "":
		fmt.Fprintf(&b, " for ToolSpec %q", v.ToolID)
	case v.AdapterID != "":
		fmt.Fprintf(&b, " for adapter %q", v.AdapterID)
	}
	b.WriteString(": ")
	if v.Field != "" {
		b.WriteString(v.Field)
		b.WriteString(": ")
	}
	b.WriteString(v.Msg)
	if v.Fix != "" {
		b.WriteString("; fix: ")
		b.WriteString(v.Fix)
	}
	return b.String()
}

// Violations is the violations of one check, as one error.
type Violations []Violation

func (vs Violations) Error() string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.Error()
	}
	return strings.Join(s, "\n")
}
