package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaPrinter renders JSON Schema errors.
var schemaPrinter = message.NewPrinter(language.English)

// schemaSeq names each compiled schema's in-memory resource.
var schemaSeq atomic.Uint64

// noLoader refuses to load schemas from anywhere: a contract's schema
// holds all it refers to ($defs), so compiling a contract never reads a
// file or the network. It names the schema it refuses for as what.
type noLoader struct{ what string }

func (l noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: %s can refer only to itself (use $defs)", url, l.what)
}

// compileSchema compiles a contract's JSON Schema (CompileSchema).
func compileSchema(s map[string]any) (*jsonschema.Schema, error) {
	return CompileSchema(s, "a contract's schema")
}

// CompileSchema compiles a JSON Schema given as decoded JSON or YAML.
// Draft 2020-12 is the default ($schema may name another draft), and
// "format" is asserted, not merely annotated: a contract that says
// format: email means it. The schema must hold all it refers to
// ($defs): a reference to anything else, a file or a URL, is an error
// that names the schema as what ("a contract's schema can refer only to
// itself"), so compiling never reads a file or the network.
func CompileSchema(s map[string]any, what string) (*jsonschema.Schema, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{what})
	url := fmt.Sprintf("mem:///schema%d.json", schemaSeq.Add(1))
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), url, "schema"))
	}
	return sch, nil
}

// schemaVerdict validates doc against sch. A failure's reason names each
// failing instance location (up to three) with its error; Path is the
// first one's, prefixed by the target's own pointer.
func schemaVerdict(sch *jsonschema.Schema, doc any, prefix string) Verdict {
	err := sch.Validate(doc)
	if err == nil {
		return pass
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return Verdict{Reason: err.Error()}
	}
	var leaves []*jsonschema.ValidationError
	collectLeaves(ve, &leaves)
	// The library visits an object's properties in map order: sort by
	// instance location so that a verdict reads the same every time.
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return slices.Compare(a.InstanceLocation, b.InstanceLocation)
	})
	const shown = 3
	var b strings.Builder
	path := ""
	for i, l := range leaves {
		if i == shown {
			fmt.Fprintf(&b, "; and %d more", len(leaves)-shown)
			break
		}
		p := instancePointer(l.InstanceLocation)
		if i == 0 {
			path = prefix + p
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "at %q: %s", p, l.ErrorKind.LocalizedString(schemaPrinter))
	}
	return Verdict{Reason: b.String(), Path: path}
}

func collectLeaves(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	if len(e.Causes) == 0 {
		*out = append(*out, e)
		return
	}
	for _, c := range e.Causes {
		collectLeaves(c, out)
	}
}

// instancePointer renders an instance location as a JSON pointer.
func instancePointer(toks []string) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		b.WriteString(escapePointerToken(t))
	}
	return b.String()
}
