package workflow_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/workflow"
)

// writeFiles writes name → content files under dir and returns dir.
func writeFiles(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func def(name string) string { return "---\nname: " + name + "\n---\nRole of " + name + ".\n" }

func TestLoadResolveExact(t *testing.T) {
	t.Parallel()
	a := writeFiles(t, t.TempDir(), map[string]string{
		"planner.md":      def("planner"),
		"other-file.md":   def("explorer"), // the name counts, not the file name
		"notes.txt":       "not a definition",
		"sub/nested.md":   def("nested"), // not recursive
		"dir.md/inner.md": def("inner"),  // a directory named *.md is no file
	})
	b := writeFiles(t, t.TempDir(), map[string]string{
		"planner-v2.md": def("planner-v2"),
		"Planner.md":    def("Planner"), // names are case-sensitive
	})
	defs, err := workflow.Load(a, b)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var names []string
	for _, d := range defs.List() {
		names = append(names, d.Name)
	}
	if got, want := strings.Join(names, " "), "Planner explorer planner planner-v2"; got != want {
		t.Errorf("List names = %q, want %q", got, want)
	}
	for name, file := range map[string]string{
		"planner":    filepath.Join(a, "planner.md"),
		"explorer":   filepath.Join(a, "other-file.md"),
		"planner-v2": filepath.Join(b, "planner-v2.md"),
		"Planner":    filepath.Join(b, "Planner.md"),
	} {
		d, err := defs.Resolve(name)
		if err != nil {
			t.Errorf("Resolve(%q): %v", name, err)
			continue
		}
		if d.Name != name || d.File != file || d.Body != "Role of "+name+"." {
			t.Errorf("Resolve(%q) = %s in %s (%q), want it from %s", name, d.Name, d.File, d.Body, file)
		}
	}
	for _, missing := range []string{"nested", "inner"} {
		if _, err := defs.Resolve(missing); !errors.Is(err, workflow.ErrUnknownDefinition) {
			t.Errorf("Resolve(%q) = %v, want ErrUnknownDefinition", missing, err)
		}
	}
}

func TestLoadDuplicate(t *testing.T) {
	t.Parallel()
	a := writeFiles(t, t.TempDir(), map[string]string{"reviewer.md": def("code-reviewer")})
	b := writeFiles(t, t.TempDir(), map[string]string{"code-reviewer.md": "---\ndescription: again\nname: code-reviewer\n---\n"})
	defs, err := workflow.Load(a, b)
	if err == nil {
		t.Fatalf("Load = %v, want an error", defs.List())
	}
	if !errors.Is(err, workflow.ErrDuplicateDefinition) {
		t.Errorf("error %v does not wrap ErrDuplicateDefinition", err)
	}
	want := `duplicate agent definition "code-reviewer": defined in ` +
		filepath.Join(a, "reviewer.md") + `:2 and in ` + filepath.Join(b, "code-reviewer.md") + `:3`
	if err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}

	// Two files in one directory as well.
	c := writeFiles(t, t.TempDir(), map[string]string{"a.md": def("x"), "b.md": def("x")})
	if _, err := workflow.Load(c); err == nil || !strings.Contains(err.Error(), filepath.Join(c, "a.md")+":2 and in "+filepath.Join(c, "b.md")+":2") {
		t.Errorf("Load of one directory with a duplicate: %v", err)
	}
}

func TestLoadSkipsNothingSilently(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, t.TempDir(), map[string]string{
		"good.md":   def("good"),
		"README.md": "# My agents\n",
		"bad.md":    "---\nname: bad name\n---\n",
	})
	_, err := workflow.Load(dir)
	if err == nil {
		t.Fatal("Load succeeded, want errors for README.md and bad.md")
	}
	for _, want := range []string{
		filepath.Join(dir, "README.md") + ":1: no front matter",
		filepath.Join(dir, "bad.md") + `:2: front matter: name: invalid name "bad name"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}

	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := workflow.Load(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing dir) = %v, want os.ErrNotExist", err)
	}

	big := writeFiles(t, t.TempDir(), map[string]string{"big.md": def("big") + strings.Repeat("x", workflow.MaxDefinitionBytes)})
	if _, err := workflow.Load(big); err == nil || !strings.Contains(err.Error(), "file larger than") {
		t.Errorf("Load(big file) = %v, want a size error", err)
	}
}

func TestResolveMissing(t *testing.T) {
	t.Parallel()
	a := writeFiles(t, t.TempDir(), map[string]string{
		"1.md": def("code-reviewer"),
		"2.md": def("code-review"),
		"3.md": def("planner"),
	})
	b := t.TempDir()
	defs, err := workflow.Load(a, b)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, want string }{
		{"code-reviwer", `unknown agent definition "code-reviwer" (searched "` + a + `", "` + b + `") (did you mean "code-review" or "code-reviewer"?)`},
		{"PLANNER", `unknown agent definition "PLANNER" (searched "` + a + `", "` + b + `") (did you mean "planner"?)`},
		{"architect", `unknown agent definition "architect" (searched "` + a + `", "` + b + `")`},
	}
	for _, tt := range tests {
		d, err := defs.Resolve(tt.name)
		if err == nil {
			t.Errorf("Resolve(%q) = %v, want an error", tt.name, d)
			continue
		}
		if !errors.Is(err, workflow.ErrUnknownDefinition) || err.Error() != tt.want {
			t.Errorf("Resolve(%q)\n got %v\nwant %s", tt.name, err, tt.want)
		}
	}

	none, err := workflow.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.Resolve("x"); err == nil || err.Error() != `unknown agent definition "x" (no definition directories)` {
		t.Errorf("Resolve with no directories: %v", err)
	}
}
