package toolspec

import (
	_ "embed"
	"fmt"
)

// DefaultSource is the Source of the built-in catalogue.
const DefaultSource = "default (built in)"

//go:embed catalogue/default.yaml
var defaultCatalogue []byte

// DefaultCatalogueYAML returns the built-in catalogue file, for users who
// start their own from it.
func DefaultCatalogueYAML() []byte { return append([]byte(nil), defaultCatalogue...) }

// Default returns a fresh copy of pactum's default catalogue: the seed's
// eight adapter contracts (supabase-postgres, qdrant-vector, meilisearch,
// cloudflare-r2, prometheus, loki, grafana, livekit), each at 1.0.0 and
// frozen, with the operations the seed lists.
func Default() *Catalogue {
	c, err := ParseCatalogue(DefaultSource, defaultCatalogue)
	if err != nil {
		panic(fmt.Sprintf("toolspec: the built-in catalogue does not parse: %v", err))
	}
	return c
}
