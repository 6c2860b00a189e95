package contract

import (
	"slices"

	"github.com/pactum/pactum/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

// maxErrors bounds the errors one decode, or one validation, collects;
// it keeps hostile input (fuzzing, alias bombs) cheap.
const maxErrors = yamlnode.MaxErrors

// Lines maps the field paths of a contract file ("steps[1].dependsOn[0]")
// to the lines they are on, so that errors found after decoding (by
// Validate, by Compile) can be placed.
type Lines map[string]int

// Line returns the line of path, or of its nearest enclosing field when
// path itself is not in the file (a required field that is missing is
// placed at the mapping that lacks it). It returns 0 when nothing
// encloses path.
func (l Lines) Line(path string) int { return yamlnode.Lines(l).Line(path) }

// Place returns errs with File set to file and each Line set from the
// error's path (where it is not set already), sorted by line. Errors with
// no line come first; errors on the same line keep their order.
func (l Lines) Place(file string, errs Errors) Errors {
	out := make(Errors, len(errs))
	for i, e := range errs {
		if e.File == "" {
			e.File = file
		}
		if e.Line == 0 {
			e.Line = l.Line(e.Path)
		}
		out[i] = e
	}
	slices.SortStableFunc(out, func(a, b FieldError) int { return a.Line - b.Line })
	return out
}

// Parse decodes a contract from YAML or JSON (JSON is read as YAML, so
// both report lines). name is used in error messages only. Unknown
// fields, values of the wrong type, duplicate keys and anything JSON
// cannot represent are errors; the error is an Errors listing every
// problem found, in line order, each with its field path and line. Parse
// does not check the contract's structure: Validate does.
func Parse(name string, data []byte) (*AgentContract, error) {
	c, _, err := ParseLines(name, data)
	return c, err
}

// ParseLines is Parse that also returns the line of every field path,
// for placing the errors of later checks (Lines.Place).
func ParseLines(name string, data []byte) (*AgentContract, Lines, error) {
	c, lines, errs := decode(name, data)
	if len(errs) > 0 {
		return nil, lines, errs
	}
	return c, lines, nil
}

// decode decodes data, returning what it could decode (nil when the
// document is not a mapping or the decode stopped early) along with
// every error.
func decode(name string, data []byte) (*AgentContract, Lines, Errors) {
	lines := Lines{}
	root, errs := parseDocument(name, data)
	if len(errs) > 0 {
		return nil, lines, errs
	}
	if root == nil {
		return nil, lines, Errors{{File: name, Line: 1, Msg: "empty document: a contract needs at least version, id and steps"}}
	}
	c := &AgentContract{}
	d := NewDecoder(name, lines, "duplicate key (first at line %d)", true)
	if !d.Document(root, c, "a contract is a mapping (version, id, steps, …)") {
		c = nil
	}
	return c, lines, d.Errors()
}

// parseDocument parses data as exactly one YAML document and returns its
// root node (nil for an empty document). A syntax error is placed on the
// line of the mistake, as the configuration's are (yamlnode corrects
// go-yaml's line for its parser errors).
func parseDocument(file string, data []byte) (*yaml.Node, Errors) {
	root, p := yamlnode.ParseDocument(data, "a contract file")
	if p != nil {
		return nil, Errors{{File: file, Line: p.Line, Msg: p.Msg}}
	}
	return root, nil
}

// stop aborts a validation (too many errors); Validate recovers it.
type stop struct{}

// Decoder decodes a YAML file into structs by their yaml tags (see
// yamlnode.Decoder), collecting FieldErrors. Package toolspec decodes its
// files with it too.
type Decoder struct {
	yamlnode.Decoder
	errs Errors
}

// NewDecoder returns a Decoder for file that records the line of every
// field path in lines. duplicateKey is the message for a key given
// twice, with %d for the first's line; tagsFirst is
// yamlnode.Decoder.TagsFirst.
func NewDecoder(file string, lines Lines, duplicateKey string, tagsFirst bool) *Decoder {
	d := &Decoder{}
	d.Decoder = yamlnode.Decoder{
		Lines:        yamlnode.Lines(lines),
		DuplicateKey: duplicateKey,
		TagsFirst:    tagsFirst,
		Report: func(n *yaml.Node, path, msg string) {
			e := FieldError{File: file, Path: path, Msg: msg}
			if n != nil {
				e.Line = n.Line
			}
			yamlnode.Collect(&d.errs, e, func(last FieldError) FieldError {
				return FieldError{File: file, Line: last.Line, Msg: "too many errors; stopping"}
			})
		},
	}
	return d
}

// Errors returns the errors found so far, in line order.
func (d *Decoder) Errors() Errors {
	slices.SortStableFunc(d.errs, func(a, b FieldError) int { return a.Line - b.Line })
	return d.errs
}

// suggest proposes a known name close to an unknown one: the same name
// but for case, underscores and hyphens (depends_on → dependsOn), or one
// a few edits away.
func suggest(name string, known []string) string { return yamlnode.SuggestName(name, known) }
