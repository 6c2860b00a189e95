// Package ui is pactum's web dashboard: server-rendered pages (html/template)
// of tasks, a task's timeline and children, workflow runs and their
// reports, the audit chain and the agents, with one small embedded script
// for live updates (server-sent events) and the bearer token. Everything it
// serves is embedded in the binary; nothing is loaded from another origin.
//
// Every read goes through the task.Coordinator, so the caller's visibility
// and the core's page limits apply as they do on the A2A and MCP edges.
// internal/node mounts the handler at /ui/.
package ui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/task"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the dashboard is mounted.
const Prefix = "/ui/"

// Options configure the dashboard.
type Options struct {
	// Coordinator answers every read and runs cancel and retry. Required.
	Coordinator *task.Coordinator
	// Authenticate maps a bearer token to its identity (an error wrapping
	// bearer.ErrInvalidToken refuses it); nil when the node runs
	// without authentication (auth: none), which makes the dashboard
	// read-only and shows every task. With it, every data request needs a
	// token, the caller sees only its own tasks, and may cancel and retry
	// them.
	Authenticate func(ctx context.Context, token string) (task.Identity, error)
	// Runtimes maps an agent name to its runtime type (exec, webhook, …)
	// for the Agents page; agents not in it are shown without one.
	Runtimes map[string]string
	// Card returns the A2A card of an agent as served under base (nil,
	// false for an agent without one). Nil: no cards shown.
	Card func(agent, base string) (any, bool)
	// Logger logs internal errors (default: discard).
	Logger *slog.Logger
	// Flush is how often live updates are batched (default 200ms).
	Flush time.Duration
}

// UI is the dashboard's HTTP handler.
type UI struct {
	opts  Options
	log   *slog.Logger
	pages map[string]*template.Template
	mux   *http.ServeMux
}

// New checks opts and parses the embedded templates.
func New(opts Options) (*UI, error) {
	if opts.Coordinator == nil {
		return nil, errors.New("ui: a Coordinator is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Flush <= 0 {
		opts.Flush = 200 * time.Millisecond
	}
	u := &UI{opts: opts, log: opts.Logger, pages: map[string]*template.Template{}}
	base, err := template.New("base").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html")
	if err != nil {
		return nil, fmt.Errorf("ui: templates: %w", err)
	}
	for _, p := range []string{"tasks", "task", "workflows", "audit", "agents"} {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("ui: template %s: %w", p, err)
		}
		u.pages[p] = t
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	m := http.NewServeMux()
	m.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", staticHandler(static)))
	m.HandleFunc("GET /ui/{$}", u.tasks)
	m.HandleFunc("GET /ui/tasks/{id}", u.task)
	m.HandleFunc("POST /ui/tasks/{id}/cancel", u.act(func(ctx context.Context, id string) error {
		_, err := u.opts.Coordinator.Cancel(ctx, id, "canceled from the dashboard")
		return err
	}))
	m.HandleFunc("POST /ui/tasks/{id}/retry", u.act(func(ctx context.Context, id string) error {
		_, err := u.opts.Coordinator.Retry(ctx, id)
		return err
	}))
	m.HandleFunc("GET /ui/events", u.events)
	m.HandleFunc("GET /ui/workflows", u.workflows)
	m.HandleFunc("GET /ui/audit", u.audit)
	m.HandleFunc("GET /ui/agents", u.agents)
	m.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			http.Error(w, "the dashboard's pages are read with GET", http.StatusMethodNotAllowed)
			return
		}
		http.Error(w, "no dashboard page here", http.StatusNotFound)
	})
	u.mux = m
	return u, nil
}

// csp is the pages' Content-Security-Policy: everything from this origin,
// no inline script or style, no framing.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ServeHTTP serves the dashboard, with its security headers on every
// answer.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	u.mux.ServeHTTP(w, r)
}

// IsBrowserRoot reports whether r is a browser asking for the node's root
// page (GET or HEAD of / accepting HTML), which is sent to the dashboard;
// A2A clients (JSON-RPC POSTs, JSON GETs) are not.
func IsBrowserRoot(r *http.Request) bool {
	return r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		strings.Contains(r.Header.Get("Accept"), "text/html")
}

