package config

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// section decodes the mapping n into *v, a struct, by its `yaml` tags with
// the same strictness and positions as every other key: unknown keys (with
// a suggestion), wrong types, bad durations and values outside a field's
// `check` tag are errors at file:line:column and field path; aliases and
// merge keys work; a null value leaves the field as it was, so the default
// applies. config/doc.go says how a new section uses it.
func (w *walker) section(n *yaml.Node, path string, v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("config: section %s: want a pointer to a struct, got %T", path, v))
	}
	w.decode(n, path, rv.Elem())
}

// check is a parsed `check` struct tag: the constraints on one field's
// value, checked as it is decoded.
//
//	check:"min=1,max=100"          integers: the range, both ends included
//	check:"min=1ns"                durations: the least value (0: not negative; 1ns: positive)
//	check:"oneof=text|json"        strings: the values allowed
//	check:"nonempty"               strings: must not be ""
type check struct {
	min, max           *int64
	minDuration        *time.Duration
	oneOf              []string
	nonEmpty           bool
	hasIntegerBoundary bool
}

// parseCheck parses a `check` tag of a field of type t. A malformed tag is
// a programming error and panics (tests of the section catch it).
func parseCheck(tag string, t reflect.Type) *check {
	if tag == "" {
		return nil
	}
	c := &check{}
	for item := range strings.SplitSeq(tag, ",") {
		key, val, _ := strings.Cut(item, "=")
		bad := func(err error) { panic(fmt.Sprintf("config: bad check tag %q on a %s: %s: %v", tag, t, item, err)) }
		switch key {
		case "min", "max":
			if t == durationType || t == configDurationType {
				if key == "max" {
					bad(fmt.Errorf("durations take min only"))
				}
				d, err := time.ParseDuration(val)
				if err != nil {
					bad(err)
				}
				c.minDuration = &d
				continue
			}
			x, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				bad(err)
			}
			if key == "min" {
				c.min = &x
			} else {
				c.max = &x
			}
			c.hasIntegerBoundary = true
		case "oneof":
			c.oneOf = strings.Split(val, "|")
		case "nonempty":
			c.nonEmpty = true
		default:
			bad(fmt.Errorf("unknown constraint"))
		}
	}
	return c
}

// decodeChecked decodes n into v (settable) under the constraints of c,
// with the messages the hand-written parts of Parse use for the same
// mistakes.
func (w *walker) decodeChecked(n *yaml.Node, path string, v reflect.Value, c *check) {
	r := w.resolve(n, path)
	if r == nil || isNull(r) {
		return
	}
	w.enter(r)
	defer w.leave(r)
	t := v.Type()
	switch {
	case c.minDuration != nil && (t == durationType || t == configDurationType):
		d, ok := w.duration(r, path, *c.minDuration)
		if !ok {
			return
		}
		if t == durationType {
			v.SetInt(int64(d.Duration))
		} else {
			v.Set(reflect.ValueOf(d))
		}
	case c.hasIntegerBoundary && t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if c.min != nil {
			lo = *c.min
		}
		if c.max != nil {
			hi = *c.max
		}
		// Never beyond what the field holds.
		bits := t.Bits()
		lo, hi = max(lo, -1<<(bits-1)), min(hi, 1<<(bits-1)-1)
		if x, ok := w.integer(r, path, lo, hi); ok {
			v.SetInt(x)
		}
	case (c.oneOf != nil || c.nonEmpty) && t.Kind() == reflect.String:
		var s string
		var ok bool
		switch {
		case c.oneOf != nil:
			s, ok = w.oneOf(r, path, c.oneOf...)
		default:
			s = w.nonEmpty(r, path)
			ok = true
		}
		if ok {
			v.SetString(s)
		}
	default:
		panic(fmt.Sprintf("config: check tag on %s: constraint does not apply to a %s", path, t))
	}
}
