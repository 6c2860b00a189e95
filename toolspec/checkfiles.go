package toolspec

import (
	"errors"
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/internal/yamlnode"
)

// FileKind says what a file given to CheckFiles holds.
type FileKind string

// The kinds of file CheckFiles reads.
const (
	// CatalogueFile is a catalogue of adapter contracts, {adapters: [...]}.
	CatalogueFile FileKind = "catalogue"
	// ToolSpecsFile is a ToolSpecs file, {toolspecs: [...]}.
	ToolSpecsFile FileKind = "ToolSpecs file"
)

// ErrUnknownFile is wrapped by FileReport.Err when a file cannot be taken
// for a catalogue or a ToolSpecs file at all: it is not one YAML
// document, or its top level names neither `adapters` nor `toolspecs`, or
// both, or it is a configuration (it has `agents`).
var ErrUnknownFile = errors.New("neither a catalogue {adapters: [...]} nor a ToolSpecs file {toolspecs: [...]}")

// FileInput is one file for CheckFiles: its name, used in every message, and
// its contents.
type FileInput struct {
	Name string
	Data []byte
}

// FileReport is what CheckFiles found in one file.
type FileReport struct {
	Name string
	// Kind is what the file holds; "" when Err is set.
	Kind FileKind
	// Err says why the file could not be checked at all; it wraps
	// ErrUnknownFile. Problems is then empty.
	Err error
	// Problems is everything wrong with the file, in line order, each at
	// its file, line and field path: what ParseCatalogue or
	// ParseToolSpecs finds, a catalogue's adapter that another catalogue
	// (or the default one) defines already, and, for a ToolSpecs file,
	// every violation of assertions 1 to 4 at its ToolSpec's field, the
	// violation's Error as the message.
	Problems ParseErrors
	// Adapters is the number of adapter contracts of a catalogue;
	// ToolSpecs the number of ToolSpecs of a ToolSpecs file.
	Adapters, ToolSpecs int
	// Live is the number of ToolSpecs whose adapter contract is an MCP
	// server (adapter_id: mcp): without the server only their assertion 1
	// is checked.
	Live int
	// Unchecked names the catalogues with problems when, because of them,
	// the ToolSpecs of this file were not checked against the catalogues
	// (an adapter one of them defines would look missing).
	Unchecked []string
}

// OK reports whether the file passed every check.
func (r FileReport) OK() bool {
	return r.Err == nil && len(r.Problems) == 0 && len(r.Unchecked) == 0
}

