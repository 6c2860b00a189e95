package trace

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the table of the longest common subsequence of two
// answers (lines × lines): answers longer than that are shown as the one
// replaced by the other, rather than a diff costing that much memory.
const maxDiffCells = 4 << 20

// unifiedDiff returns a unified line diff of a and b (named aName and
// bName in its --- and +++ lines) with ctx lines of context around each
// change, or "" when they are equal. A text that does not end in a newline
// has its last line marked so, as diff(1) does.
func unifiedDiff(aName, bName, a, b string, ctx int) string {
	if a == b {
		return ""
	}
	al, bl := splitLines(a), splitLines(b)
	ops := diffLines(al, bl)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	// Each hunk covers the changes closer than 2*ctx lines apart, with ctx
	// lines of context on each side.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		writeHunk(&out, ops[start:end])
		i = end
	}
	return out.String()
}

// edit is one line of a diff: ' ' kept, '-' only in a, '+' only in b;
// ai and bi are its line numbers (0-based) in a and b.
type edit struct {
	kind   byte
	line   string
	ai, bi int
}

func writeHunk(out *strings.Builder, ops []edit) {
	var an, bn int
	for _, e := range ops {
		if e.kind != '+' {
			an++
		}
		if e.kind != '-' {
			bn++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(ops[0].ai, an), hunkRange(ops[0].bi, bn))
	for _, e := range ops {
		out.WriteByte(e.kind)
		out.WriteString(strings.TrimSuffix(e.line, "\n"))
		out.WriteByte('\n')
		if !strings.HasSuffix(e.line, "\n") {
			out.WriteString("\\ No newline at end of file\n")
		}
	}
}

// hunkRange is a hunk's range in one file: "start,count", 1-based; a
// range of no lines starts at the line before it.
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines splits s after each newline; the last line may lack one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines returns the edits that turn a into b: the lines of their
// longest common subsequence kept, the others removed or added, a's
// removals before b's additions at each place. Texts too long for the
// table are one removal and one addition.
func diffLines(a, b []string) []edit {
	// Common prefix and suffix need no table.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []edit
	for i := 0; i < pre; i++ {
		ops = append(ops, edit{' ', a[i], i, i})
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(am), len(bm)
	if (n+1)*(m+1) > maxDiffCells {
		for i, l := range am {
			ops = append(ops, edit{'-', l, pre + i, pre})
		}
		for j, l := range bm {
			ops = append(ops, edit{'+', l, pre + n, pre + j})
		}
	} else {
		// lcs[i][j]: the length of the longest common subsequence of
		// am[i:] and bm[j:].
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if am[i] == bm[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && am[i] == bm[j]:
				ops = append(ops, edit{' ', am[i], pre + i, pre + j})
				i, j = i+1, j+1
			case j == m || (i < n && lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, edit{'-', am[i], pre + i, pre + j})
				i++
			default:
				ops = append(ops, edit{'+', bm[j], pre + i, pre + j})
				j++
			}
		}
	}
	for k := 0; k < suf; k++ {
		ai, bi := len(a)-suf+k, len(b)-suf+k
		ops = append(ops, edit{' ', a[ai], ai, bi})
	}
	return ops
}
