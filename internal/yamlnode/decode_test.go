package yamlnode_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/pactum/pactum/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

type decoded struct {
	Name  string            `yaml:"name"`
	Count *int              `yaml:"count"`
	Tags  []string          `yaml:"tags"`
	Meta  map[string]any    `yaml:"meta"`
	Subs  map[string]nested `yaml:"subs"`
	Skip  string            `yaml:"-"`
}

type nested struct {
	DependsOn string `yaml:"depends_on"`
}

// decodeDoc decodes src into a decoded, returning it, the lines and the
// problems as "line path: msg".
func decodeDoc(t *testing.T, src string, tagsFirst bool) (decoded, yamlnode.Lines, []string) {
	t.Helper()
	root, p := yamlnode.ParseDocument([]byte(src), "a test file")
	if p != nil {
		t.Fatalf("ParseDocument: %s", p.Msg)
	}
	var errs []string
	d := &yamlnode.Decoder{
		Lines:     yamlnode.Lines{},
		TagsFirst: tagsFirst,
		Report: func(n *yaml.Node, path, msg string) {
			errs = append(errs, fmt.Sprintf("%d %s: %s", n.Line, path, msg))
		},
	}
	var v decoded
	d.Document(root, &v, "a test file is a mapping")
	return v, d.Lines, errs
}

// TestDecoder: fields by yaml tag, the line of every path, unknown
// fields with a suggestion, and TagsFirst deciding how a scalar with an
// unknown tag in a list field is reported.
func TestDecoder(t *testing.T) {
	t.Parallel()
	src := "name: a\ncount: 3\ntags: [x, y]\nmeta: {k: [1, 2.5, true, null]}\nsubs:\n  s1: {depends_on: b}\n  s2: {dependsOn: c}\n"
	v, lines, errs := decodeDoc(t, src, false)
	three := 3
	want := decoded{Name: "a", Count: &three, Tags: []string{"x", "y"},
		Meta: map[string]any{"k": []any{1, 2.5, true, nil}},
		Subs: map[string]nested{"s1": {DependsOn: "b"}, "s2": {}}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("decoded %+v, want %+v", v, want)
	}
	wantErrs := []string{`7 subs.s2.dependsOn: unknown field "dependsOn" (did you mean "depends_on"?)`}
	if !reflect.DeepEqual(errs, wantErrs) {
		t.Errorf("errors %q, want %q", errs, wantErrs)
	}
	for path, line := range map[string]int{"tags[1]": 3, "meta.k[2]": 4, "subs.s1.depends_on": 6, "subs.s2.nothing": 7, "absent": 1} {
		if got := lines.Line(path); got != line {
			t.Errorf("Line(%q) = %d, want %d", path, got, line)
		}
	}

	for _, tc := range []struct {
		tagsFirst bool
		want      string
	}{
		{true, "1 tags: unsupported YAML tag !foo"},
		{false, `1 tags: expected a list, got "x"`},
	} {
		_, _, errs := decodeDoc(t, "tags: !foo x\n", tc.tagsFirst)
		if len(errs) != 1 || errs[0] != tc.want {
			t.Errorf("TagsFirst %v: errors %q, want [%q]", tc.tagsFirst, errs, tc.want)
		}
	}
	_, _, errs = decodeDoc(t, "- 1\n", false)
	if w := "1 : a test file is a mapping, got a list"; len(errs) != 1 || errs[0] != w {
		t.Errorf("a list document: errors %q, want [%q]", errs, w)
	}
}
