package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/go-jose/go-jose/v4"
	"github.com/spf13/cobra"

	"github.com/pactum/pactum/cardsig"
	"github.com/pactum/pactum/internal/discovery"
)

// maxCardBytes bounds a card or JWKS `card verify` reads.
const maxCardBytes = 1 << 20

// cardFetchTimeout bounds each request of `card verify`.
const cardFetchTimeout = 30 * time.Second

func newCardCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "card",
		Short: "Sign agent cards: make a signing key, verify a card's signatures",
	}
	cmd.AddCommand(newCardKeygenCmd(), newCardVerifyCmd())
	return cmd
}

func newCardKeygenCmd() *cobra.Command {
	var alg string
	cmd := &cobra.Command{
		Use:   "keygen FILE [--alg EdDSA|ES256]",
		Short: "Write a new card signing key",
		Long: `Write a new private key for signing agent cards to FILE (PKCS #8 PEM, mode
0600; an existing file is left alone): Ed25519 for --alg EdDSA (the
default), ECDSA P-256 for --alg ES256. List it under cards.signing_keys
with a kid of your choice; openssl genpkey -algorithm ed25519 (or
-algorithm EC -pkeyopt ec_paramgen_curve:P-256) writes the same kind of
file. The public half is what the server publishes at
/.well-known/jwks.json.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, pemData, err := cardsig.GenerateKey("keygen", alg)
			if err != nil {
				return fmt.Errorf("--alg: %w", err)
			}
			f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return fmt.Errorf("card keygen: %w", err)
			}
			if _, err := f.Write(pemData); err != nil {
				_ = f.Close()
				return fmt.Errorf("card keygen: %w", err)
			}
			if err := f.Close(); err != nil {
				return fmt.Errorf("card keygen: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%s private key, mode 0600)\n", args[0], alg)
			return nil
		},
	}
	cmd.Flags().StringVar(&alg, "alg", cardsig.AlgEdDSA, "EdDSA (an Ed25519 key) or ES256 (an ECDSA P-256 key)")
	return cmd
}

// cardVerifyOptions are the flags of `pactum card verify`.
type cardVerifyOptions struct {
	jwks    string // --jwks URL|FILE
	key     string // --key FILE
	sdkForm bool   // --sdk-form
}

func newCardVerifyCmd() *cobra.Command {
	var o cardVerifyOptions
	cmd := &cobra.Command{
		Use:   "verify URL [--jwks URL|FILE] [--key FILE]",
		Short: "Verify the signatures of a remote agent card",
		Long: `Fetch an agent card and verify each of its signatures (A2A §8.4: a JWS over
the RFC 8785 canonical card without its signatures member). URL is an
agent's base URL (its card is at URL/.well-known/agent-card.json) or the
card's own URL (ending in .json).

The keys come from --jwks (a JWKS, by URL or file) and --key (a PEM public
key, a JWK or a JWKS file), or else from each signature's jku header, which
is fetched only when it is on the card's own origin (same scheme, host and
port): a card cannot send the verifier elsewhere for its keys. Only EdDSA
(Ed25519) and ES256 (P-256) signatures are accepted; "none" and HMAC never.

With --sdk-form a signature that does not verify over the canonical card
is tried over the card with its empty strings, lists and objects removed,
as the a2a-js and a2a-python SDKs sign (docs/a2a.md, "Signed cards"); such
a signature is reported as verified "in the sdk form". It protects less:
empty members can then be added or removed unnoticed.

One line per signature says whether it verifies, with its kid and alg.
Exit status: 0 when every signature verifies; 1 when the card is unsigned,
cannot be fetched, or any signature fails.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCardVerify(cmd.Context(), cmd.OutOrStdout(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.jwks, "jwks", "", "JWKS of the signing keys, an http(s) URL or a file (default: each signature's jku, on the card's origin only)")
	f.StringVar(&o.key, "key", "", "file with a public key: PEM (any kid), a JWK or a JWKS")
	f.BoolVar(&o.sdkForm, "sdk-form", false, "also accept signatures over the card without empty values (as a2a-js and a2a-python sign)")
	return cmd
}

// runCardVerify fetches the card at rawURL and verifies its signatures.
func runCardVerify(ctx context.Context, out io.Writer, rawURL string, o cardVerifyOptions) error {
	cardURL, err := cardURLOf(rawURL)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: cardFetchTimeout}
	body, err := fetchJSON(ctx, hc, cardURL.String())
	if err != nil {
		return fmt.Errorf("fetch card: %w", err)
	}
	resolve, source, err := cardKeys(ctx, hc, cardURL, o)
	if err != nil {
		return err
	}
	var also []cardsig.Form
	if o.sdkForm {
		also = append(also, cardsig.FormSDK)
	}
	results, err := cardsig.Verify(ctx, body, resolve, also...)
	if errors.Is(err, cardsig.ErrUnsigned) {
		return fmt.Errorf("%s: %w; there is nothing to verify (a pactum server signs its cards when cards.signing_keys is configured)", cardURL, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", cardURL, err)
	}
	fmt.Fprintf(out, "card %s\nkeys %s\n", cardURL, source)
	ok := 0
	for _, r := range results {
		what := fmt.Sprintf("signature %d/%d: kid %s (%s)", r.Index+1, len(results), orQuoted(r.Header.KID), orQuoted(r.Header.Alg))
		if r.Err != nil {
			fmt.Fprintf(out, "%s: FAILED: %v\n", what, r.Err)
			continue
		}
		ok++
		if r.Form != cardsig.FormJCS {
			what += " in the " + string(r.Form) + " form"
		}
		fmt.Fprintf(out, "%s: verified\n", what)
	}
	switch {
	case ok == len(results):
		fmt.Fprintf(out, "OK: %d of %d signatures verify\n", ok, len(results))
		return nil
	case ok == 0:
		return withExitCode(1, fmt.Errorf("no signature of %s verifies", cardURL))
	default:
		return withExitCode(1, fmt.Errorf("%d of %d signatures of %s fail", len(results)-ok, len(results), cardURL))
	}
}

// orQuoted is s, or `""` when s is empty, for a header value shown.
func orQuoted(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// cardURLOf returns the URL of the card that raw names: raw itself when
// its path ends in .json, else the well-known card path below it.
func cardURLOf(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("card verify needs an http(s) URL of an agent or of its card, got %q", raw)
	}
	if !strings.HasSuffix(u.Path, ".json") {
		u.Path = strings.TrimRight(u.Path, "/") + a2asrv.WellKnownAgentCardPath
		u.RawPath = ""
	}
	return u, nil
}

// cardKeys returns the resolver of the keys o names, and says where they
// come from; without --jwks and --key, each signature's jku on the card's
// origin.
func cardKeys(ctx context.Context, hc *http.Client, cardURL *url.URL, o cardVerifyOptions) (cardsig.Resolver, string, error) {
	var keys []jose.JSONWebKey
	var from []string
	if o.jwks != "" {
		data, err := readKeySource(ctx, hc, o.jwks)
		if err != nil {
			return nil, "", fmt.Errorf("--jwks: %w", err)
		}
		k, err := cardsig.ParseKeys(data)
		if err != nil {
			return nil, "", fmt.Errorf("--jwks %s: %w", o.jwks, err)
		}
		keys, from = append(keys, k...), append(from, "--jwks "+o.jwks)
	}
	if o.key != "" {
		data, err := os.ReadFile(o.key)
		if err != nil {
			return nil, "", fmt.Errorf("--key: %w", err)
		}
		k, err := cardsig.ParseKeys(data)
		if err != nil {
			return nil, "", fmt.Errorf("--key %s: %w", o.key, err)
		}
		keys, from = append(keys, k...), append(from, "--key "+o.key)
	}
	if len(from) > 0 {
		return func(context.Context, string, string) ([]jose.JSONWebKey, error) { return keys, nil }, strings.Join(from, ", "), nil
	}
	origin := cardURL.Scheme + "://" + strings.ToLower(cardURL.Host)
	var mu sync.Mutex
	fetched := map[string][]jose.JSONWebKey{}
	resolve := func(ctx context.Context, kid, jku string) ([]jose.JSONWebKey, error) {
		if jku == "" {
			return nil, fmt.Errorf("%w: the signature names no jku; pass --jwks or --key", cardsig.ErrNoKey)
		}
		u, err := url.Parse(jku)
		if err != nil || u.Scheme+"://"+strings.ToLower(u.Host) != origin {
			return nil, fmt.Errorf("%w: jku %s is not on the card's origin %s, and keys are fetched only from there; pass --jwks to trust it", cardsig.ErrNoKey, jku, origin)
		}
		mu.Lock()
		defer mu.Unlock()
		if k, ok := fetched[jku]; ok {
			return k, nil
		}
		data, err := fetchJSON(ctx, hc, jku)
		if err != nil {
			return nil, fmt.Errorf("fetch jku: %w", err)
		}
		k, err := cardsig.ParseKeys(data)
		if err != nil {
			return nil, fmt.Errorf("jku %s: %w", jku, err)
		}
		fetched[jku] = k
		return k, nil
	}
	return resolve, "from each signature's jku on " + origin, nil
}

// readKeySource reads src: fetched when it is an http(s) URL, else a file.
func readKeySource(ctx context.Context, hc *http.Client, src string) ([]byte, error) {
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		return fetchJSON(ctx, hc, src)
	}
	return os.ReadFile(src)
}

// fetchJSON GETs u and returns its body, at most maxCardBytes, refusing
// any status but 200.
func fetchJSON(ctx context.Context, hc *http.Client, u string) ([]byte, error) {
	return discovery.Fetch(ctx, hc, u, maxCardBytes)
}
