// Package pactum serves any agent as a durable A2A 1.0 server in a few lines
// of Go:
//
//	err := pactum.Serve(ctx, pactum.Func("greeter", func(ctx context.Context, in string) (string, error) {
//		return "hello, " + in, nil
//	}))
//
// Every task runs through pactum's orchestration core: an enforced
// lifecycle, idempotency, bounded retries, an append-only execution record
// and a hash-chained audit log, on an embedded SQLite store by default.
package pactum

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/function"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/task"
)

// Option configures Serve and Handler. Agents are options too.
type Option interface{ apply(*settings) }

type settings struct {
	cfg    *config.Config
	extra  []node.Extra
	logger *slog.Logger
	ln     net.Listener
	drain  time.Duration
	quiet  bool
	// announce is where Serve says where it listens when no Logger was
	// given and Quiet was not (default os.Stderr).
	announce io.Writer
	// errs are the problems options found (an invalid card field);
	// Serve and Handler return them before starting anything.
	errs []error
}

type optionFunc func(*settings)

func (f optionFunc) apply(s *settings) { f(s) }

// AgentOption is an agent to serve; further settings chain on it.
type AgentOption struct {
	cfg   config.Agent
	agent agent.Agent
	// skills are the skills given with Skills, before defaults (nil: the
	// default skill in cfg).
	skills []Skill
}

// Skill is one skill advertised on an agent's card (see
// AgentOption.Skills): ID is required and unique within the agent; Name
// defaults to ID, Description to the agent's description (else Name),
// Tags to the agent's name.
type Skill = config.Skill

func (a *AgentOption) apply(s *settings) {
	cfg := a.cfg
	if a.skills != nil {
		cfg.Skills = make([]Skill, len(a.skills))
		for i, sk := range a.skills {
			sk.Name = cmp.Or(sk.Name, sk.ID)
			sk.Description = cmp.Or(sk.Description, cfg.Description, sk.Name)
			if len(sk.Tags) == 0 {
				sk.Tags = []string{cmp.Or(cfg.Type, cfg.Name)}
			}
			cfg.Skills[i] = sk
		}
	}
	// One error per field, each naming the agent.
	var es config.Errors
	if err := cfg.CheckCard(); errors.As(err, &es) {
		for _, e := range es {
			s.errs = append(s.errs, fmt.Errorf("pactum: agent %q: %w", cfg.Name, e))
		}
	} else if err != nil {
		s.errs = append(s.errs, fmt.Errorf("pactum: agent %q: %w", cfg.Name, err))
	}
	s.extra = append(s.extra, node.Extra{Config: cfg, Agent: a.agent})
}

// Describe sets the description shown on the agent's card.
func (a *AgentOption) Describe(description string) *AgentOption {
	a.cfg.Description = description
	for i := range a.cfg.Skills {
		a.cfg.Skills[i].Description = description
	}
	return a
}

// Version sets the agent's own version, shown on its card (default
// "0.0.0"): not empty, at most 64 characters, without control characters
// or surrounding spaces. Serve and Handler refuse another.
func (a *AgentOption) Version(v string) *AgentOption {
	a.cfg.Version = v
	return a
}

// Skills sets the skills shown on the agent's card, replacing the default
// one (named after the agent, with its description). A skill's ID is
// required and unique; see Skill for the defaults of the rest. Serve and
// Handler refuse skills that break these rules.
func (a *AgentOption) Skills(skills ...Skill) *AgentOption {
	a.skills = make([]Skill, len(skills))
	copy(a.skills, skills)
	return a
}

// InputModes sets the media types the agent accepts, shown on its card
// (default text/plain). At least one is needed; Serve and Handler refuse
// an empty list or one that is not a media type.
func (a *AgentOption) InputModes(mediaTypes ...string) *AgentOption {
	a.cfg.InputModes = append([]string{}, mediaTypes...)
	return a
}

// OutputModes sets the media types the agent answers with, shown on its
// card (default text/plain), under the same rules as InputModes.
func (a *AgentOption) OutputModes(mediaTypes ...string) *AgentOption {
	a.cfg.OutputModes = append([]string{}, mediaTypes...)
	return a
}

// Retry sets how many attempts the agent gets before a task is dead-lettered.
func (a *AgentOption) Retry(maxAttempts int, initialBackoff time.Duration) *AgentOption {
	a.cfg.Retry.MaxAttempts = maxAttempts
	a.cfg.Retry.InitialBackoff = config.Duration{Duration: initialBackoff}
	return a
}

// Timeout bounds one attempt.
func (a *AgentOption) Timeout(d time.Duration) *AgentOption {
	a.cfg.Timeout = config.Duration{Duration: d}
	return a
}

// Func serves a Go function as an agent: the input is the message text, the
// returned string becomes the task's artifact. Return an error wrapped with
// task.Permanent when retrying cannot help.
func Func(name string, fn func(ctx context.Context, input string) (string, error)) *AgentOption {
	return Agent(name, function.Text(name, fn))
}

// Agent serves any agent runtime under name.
func Agent(name string, a agent.Agent) *AgentOption {
	ac := config.NewAgent(name)
	return &AgentOption{cfg: ac, agent: a}
}

