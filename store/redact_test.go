package store_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/pactum/pactum/store"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://user:secret@host:5432/db?sslmode=disable", "postgres://user:xxxxx@host:5432/db?sslmode=disable"},
		{"postgres://user@host/db", "postgres://user@host/db"},
		{"postgres://user:@host/db", "postgres://user:xxxxx@host/db"},
		{"postgres://host/db", "postgres://host/db"},
		{"sqlite://pactum.db", "sqlite://pactum.db"},
		{"sqlite:///var/lib/pactum/db", "sqlite:///var/lib/pactum/db"},
		{"sqlite://./a@b:c/db", "sqlite://./a@b:c/db"}, // '@' and ':' in the path are not userinfo
		{"user:secret@host", "user:xxxxx@host"},        // no scheme: read as an authority
		{"//user:secret@host/db", "//user:xxxxx@host/db"},
		{"pactum.db", "pactum.db"},
		{"", ""},
		// A password holding '@' or ':' ends at the userinfo's last '@', as url.Parse reads it.
		{"postgres://user:se@c:ret@host/db", "postgres://user:xxxxx@host/db"},
		// A bad escape: url.Parse fails, the password is hidden anyway (the old server.RedactDSN leaked it).
		{"postgres://user:s%zzecret@host/db", "postgres://user:xxxxx@host/db"},
		// An '@' in the query is not the userinfo's (the old store.redact cut there and leaked nothing but mangled the host).
		{"postgres://user:secret@host/db?application_name=a@b", "postgres://user:xxxxx@host/db?application_name=a@b"},
		// Nothing is re-encoded.
		{"postgres://u:p@h/d b?x=a%20b&y=c d", "postgres://u:xxxxx@h/d b?x=a%20b&y=c d"},
		// Password query parameters.
		{"postgres://h/db?user=u&password=secret&sslmode=require", "postgres://h/db?user=u&password=xxxxx&sslmode=require"},
		{"postgres://h/db?PASSWORD=secret", "postgres://h/db?PASSWORD=xxxxx"},
		{"postgres://h/db?sslpassword=secret#frag", "postgres://h/db?sslpassword=xxxxx#frag"},
		{"postgres://h/db?pass%77ord=secret", "postgres://h/db?pass%77ord=xxxxx"},
		{"postgres://h/db#x?password=secret", "postgres://h/db#x?password=secret"}, // in the fragment: no query
		{"postgres://h/db?passwords=1&password", "postgres://h/db?passwords=1&password"},
	} {
		if got := store.Redact(tc.dsn); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
	}
}

// FuzzRedact: whatever password url.Parse would find in a DSN (userinfo
// or query parameter), Redact's output carries xxxxx in its place and the
// same user and host; Redact is idempotent and never panics.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"postgres://user:secret@host:5432/db?sslmode=disable", "sqlite://pactum.db", "user:secret@host",
		"postgres://u:p@q@h/db?password=x&sslpassword=y#f", "//u:p@h", "postgres://u:%zz@h/",
		"postgres://h/db?pass%77ord=s", "x://a@b://c:d@e",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		got := store.Redact(dsn)
		if again := store.Redact(got); again != got {
			t.Fatalf("Redact not idempotent: %q → %q → %q", dsn, got, again)
		}
		u, err := url.Parse(dsn)
		if err != nil {
			return
		}
		r, err := url.Parse(got)
		if err != nil {
			t.Fatalf("Redact(%q) = %q, which url.Parse refuses: %v", dsn, got, err)
		}
		if u.User != nil {
			if _, ok := u.User.Password(); ok {
				if pw, _ := r.User.Password(); pw != "xxxxx" || r.User.Username() != u.User.Username() || r.Host != u.Host {
					t.Fatalf("Redact(%q) = %q: user %v host %q, want %q:xxxxx at %q", dsn, got, r.User, r.Host, u.User.Username(), u.Host)
				}
			}
		}
		if q, err := url.ParseQuery(r.RawQuery); err == nil {
			for k, vs := range q {
				if strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword") {
					for _, v := range vs {
						if v != "xxxxx" && v != "" {
							t.Fatalf("Redact(%q) = %q: query %s=%q", dsn, got, k, v)
						}
					}
				}
			}
		}
	})
}