func staticHandler(static fs.FS) http.Handler {
	files := http.FileServerFS(static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// fragmentHeader marks the script's request for a page's content alone
// (with auth: bearer, pages load as an empty shell whose script fetches
// the content with the token).
const fragmentHeader = "X-Pactum-Fragment"

// errNeedsToken is answered to a data request without a valid token.
var errNeedsToken = errors.New("this dashboard needs a bearer token")

// caller authenticates r when the node asks for tokens: it returns r's
// context with the caller, or writes 401 and returns nil.
func (u *UI) caller(w http.ResponseWriter, r *http.Request) context.Context {
	if u.opts.Authenticate == nil {
		return r.Context()
	}
	token, err := bearer.Token(r)
	if err == nil {
		var id task.Identity
		if id, err = u.opts.Authenticate(r.Context(), token); err == nil {
			return task.WithIdentity(r.Context(), id)
		}
		if !errors.Is(err, bearer.ErrInvalidToken) {
			err = fmt.Errorf("%w: %w", bearer.ErrInvalidToken, err)
		}
	}
	status := bearer.Refuse(w, err)
	http.Error(w, errNeedsToken.Error()+": "+err.Error(), status)
	return nil
}

// page is what every page template gets besides its own data.
type page struct {
	Title string
	Nav   string
	// Auth says the node asks for tokens; Shell that this answer is the
	// page without its content, which the script fetches with the token.
	Auth  bool
	Shell bool
	// Actor is the authenticated caller ("" without auth); CanAct says
	// cancel and retry are offered (only to an authenticated caller).
	Actor  string
	CanAct bool
}

// pageOf fills the common part of a page.
func (u *UI) pageOf(ctx context.Context, title, nav string) page {
	actor := task.Caller(ctx)
	return page{Title: title, Nav: nav, Auth: u.opts.Authenticate != nil, Actor: actor, CanAct: actor != ""}
}

// begin starts a page request: with auth and without the fragment
// header it answers the shell and returns nil; otherwise it returns the
// request's context (with the caller), or nil after writing a refusal.
func (u *UI) begin(w http.ResponseWriter, r *http.Request, name, title string) context.Context {
	if u.opts.Authenticate != nil && r.Header.Get(fragmentHeader) == "" {
		p := page{Title: title, Nav: name, Auth: true, Shell: true}
		u.write(w, r, name, struct{ page }{p})
		return nil
	}
	return u.caller(w, r)
}

// write writes a page: its content alone for the script's fragment
// requests, else the whole page.
func (u *UI) write(w http.ResponseWriter, r *http.Request, name string, data any) {
	t := u.pages[name]
	tmpl := "layout"
	if r.Header.Get(fragmentHeader) != "" {
		tmpl = "content"
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, tmpl, data); err != nil {
		u.fail(w, r, fmt.Errorf("render %s: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(b.String()))
}

// fail answers an error: the core's caller errors with their message and
// status, anything else as an internal error with a reference.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, err error) {
	var te *task.Error
	if errors.As(err, &te) {
		http.Error(w, te.Message, statusOf(te.Code))
		return
	}
	ref := task.NewID()
	u.log.Error("dashboard", "path", r.URL.Path, "ref", ref, "err", err)
	http.Error(w, "internal error (reference "+ref+")", http.StatusInternalServerError)
}

// statusOf maps the core's error codes onto HTTP statuses.
func statusOf(c task.Code) int {
	switch c {
	case task.CodeNotFound:
		return http.StatusNotFound
	case task.CodeInvalidArgument:
		return http.StatusBadRequest
	case task.CodeNotCancelable, task.CodeNotRetryable, task.CodeConflict, task.CodeUnsupported:
		return http.StatusConflict
	case task.CodeForbidden:
		return http.StatusForbidden
	case task.CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// act serves cancel and retry: only with authentication, as the
// authenticated caller (the core refuses another actor's task as not
// found). It answers the task's new state as JSON.
func (u *UI) act(do func(ctx context.Context, id string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if u.opts.Authenticate == nil {
			http.Error(w, "the dashboard is read-only: cancel and retry need auth: bearer", http.StatusForbidden)
			return
		}
		ctx := u.caller(w, r)
		if ctx == nil {
			return
		}
		id := r.PathValue("id")
		if err := do(ctx, id); err != nil {
			u.fail(w, r, err)
			return
		}
		t, err := u.opts.Coordinator.Get(ctx, id, 0)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"id": t.ID, "state": string(t.State)})
	}
}
