package toolspec

import (
	"fmt"

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
	var c Catalogue
	ls, errs := decodeFile(name, data, &c, "a catalogue file", "a catalogue is a mapping {adapters: [...]}")
	if len(errs) == 0 {
		errs = place(name, ls, validateCatalogue(&c))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	c.Source = name
	return &c, nil
}

// ParseToolSpecs decodes a ToolSpecs file `{toolspecs: [...]}` from YAML
// or JSON. Each ToolSpec needs a tool_id (unique in the file) and an
// execution_mode (local or remote), a semver adapter_contract_version
// when one is given, and schemas that compile; whether the mapping holds
// is for Registry.Check, not for the decoder.
func ParseToolSpecs(name string, data []byte) ([]ToolSpec, error) {
	var f toolSpecsFile
	ls, errs := decodeFile(name, data, &f, "a ToolSpecs file", "a ToolSpecs file is a mapping {toolspecs: [...]}")
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
		return nil, errs
	}
	if f.ToolSpecs == nil {
		f.ToolSpecs = []ToolSpec{}
	}
	return f.ToolSpecs, nil
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

// decodeFile parses data as one YAML document and decodes it into dst
// (a pointer to a struct), recording every field's line.
func decodeFile(name string, data []byte, dst any, what, notMapping string) (contract.Lines, ParseErrors) {
	ls := contract.Lines{}
	root, p := yamlnode.ParseDocument(data, what)
	if p != nil {
		return ls, ParseErrors{{File: name, Line: p.Line, Msg: p.Msg}}
	}
	if root == nil {
		return ls, ParseErrors{{File: name, Line: 1, Msg: "empty document: " + notMapping}}
	}
	d := contract.NewDecoder(name, ls, "", false)
	d.Document(root, dst, notMapping)
	return ls, d.Errors()
}
