package config

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// handler decodes one field's value; n is resolved and never null.
type handler func(n *yaml.Node, path string)

// fields walks mapping n, calling the handler for each known key. Null values
// count as absent (the default applies). Keys without a handler go to
// fallback, which reports whether it took them; the rest are unknown fields.
func (w *walker) fields(n *yaml.Node, path string, handlers map[string]handler, fallback func(p pair) bool) {
	ps, ok := w.pairs(n, path)
	if !ok {
		return
	}
	w.fieldsOf(ps, path, handlers, fallback)
}

func (w *walker) fieldsOf(ps []pair, path string, handlers map[string]handler, fallback func(p pair) bool) {
	for _, p := range ps {
		h, known := handlers[p.key]
		if !known {
			if fallback == nil || !fallback(p) {
				w.errorf(p.keyN, join(path, p.key), "unknown field %q%s", p.key, suggest(p.key, mapKeys(handlers)))
			}
			continue
		}
		w.value(p.value, join(path, p.key), h)
	}
}

// value resolves n and calls h unless n is null or a broken alias.
func (w *walker) value(n *yaml.Node, path string, h handler) {
	r := w.resolve(n, path)
	if r == nil || isNull(r) {
		return
	}
	w.enter(r)
	h(r, path)
	w.leave(r)
}

// list walks sequence n, calling h for each resolved item, null items
// included (h decides whether they are allowed).
func (w *walker) list(n *yaml.Node, path string, h func(i int, item *yaml.Node, path string)) {
	if n.Kind != yaml.SequenceNode {
		w.errorf(n, path, "expected a list, got %s", kindName(n))
		return
	}
	for i, item := range n.Content {
		p := index(path, i)
		r := w.resolve(item, p)
		if r == nil {
			continue
		}
		w.enter(r)
		h(i, r, p)
		w.leave(r)
	}
}

// str decodes a string. Any non-null scalar is taken as written (so `name:
// 123` is "123"), as go-yaml does for string fields.
func (w *walker) str(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		w.errorf(n, path, "expected a string, got %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

// strList decodes a list of strings, returning the item nodes for later
// cross-checks. After an error (reported) it returns nil, so that indexes
// into the result always match the file.
func (w *walker) strList(n *yaml.Node, path string) ([]string, []*yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		w.errorf(n, path, "expected a list, got %s", kindName(n))
		return nil, nil
	}
	out, nodes := []string{}, []*yaml.Node{}
	bad := false
	w.list(n, path, func(_ int, item *yaml.Node, p string) {
		s, ok := w.str(item, p)
		bad = bad || !ok
		out = append(out, s)
		nodes = append(nodes, item)
	})
	if bad || len(out) != len(n.Content) {
		return nil, nil
	}
	return out, nodes
}

// boolean decodes true or false (YAML 1.1 forms such as yes/on are refused:
// they are strings in YAML 1.2).
func (w *walker) boolean(n *yaml.Node, path string) (bool, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == tagBool {
		var b bool
		if err := n.Decode(&b); err == nil {
			return b, true
		}
	}
	w.errorf(n, path, "expected true or false, got %s", kindName(n))
	return false, false
}

// integer decodes an integer within [lo, hi].
func (w *walker) integer(n *yaml.Node, path string, lo, hi int64) (int64, bool) {
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != tagInt || n.Decode(&v) != nil {
		if n.Kind == yaml.ScalarNode && n.ShortTag() == tagInt {
			w.errorf(n, path, "integer %s out of range [%d, %d]", n.Value, lo, hi)
		} else {
			w.errorf(n, path, "expected an integer, got %s", kindName(n))
		}
		return 0, false
	}
	if v < lo || v > hi {
		w.errorf(n, path, "%d out of range [%d, %d]", v, lo, hi)
		return 0, false
	}
	return v, true
}

// float decodes a number within [lo, hi].
func (w *walker) float(n *yaml.Node, path string, lo, hi float64) (float64, bool) {
	var v float64
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != tagInt && tag != tagFloat) || n.Decode(&v) != nil {
		w.errorf(n, path, "expected a number, got %s", kindName(n))
		return 0, false
	}
	if !(v >= lo && v <= hi) || math.IsNaN(v) {
		w.errorf(n, path, "%s out of range [%g, %g]", n.Value, lo, hi)
		return 0, false
	}
	return v, true
}

// duration decodes a Go duration string of at least lo.
func (w *walker) duration(n *yaml.Node, path string, lo time.Duration) (Duration, bool) {
	if n.Kind != yaml.ScalarNode {
		w.errorf(n, path, "expected a duration such as 30s, got %s", kindName(n))
		return Duration{}, false
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		w.wrapf(n, path, err, "invalid duration %q (want e.g. 500ms, 30s, 5m, 1h)", n.Value)
		return Duration{}, false
	}
	if d < lo {
		switch lo {
		case 0:
			w.errorf(n, path, "must not be negative, got %s", n.Value)
		case 1:
			w.errorf(n, path, "must be positive, got %s", n.Value)
		default:
			w.errorf(n, path, "must be at least %s, got %s", lo, n.Value)
		}
		return Duration{}, false
	}
	return Duration{d}, true
}

// timestampLayouts are the forms an approval's expiry may take; those without
// a zone are UTC.
var timestampLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// timestamp decodes an RFC 3339 timestamp or a date.
func (w *walker) timestamp(n *yaml.Node, path string) (time.Time, bool) {
	if n.Kind == yaml.ScalarNode {
		if tag := n.ShortTag(); tag == tagTimestamp || tag == tagStr {
			for _, layout := range timestampLayouts {
				if t, err := time.Parse(layout, n.Value); err == nil {
					return t, true
				}
			}
		}
	}
	w.errorf(n, path, "expected an RFC 3339 timestamp (2026-12-31T23:59:59Z) or a date (2026-12-31), got %s", kindName(n))
	return time.Time{}, false
}

// oneOf decodes a string that must be one of allowed.
func (w *walker) oneOf(n *yaml.Node, path string, allowed ...string) (string, bool) {
	s, ok := w.str(n, path)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	w.errorf(n, path, "must be one of %s, got %q", strings.Join(allowed, ", "), s)
	return "", false
}

// quoteList renders names for messages: "a", "b", "c".
func quoteList(names []string) string {
	const most = 10
	q := make([]string, 0, min(len(names), most)+1)
	for i, s := range names {
		if i == most {
			q = append(q, "…")
			break
		}
		q = append(q, strconv.Quote(s))
	}
	if len(q) == 0 {
		return "none"
	}
	return strings.Join(q, ", ")
}
