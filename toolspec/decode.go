package toolspec

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/yamlnode"
)

// ParseError is one thing wrong with a catalogue or ToolSpecs file: the
// file and line, the field path ("adapters[2].operations.search") and
// what is wrong. It is contract's FieldError, as the files are decoded
// as contracts are.
type ParseError = contract.FieldError

// ParseErrors is every ParseError of one file, in line order.
type ParseErrors = contract.Errors

// toolSpecsFile is the document ParseToolSpecs reads.
type toolSpecsFile struct {
	ToolSpecs []ToolSpec `json:"toolspecs" yaml:"toolspecs"`
}

// ParseCatalogue decodes a catalogue `{adapters: [...]}` from YAML or
// JSON (JSON is read as YAML, so both report lines) and validates every
// contract (adapter_id, semver version, status, compilable schemas, no
// adapter twice). name is used in errors and as the catalogue's Source.
// The error is a ParseErrors listing every problem, in line order.
func ParseCatalogue(name string, data []byte) (*Catalogue, error) {
	root, errs := parseRoot(name, data, catalogueWhat, notCatalogue)
	if errs != nil {
		return nil, errs
	}
	c, _, errs := catalogueFrom(name, root)
	if errs != nil {
		return nil, errs
	}
	return c, nil
}

// Messages for a document that is not the mapping a file must be.
const (
	notCatalogue  = "a catalogue is a mapping {adapters: [...]}"
	notToolSpecs  = "a ToolSpecs file is a mapping {toolspecs: [...]}"
	catalogueWhat = "a catalogue file"
	toolSpecsWhat = "a ToolSpecs file"
)

// catalogueFrom decodes and validates the catalogue of a parsed document
// (not nil), and returns the line of every field path with it.
func catalogueFrom(name string, root *yaml.Node) (*Catalogue, contract.Lines, ParseErrors) {
	var c Catalogue
	ls, errs := decodeRoot(name, root, &c, notCatalogue)
	if len(errs) == 0 {
		errs = place(name, ls, validateCatalogue(&c))
	}
	if len(errs) > 0 {
		return nil, ls, errs
	}
	c.Source = name
	return &c, ls, nil
}

// ParseToolSpecs decodes a ToolSpecs file `{toolspecs: [...]}` from YAML
// or JSON. Each ToolSpec needs a tool_id (unique in the file) and an
// execution_mode (local or remote), a semver adapter_contract_version
// when one is given, and schemas that compile; whether the mapping holds
// is for Registry.Check, not for the decoder.
func ParseToolSpecs(name string, data []byte) ([]ToolSpec, error) {
	root, errs := parseRoot(name, data, toolSpecsWhat, notToolSpecs)
	if errs != nil {
		return nil, errs
	}
	tss, _, errs := toolSpecsFrom(name, root)
	if errs != nil {
		return nil, errs
	}
	return tss, nil
}

// toolSpecsFrom decodes and validates the ToolSpecs of a parsed document
// (not nil), and returns the line of every field path with them.
func toolSpecsFrom(name string, root *yaml.Node) ([]ToolSpec, contract.Lines, ParseErrors) {
	var f toolSpecsFile
	ls, errs := decodeRoot(name, root, &f, notToolSpecs)
	if len(errs) == 0 {
		var fe []fieldError
		seen := map[string]int{}
		for i, ts := range f.ToolSpecs {
			p := yamlnode.Index("toolspecs", i)
			fe = append(fe, validateToolSpec(p, ts)...)
			if ts.ToolID == "" {
				continue
			}
			if j, dup := seen[ts.ToolID]; dup {
				fe = append(fe, fieldError{yamlnode.Join(p, "tool_id"),
					fmt.Sprintf("tool_id %q is given twice (first at toolspecs[%d], line %d)", ts.ToolID, j, ls.Line(yamlnode.Index("toolspecs", j)))})
				continue
			}
			seen[ts.ToolID] = i
		}
		errs = place(name, ls, fe)
	}
	if len(errs) > 0 {
		return nil, ls, errs
	}
	if f.ToolSpecs == nil {
		f.ToolSpecs = []ToolSpec{}
	}
	return f.ToolSpecs, ls, nil
}

// fieldError is a problem found after decoding, placed by its path.
type fieldError struct{ path, msg string }

func place(file string, ls contract.Lines, fe []fieldError) ParseErrors {
	var out ParseErrors
	for _, e := range fe {
		out = append(out, ParseError{Path: e.path, Msg: e.msg})
	}
	return ls.Place(file, out)
}

// parseRoot parses data as one YAML document and returns its root node;
// what names the file in the message for a second document, notMapping
// says what an empty one should have been.
func parseRoot(name string, data []byte, what, notMapping string) (*yaml.Node, ParseErrors) {
	root, p := yamlnode.ParseDocument(data, what)
	if p != nil {
		return nil, ParseErrors{{File: name, Line: p.Line, Msg: p.Msg}}
	}
	if root == nil {
		return nil, ParseErrors{{File: name, Line: 1, Msg: "empty document: " + notMapping}}
	}
	return root, nil
}

// decodeRoot decodes a document's root node into dst (a pointer to a
// struct), recording every field's line.
func decodeRoot(name string, root *yaml.Node, dst any, notMapping string) (contract.Lines, ParseErrors) {
	ls := contract.Lines{}
	d := contract.NewDecoder(name, ls, "", false)
	d.Document(root, dst, notMapping)
	return ls, d.Errors()
}
