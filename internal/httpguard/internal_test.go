package httpguard

import "testing"

func TestHostList(t *testing.T) {
	t.Parallel()
	l := newHostList([]string{"Agents.Example.com", "ops.example.com:8443", " [2001:db8::1] ", ""})
	cases := map[string]bool{
		"localhost": true, "LocalHost:80": true, "127.0.0.1": true, "127.9.9.9:1": true,
		"[::1]:9000": true, "::1": true, "[::ffff:127.0.0.1]:80": true,
		"agents.example.com": true, "AGENTS.example.com:443": true,
		"ops.example.com:8443": true, "ops.example.com": false, "ops.example.com:1": false,
		"[2001:db8::1]:80": true, "2001:db8::1": true,
		"": false, ":80": false, "evil.example": false, "0.0.0.0": false, "10.1.1.1": false,
		"localhost.evil.example": false, "127.0.0.1.nip.io": false,
	}
	for host, want := range cases {
		if got := l.allows(host); got != want {
			t.Errorf("allows(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestNormalizeOrigin(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"http://localhost:5173":        "http://localhost:5173",
		"HTTPS://App.Example.COM":      "https://app.example.com",
		"https://app.example.com:443":  "https://app.example.com",
		"http://app.example.com:80":    "http://app.example.com",
		"http://app.example.com:443":   "http://app.example.com:443",
		"http://[::1]:9000":            "http://[::1]:9000",
		"http://[::1]":                 "http://[::1]",
		"null":                         "",
		"":                             "",
		"file://":                      "",
		"chrome-extension://abc":       "",
		"https://app.example.com/":     "",
		"https://app.example.com/path": "",
		"https://u@app.example.com":    "",
		"https://app.example.com?q":    "",
		"https://:443":                 "",
		"not a url":                    "",
	}
	for in, want := range cases {
		got, ok := normalizeOrigin(in)
		if got != want || ok != (want != "") {
			t.Errorf("normalizeOrigin(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestIsJSON(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"application/json":                     true,
		"Application/JSON; charset=utf-8":      true,
		"application/a2a+json":                 true,
		"application/problem+json; q=1":        true,
		"application/vnd.example+json":         true,
		"":                                     false,
		"text/plain":                           false,
		"text/plain; charset=application/json": false,
		"application/x-www-form-urlencoded":    false,
		"multipart/form-data; boundary=x":      false,
		"application/jsonx":                    false,
		"application/json-seq":                 false,
		"application/json;":                    true,
		"application/json; bad":                false,
		"+json":                                false,
	}
	for in, want := range cases {
		if got := isJSON(in); got != want {
			t.Errorf("isJSON(%q) = %v, want %v", in, got, want)
		}
	}
}
