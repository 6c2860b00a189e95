package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/internal/node"
)

func newAuthCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Check what a token may do on a node",
	}
	cmd.AddCommand(newAuthCheckCmd())
	return cmd
}

// maxTokenBytes bounds a token read from --token-file.
const maxTokenBytes = 64 << 10

func newAuthCheckCmd() *cobra.Command {
	var (
		flags     configFlags
		token     string
		tokenFile string
		jwks      string
	)
	cmd := &cobra.Command{
		Use:   "check --config FILE (--token TOKEN | --token-file FILE) [--jwks FILE]",
		Short: "Print the actor and actions a token is allowed, or why it is refused",
		Long: `Verify a token as the node of --config would and print the actor it acts
as and the actions it may call; exit 1 with the reason when the node
would refuse it (expired, wrong issuer, wrong audience, …).

The check is offline. With auth: oidc the issuer's keys come from --jwks
FILE (a JSON Web Key Set, e.g. saved from the issuer's jwks_uri) or from
auth.jwks_file; nothing is fetched. With auth: bearer the actors' tokens
are read as the server reads them (token_env variables must be set).
Prefer --token-file (or --token-file - for standard input): a token on
the command line is seen by other users of the machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if flags.path == "" {
				return errors.New("--config is required")
			}
			t, err := readToken(cmd, token, tokenFile)
			if err != nil {
				return err
			}
			cfg, baseDir, err := flags.load()
			if err != nil {
				return err
			}
			access, err := node.CheckToken(cmd.Context(), cfg, baseDir, jwks, t)
			if errors.Is(err, bearer.ErrInvalidToken) {
				return fmt.Errorf("refused: %w", err)
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			id := access.Identity
			fmt.Fprintf(out, "actor:   %s\n", id.Actor)
			if id.Issuer != "" {
				fmt.Fprintf(out, "subject: %s\nissuer:  %s\n", id.Subject, id.Issuer)
			}
			actions := strings.Join(access.Actions, ", ")
			if actions == "" {
				actions = "(none)"
			}
			fmt.Fprintf(out, "actions: %s\n", actions)
			return nil
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVar(&token, "token", "", "the token to check")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "a file holding the token (- for standard input)")
	cmd.Flags().StringVar(&jwks, "jwks", "", "a JWKS file with the issuer's keys (auth: oidc; default auth.jwks_file)")
	return cmd
}

// readToken returns the token of --token or --token-file (exactly one).
func readToken(cmd *cobra.Command, token, file string) (string, error) {
	switch {
	case (token == "") == (file == ""):
		return "", errors.New("give exactly one of --token and --token-file")
	case token != "":
		return token, nil
	}
	var b []byte
	var err error
	if file == "-" {
		b, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), maxTokenBytes+1))
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	if len(b) > maxTokenBytes {
		return "", fmt.Errorf("--token-file: more than %d bytes: not a token", maxTokenBytes)
	}
	return strings.TrimSpace(string(b)), nil
}
