// Package endpoint checks and shows the URL of a remote agent that an
// agent's configuration names (the a2a and mcp runtimes), so both refuse
// the same URLs with the same words and never show a URL's secrets.
package endpoint

import (
	"errors"
	"fmt"
	"net/url"
)

// Check parses raw, an absolute http or https URL with a host, and
// refuses credentials in it: they would show wherever the URL is printed,
// while header values never are. Errors name the setting "url".
func Check(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("url: scheme must be http or https, not %q", u.Scheme)
	case u.Host == "":
		return nil, errors.New("url: missing host")
	case u.User != nil:
		return nil, errors.New("url: credentials in the URL are not supported; use headers")
	}
	return u, nil
}

// Display returns raw without its query, fragment and credentials, for
// errors, logs and descriptions: a query may carry a token. A URL that
// does not parse shows as "(invalid url)".
func Display(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid url)"
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}
