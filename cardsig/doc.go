// Package cardsig signs and verifies A2A agent cards (A2A specification
// §8.4, "Agent Card Signing").
//
// A signature is a JWS (RFC 7515) whose payload is the card in RFC 8785
// canonical form (JCS) without its `signatures` member; the card carries
// it as an a2a.AgentCardSignature: the base64url protected header (alg,
// typ "JOSE", kid and, when the signer knows it, jku) and the base64url
// signature, the payload left out because it is the card itself. Keys are
// Ed25519 (alg EdDSA) or ECDSA P-256 (alg ES256); nothing else is signed
// with or accepted, "none" and HMAC least of all.
//
// Signer signs with every key it holds (several keys: rotation) and
// publishes their public halves as a JWKS. Verify checks each signature of
// a fetched card against keys a Resolver finds by kid. The canonical form
// is computed from the card's JSON as it arrived, not from a Go struct, so
// a member this package (or a2a-go) does not know is signed and checked
// too. docs/a2a.md ("Signed cards") says what other SDKs canonicalise
// differently.
package cardsig
