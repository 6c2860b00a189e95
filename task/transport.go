package task

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
)

// What every transport (A2A, MCP, CLI) does the same way, so the same
// request yields the same envelope, payload hash, execution record and
// audit entries whichever way it came in.

// AnonymousActor is the actor of a request that names none and comes from
// no authenticated caller.
const AnonymousActor = "anonymous"

// ResolveActor returns the actor a transport records for a request: the one
// the request names, else the authenticated caller, else AnonymousActor.
// An authenticated caller acts only as itself: naming another actor is
// CodeForbidden.
func ResolveActor(named, authenticated string) (string, error) {
	switch {
	case authenticated != "" && named != "" && named != authenticated:
		return "", Errorf(CodeForbidden, "authenticated as %q, the request cannot act as %q", authenticated, named)
	case named != "":
		return named, nil
	case authenticated != "":
		return authenticated, nil
	default:
		return AnonymousActor, nil
	}
}

// AuditRef returns the reference every transport's answer gives to the
// audit entries of task id: "audit:task/" followed by the id. It names
// every entry of the hash-chained audit log whose task id is id (the
// submission, each policy decision, one per transition, push config
// changes).
func AuditRef(id string) string { return "audit:task/" + id }

type callerKey struct{}

// WithCaller returns ctx carrying the actor a transport's authentication
// established for the request (pactum serve's bearer tokens do this). The
// Coordinator then shows the caller only its own tasks: every operation on
// another actor's task answers as for a task that does not exist, List
// lists the caller's tasks, and Submit acts only as the caller.
func WithCaller(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, callerKey{}, actor)
}

// Caller returns the authenticated actor ctx carries, or "" when the
// request was not authenticated.
func Caller(ctx context.Context) string {
	s, _ := ctx.Value(callerKey{}).(string)
	return s
}

// Identity is what a transport's authentication established about a
// caller: its actor and, for a token an identity provider issued, who
// issued it to whom and which actions it grants.
type Identity struct {
	// Actor is the caller's actor (required).
	Actor string
	// Subject and Issuer are the token's subject and issuer; "" for
	// tokens pactum itself knows (auth: bearer).
	Subject, Issuer string
	// Actions, when not nil, are the actions the token grants ("*": all):
	// the caller may call only those of its actor's actions. Nil: the
	// actor's actions, unrestricted by the token.
	Actions []string
}

type identityKey struct{}

// WithIdentity returns ctx carrying id: its actor as the caller
// (WithCaller), and the rest for admission (Actions) and the audit log.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(WithCaller(ctx, id.Actor), identityKey{}, id)
}

// IdentityFrom returns the identity ctx carries (WithIdentity), if any,
// and only while it still names ctx's caller.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	if !ok || id.Actor != Caller(ctx) {
		return Identity{}, false
	}
	return id, true
}

// Grants reports whether id lets its caller call action, as far as the
// token goes (the actor's own permissions are checked apart).
func (id Identity) Grants(action string) bool {
	return id.Actions == nil || slices.Contains(id.Actions, "*") || slices.Contains(id.Actions, action)
}

// EncodeData encodes a structured value as a data part holds it: compact
// JSON without HTML escaping. The bytes feed the payload hash, so every
// transport encodes data parts with it.
func EncodeData(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// DecodeData decodes a data part's JSON for a transport's wire value,
// keeping numbers exact (json.Number). Bytes that are not one JSON value,
// or that are JSON null, come back as a string, so a peer never reads a
// part without content.
func DecodeData(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || v == nil || dec.More() {
		return string(raw)
	}
	return v
}

// Settled reports whether a task in s waits for nobody but its caller: it
// is terminal or it needs input. Streams and waits end there.
func (s State) Settled() bool { return s.Terminal() || s.Interrupted() }
