package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/config"
)

func TestParseAuditAnchor(t *testing.T) {
	t.Parallel()
	c, err := config.Parse([]byte("audit:\n  anchor: {interval: 30s, file: anchors.jsonl, log: true, webhook: 'https://anchors.example.com/in', allow_private: true}\n"+oneAgent), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := config.AuditAnchor{Interval: config.Duration{Duration: 30 * time.Second}, File: "anchors.jsonl", Log: true,
		Webhook: "https://anchors.example.com/in", AllowPrivate: true}
	if c.Audit.Anchor != want || !c.Audit.Anchor.Enabled() {
		t.Errorf("audit.anchor = %+v, want %+v", c.Audit.Anchor, want)
	}
	c, err = config.Parse([]byte(oneAgent), "a.yaml")
	if err != nil || c.Audit.Anchor.Enabled() || c.Audit.Anchor.Interval.Duration != time.Minute {
		t.Errorf("default audit.anchor = %+v, %v; want off, interval 1m", c.Audit.Anchor, err)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"audit: {anchor: {interval: 1m}}\n", `a.yaml:1:17: audit.anchor: set at least one of file, log or webhook`},
		{"audit: {anchor: {log: true, interval: 0s}}\n", `a.yaml:1:39: audit.anchor.interval: must be positive`},
		{"audit: {anchor: {webhook: 'ftp://x/y'}}\n", `a.yaml:1:27: audit.anchor.webhook: webhook "ftp://x/y" must be an absolute http:// or https:// URL`},
		{"audit: {anchor: {webhook: 'https://u:p@x/y'}}\n", `audit.anchor.webhook: webhook "https://u:xxxxx@x/y" must not carry user info`},
		{"audit: {anchor: {file: ''}}\n", `audit.anchor.file: must not be empty`},
		{"audit: {anchor: {log: yes}}\n", `audit.anchor.log: expected true or false`},
		{"audit: {anchr: {log: true}}\n", `audit.anchr: unknown field "anchr"`},
	} {
		_, err := config.Parse([]byte(tc.yaml+oneAgent), "a.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}
