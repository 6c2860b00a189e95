package contract

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Load reads the contract file at path, parses it (Parse), validates it
// (Validate, without checking agents) and compiles it (Compile). The
// error, if any, is an Errors holding every problem of the file, each
// with the file, its line and its field path, in line order; or the
// error reading the file.
func Load(path string) (*AgentContract, *Compiled, error) {
	return LoadWith(path, ValidateOptions{})
}

// LoadWith is Load with validation options (to check step agents against
// a configuration).
func LoadWith(path string, opts ValidateOptions) (*AgentContract, *Compiled, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("contract: %w", err)
	}
	return LoadBytes(path, data, opts)
}

// LoadBytes is LoadWith on a file's content; name is used in errors.
//
// Every phase runs even when an earlier one found problems, so that one
// run reports everything; a later phase's error is left out when it is
// about a field an earlier phase already reported (a step list that did
// not decode is not also reported as empty).
func LoadBytes(name string, data []byte, opts ValidateOptions) (*AgentContract, *Compiled, error) {
	c, lines, decodeErrs := decode(name, data)
	if c == nil {
		return nil, nil, decodeErrs
	}
	errs := decodeErrs
	for _, e := range Validate(c, opts) {
		if !coveredBy(e.Path, decodeErrs, true) {
			errs = append(errs, e)
		}
	}
	validated := errs
	compiled, err := Compile(c)
	if err != nil {
		var ces Errors
		if !errors.As(err, &ces) {
			ces = Errors{{Msg: err.Error()}}
		}
		for _, e := range ces {
			if !coveredBy(e.Path, validated, false) {
				errs = append(errs, e)
			}
		}
	}
	if len(errs) > 0 {
		return nil, nil, lines.Place(name, errs)
	}
	return c, compiled, nil
}

// coveredBy reports whether an error at path repeats one of earlier: an
// earlier error at path or inside it, or (when enclosing is set) an
// earlier error at a field enclosing path.
func coveredBy(path string, earlier Errors, enclosing bool) bool {
	for _, e := range earlier {
		if within(e.Path, path) || (enclosing && within(path, e.Path)) {
			return true
		}
	}
	return false
}

// within reports whether field path p is at or inside field path outer.
func within(p, outer string) bool {
	if outer == "" || p == outer {
		return p == outer
	}
	return strings.HasPrefix(p, outer) && (p[len(outer)] == '.' || p[len(outer)] == '[')
}
