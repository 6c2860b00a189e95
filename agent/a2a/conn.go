package a2aagent

import (
	"context"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/pactum/pactum/task"
)

// cardRefreshAfter is how old a card must be before a failed call makes the
// runtime fetch it again: often enough to follow an agent that moved, rarely
// enough not to hammer one that is down.
const cardRefreshAfter = 30 * time.Second

// conn is a resolved agent card and the client built from it. Calls hold a
// reference while they use it; a conn replaced by a fresher one (or by
// Close) is destroyed when its last call releases it.
type conn struct {
	card    *a2a.AgentCard
	client  *a2aclient.Client
	stream  bool
	fetched time.Time

	// Guarded by Runtime.mu.
	refs    int
	retired bool
	stale   bool
}

// httpTransport adds the configured headers to every request and records
// the response status for error classification.
type httpTransport struct {
	base    http.RoundTripper
	headers http.Header
}

// RoundTrip implements http.RoundTripper.
func (t *httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header[k] = v
		}
	}
	resp, err := t.base.RoundTrip(req)
	recordStatus(req, resp)
	return resp, err
}

// newFactory returns the client factory for the configured transport, all
// bindings sharing one HTTP client. The HTTP client has no timeout of its
// own: streams may run long, and every call carries the attempt's deadline.
func newFactory(transport string, hc *http.Client) *a2aclient.Factory {
	opts := []a2aclient.FactoryOption{a2aclient.WithDefaultsDisabled()}
	switch transport {
	case TransportJSONRPC:
		opts = append(opts, a2aclient.WithJSONRPCTransport(hc))
	case TransportREST:
		opts = append(opts, a2aclient.WithRESTTransport(hc))
	default:
		opts = append(opts, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
	}
	return a2aclient.NewFactory(opts...)
}

// acquire returns the current conn, resolving the card first if there is
// none or the current one went stale. Only one caller resolves at a time;
// the others wait for its result. A failed resolution is not remembered:
// the next call tries again.
func (r *Runtime) acquire(ctx context.Context) (*conn, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, errClosed
		}
		if c := r.conn; c != nil && !c.stale {
			c.refs++
			r.mu.Unlock()
			return c, nil
		}
		r.mu.Unlock()

		select {
		case r.resolving <- struct{}{}:
		case <-ctx.Done():
			return nil, r.interrupted(ctx, "resolve agent card")
		}
		r.mu.Lock()
		current := r.conn
		r.mu.Unlock()
		if current != nil && !current.stale {
			// Another caller resolved it while this one waited.
			<-r.resolving
			continue
		}
		c, err := r.dial(ctx)
		<-r.resolving
		if err != nil {
			return nil, err
		}

		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			_ = c.client.Destroy()
			return nil, errClosed
		}
		old := r.conn
		r.conn = c
		c.refs++
		destroyOld := old != nil && r.retireLocked(old)
		r.mu.Unlock()
		if destroyOld {
			_ = old.client.Destroy()
		}
		return c, nil
	}
}

// release gives back a reference taken by acquire.
func (r *Runtime) release(c *conn) {
	r.mu.Lock()
	c.refs--
	destroy := c.retired && c.refs == 0
	r.mu.Unlock()
	if destroy {
		_ = c.client.Destroy()
	}
}

// retireLocked marks c for destruction and reports whether the caller must
// destroy it now (no call holds it).
func (r *Runtime) retireLocked(c *conn) bool {
	c.retired = true
	return c.refs == 0
}

// markStale makes the next call fetch the card again, if c is current and
// old enough. It is called after failures that a moved or redeployed agent
// would cause.
func (r *Runtime) markStale(c *conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn == c && time.Since(c.fetched) >= cardRefreshAfter {
		c.stale = true
	}
}

// cachedCard returns the card of the current conn, or nil before the first
// call.
func (r *Runtime) cachedCard() (*a2a.AgentCard, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn == nil {
		return nil, false
	}
	return r.conn.card, r.conn.stream
}

// dial fetches the agent card and builds a client from it.
func (r *Runtime) dial(ctx context.Context) (*conn, error) {
	base, path := r.cfg.cardLocation()
	card, err := r.resolver.Resolve(ctx, base, agentcard.WithPath(path))
	if err != nil {
		return nil, r.cardError(ctx, err)
	}
	client, err := r.factory.CreateFromCard(ctx, card)
	if err != nil {
		// The card lists no interface this runtime can use (or not the
		// configured one): a configuration mismatch, not an outage.
		return nil, task.Permanent(task.Errorf(task.CodeUnsupported,
			"a2a: agent card at %s offers no usable interface for transport %q: %w", r.cfg.displayURL(), r.cfg.Transport, err))
	}
	stream := card.Capabilities.Streaming && (r.cfg.Stream == nil || *r.cfg.Stream)
	r.log.Info("a2a: resolved agent card",
		"agent", r.name, "remote", card.Name, "url", r.cfg.displayURL(),
		"interfaces", len(card.SupportedInterfaces), "streaming", stream)
	return &conn{card: card, client: client, stream: stream, fetched: time.Now()}, nil
}
