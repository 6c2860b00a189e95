package config

import (
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// Card signing algorithms (docs/a2a.md, "Signed cards").
const (
	// AlgEdDSA signs with an Ed25519 key.
	AlgEdDSA = "EdDSA"
	// AlgES256 signs with an ECDSA P-256 key.
	AlgES256 = "ES256"
)

// Cards configures the agent cards the server publishes (docs/a2a.md,
// "Signed cards").
type Cards struct {
	// SigningKeys sign every card served, each adding one signature, in
	// the order listed (`signing_keys`, default none: cards are not
	// signed and there is no JWKS). Their public halves are served at
	// /.well-known/jwks.json. Listing a new key beside the old one rotates
	// without a moment in which a verifier knowing either would fail.
	SigningKeys []SigningKey `yaml:"signing_keys"`
}

// SigningKey is one card signing key.
type SigningKey struct {
	// KID is the key id, the `kid` of its signatures and of its entry in
	// the JWKS (`kid`): required, unique, printable ASCII without spaces,
	// at most 128 bytes.
	KID string `yaml:"kid"`
	// Alg is EdDSA (an Ed25519 key) or ES256 (an ECDSA P-256 key)
	// (`alg`, required).
	Alg string `yaml:"alg"`
	// PrivateKeyFile is the PEM file of the private key: PKCS #8 ("PRIVATE
	// KEY", as openssl genpkey writes it) or, for ES256, SEC 1 ("EC
	// PRIVATE KEY") (`private_key_file`, required; a relative path is
	// relative to the configuration file). It is read when the server
	// starts and by `pactum config check`; the key is never logged. A file
	// other users can read loads with a warning.
	PrivateKeyFile string `yaml:"private_key_file"`
	// Line is the line the entry starts at.
	Line int `yaml:"-"`

	node, fileNode *yaml.Node
}

// cards decodes the cards section.
func (w *walker) cards(n *yaml.Node, path string, cs *Cards) {
	w.fields(n, path, map[string]handler{
		"signing_keys": func(n *yaml.Node, path string) {
			kids := map[string]string{}
			w.list(n, path, func(i int, item *yaml.Node, path string) {
				k, entry := SigningKey{Line: item.Line, node: item}, path
				var kidN, algN *yaml.Node
				w.fields(item, path, map[string]handler{
					"kid": func(n *yaml.Node, path string) {
						k.KID, kidN = w.nonEmpty(n, path), n
						if other, dup := kids[k.KID]; dup && k.KID != "" {
							w.errorf(n, path, "kid %q is also the kid of %s; each key needs its own", k.KID, other)
						}
						kids[k.KID] = entry
					},
					"alg": func(n *yaml.Node, path string) {
						k.Alg, _ = w.oneOf(n, path, AlgEdDSA, AlgES256)
						algN = n
					},
					"private_key_file": func(n *yaml.Node, path string) {
						k.PrivateKeyFile, k.fileNode = w.nonEmpty(n, path), n
					},
				}, nil)
				if item.Kind == yaml.MappingNode {
					w.required(item, kidN, join(path, "kid"))
					w.required(item, algN, join(path, "alg"))
					w.required(item, k.fileNode, join(path, "private_key_file"))
				}
				cs.SigningKeys = append(cs.SigningKeys, k)
			})
		},
	}, nil)
}

// SigningKeyPath returns the private key file of c.Cards.SigningKeys[i]
// resolved against the configuration file's directory (or baseDir, when
// not empty), and a way to place a problem with it (a file that does not
// load, a key of the wrong type) at the entry's private_key_file.
func (c *Config) SigningKeyPath(i int, baseDir string) (string, func(msg string, err error) *Error) {
	k := c.Cards.SigningKeys[i]
	p := k.PrivateKeyFile
	if dir := c.baseDir(baseDir); !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	file, path := c.file, index("cards.signing_keys", i)
	return p, func(msg string, err error) *Error {
		er := &Error{File: file, Line: k.Line, Path: path, Msg: msg, Err: err}
		if k.node != nil {
			er.Line, er.Column = k.node.Line, k.node.Column
		}
		if k.fileNode != nil {
			er.Path = join(path, "private_key_file")
			er.Line, er.Column = k.fileNode.Line, k.fileNode.Column
		}
		return er
	}
}
