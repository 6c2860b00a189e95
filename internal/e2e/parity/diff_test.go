package parity

import (
	"fmt"
	"strings"
	"testing"
)

// diffContext is how many unchanged lines a hunk shows around a change.
const diffContext = 3

// compare returns "" when a and b hold the same lines, else a unified diff
// from a (named nameA) to b (named nameB): hunks of removed (-) and added
// (+) lines with diffContext lines around them, on a longest common
// subsequence of lines.
func compare(nameA string, a []byte, nameB string, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	x, y := lines(a), lines(b)
	ops := editScript(x, y)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	hunks := 0
	// Walk the script hunk by hunk: a hunk runs from diffContext lines
	// before a change to diffContext lines after the last change that is
	// at most 2*diffContext lines after the one before it.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-diffContext, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*diffContext {
				break
			}
		}
		end = min(end+diffContext+1, len(ops))
		ax, ay := ops[start].ax, ops[start].by
		var na, nb int
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				na++
			}
			if op.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", ax+1, na, ay+1, nb)
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.text)
			out.WriteByte('\n')
		}
		i = end
		hunks++
	}
	if hunks == 0 {
		out.WriteString("(the lines are equal; the documents differ in line endings or a final newline)\n")
	}
	return out.String()
}

// lines splits s into lines without their newlines; a final newline ends
// the last line and starts none.
func lines(s []byte) []string {
	l := strings.Split(string(s), "\n")
	if len(l) > 0 && l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// edit is one line of an edit script: kept (' '), removed from a ('-') or
// added from b ('+'); ax and by are the line's position in a and b (for a
// removed line, by is where it would have been in b, and the other way
// round).
type edit struct {
	kind   byte
	text   string
	ax, by int
}

// editScript returns the edits that turn x into y, keeping a longest
// common subsequence of lines. The table is O(len(x)·len(y)), plenty for
// documents of a few thousand lines.
func editScript(x, y []string) []edit {
	n, m := len(x), len(y)
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []edit
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, edit{' ', x[i], i, j})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
			ops = append(ops, edit{'+', y[j], i, j})
			j++
		default:
			ops = append(ops, edit{'-', x[i], i, j})
			i++
		}
	}
	return ops
}

func TestCompare(t *testing.T) {
	t.Parallel()
	doc := func(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }
	base := []string{"{", `  "a": 1,`, `  "b": 2,`, `  "c": 3,`, `  "d": 4,`, `  "e": 5,`, `  "f": 6,`, `  "g": 7,`, `  "h": 8,`, `  "i": 9,`, `  "j": 10`, "}"}
	changed := append([]string(nil), base...)
	changed[2] = `  "b": 20,`
	changed[10] = `  "j": 100`
	for _, tc := range []struct {
		name string
		a, b []byte
		want string
	}{
		{"equal", doc(base...), doc(base...), ""},
		{"both empty", nil, []byte{}, ""},
		{"two hunks", doc(base...), doc(changed...),
			"--- A\n+++ B\n" +
				"@@ -1,6 +1,6 @@\n {\n   \"a\": 1,\n-  \"b\": 2,\n+  \"b\": 20,\n   \"c\": 3,\n   \"d\": 4,\n   \"e\": 5,\n" +
				"@@ -8,5 +8,5 @@\n   \"g\": 7,\n   \"h\": 8,\n   \"i\": 9,\n-  \"j\": 10\n+  \"j\": 100\n }\n"},
		{"added at the end", doc("x"), doc("x", "y"), "--- A\n+++ B\n@@ -1,1 +1,2 @@\n x\n+y\n"},
		{"removed at the start", doc("x", "y"), doc("y"), "--- A\n+++ B\n@@ -1,2 +1,1 @@\n-x\n y\n"},
		{"from nothing", nil, doc("x"), "--- A\n+++ B\n@@ -1,0 +1,1 @@\n+x\n"},
		{"missing final newline", []byte("x\n"), []byte("x"), "--- A\n+++ B\n(the lines are equal; the documents differ in line endings or a final newline)\n"},
	} {
		if got := compare("A", tc.a, "B", tc.b); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
