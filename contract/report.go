package contract

import "errors"

// CheckReport is what `pactum contract check` says of one contract, as
// data: whether it is valid, and either its size and digest or every
// problem found.
type CheckReport struct {
	Valid bool `json:"valid"`
	// ID, Version and Digest are the contract's (a valid one's).
	ID      string `json:"id,omitempty"`
	Version string `json:"version,omitempty"`
	Digest  string `json:"digest,omitempty"`
	// Steps and Assertions count its steps and their assertions.
	Steps      int `json:"steps"`
	Assertions int `json:"assertions"`
	// Errors are its problems, in line order.
	Errors []CheckError `json:"errors,omitempty"`
}

// CheckError is one problem of a contract: where it is (line, when the
// contract came as text, and field path) and what is wrong.
type CheckError struct {
	Line    int    `json:"line,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// CheckBytes parses, validates and compiles a contract (LoadBytes) and
// reports the outcome; the compiled contract is nil when it is invalid.
func CheckBytes(name string, data []byte, opts ValidateOptions) (CheckReport, *Compiled) {
	c, compiled, err := LoadBytes(name, data, opts)
	return Report(c, compiled, err), compiled
}

// Report is the CheckReport of what LoadWith or LoadBytes returned.
func Report(c *AgentContract, compiled *Compiled, err error) CheckReport {
	if err != nil {
		r := CheckReport{}
		var es Errors
		if !errors.As(err, &es) {
			es = Errors{{Msg: err.Error()}}
		}
		for _, e := range es {
			r.Errors = append(r.Errors, CheckError{Line: e.Line, Path: e.Path, Message: e.Msg})
		}
		return r
	}
	r := CheckReport{Valid: true, ID: c.ID, Version: c.Version, Digest: compiled.Digest(), Steps: len(c.Steps)}
	for _, st := range c.Steps {
		r.Assertions += len(st.Assertions)
	}
	return r
}
