// Package endpoint checks and shows the URL of a remote endpoint that an
// agent's configuration names (the a2a, langgraph, mcp, webhook and
// openai runtimes), so all of them refuse the same URLs with the same words and
// never show a URL's secrets.
package endpoint

import (
	"errors"
	"fmt"
	"net/url"
)

// Check parses raw, an absolute http or https URL with a host, and
// refuses credentials in it: they would show wherever the URL is printed,
// while header values never are. Errors name the setting "url" and never
// show raw.
func Check(raw string) (*url.URL, error) {
	return CheckSetting(raw, "url", "use headers")
}

// CheckSetting is Check for the URL in the setting named setting (e.g.
// "base_url"); instead says what to use in place of credentials in the
// URL (e.g. "use headers"). Errors start with the setting's name and
// never show raw: its user info, path or query may hold a secret.
func CheckSetting(raw, setting, instead string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error quotes the whole URL, credentials included.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s: parse error: %w", setting, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%s: scheme must be http or https, not %q", setting, u.Scheme)
	case u.Host == "":
		return nil, fmt.Errorf("%s: missing host", setting)
	case u.User != nil:
		return nil, fmt.Errorf("%s: credentials in the URL are not supported; %s", setting, instead)
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
