package config

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// DefaultOIDCLeeway is the default clock skew of auth: oidc.
const DefaultOIDCLeeway = 30 * time.Second

// maxOIDCLeeway bounds the clock skew of auth: oidc.
const maxOIDCLeeway = 5 * time.Minute

// auth decodes the auth key: a mode (none, bearer) or a mapping whose
// mode is oidc and whose other keys configure it.
func (w *walker) auth(n *yaml.Node, path string, c *Config) {
	if n.Kind != yaml.MappingNode {
		mode, ok := w.str(n, path)
		if ok && mode == AuthOIDC {
			w.errorf(n, path, "oidc needs the mapping form: auth: {mode: oidc, issuer: URL, audience: …}")
			return
		}
		if ok {
			c.Auth, _ = w.oneOf(n, path, AuthNone, AuthBearer)
		}
		return
	}
	o := &c.OIDC
	var modeN, issuerN, audienceN *yaml.Node
	leewaySet := false
	w.fields(n, path, map[string]handler{
		"mode": func(n *yaml.Node, path string) {
			modeN = n
			c.Auth, _ = w.oneOf(n, path, AuthNone, AuthBearer, AuthOIDC)
		},
		"issuer": func(n *yaml.Node, path string) {
			issuerN = n
			if s, ok := w.str(n, path); ok {
				if err := checkIssuer(s); err != nil {
					w.wrapf(n, path, err, "%v", err)
				}
				o.Issuer = s
			}
		},
		"audience": func(n *yaml.Node, path string) {
			audienceN = n
			o.Audience = w.audiences(n, path)
		},
		"mcp_audience": func(n *yaml.Node, path string) { o.MCPAudience = w.audiences(n, path) },
		"jwks_file": func(n *yaml.Node, path string) {
			o.JWKSFile, c.jwksLine, c.jwksCol = w.nonEmpty(n, path), n.Line, n.Column
		},
		"algorithms": func(n *yaml.Node, path string) {
			algs, nodes := w.strList(n, path)
			for i, a := range algs {
				if !slices.Contains(OIDCAlgorithms, a) {
					w.errorf(nodes[i], index(path, i), "%q is not allowed: only asymmetric signatures are accepted (%s); never none, never HS*", a, strings.Join(OIDCAlgorithms, ", "))
				}
			}
			if algs != nil && len(algs) == 0 {
				w.errorf(n, path, "must name at least one algorithm (or leave algorithms out for %s)", strings.Join(DefaultOIDCAlgorithms, ", "))
			}
			o.Algorithms = algs
		},
		"leeway": func(n *yaml.Node, path string) {
			leewaySet = true
			if d, ok := w.duration(n, path, 0); ok {
				if d.Duration > maxOIDCLeeway {
					w.errorf(n, path, "must be at most %s, got %s", maxOIDCLeeway, n.Value)
				}
				o.Leeway = d
			}
		},
		"actor_claim":   func(n *yaml.Node, path string) { o.ActorClaim = w.nonEmpty(n, path) },
		"actions_claim": func(n *yaml.Node, path string) { o.ActionsClaim = w.nonEmpty(n, path) },
		"token_url": func(n *yaml.Node, path string) {
			o.TokenURL = w.nonEmpty(n, path)
			if o.TokenURL != "" {
				if err := checkIssuer(o.TokenURL); err != nil {
					w.errorf(n, path, "%s", strings.Replace(err.Error(), "issuer", "token", 1))
				}
			}
		},
	}, nil)
	w.required(n, modeN, join(path, "mode"))
	if c.Auth != AuthOIDC {
		if len(n.Content) > 2 && modeN != nil {
			w.errorf(n, path, "only mode oidc takes other keys; write auth: %s", c.Auth)
		}
		c.OIDC = OIDC{}
		return
	}
	w.required(n, issuerN, join(path, "issuer"))
	w.required(n, audienceN, join(path, "audience"))
	if len(o.Algorithms) == 0 {
		o.Algorithms = slices.Clone(DefaultOIDCAlgorithms)
	}
	if !leewaySet {
		o.Leeway = Duration{DefaultOIDCLeeway}
	}
	o.ActorClaim = cmp.Or(o.ActorClaim, "sub")
}

// audiences decodes an audience: a string or a list of strings, none
// empty, at least one.
func (w *walker) audiences(n *yaml.Node, path string) []string {
	var out []string
	if n.Kind == yaml.ScalarNode {
		if s, ok := w.str(n, path); ok {
			out = []string{s}
		}
	} else {
		out, _ = w.strList(n, path)
	}
	if slices.Contains(out, "") {
		w.errorf(n, path, "must not hold an empty audience")
	} else if out != nil && len(out) == 0 {
		w.errorf(n, path, "must name at least one audience")
	}
	return out
}

// checkIssuer validates an issuer URL: https, or http on a loopback host
// (a provider started by tests, or one reached through a local tunnel),
// without user info, query or fragment.
func checkIssuer(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("invalid issuer URL: %w", err)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("issuer %q must be an https:// URL", u.Redacted())
	case u.Host == "":
		return fmt.Errorf("issuer %q has no host", u.Redacted())
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("issuer %q must not carry user info, a query or a fragment", u.Redacted())
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		return fmt.Errorf("issuer %q must be https:// (http:// only on a loopback host)", u.Redacted())
	}
	return nil
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
