package driver

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Migration is one embedded schema change, named NNNN_description.sql.
type Migration struct {
	// Version is NNNN, from 1.
	Version int
	// Name is the file's name without ".sql".
	Name string
	// SQL is the file's text.
	SQL string
}

// Migrations returns the migrations fsys holds under migrations/*.sql in
// version order. Versions must be 1, 2, 3, … without gaps.
func Migrations(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []Migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", base)
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", base, err)
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(base, ".sql"), SQL: string(b)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.Name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion returns the newest version among fsys' migrations, 0 when
// there are none or they are malformed.
func SchemaVersion(fsys fs.FS) int {
	ms, err := Migrations(fsys)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}
