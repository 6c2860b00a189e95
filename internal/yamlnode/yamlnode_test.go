package yamlnode_test

import (
	"strings"
	"testing"

	"github.com/pactum/pactum/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

func TestSuggest(t *testing.T) {
	t.Parallel()
	fold := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	for _, tc := range []struct {
		s          yamlnode.Suggester
		name, want string
		known      []string
	}{
		{yamlnode.Suggester{}, "atempts", "attempts", []string{"attempts", "timeout"}},
		{yamlnode.Suggester{}, "ab", "", []string{"xy"}},                 // two edits, more than half of the name
		{yamlnode.Suggester{}, "abcx", "abcd", []string{"abcd", "abce"}}, // a tie: the first
		{yamlnode.Suggester{}, "DEPENDS_ON", "", []string{"dependsOn"}},
		{yamlnode.Suggester{Fold: fold}, "DEPENDS_ON", "dependsOn", []string{"id", "dependsOn"}},
		{yamlnode.Suggester{Fold: fold, MaxLen: 4}, "abcde", "", []string{"abcdf"}},
		{yamlnode.Suggester{}, "abcde", "abcdf", []string{"abcdf"}},
	} {
		got := tc.s.Suggest(tc.name, tc.known)
		want := ""
		if tc.want != "" {
			want = ` (did you mean "` + tc.want + `"?)`
		}
		if got != want {
			t.Errorf("%+v.Suggest(%q, %q) = %q, want %q", tc.s, tc.name, tc.known, got, want)
		}
	}
}

// TestWalker: alias cycles and merge keys through a Walker, and the error
// cap through Collect, with errors of the caller's own type.
func TestWalker(t *testing.T) {
	t.Parallel()
	root, p := yamlnode.ParseDocument([]byte("base: &b {x: 1, y: 2}\nm: {<<: *b, y: 3, y: 4}\nself: &s {k: *s}\n"), "a file")
	if p != nil {
		t.Fatal(p.Msg)
	}
	type msg struct {
		line int
		text string
	}
	var errs []msg
	var w yamlnode.Walker
	w.Report = func(n *yaml.Node, path, text string) {
		yamlnode.Collect(&errs, msg{n.Line, path + ": " + text}, func(last msg) msg { return msg{last.line, "stop"} })
	}
	ps, ok := w.Pairs(root, root, "")
	if !ok || len(ps) != 3 {
		t.Fatalf("Pairs: %v %v", ps, ok)
	}
	m, _ := w.Pairs(ps[1].Value, ps[1].Value, "m")
	var keys []string
	for _, p := range m {
		keys = append(keys, p.Key+"="+p.Value.Value)
	}
	if got := strings.Join(keys, ","); got != "y=3,x=1" {
		t.Errorf("merged pairs %s, want y=3,x=1", got)
	}
	self := w.Resolve(ps[2].Value, "self")
	w.Enter(self)
	inner, _ := w.Pairs(self, self, "self")
	if w.Resolve(inner[0].Value, "self.k") != nil {
		t.Error("an alias to the node being walked resolved")
	}
	w.Leave(self)
	want := []msg{{2, "m.y: duplicate key (first defined at line 2)"}, {3, "self.k: alias *s refers to a node that contains it"}}
	if len(errs) != len(want) || errs[0] != want[0] || errs[1] != want[1] {
		t.Errorf("errors %v, want %v", errs, want)
	}

	var capped []msg
	yamlnode.Run(func() {
		for i := range 1000 {
			yamlnode.Collect(&capped, msg{i, "e"}, func(last msg) msg { return msg{last.line, "too many"} })
		}
	})
	if len(capped) != yamlnode.MaxErrors+1 || capped[yamlnode.MaxErrors] != (msg{yamlnode.MaxErrors - 1, "too many"}) {
		t.Errorf("capped at %d, last %v", len(capped), capped[len(capped)-1])
	}
}

func TestParseDocument(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc                 string
		line, col, reported int
		msg                 string
	}{
		{"a: 1\n---\nb: 2\n", 2, 1, 2, "a file holds one YAML document; found a second one"},
		{"a: [1\n", 2, 0, 1, "invalid YAML: did not find expected ',' or ']'"},
		{"a: 'x\n", 2, 0, 2, "invalid YAML: found unexpected end of stream"},
	} {
		_, p := yamlnode.ParseDocument([]byte(tc.doc), "a file")
		if p == nil || p.Line != tc.line || p.Column != tc.col || p.ReportedLine != tc.reported || p.Msg != tc.msg {
			t.Errorf("ParseDocument(%q) = %+v, want line %d col %d reported %d %q", tc.doc, p, tc.line, tc.col, tc.reported, tc.msg)
		}
	}
	if root, p := yamlnode.ParseDocument([]byte("# nothing\n"), "a file"); root != nil || p != nil {
		t.Errorf("empty document: %v %+v", root, p)
	}
}

func TestSuggestAll(t *testing.T) {
	s := yamlnode.Suggester{Fold: strings.ToLower, MaxLen: 64}
	for name, want := range map[string]string{
		"planer":    ` (did you mean "planner" or "planners"?)`,
		"reviewer":  ``,
		"Architect": ` (did you mean "architect"?)`,
		"arch":      ``,
		"code-rev":  ``,
		"explorer":  ``,
	} {
		if got := s.SuggestAll(name, []string{"planner", "planners", "code-reviewer", "architect"}); got != want {
			t.Errorf("SuggestAll(%q) = %q, want %q", name, got, want)
		}
	}
}
