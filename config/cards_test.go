package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/config"
)

func TestParseCardSigningKeys(t *testing.T) {
	t.Parallel()
	c, err := config.Parse([]byte("cards:\n  signing_keys:\n    - {kid: old, alg: ES256, private_key_file: keys/old.pem}\n    - {kid: new, alg: EdDSA, private_key_file: /etc/pactum/new.pem}\n"+oneAgent), "dir/a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	keys := c.Cards.SigningKeys
	if len(keys) != 2 || keys[0].KID != "old" || keys[0].Alg != config.AlgES256 || keys[1].KID != "new" || keys[1].Alg != config.AlgEdDSA || keys[0].Line != 3 {
		t.Fatalf("signing_keys = %+v", keys)
	}
	// A relative file is relative to the configuration file; an absolute
	// one stays; a problem with the file is placed at its field.
	if p, _ := c.SigningKeyPath(0, ""); p != filepath.Join("dir", "keys", "old.pem") {
		t.Errorf("SigningKeyPath(0) = %s", p)
	}
	p, at := c.SigningKeyPath(1, "elsewhere")
	if p != "/etc/pactum/new.pem" {
		t.Errorf("SigningKeyPath(1) = %s", p)
	}
	if got := at("cannot read it", nil).Error(); !strings.HasPrefix(got, "dir/a.yaml:4:") || !strings.Contains(got, "cards.signing_keys[1].private_key_file: cannot read it") {
		t.Errorf("placed error = %s", got)
	}
	c, err = config.Parse([]byte(oneAgent), "a.yaml")
	if err != nil || len(c.Cards.SigningKeys) != 0 {
		t.Errorf("default cards = %+v, %v; want no keys", c.Cards, err)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"cards: {signing_keys: [{kid: a, alg: RS256, private_key_file: k.pem}]}\n", `a.yaml:1:38: cards.signing_keys[0].alg: must be one of EdDSA, ES256, got "RS256"`},
		{"cards: {signing_keys: [{kid: a, alg: none, private_key_file: k.pem}]}\n", `cards.signing_keys[0].alg: must be one of EdDSA, ES256, got "none"`},
		{"cards: {signing_keys: [{kid: a, alg: EdDSA, private_key_file: a.pem}, {kid: a, alg: ES256, private_key_file: b.pem}]}\n",
			`a.yaml:1:77: cards.signing_keys[1].kid: kid "a" is also the kid of cards.signing_keys[0]; each key needs its own`},
		{"cards: {signing_keys: [{alg: EdDSA, private_key_file: a.pem}]}\n", `cards.signing_keys[0].kid: required`},
		{"cards: {signing_keys: [{kid: a, private_key_file: a.pem}]}\n", `cards.signing_keys[0].alg: required`},
		{"cards: {signing_keys: [{kid: a, alg: EdDSA}]}\n", `cards.signing_keys[0].private_key_file: required`},
		{"cards: {signing_keys: [{kid: '', alg: EdDSA, private_key_file: a.pem}]}\n", `cards.signing_keys[0].kid: must not be empty`},
		{"cards: {signing_keys: [{kid: a, alg: EdDSA, private_key_file: ''}]}\n", `cards.signing_keys[0].private_key_file: must not be empty`},
		{"cards: {signing_keys: [{kid: a, alg: EdDSA, private_key: a.pem}]}\n", `cards.signing_keys[0].private_key: unknown field "private_key"`},
		{"cards: {signing_key: []}\n", `cards.signing_key: unknown field "signing_key"`},
		{"cards: {signing_keys: {kid: a}}\n", `cards.signing_keys: expected a list`},
	} {
		_, err := config.Parse([]byte(tc.yaml+oneAgent), "a.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}
