package a2aserver

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync"

	"github.com/pactum/pactum/cardsig"
)

// maxSignedCards bounds the signed cards a Server keeps. Without
// Options.BaseURL each Host a request names is another card, so the
// cache is emptied when full rather than left to grow.
const maxSignedCards = 256

// signedCards keeps the signed form of each card body served, by the
// hash of the unsigned body and the jku. An ES256 signature differs each
// time it is made; reusing it keeps a card's ETag stable, so that
// If-None-Match works, and saves signing each request. The key covers
// every byte served, so a card that changes is signed afresh.
type signedCards struct {
	mu    sync.Mutex
	cards map[[sha256.Size]byte][]byte
}

// sign returns body signed by signer with jku in its headers.
func (c *signedCards) sign(signer *cardsig.Signer, body []byte, jku string) ([]byte, error) {
	h := sha256.New()
	h.Write(body)
	h.Write([]byte{0})
	h.Write([]byte(jku))
	var key [sha256.Size]byte
	h.Sum(key[:0])
	c.mu.Lock()
	out, ok := c.cards[key]
	c.mu.Unlock()
	if ok {
		return out, nil
	}
	out, err := signer.Sign(body, jku)
	if err != nil {
		return nil, fmt.Errorf("sign card: %w", err)
	}
	c.mu.Lock()
	if c.cards == nil || len(c.cards) >= maxSignedCards {
		c.cards = make(map[[sha256.Size]byte][]byte)
	}
	c.cards[key] = out
	c.mu.Unlock()
	return out, nil
}

// serveJWKS serves the public halves of the card signing keys, which any
// origin may read, as cards.
func (s *Server) serveJWKS(w http.ResponseWriter, r *http.Request) {
	if !publicRead(w, r, "keys") {
		return
	}
	w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", cardMaxAge))
	w.Header().Set("Content-Type", "application/jwk-set+json")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(s.opts.CardSigner.JWKS())
}
