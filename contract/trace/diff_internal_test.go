package trace

import "testing"

// TestUnifiedDiff: the diff of two answers is the one diff -u prints
// (each want below is GNU diff's output for the two texts): hunks with
// three lines of context, changes closer than six lines in one hunk, an
// empty side, a last line without a newline.
func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, a, b, want string }{
		{"same", "a\nb\n", "a\nb\n", ""},
		{"one line", "a\nb\nc\n", "a\nB\nc\n", "--- A\n+++ B\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n", "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n15\n",
			"--- A\n+++ B\n@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n@@ -11,5 +12,4 @@\n 11\n 12\n 13\n-14\n 15\n"},
		{"seven apart", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\n2\nX\n4\n5\n6\n7\n8\n9\n10\nY\n12\n",
			"--- A\n+++ B\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+X\n 4\n 5\n 6\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+Y\n 12\n"},
		{"six apart", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\nX\n3\n4\n5\n6\n7\n8\nY\n10\n",
			"--- A\n+++ B\n@@ -1,10 +1,10 @@\n 1\n-2\n+X\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+Y\n 10\n"},
		{"from nothing", "", "a\n", "--- A\n+++ B\n@@ -0,0 +1 @@\n+a\n"},
		{"to nothing", "a\n", "", "--- A\n+++ B\n@@ -1 +0,0 @@\n-a\n"},
		{"no newline", "a\nb", "a\nc", "--- A\n+++ B\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"insert first", "x\n", "y\nx\n", "--- A\n+++ B\n@@ -1 +1,2 @@\n+y\n x\n"},
	} {
		if got := unifiedDiff("A", "B", tc.a, tc.b, 3); got != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}
