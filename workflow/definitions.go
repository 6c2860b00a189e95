package workflow

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pactum/pactum/internal/yamlnode"
)

// ErrUnknownDefinition is wrapped by Resolve's error for a name no
// definition has.
var ErrUnknownDefinition = errors.New("unknown agent definition")

// ErrDuplicateDefinition is wrapped by Load's error for two files that
// define the same name.
var ErrDuplicateDefinition = errors.New("duplicate agent definition")

// Definitions are the agent definitions Load read, by name.
type Definitions struct {
	dirs   []string
	byName map[string]*Definition
}

// Load reads every *.md file directly in each of dirs (not in their
// subdirectories) as a definition (ParseDefinition). It skips no such file
// silently: a file that is no valid definition is an error, and so are two
// files (in one directory or in two) with the same name, naming both.
// Every problem found is returned, joined (errors.Join); a directory that
// cannot be read is one of them.
func Load(dirs ...string) (*Definitions, error) {
	defs := &Definitions{dirs: slices.Clone(dirs), byName: map[string]*Definition{}}
	var errs []error
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("agent definitions: %w", err))
			continue
		}
		for _, e := range entries { // sorted by file name
			if !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			file := filepath.Join(dir, e.Name())
			info, err := os.Stat(file) // follows symbolic links
			if err != nil {
				errs = append(errs, fmt.Errorf("agent definitions: %w", err))
				continue
			}
			if !info.Mode().IsRegular() {
				continue // a directory named x.md is no definition file
			}
			data, err := readFile(file)
			if err != nil {
				errs = append(errs, fmt.Errorf("agent definitions: %w", err))
				continue
			}
			d, err := ParseDefinition(file, data)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if prev, ok := defs.byName[d.Name]; ok {
				errs = append(errs, fmt.Errorf("%w %q: defined in %s:%d and in %s:%d",
					ErrDuplicateDefinition, d.Name, prev.File, prev.Line, d.File, d.Line))
				continue
			}
			defs.byName[d.Name] = d
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return defs, nil
}

// readFile reads file, refusing one larger than MaxDefinitionBytes
// without reading all of it.
func readFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxDefinitionBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxDefinitionBytes {
		return nil, fmt.Errorf("%s: file larger than %d bytes", file, MaxDefinitionBytes)
	}
	return data, nil
}

// Resolve returns the definition whose name is exactly name. A name no
// definition has is an error wrapping ErrUnknownDefinition that names the
// directories searched and the close names, if any.
func (ds *Definitions) Resolve(name string) (*Definition, error) {
	if ds != nil {
		if d, ok := ds.byName[name]; ok {
			return d, nil
		}
	}
	var dirs []string
	var names []string
	if ds != nil {
		dirs = ds.dirs
		names = ds.names()
	}
	searched := "no definition directories"
	if len(dirs) > 0 {
		q := make([]string, len(dirs))
		for i, d := range dirs {
			q[i] = strconv.Quote(d)
		}
		searched = "searched " + strings.Join(q, ", ")
	}
	return nil, fmt.Errorf("%w %q (%s)%s", ErrUnknownDefinition, name, searched, closeNames(name, names))
}

// closeNames lists the names in known close to name, as
// ` (did you mean "a" or "b"?)`, or "" when none is.
func closeNames(name string, known []string) string {
	return yamlnode.Suggester{Fold: strings.ToLower, MaxLen: 64}.SuggestAll(name, known)
}

// names returns the names defined, sorted.
func (ds *Definitions) names() []string {
	names := make([]string, 0, len(ds.byName))
	for n := range ds.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// List returns the definitions sorted by name.
func (ds *Definitions) List() []*Definition {
	if ds == nil {
		return nil
	}
	out := make([]*Definition, 0, len(ds.byName))
	for _, n := range ds.names() {
		out = append(out, ds.byName[n])
	}
	return out
}

// Dirs returns the directories Load read, in the order given.
func (ds *Definitions) Dirs() []string {
	if ds == nil {
		return nil
	}
	return slices.Clone(ds.dirs)
}
