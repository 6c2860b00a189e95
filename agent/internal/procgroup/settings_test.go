package procgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		dir  string
		err  string
	}{
		{"nothing", nil, "", ""},
		{"good", map[string]string{"A": "1", "B_2": "=x"}, dir, ""},
		{"empty name", map[string]string{"": "x"}, "", `env: invalid variable name ""`},
		{"equals sign", map[string]string{"A=B": "x"}, "", `env: invalid variable name "A=B"`},
		{"NUL", map[string]string{"A\x00": "x"}, "", `env: invalid variable name "A\x00"`},
		{"missing dir", nil, filepath.Join(dir, "nope"), "dir: stat "},
		{"file for dir", nil, file, "dir: " + file + " is not a directory"},
	}
	for _, tt := range tests {
		err := CheckSettings(tt.env, tt.dir)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v, want no error", tt.name, err)
		case tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err)):
			t.Errorf("%s: %v, want an error starting %q", tt.name, err, tt.err)
		}
	}
	if err := CheckSettings(nil, filepath.Join(dir, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v, want it to wrap fs.ErrNotExist", err)
	}
}
