package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/negotiation"
	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/internal/node"
)

// exitCounter is the exit status of `pactum contract negotiate` left
// waiting for the proposer's answer to a counter-proposal.
const exitCounter = 3

func newContractValidateCmd() *cobra.Command {
	var token string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate URL FILE",
		Short: "Ask an agent whether it can honour a contract",
		Long: `Validate reads the agent card at URL (an agent's base URL), finds the
validate endpoint its contracts extension names, and POSTs the contract
FILE (YAML or JSON) to it. It prints what pactum contract check says of the
contract, then, step by step, whether the agent can honour it (the step's
agent, the resource types it creates) and which of the agent's own
assertions it lacks, and what the agent would answer to it as a proposal:
accept, a counter-proposal (its modifications, each with its reason) or a
rejection.

--json prints the agent's report as JSON.

Exit status: 0 when the agent would accept the contract as it is, 1
otherwise.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			card, d, err := declared(ctx, args[0])
			if err != nil {
				return err
			}
			if d.Validate == "" {
				return fmt.Errorf("agent %s names no validate endpoint on its card", card.Name)
			}
			body, lines, err := contractJSON(args[1])
			if err != nil {
				return err
			}
			var r negotiation.Report
			if err := negotiationCall(ctx, token, http.MethodPost, d.Validate, body, &r); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				if err := printJSON(w, r); err != nil {
					return err
				}
			} else {
				printValidation(w, args[1], lines, &r)
			}
			if !r.Acceptable {
				return &exitErr{code: 1, err: fmt.Errorf("agent %s would not accept %s as it is", r.Agent, args[1])}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&token, "token", "", "bearer token for a server with auth: bearer (default $PACTUM_TOKEN)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// printValidation prints a validation report for people; lines place
// its errors in file (the agent saw the contract as JSON).
func printValidation(w io.Writer, file string, lines contract.Lines, r *negotiation.Report) {
	if !r.Check.Valid {
		for _, e := range r.Check.Errors {
			fmt.Fprintln(w, contract.FieldError{File: file, Line: lines.Line(e.Path), Path: e.Path, Msg: e.Message})
		}
		fmt.Fprintf(w, "agent %s: the contract is invalid\n", r.Agent)
		return
	}
	fmt.Fprintf(w, "%s: ok (%s, %s) %s\n", file, plural(r.Check.Steps, "step", "steps"), plural(r.Check.Assertions, "assertion", "assertions"), r.Check.Digest)
	for _, s := range r.Steps {
		verdict := "honoured"
		if !s.Honoured {
			verdict = "not honoured: " + strings.Join(s.Reasons, "; ")
		}
		fmt.Fprintf(w, "step %s: %s\n", s.ID, verdict)
		for _, m := range s.Missing {
			fmt.Fprintf(w, "  lacks the agent's assertion %q\n", m)
		}
	}
	switch {
	case r.Acceptable:
		fmt.Fprintf(w, "agent %s would accept it as it is\n", r.Agent)
	case r.Rejection != "":
		fmt.Fprintf(w, "agent %s would reject it: %s\n", r.Agent, r.Rejection)
	default:
		fmt.Fprintf(w, "agent %s would counter-propose:\n", r.Agent)
		printModifications(w, r.Counter)
	}
}

func printModifications(w io.Writer, mods []negotiation.Modification) {
	for _, m := range mods {
		v := ""
		if len(m.Value) > 0 {
			v = " " + string(m.Value)
		}
		fmt.Fprintf(w, "  %s %s%s\n    because %s\n", m.Op, m.Path, v, m.Reason)
	}
}

// contractJSON reads a contract file (YAML or JSON) and returns it as
// JSON, with the lines of its fields; a file that does not parse is an
// error listing its problems.
func contractJSON(file string) ([]byte, contract.Lines, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	c, lines, err := contract.ParseLines(file, b)
	if err != nil {
		return nil, nil, err
	}
	j, err := json.Marshal(c)
	return j, lines, err
}

// negotiationCall sends a request to a contract endpoint and decodes its
// JSON answer into out, or returns its error.
func negotiationCall(ctx context.Context, token, method, url string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := http.DefaultClient
	if token = cmp.Or(token, os.Getenv("PACTUM_TOKEN")); token != "" {
		hc = &http.Client{Transport: bearer.Transport{Token: token}}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	if resp.StatusCode >= 300 {
		var e negotiation.ErrorBody
		if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
			return fmt.Errorf("%s %s: %s (%s)", method, url, e.Error.Message, e.Error.Code)
		}
		return fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	return json.Unmarshal(b, out)
}

// negotiateOptions are the flags of pactum contract negotiate.
type negotiateOptions struct {
	config, token, id, counter, reject, out string
	acceptCounter, asJSON                   bool
}

func newContractNegotiateCmd() *cobra.Command {
	var o negotiateOptions
	cmd := &cobra.Command{
		Use:   "negotiate URL [FILE]",
		Short: "Negotiate a contract with an agent, signed as the node --config names",
		Long: `Negotiate proposes the contract FILE to the agent at URL (its base URL;
the negotiate endpoint is read from its card's contracts extension),
signed with the signing key of the node --config names
(negotiation.signing_key_file). The agent accepts it, rejects it or
counter-proposes modifications (each a JSON pointer add, remove or change
with a reason), signed by it.

A counter-proposal is answered by the flags given, each used once, in
this order: --counter MODS counter-proposes the modifications in the JSON
file MODS ([{"op", "path", "value", "reason"}], applied to the agent's
contract); --accept-counter signs and accepts it; --reject REASON ends the
negotiation.
Without one, the counter-proposal is printed and the command exits with
status 3; answer it later with --negotiation ID (and no FILE).

An accepted contract is verified (both signatures, one of them this
node's) and printed, or written to --out FILE: a task that cites it (its
request metadata "pactum.negotiation": ID) is checked against exactly
that contract.

Exit status: 0 accepted, 1 rejected or an error, 3 a counter-proposal
waits for an answer.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 2) == (o.id != "") {
				return errors.New("give either FILE (a new proposal) or --negotiation ID (an open negotiation)")
			}
			return negotiate(cmd.Context(), cmd.OutOrStdout(), args, &o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "configuration of the node that signs as the proposer (its negotiation.signing_key_file); required")
	f.StringVar(&o.token, "token", "", "bearer token for a server with auth: bearer (default $PACTUM_TOKEN)")
	f.StringVar(&o.id, "negotiation", "", "answer the open negotiation ID instead of proposing FILE")
	f.BoolVar(&o.acceptCounter, "accept-counter", false, "accept the agent's counter-proposal")
	f.StringVar(&o.counter, "counter", "", "counter-propose the modifications in this JSON file")
	f.StringVar(&o.reject, "reject", "", "reject the agent's counter-proposal, with this reason")
	f.StringVar(&o.out, "out", "", "write the accepted contract, signed, to this file")
	f.BoolVar(&o.asJSON, "json", false, "print the negotiation as JSON")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

func negotiate(ctx context.Context, w io.Writer, args []string, o *negotiateOptions) error {
	cfg, err := config.Load(o.config)
	if err != nil {
		return err
	}
	key, err := node.NegotiationKey(cfg, "")
	if err != nil {
		return err
	}
	if key == nil {
		return fmt.Errorf("%s sets no negotiation.signing_key_file: the proposer signs with its node's key", o.config)
	}
	card, d, err := declared(ctx, args[0])
	if err != nil {
		return err
	}
	if d.Negotiate == "" {
		return fmt.Errorf("agent %s names no negotiate endpoint on its card", card.Name)
	}
	var v negotiation.View
	if o.id == "" {
		_, compiled, err := contract.LoadWith(args[1], contract.ValidateOptions{})
		if err != nil {
			return err
		}
		canonical, sig, err := signed(key, compiled.Contract())
		if err != nil {
			return err
		}
		m := negotiation.Move{Action: negotiation.ActionPropose, Contract: canonical, Signature: sig}
		if err := postMove(ctx, o.token, d.Negotiate, &m, &v); err != nil {
			return err
		}
	} else if err := negotiationCall(ctx, o.token, http.MethodGet, d.Negotiate+"/"+o.id, nil, &v); err != nil {
		return err
	}
	for {
		if v.Status != negotiation.StatusCounter {
			break
		}
		m, err := answerCounter(key, &v, o)
		if err != nil {
			return err
		}
		if m == nil {
			break
		}
		if err := postMove(ctx, o.token, d.Negotiate+"/"+v.ID, m, &v); err != nil {
			return err
		}
	}
	if o.asJSON {
		if err := printJSON(w, v); err != nil {
			return err
		}
	}
	switch v.Status {
	case negotiation.StatusAccepted:
		if _, err := v.Accepted.Verify(); err != nil {
			return err
		}
		if v.Accepted.Parties[0].Key != key.Thumbprint {
			return fmt.Errorf("negotiation %s: the accepted contract's proposer is %s, not this node (%s)", v.ID, v.Accepted.Parties[0].Key, key.Thumbprint)
		}
		if !o.asJSON {
			fmt.Fprintf(w, "negotiation %s: accepted %s, signed by %s (proposer) and %s (provider)\n", v.ID, v.Accepted.Digest, v.Accepted.Parties[0].Key, v.Accepted.Parties[1].Key)
		}
		if o.out != "" {
			b, err := json.MarshalIndent(v.Accepted, "", "  ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(o.out, append(b, '\n'), 0o644); err != nil {
				return err
			}
		}
		return nil
	case negotiation.StatusRejected:
		if !o.asJSON {
			fmt.Fprintf(w, "negotiation %s: rejected: %s\n", v.ID, v.Reason)
		}
		return &exitErr{code: 1, err: fmt.Errorf("negotiation %s was rejected", v.ID)}
	case negotiation.StatusCounter:
		if !o.asJSON {
			fmt.Fprintf(w, "negotiation %s: agent %s counter-proposes contract %s", v.ID, v.Agent, v.Digest)
			if v.Reason != "" {
				fmt.Fprintf(w, " (%s)", v.Reason)
			}
			fmt.Fprintln(w, ":")
			printModifications(w, v.Modifications)
			fmt.Fprintf(w, "answer with --negotiation %s and --accept-counter, --counter FILE or --reject REASON\n", v.ID)
		}
		return &exitErr{code: exitCounter, err: fmt.Errorf("negotiation %s waits for your answer to the counter-proposal", v.ID)}
	default:
		if !o.asJSON {
			fmt.Fprintf(w, "negotiation %s: %s, the agent has not answered yet; read it again with --negotiation %s\n", v.ID, v.Status, v.ID)
		}
		return &exitErr{code: exitCounter, err: fmt.Errorf("negotiation %s: the agent has not answered yet", v.ID)}
	}
}

// answerCounter returns the move that answers the counter-proposal v by
// the flags not used yet (nil: none left), after checking the
// provider's signature over it.
func answerCounter(key *negotiation.Key, v *negotiation.View, o *negotiateOptions) (*negotiation.Move, error) {
	c, err := contract.Parse("counter-proposal", v.Contract)
	if err != nil {
		return nil, err
	}
	canonical, err := contract.Canonical(c)
	if err != nil {
		return nil, err
	}
	if p, err := negotiation.VerifySignature(v.Signature, canonical); err != nil || p.Role != negotiation.RoleProvider {
		return nil, fmt.Errorf("negotiation %s: the counter-proposal is not signed by the provider: %v", v.ID, cmp.Or[any](err, p.Role))
	}
	switch {
	case o.counter != "":
		b, err := os.ReadFile(o.counter)
		if err != nil {
			return nil, err
		}
		o.counter = ""
		var mods []negotiation.Modification
		if err := json.Unmarshal(b, &mods); err != nil {
			return nil, fmt.Errorf("--counter: %w", err)
		}
		next, _, err := negotiation.Apply(c, mods)
		if err != nil {
			return nil, fmt.Errorf("--counter: %w", err)
		}
		canonical, sig, err := signed(key, next)
		if err != nil {
			return nil, err
		}
		return &negotiation.Move{Action: negotiation.ActionCounter, Modifications: mods, Contract: canonical, Signature: sig}, nil
	case o.acceptCounter:
		o.acceptCounter = false
		sig, err := key.Sign(canonical, negotiation.RoleProposer)
		if err != nil {
			return nil, err
		}
		return &negotiation.Move{Action: negotiation.ActionAccept, Signature: sig}, nil
	case o.reject != "":
		m := &negotiation.Move{Action: negotiation.ActionReject, Reason: o.reject}
		o.reject = ""
		return m, nil
	}
	return nil, nil
}

// signed returns c's canonical form and the proposer's signature over it.
func signed(key *negotiation.Key, c *contract.AgentContract) ([]byte, string, error) {
	canonical, err := contract.Canonical(c)
	if err != nil {
		return nil, "", err
	}
	sig, err := key.Sign(canonical, negotiation.RoleProposer)
	return canonical, sig, err
}

func postMove(ctx context.Context, token, url string, m *negotiation.Move, v *negotiation.View) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return negotiationCall(ctx, token, http.MethodPost, url, b, v)
}
