package cardsig

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/go-jose/go-jose/v4"
)

// The signature algorithms cards are signed with and verified under.
const (
	// AlgEdDSA is EdDSA over Ed25519 (RFC 8037).
	AlgEdDSA = "EdDSA"
	// AlgES256 is ECDSA over P-256 with SHA-256.
	AlgES256 = "ES256"
)

// Algorithms lists the algorithms this package signs with and accepts.
var Algorithms = []string{AlgEdDSA, AlgES256}

// ErrKey is what every error about a key's file or type wraps.
var ErrKey = errors.New("bad card signing key")

// maxKIDLen bounds a key id.
const maxKIDLen = 128

// Key is a private signing key with its key id and algorithm. It never
// prints or logs its private half.
type Key struct {
	kid, alg string
	priv     crypto.Signer
}

// KID returns the key id, the `kid` of its signatures and of its JWK.
func (k *Key) KID() string { return k.kid }

// Alg returns the key's algorithm, AlgEdDSA or AlgES256.
func (k *Key) Alg() string { return k.alg }

// String names the key by kid and algorithm only.
func (k *Key) String() string { return k.kid + " (" + k.alg + ")" }

// LogValue implements slog.LogValuer: a logged key shows its kid and
// algorithm, never its private half.
func (k *Key) LogValue() slog.Value {
	return slog.GroupValue(slog.String("kid", k.kid), slog.String("alg", k.alg))
}

// JWK returns the public half of the key as a JWK with kid, alg and use
// "sig".
func (k *Key) JWK() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: k.alg, Use: "sig"}
}

// CheckKID returns an error when kid cannot be a key id: empty, longer
// than 128 bytes, or holding anything but printable ASCII without spaces.
func CheckKID(kid string) error {
	if kid == "" {
		return errors.New("kid must not be empty")
	}
	if len(kid) > maxKIDLen {
		return fmt.Errorf("kid is longer than %d bytes", maxKIDLen)
	}
	for _, r := range kid {
		if r <= ' ' || r > '~' {
			return fmt.Errorf("kid %q must be printable ASCII without spaces", kid)
		}
	}
	return nil
}

// ParseKey reads a PEM private key (PKCS #8 "PRIVATE KEY", or SEC 1 "EC
// PRIVATE KEY") for alg: an Ed25519 key for AlgEdDSA, a P-256 key for
// AlgES256. Errors wrap ErrKey and never quote the key.
func ParseKey(kid, alg string, pemData []byte) (*Key, error) {
	if err := CheckKID(kid); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	block, _ := pem.Decode(pemData)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block found (want a PKCS #8 \"PRIVATE KEY\", e.g. from openssl genpkey)", ErrKey)
	}
	var parsed any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		parsed, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		parsed, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("%w: PEM block %q is not a private key (want \"PRIVATE KEY\" or \"EC PRIVATE KEY\")", ErrKey, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKey, block.Type, err)
	}
	var signer crypto.Signer
	switch p := parsed.(type) {
	case ed25519.PrivateKey:
		if alg != AlgEdDSA {
			return nil, fmt.Errorf("%w: the file holds an Ed25519 key, which signs with alg EdDSA, not %s", ErrKey, alg)
		}
		signer = p
	case *ecdsa.PrivateKey:
		if p.Curve != elliptic.P256() {
			return nil, fmt.Errorf("%w: the file holds an ECDSA key on %s; ES256 needs P-256", ErrKey, p.Curve.Params().Name)
		}
		if alg != AlgES256 {
			return nil, fmt.Errorf("%w: the file holds an ECDSA P-256 key, which signs with alg ES256, not %s", ErrKey, alg)
		}
		signer = p
	default:
		return nil, fmt.Errorf("%w: the file holds a %s, not an Ed25519 or ECDSA P-256 key", ErrKey, keyKind(parsed))
	}
	if alg != AlgEdDSA && alg != AlgES256 {
		return nil, fmt.Errorf("%w: alg %q is not one of %s", ErrKey, alg, strings.Join(Algorithms, ", "))
	}
	return &Key{kid: kid, alg: alg, priv: signer}, nil
}

// keyKind names the type of a parsed key for error messages.
func keyKind(k any) string {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return "RSA key"
	case *ecdh.PrivateKey:
		return fmt.Sprintf("%v key (key agreement, not signing)", k.Curve())
	}
	return fmt.Sprintf("%T", k)
}

// LoadKey reads the key file at path with ParseKey. warning, when not
// empty, says that the file can be read or written by other users than its
// owner: the key still loads (container runtimes often mount secrets
// 0644), and the caller logs the warning.
func LoadKey(kid, alg, path string) (k *Key, warning string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrKey, err)
	}
	k, err = ParseKey(kid, alg, data)
	if err != nil {
		return nil, "", err
	}
	if fi, err := os.Stat(path); err == nil {
		warning = permissionWarning(path, fi.Mode())
	}
	return k, warning, nil
}

// permissionWarning says what is too open about a key file's mode, or "".
func permissionWarning(path string, mode fs.FileMode) string {
	if mode.Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("private key file %s has mode %04o: other users than its owner can read it (chmod 600 %s)", path, mode.Perm(), path)
}

// GenerateKey makes a new key for alg and returns it with its PKCS #8
// PEM, the form ParseKey and LoadKey read (what `openssl genpkey
// -algorithm ed25519` or `-algorithm EC -pkeyopt ec_paramgen_curve:P-256`
// write).
func GenerateKey(kid, alg string) (*Key, []byte, error) {
	var priv any
	var err error
	switch alg {
	case AlgEdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	case AlgES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		return nil, nil, fmt.Errorf("%w: alg %q is not one of %s", ErrKey, alg, strings.Join(Algorithms, ", "))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cardsig: generate key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, fmt.Errorf("cardsig: generate key: %w", err)
	}
	pemData := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	k, err := ParseKey(kid, alg, pemData)
	if err != nil {
		return nil, nil, err
	}
	return k, pemData, nil
}
