package toolspec

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pactum/pactum/config"
)

// docBlock is one fenced block of a markdown file.
type docBlock struct {
	lang, text string
	line       int
}

func docBlocks(t *testing.T, file string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []docBlock
	var cur *docBlock
	for i, l := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &docBlock{lang: strings.TrimPrefix(l, "```"), line: i + 1}
		case cur != nil && l == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	return out
}

var failMarker = regexp.MustCompile(`^# FAIL \(assertion (\d)\)`)

// TestDocs checks docs/toolspecs.md: every yaml block parses (a
// configuration, a catalogue or a ToolSpecs file; a block that begins
// "# file NAME" is a file of a command's example, which
// internal/cli's TestToolSpecDocsConsole runs); each ToolSpecs block marked "# PASS"
// holds against the default catalogue and each marked "# FAIL (assertion
// N)" fails assertion N ("against contract 2.0.0": qdrant-vector at 2.0.0
// without search, the seed's example); every violation the page prints
// is one of those; the default catalogue's table is Default().
func TestDocs(t *testing.T) {
	t.Parallel()
	file := filepath.Join("..", "docs", "toolspecs.md")
	def, v2 := defaultRegistry(t), qdrantV2Registry(t)
	var produced []string
	var printed []string
	checked := 0
	for _, b := range docBlocks(t, file) {
		where := file + ":" + strconv.Itoa(b.line)
		switch {
		case b.lang == "yaml" && (strings.Contains(b.text, "\nagents:") || strings.HasPrefix(b.text, "agents:")):
			// A configuration (toolspecs:, adapters: and agents' toolspec:
			// keys): it must be one config.Parse accepts.
			if _, err := config.Parse([]byte(b.text), where); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		case b.lang == "yaml" && (strings.Contains(b.text, "\nadapters:") || strings.HasPrefix(b.text, "adapters:")):
			if _, err := ParseCatalogue(where, []byte(b.text)); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		case b.lang == "yaml" && strings.HasPrefix(b.text, "# file "):
			// A file of a command's example (internal/cli runs those):
			// it must parse, and need not pass.
			if _, err := ParseToolSpecs(where, []byte(b.text)); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		case b.lang == "yaml":
			tss, err := ParseToolSpecs(where, []byte(b.text))
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			first, _, _ := strings.Cut(b.text, "\n")
			reg := def
			if strings.Contains(first, "against contract 2.0.0") {
				reg = v2
			}
			var vs []Violation
			for _, ts := range tss {
				vs = append(vs, reg.Check(ts)...)
			}
			for _, v := range vs {
				produced = append(produced, v.Error())
			}
			checked++
			if m := failMarker.FindStringSubmatch(first); m != nil {
				n, _ := strconv.Atoi(m[1])
				if len(vs) == 0 || !slices.ContainsFunc(vs, func(v Violation) bool { return int(v.Assertion) == n }) {
					t.Errorf("%s: %s, but Check = %v", where, first, Violations(vs))
				}
			} else if strings.HasPrefix(first, "# PASS") {
				if vs != nil {
					t.Errorf("%s: PASS, but %v", where, Violations(vs))
				}
			} else {
				t.Errorf("%s: a ToolSpecs block needs # PASS or # FAIL (assertion N)", where)
			}
		case b.lang == "":
			for _, l := range strings.Split(b.text, "\n") {
				if strings.HasPrefix(l, "assertion ") {
					printed = append(printed, l)
				}
			}
		}
	}
	if checked < 12 {
		t.Errorf("checked %d ToolSpecs blocks, want every seed example", checked)
	}
	for _, l := range printed {
		if !slices.Contains(produced, l) {
			t.Errorf("docs print a violation no example produces:\n%s", l)
		}
	}

	// The default catalogue's table.
	data, _ := os.ReadFile(file)
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\| (`.*`) \\|$")
	rows := row.FindAllStringSubmatch(string(data), -1)
	table := map[string][]string{}
	for _, r := range rows {
		for _, op := range strings.Split(r[2], ", ") {
			table[r[1]] = append(table[r[1]], strings.Trim(op, "`"))
		}
	}
	cat := Default()
	if len(table) != len(cat.Adapters) {
		t.Fatalf("table has %d adapters, the catalogue %d", len(table), len(cat.Adapters))
	}
	for _, a := range cat.Adapters {
		if got := slices.Sorted(slices.Values(table[a.AdapterID])); !slices.Equal(got, sortedKeys(a.Operations)) {
			t.Errorf("table: %s has %v, the catalogue %v", a.AdapterID, got, sortedKeys(a.Operations))
		}
	}
}
