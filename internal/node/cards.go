package node

import (
	"log/slog"

	"github.com/pactum/pactum/cardsig"
	"github.com/pactum/pactum/config"
)

// cardSigner loads the card signing keys of cfg (cards.signing_keys) and
// returns the Signer that signs with all of them, nil when none is
// configured. A key that does not load (unreadable file, not a private
// key, a key of another type than its alg) is an error at its
// private_key_file; every key is tried, so that all are reported. A key
// file other users can read loads, and is logged as a warning on log
// (nil: not logged, as for Check).
func cardSigner(cfg *config.Config, baseDir string, log *slog.Logger) (*cardsig.Signer, config.Errors) {
	if len(cfg.Cards.SigningKeys) == 0 {
		return nil, nil
	}
	var errs config.Errors
	keys := make([]*cardsig.Key, 0, len(cfg.Cards.SigningKeys))
	for i, sk := range cfg.Cards.SigningKeys {
		path, at := cfg.SigningKeyPath(i, baseDir)
		k, warning, err := cardsig.LoadKey(sk.KID, sk.Alg, path)
		if err != nil {
			errs = append(errs, at(err.Error(), err))
			continue
		}
		if warning != "" && log != nil {
			log.Warn("card signing key file is readable by others", "key", k, "detail", warning)
		}
		keys = append(keys, k)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	s, err := cardsig.NewSigner(keys...)
	if err != nil {
		// config.Parse refuses duplicate kids; nothing else fails here.
		return nil, config.Errors{{File: cfg.File(), Path: "cards.signing_keys", Msg: err.Error(), Err: err}}
	}
	return s, nil
}
