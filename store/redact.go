package store

import (
	"net/url"
	"strings"
)

// redacted stands in for a hidden password.
const redacted = "xxxxx"

// Redact returns dsn with its passwords hidden, for logs and error
// messages: the password of the userinfo (postgres://user:secret@host/db
// becomes postgres://user:xxxxx@host/db) and the values of the password
// and sslpassword query parameters. The userinfo is found as url.Parse
// finds it (the authority ends at the first '/', '?' or '#', the userinfo
// at its last '@'), so what is hidden is what a URL-reading driver would
// use, but dsn need not parse: a DSN with a bad escape is redacted all the
// same, and the rest of it is returned byte for byte. A DSN without a
// scheme is read as an authority ("user:secret@host").
func Redact(dsn string) string {
	rest := 0
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest = i + len("://")
	} else if strings.HasPrefix(dsn, "//") {
		rest = len("//")
	}
	var b strings.Builder
	b.Grow(len(dsn))
	b.WriteString(dsn[:rest])
	authority := dsn[rest:]
	if end := strings.IndexAny(authority, "/?#"); end >= 0 {
		authority = authority[:end]
	}
	tail := dsn[rest+len(authority):]
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		if user, _, hasPass := strings.Cut(authority[:at], ":"); hasPass {
			authority = user + ":" + redacted + authority[at:]
		}
	}
	b.WriteString(authority)
	b.WriteString(redactQuery(tail))
	return b.String()
}

// redactQuery hides the values of password parameters in the query of
// tail (a DSN's path, query and fragment).
func redactQuery(tail string) string {
	q := strings.IndexByte(tail, '?')
	if q < 0 || strings.IndexByte(tail[:q], '#') >= 0 {
		return tail
	}
	query, frag := tail[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	pairs := strings.Split(query, "&")
	for i, pair := range pairs {
		key, _, hasValue := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(key); err == nil && hasValue && isPasswordKey(k) {
			pairs[i] = key + "=" + redacted
		}
	}
	return tail[:q+1] + strings.Join(pairs, "&") + frag
}

// isPasswordKey reports whether a query parameter carries a password
// (libpq's and pgx's password and sslpassword).
func isPasswordKey(k string) bool {
	k = strings.ToLower(k)
	return k == "password" || k == "sslpassword"
}
