package bearer_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pactum/pactum/internal/bearer"
)

// FuzzToken feeds one or two arbitrary Authorization headers to Token: it
// never panics; two headers are always ErrMultipleHeaders; one yields a
// token only with the scheme Bearer (any case), and then the token is the
// rest of the header, trimmed and not empty.
func FuzzToken(f *testing.F) {
	for _, s := range [][2]string{
		{"Bearer s3cret", ""}, {"bearer  s3cret ", ""}, {"Basic s3cret", ""}, {"Bearer", ""}, {"", ""},
		{"Bearer a", "Bearer b"}, {"Bearer a", ""}, {"Bearer a,Bearer b", ""}, {"Bearer \x00", ""},
	} {
		f.Add(s[0], s[1], s[1] != "")
	}
	f.Fuzz(func(t *testing.T, first, second string, two bool) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Add("Authorization", first)
		if two {
			r.Header.Add("Authorization", second)
		}
		token, err := bearer.Token(r)
		if two {
			if !errors.Is(err, bearer.ErrMultipleHeaders) || token != "" {
				t.Fatalf("two headers %q, %q: %q, %v; want ErrMultipleHeaders", first, second, token, err)
			}
			return
		}
		scheme, rest, found := strings.Cut(first, " ")
		want := strings.TrimSpace(rest)
		if !found || !strings.EqualFold(scheme, "Bearer") || want == "" {
			if !errors.Is(err, bearer.ErrNoToken) || token != "" {
				t.Fatalf("header %q: %q, %v; want ErrNoToken", first, token, err)
			}
			return
		}
		if err != nil || token != want {
			t.Fatalf("header %q: %q, %v; want %q", first, token, err, want)
		}
	})
}