// CheckFiles checks catalogue and ToolSpecs files with nothing else: no
// configuration, no server. Each file is a catalogue or a ToolSpecs file,
// told apart by its top-level key. Every catalogue must be valid on its
// own (ParseCatalogue) and define no adapter the default catalogue or an
// earlier catalogue defines; the valid ones are added to the default
// catalogue, as a configuration's `adapters:` files are, and every
// ToolSpec of every ToolSpecs file is checked against that registry:
// assertions 1 to 4 (Registry.Check). A ToolSpec whose adapter is a live
// MCP server (adapter_id: mcp) is checked for assertion 1 only, as the
// configuration does. When a catalogue has problems, ToolSpecs are not
// checked against the registry (FileReport.Unchecked). The reports are in
// the order of in.
func CheckFiles(in ...FileInput) []FileReport {
	reports := make([]FileReport, len(in))
	roots := make([]*yaml.Node, len(in))
	for i, f := range in {
		r := &reports[i]
		r.Name = f.Name
		root, kind, err := detect(f.Name, f.Data)
		if err != nil {
			r.Err = err
			continue
		}
		r.Kind, roots[i] = kind, root
	}

	// The catalogues, each on its own, then together with the default
	// one and those before it.
	def := Default()
	cats := []*Catalogue{def}
	definedIn := map[string]string{} // adapter_id → the catalogue that defines it
	for _, a := range def.Adapters {
		definedIn[a.AdapterID] = def.Source
	}
	var broken []string
	for i := range in {
		r := &reports[i]
		if r.Kind != CatalogueFile {
			continue
		}
		c, ls, errs := catalogueFrom(r.Name, roots[i])
		if errs == nil {
			var dups []fieldError
			for j, a := range c.Adapters {
				if prev, dup := definedIn[a.AdapterID]; dup {
					// NewRegistry's message, placed.
					dups = append(dups, fieldError{yamlnode.Join(yamlnode.Index("adapters", j), "adapter_id"),
						fmt.Sprintf("adapter %q is defined both in %s and in %s; keep one", a.AdapterID, prev, r.Name)})
				}
			}
			errs = place(r.Name, ls, dups)
		}
		if len(errs) > 0 {
			r.Problems = errs
			broken = append(broken, r.Name)
			continue
		}
		for _, a := range c.Adapters {
			definedIn[a.AdapterID] = r.Name
		}
		r.Adapters = len(c.Adapters)
		cats = append(cats, c)
	}
	reg, err := NewRegistry(cats...)
	if err != nil {
		// Every catalogue is valid and no adapter is defined twice.
		panic(fmt.Sprintf("toolspec: the checked catalogues make no registry: %v", err))
	}

	for i := range in {
		r := &reports[i]
		if r.Kind != ToolSpecsFile {
			continue
		}
		specs, ls, errs := toolSpecsFrom(r.Name, roots[i])
		if errs != nil {
			r.Problems = errs
			continue
		}
		r.ToolSpecs = len(specs)
		var found ParseErrors
		for j, ts := range specs {
			at := yamlnode.Index("toolspecs", j)
			var vs []Violation
			switch {
			case IsLive(ts):
				r.Live++
				if ts.ExecutionMode != Remote {
					vs = []Violation{{Assertion: AdapterIDRequired, ToolID: ts.ToolID, AdapterID: ts.AdapterID, Field: "execution_mode",
						Msg: fmt.Sprintf("adapter_id %q (the MCP server) is for remote ToolSpecs, this one is %q", ts.AdapterID, ts.ExecutionMode),
						Fix: "set execution_mode: remote"}}
				}
			case len(broken) > 0:
				continue
			default:
				vs = reg.Check(ts)
			}
			for _, v := range vs {
				p := at
				if v.Field != "" {
					p += "." + v.Field
				}
				found = append(found, ParseError{Path: p, Msg: v.Error()})
			}
		}
		if len(found) > 0 {
			r.Problems = ls.Place(r.Name, found)
		}
		if len(broken) > 0 && r.ToolSpecs > r.Live {
			r.Unchecked = slices.Clone(broken)
		}
	}
	return reports
}

// unknownFileError is an error of detect: it reads as what is wrong and
// is ErrUnknownFile.
type unknownFileError struct{ msg string }

func (e *unknownFileError) Error() string        { return e.msg }
func (e *unknownFileError) Is(target error) bool { return target == ErrUnknownFile }

// detect parses data and tells which kind of file it is by the keys of
// its top-level mapping.
func detect(name string, data []byte) (*yaml.Node, FileKind, error) {
	unknown := func(format string, args ...any) (*yaml.Node, FileKind, error) {
		return nil, "", &unknownFileError{name + ": " + fmt.Sprintf(format, args...)}
	}
	root, p := yamlnode.ParseDocument(data, "a catalogue or ToolSpecs file")
	if p != nil {
		if p.Line > 0 {
			return nil, "", &unknownFileError{fmt.Sprintf("%s:%d: %s", name, p.Line, p.Msg)}
		}
		return unknown("%s", p.Msg)
	}
	if root == nil {
		return unknown("empty document: %v", ErrUnknownFile)
	}
	keys := map[string]bool{}
	yamlnode.Run(func() {
		w := &yamlnode.Walker{Report: func(*yaml.Node, string, string) {}}
		r := w.Resolve(root, "")
		if r == nil || r.Kind != yaml.MappingNode {
			return
		}
		pairs, _ := w.Pairs(root, r, "")
		for _, p := range pairs {
			keys[p.Key] = true
		}
	})
	switch {
	case keys["agents"]:
		return unknown("a configuration (it has agents:), not a catalogue or ToolSpecs file; check it with `pactum config check`")
	case keys["adapters"] && keys["toolspecs"]:
		return unknown("has both adapters: and toolspecs:; a catalogue has adapters: only, a ToolSpecs file toolspecs: only")
	case keys["adapters"]:
		return root, CatalogueFile, nil
	case keys["toolspecs"]:
		return root, ToolSpecsFile, nil
	}
	return unknown("%v", ErrUnknownFile)
}
