package jsonenc

import "encoding/json"

// maxDepth is encoding/json's limit on nesting: its scanner refuses an
// array or object nested deeper (10,000 levels are valid, 10,001 not).
const maxDepth = 10000

// Valid reports whether data is valid JSON, as json.Valid does: the same
// grammar (strings are not checked for valid UTF-8, as there) and the
// same nesting limit, in one pass without encoding/json's scanner, which
// calls a function per byte. The store checks every audit entry's data
// with it before it seals the entry.
func Valid(data []byte) bool {
	s := rawScanner{data: data, clean: true}
	return s.top()
}

// RawMessage appends raw as json.Marshal writes a json.RawMessage that
// holds it: compacted, with <, >, & and U+2028, U+2029 escaped, "null" for
// nil. Raw that is valid and already in that form (what json.Marshal
// returned, say) is appended as it is, checked in one pass; anything else
// goes through json.Marshal, and an error is its error (raw is not JSON).
func RawMessage(b, raw []byte) ([]byte, error) {
	if raw != nil {
		s := rawScanner{data: raw, clean: true}
		if s.top() && s.clean {
			return append(b, raw...), nil
		}
	}
	q, err := json.Marshal(json.RawMessage(raw))
	if err != nil {
		return nil, err
	}
	return append(b, q...), nil
}

// rawScanner checks one JSON text: valid, and clean when json.Marshal
// would write it unchanged as a json.RawMessage (no whitespace outside
// strings, nothing in a string that encoding/json escapes for HTML).
type rawScanner struct {
	data  []byte
	i     int
	depth int
	clean bool
}

// top checks that data is exactly one value, whitespace around it allowed.
func (s *rawScanner) top() bool {
	s.space()
	if !s.value() {
		return false
	}
	s.space()
	return s.i == len(s.data)
}

func (s *rawScanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.clean = false
			s.i++
		default:
			return
		}
	}
}

func (s *rawScanner) value() bool {
	if s.i >= len(s.data) {
		return false
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		return s.str()
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *rawScanner) literal(lit string) bool {
	if len(s.data)-s.i < len(lit) || string(s.data[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

func (s *rawScanner) object() bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.i++ // {
	s.space()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		if s.i >= len(s.data) || s.data[s.i] != '"' || !s.str() {
			return false
		}
		s.space()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !s.value() {
			return false
		}
		if more, ok := s.more('}'); !more {
			return ok
		}
	}
}

func (s *rawScanner) array() bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.i++ // [
	s.space()
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if !s.value() {
			return false
		}
		if more, ok := s.more(']'); !more {
			return ok
		}
	}
}

// more reads what follows a member or an element: a comma, more to come,
// or close, which ends the object or array; ok is false for anything else.
func (s *rawScanner) more(close byte) (more, ok bool) {
	s.space()
	if s.i >= len(s.data) {
		return false, false
	}
	switch s.data[s.i] {
	case ',':
		s.i++
		s.space()
		return true, true
	case close:
		s.i++
		s.depth--
		return false, true
	}
	return false, false
}

// str checks a string from its opening quote. encoding/json refuses
// control characters and unknown escapes, and does not check UTF-8.
func (s *rawScanner) str() bool {
	d := s.data
	i := s.i + 1
	for i < len(d) {
		for i < len(d) && plain[d[i]] {
			i++
		}
		if i >= len(d) {
			break
		}
		c := d[i]
		switch {
		case c == '"':
			s.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(d) {
				return false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(d)-i < 6 || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) || !isHex(d[i+5]) {
					return false
				}
				i += 6
			default:
				return false
			}
			continue
		case c < 0x20:
			return false
		case c == '<' || c == '>' || c == '&':
			s.clean = false
		case c == 0xE2 && i+2 < len(d) && d[i+1] == 0x80 && d[i+2]&^1 == 0xA8:
			s.clean = false // U+2028 or U+2029
		}
		i++
	}
	return false
}

// plain marks the bytes a string holds as they are, which str skips in a
// tight loop: all but control characters, the quote, the backslash, what
// encoding/json escapes for HTML and 0xE2 (U+2028 and U+2029 start with it).
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c != 0xE2
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *rawScanner) number() bool {
	d := s.data
	i := s.i
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i++; i < len(d) && '0' <= d[i] && d[i] <= '9'; i++ {
		}
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return false
		}
		for i++; i < len(d) && '0' <= d[i] && d[i] <= '9'; i++ {
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return false
		}
		for i++; i < len(d) && '0' <= d[i] && d[i] <= '9'; i++ {
		}
	}
	s.i = i
	return true
}