// Listen sets the listen address (default 127.0.0.1:9000).
func Listen(addr string) Option {
	return optionFunc(func(s *settings) {
		if s.cfg.BaseURL == config.DefaultBaseURL(s.cfg.Listen) {
			s.cfg.BaseURL = config.DefaultBaseURL(addr)
		}
		s.cfg.Listen = addr
	})
}

// Listener serves on an existing listener, which Serve closes when it
// returns. Its address becomes the listen address and, as with Listen, the
// base URL unless one was set.
func Listener(ln net.Listener) Option {
	return optionFunc(func(s *settings) {
		Listen(ln.Addr().String()).apply(s)
		s.ln = ln
	})
}

// BaseURL sets the public base URL written into agent cards.
func BaseURL(u string) Option { return optionFunc(func(s *settings) { s.cfg.BaseURL = u }) }

// Store sets the store DSN (default sqlite://pactum.db).
func Store(dsn string) Option { return optionFunc(func(s *settings) { s.cfg.Store = dsn }) }

// Logger sets the logger (default: discard, except for the line Serve
// writes to stderr to say where it listens; see Quiet). Serve logs through
// it where it listens, one line per settled task and its shutdown.
func Logger(l *slog.Logger) Option { return optionFunc(func(s *settings) { s.logger = l }) }

// Quiet stops Serve from writing where it listens to stderr, which it does
// when no Logger is given.
func Quiet() Option { return optionFunc(func(s *settings) { s.quiet = true }) }

// Drain sets how long Serve (and a Handler's node) lets running tasks
// finish once ctx ends (default 30s). Tasks still running then are stopped
// and queued again at once, for the next start or another node on the
// same store.
func Drain(d time.Duration) Option { return optionFunc(func(s *settings) { s.drain = d }) }

// Config starts from a loaded configuration instead of the defaults; its
// agents are served beside those given as options.
func Config(c *config.Config) Option { return optionFunc(func(s *settings) { s.cfg = c }) }

func build(opts []Option) *settings {
	s := &settings{cfg: config.Empty(), drain: defaultDrain, announce: os.Stderr}
	for _, o := range opts {
		o.apply(s)
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	} else {
		// The logger itself says where Serve listens.
		s.quiet = true
	}
	return s
}

// defaultDrain is how long running tasks may finish at shutdown.
const defaultDrain = 30 * time.Second

// Serve serves the given agents until ctx ends, then drains for up to 30s
// (see Drain). Unless a Logger is given or Quiet, it writes one line to
// stderr saying where it listens.
func Serve(ctx context.Context, opts ...Option) error {
	s := build(opts)
	if err := errors.Join(s.errs...); err != nil {
		if s.ln != nil {
			_ = s.ln.Close()
		}
		return err
	}
	// An empty base directory resolves relative paths in a Config loaded
	// from a file against that file's directory, as the command line does.
	srv, err := node.New(ctx, s.cfg, "", s.extra, s.logger)
	if err != nil {
		if s.ln != nil {
			_ = s.ln.Close()
		}
		return err
	}
	ln := s.ln
	if ln == nil {
		if ln, err = net.Listen("tcp", s.cfg.Listen); err != nil {
			_ = srv.Stop(context.Background())
			return fmt.Errorf("pactum: listen on %s: %w", s.cfg.Listen, err)
		}
	}
	if !s.quiet {
		names := make([]string, 0, len(srv.Coordinator().Agents()))
		for _, a := range srv.Coordinator().Agents() {
			if !a.ChildOnly {
				names = append(names, a.Name)
			}
		}
		fmt.Fprintf(s.announce, "pactum: serving %s on http://%s (pactum.Quiet() silences this line)\n",
			strings.Join(names, ", "), ln.Addr())
	}
	return srv.ServeUntil(ctx, ln, node.Shutdown{Drain: s.drain})
}

// Handler returns pactum as an http.Handler to mount in an existing server.
// Agent cards advertise the scheme and host each card request came to,
// under /agents/{name}; when pactum is mounted under a path prefix (with
// http.StripPrefix), or behind a proxy, set BaseURL to the public URL that
// prefix is reached at. Task execution runs until ctx ends; then the store
// is closed.
func Handler(ctx context.Context, opts ...Option) (http.Handler, error) {
	s := build(opts)
	if err := errors.Join(s.errs...); err != nil {
		return nil, err
	}
	if s.cfg.BaseURL == config.DefaultBaseURL(s.cfg.Listen) {
		// Nothing listens on the default listen address: a handler is
		// reached wherever its server is.
		s.cfg.BaseURL = ""
	}
	srv, err := node.New(ctx, s.cfg, "", s.extra, s.logger)
	if err != nil {
		return nil, err
	}
	if err := srv.Start(ctx); err != nil {
		_ = srv.Stop(context.Background())
		return nil, err
	}
	context.AfterFunc(ctx, func() {
		if err := srv.Drain(node.Shutdown{Drain: s.drain}, nil); err != nil {
			s.logger.Warn("pactum: stop", "err", err)
		}
	})
	return srv.Handler(), nil
}

// Permanent marks an error that retrying cannot fix.
func Permanent(err error) error { return task.Permanent(err) }
