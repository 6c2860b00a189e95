package config

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as a Go duration string such as "30s",
// "5m" or "1h30m" (a bare 0 is allowed too).
type Duration struct{ time.Duration }

// D makes a Duration from d, for literals in code and tests.
func D(d time.Duration) Duration { return Duration{d} }

// UnmarshalYAML decodes a duration string. Parse reports the same errors
// with field paths; this method serves decoding outside Parse.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: expected a duration such as 30s, got %s", n.Line, kindName(n))
	}
	v, err := parseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	d.Duration = v
	return nil
}

// MarshalYAML encodes d as a duration string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalText encodes d as a duration string (JSON too).
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText decodes a duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// parseDuration parses s with time.ParseDuration, with a message that shows
// the expected form.
func parseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (want e.g. 500ms, 30s, 5m, 1h): %w", s, err)
	}
	return v, nil
}
