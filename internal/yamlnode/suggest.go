package yamlnode

import (
	"fmt"
	"strconv"
	"strings"
)

// Suggester proposes a known name close to an unknown one, for messages
// such as `unknown field "atempts" (did you mean "attempts"?)`.
type Suggester struct {
	// Fold maps names to the form they are compared in (nil: as they are
	// written). A known name equal to the unknown one once folded is
	// proposed before any other.
	Fold func(string) string
	// MaxLen, when positive, bounds the names compared by edit distance:
	// an unknown name longer than that gets no suggestion by distance,
	// and a longer known name is as far as its length.
	MaxLen int
}

// Suggest returns ` (did you mean "k"?)` for the name k in known closest
// to name: equal once folded, or else at most two edits away (and at
// most half of name's length), ties going to the first in known. It
// returns "" when no name is that close.
func (s Suggester) Suggest(name string, known []string) string {
	fold := s.Fold
	if fold == nil {
		fold = func(s string) string { return s }
	}
	for _, k := range known {
		if fold(k) == fold(name) {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	if s.MaxLen > 0 && len(name) > s.MaxLen {
		return ""
	}
	best, bestD := "", 3
	for _, k := range known {
		if d := len(k) - len(name); d >= bestD || -d >= bestD {
			continue // too far apart to be the best
		}
		a, b := fold(name), fold(k)
		var dist int
		if s.MaxLen > 0 && (len(a) > s.MaxLen || len(b) > s.MaxLen) {
			dist = max(len(a), len(b))
		} else {
			dist = EditDistance(a, b)
		}
		if dist < bestD {
			best, bestD = k, dist
		}
	}
	if best == "" || bestD > len(name)/2 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// EditDistance is the Levenshtein distance between a and b, in bytes.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// SuggestAll returns ` (did you mean "a"?)` or ` (did you mean "a", "b"
// or "c"?)` for every name in known that s would propose for name on its
// own (each compared alone), in known's order; "" when none is close.
func (s Suggester) SuggestAll(name string, known []string) string {
	var close []string
	for _, k := range known {
		if s.Suggest(name, []string{k}) != "" {
			close = append(close, strconv.Quote(k))
		}
	}
	switch len(close) {
	case 0:
		return ""
	case 1:
		return " (did you mean " + close[0] + "?)"
	}
	return " (did you mean " + strings.Join(close[:len(close)-1], ", ") + " or " + close[len(close)-1] + "?)"
}
