package answer

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Pointer is a parsed JSON pointer (RFC 6901). The zero Pointer refers to
// the whole document.
type Pointer struct {
	tokens []string
}

// ParsePointer parses s in the RFC 6901 string form: "" (the whole
// document) or a sequence of "/"-prefixed reference tokens in which "~1"
// stands for "/" and "~0" for "~".
func ParsePointer(s string) (Pointer, error) {
	if s == "" {
		return Pointer{}, nil
	}
	if s[0] != '/' {
		return Pointer{}, fmt.Errorf("JSON pointer %q must be empty or start with \"/\"", s)
	}
	parts := strings.Split(s[1:], "/")
	for i, p := range parts {
		if !strings.Contains(p, "~") {
			continue
		}
		t, err := unescape(p)
		if err != nil {
			return Pointer{}, fmt.Errorf("JSON pointer %q: %w", s, err)
		}
		parts[i] = t
	}
	return Pointer{tokens: parts}, nil
}

// MustPointer parses s and panics if it is not a valid pointer. It is for
// pointers fixed in the program.
func MustPointer(s string) Pointer {
	p, err := ParsePointer(s)
	if err != nil {
		panic(err)
	}
	return p
}

var errBadEscape = errors.New(`"~" must be followed by "0" or "1"`)

func unescape(tok string) (string, error) {
	var b strings.Builder
	b.Grow(len(tok))
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c != '~' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(tok) {
			return "", errBadEscape
		}
		switch tok[i+1] {
		case '0':
			b.WriteByte('~')
		case '1':
			b.WriteByte('/')
		default:
			return "", errBadEscape
		}
		i++
	}
	return b.String(), nil
}

// IsRoot reports whether p refers to the whole document.
func (p Pointer) IsRoot() bool { return len(p.tokens) == 0 }

// String returns p in its RFC 6901 string form.
func (p Pointer) String() string {
	var b strings.Builder
	r := strings.NewReplacer("~", "~0", "/", "~1")
	for _, t := range p.tokens {
		b.WriteByte('/')
		b.WriteString(r.Replace(t))
	}
	return b.String()
}

// Lookup returns the value p refers to in doc, a value decoded by
// encoding/json into any (objects as map[string]any, arrays as []any). The
// boolean is false when p names nothing in doc.
func (p Pointer) Lookup(doc any) (any, bool) {
	cur := doc
	for _, t := range p.tokens {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[t]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, ok := arrayIndex(t, len(v))
			if !ok {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// arrayIndex parses an RFC 6901 array index: decimal digits without leading
// zeros, within bounds.
func arrayIndex(t string, n int) (int, bool) {
	if t == "" || (len(t) > 1 && t[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(t)
	if err != nil || i >= n {
		return 0, false
	}
	return i, true
}
