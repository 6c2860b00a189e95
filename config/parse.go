package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// knownTypes are the built-in runtime types, whose settings key is
// recognized under an agent of another type, so that `webhook:` under a
// `type: exec` agent is reported as settings for the wrong type rather than
// as an unknown field. Parsing does not consult the runtime registry
// (package agent): whether a type is registered is checked where runtimes
// are built (internal/node: Check and New).
var knownTypes = []string{"a2a", "crewai", "echo", "exec", "langgraph", "mcp", "openai", "python", "webhook"}

// isTypeName reports whether key names a built-in runtime type.
func isTypeName(key string) bool { return slices.Contains(knownTypes, key) }

// namePattern is what agent names and actions look like: they appear in URL
// paths and MCP tool names.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckName returns an error saying what an agent's name must look like
// when name is not one, with the text config gives for an agent's name:
// setting, so that names given elsewhere (a command's flag) are held to
// the same rule in the same words.
func CheckName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("invalid name %q: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)", name)
	}
	return nil
}

// Limits on numeric settings.
const (
	maxWorkers      = 1024
	minBodyBytes    = 1 << 10
	maxBodyBytes    = 1 << 30
	maxAttemptLimit = 100
)

// agentNodes remembers where an agent's fields are, for cross-checks.
type agentNodes struct {
	path         string
	name, action *yaml.Node
	toolSpec     *yaml.Node
	toolSpecID   string
}

// refNodes remembers a named entry and the nodes of the names it refers to.
type refNodes struct {
	path    string
	id      *yaml.Node
	actions []*yaml.Node
	actors  []*yaml.Node
	token   *yaml.Node // an actor's token_sha256 or token_env
	subject *yaml.Node // an actor's subject
}

// config walks the document root into c, applies defaults and validates.
func (w *walker) config(root *yaml.Node, c *Config) {
	var (
		listenN, baseURLN, storeN, defaultAgentN, agentsN *yaml.Node
		grpcListenN, grpcURLN                             *yaml.Node
		agents                                            []agentNodes
		actors, approvals                                 []refNodes
		ttlSet                                            bool
		authN, wildcardN                                  *yaml.Node
		toolSpecIDs                                       []*yaml.Node
	)
	set := func(dst *string, np **yaml.Node) handler {
		return func(n *yaml.Node, path string) {
			if s, ok := w.str(n, path); ok {
				*dst, *np = s, n
			}
		}
	}
	if root != nil {
		w.fields(root, "", map[string]handler{
			"listen":        set(&c.Listen, &listenN),
			"base_url":      set(&c.BaseURL, &baseURLN),
			"grpc_listen":   set(&c.GRPCListen, &grpcListenN),
			"grpc_url":      set(&c.GRPCURL, &grpcURLN),
			"store":         set(&c.Store, &storeN),
			"node":          set(&c.Node, new(*yaml.Node)),
			"default_agent": set(&c.DefaultAgent, &defaultAgentN),
			"log":           func(n *yaml.Node, path string) { w.section(n, path, &c.Log) },
			"workers": func(n *yaml.Node, path string) {
				// `workers: N`, or a mapping of pools.
				if r := w.resolve(n, path); r != nil && r.Kind == yaml.MappingNode {
					w.section(n, path, &c.Workers)
					return
				}
				v, _ := w.integer(n, path, 1, maxWorkers)
				c.Workers = Workers{All: int(v)}
			},
			"lease": func(n *yaml.Node, path string) {
				c.Lease, _ = w.duration(n, path, time.Second)
			},
			"idempotency_ttl": func(n *yaml.Node, path string) {
				c.IdempotencyTTL, ttlSet = w.duration(n, path, 0)
			},
			"max_body_bytes": func(n *yaml.Node, path string) {
				c.MaxBodyBytes, _ = w.integer(n, path, minBodyBytes, maxBodyBytes)
			},
			"push":  func(n *yaml.Node, path string) { w.section(n, path, &c.Push) },
			"audit": func(n *yaml.Node, path string) { w.audit(n, path, &c.Audit) },
			"negotiation": func(n *yaml.Node, path string) {
				w.fields(n, path, map[string]handler{
					"signing_key_file": func(n *yaml.Node, path string) {
						if s, ok := w.str(n, path); ok {
							if s == "" {
								w.errorf(n, path, "must not be empty (leave negotiation out for a node that does not negotiate)")
							}
							c.Negotiation.SigningKeyFile, c.Negotiation.line, c.Negotiation.col = s, n.Line, n.Column
						}
					},
				}, nil)
			},
			"http":  func(n *yaml.Node, path string) { wildcardN = w.http(n, path, &c.HTTP) },
			"cards": func(n *yaml.Node, path string) { w.cards(n, path, &c.Cards) },
			"mcp": func(n *yaml.Node, path string) {
				w.fields(n, path, map[string]handler{
					"disabled":        func(n *yaml.Node, path string) { c.MCP.Disabled, _ = w.boolean(n, path) },
					"per_agent_tools": func(n *yaml.Node, path string) { c.MCP.PerAgentTools, _ = w.boolean(n, path) },
					"allowed_hosts":   func(n *yaml.Node, path string) { c.MCP.AllowedHosts = w.hosts(n, path) },
					"wait_timeout":    func(n *yaml.Node, path string) { c.MCP.WaitTimeout, _ = w.duration(n, path, time.Second) },
				}, nil)
			},
			"auth": func(n *yaml.Node, path string) {
				w.auth(n, path, c)
				authN = n
			},
			"migrate": func(n *yaml.Node, path string) {
				if v, ok := w.boolean(n, path); ok {
					c.Migrate = &v
				}
			},
			"agents": func(n *yaml.Node, path string) {
				agentsN = n
				w.list(n, path, func(i int, item *yaml.Node, path string) {
					a, an := w.agent(item, path, false)
					a.index = len(c.Agents)
					c.Agents = append(c.Agents, a)
					agents = append(agents, an)
				})
			},
			"contracts": func(n *yaml.Node, path string) {
				w.list(n, path, func(i int, item *yaml.Node, path string) {
					c.Contracts = append(c.Contracts, w.contract(item, path, i))
				})
			},
			"definitions": func(n *yaml.Node, path string) { c.Definitions = w.definitions(n, path) },
			"workflows": func(n *yaml.Node, path string) {
				w.list(n, path, func(i int, item *yaml.Node, path string) {
					c.Workflows = append(c.Workflows, w.workflow(item, path, i))
				})
			},
			"toolspecs": func(n *yaml.Node, path string) {
				w.list(n, path, func(i int, item *yaml.Node, path string) {
					e, idN := w.toolSpec(item, path)
					c.ToolSpecs = append(c.ToolSpecs, e)
					toolSpecIDs = append(toolSpecIDs, idN)
				})
			},
			"adapters": func(n *yaml.Node, path string) {
				w.list(n, path, func(i int, item *yaml.Node, path string) {
					c.Adapters = append(c.Adapters, w.adapterFile(item, path))
				})
			},
			"actors": func(n *yaml.Node, path string) {
				w.list(n, path, func(i int, item *yaml.Node, path string) {
					a, an := w.actor(item, path)
					c.Actors = append(c.Actors, a)
					actors = append(actors, an)
				})
			},
			"policy": func(n *yaml.Node, path string) {
				w.fields(n, path, map[string]handler{
					"version": func(n *yaml.Node, path string) {
						if s, ok := w.str(n, path); ok {
							if s == "" {
								w.errorf(n, path, "must not be empty")
							}
							c.Policy.Version = s
						}
					},
					"approvals": func(n *yaml.Node, path string) {
						w.list(n, path, func(i int, item *yaml.Node, path string) {
							a, an := w.approval(item, path)
							c.Policy.Approvals = append(c.Policy.Approvals, a)
							approvals = append(approvals, an)
						})
					},
				}, nil)
			},
		}, func(p pair) bool {
			// x-… keys hold anchors to share (as in Compose files).
			return strings.HasPrefix(p.key, "x-")
		})
	}

	// Top-level checks, then defaults.
	if c.Listen != "" {
		if err := checkListen(c.Listen); err != nil {
			w.wrapf(listenN, "listen", err, "%v", err)
		}
	}
	if c.BaseURL != "" {
		if u, err := checkBaseURL(c.BaseURL); err != nil {
			w.wrapf(baseURLN, "base_url", err, "%v", err)
		} else {
			c.BaseURL = u
		}
	}
	if grpcListenN != nil {
		if err := checkListen(c.GRPCListen); err != nil {
			w.wrapf(grpcListenN, "grpc_listen", err, "%v", err)
		}
	}
	if grpcURLN != nil {
		switch err := checkDialAddress(c.GRPCURL); {
		case err != nil:
			w.wrapf(grpcURLN, "grpc_url", err, "%v", err)
		case c.GRPCListen == "":
			w.errorf(grpcURLN, "grpc_url", "needs grpc_listen: gRPC is served only on a grpc_listen address")
		}
	}
	if storeN != nil {
		c.storeLine, c.storeCol = storeN.Line, storeN.Column
	}
	if storeN != nil && c.Store == "" {
		w.errorf(storeN, "store", "must not be empty")
	} else if c.Store != "" {
		if err := checkStore(c.Store); err != nil {
			w.wrapf(storeN, "store", err, "%v", err)
		}
	}
	c.setDefaults(ttlSet)
	w.checkAuth(c, root, authN, actors)
	if wildcardN != nil && c.Auth == AuthNone {
		w.errorf(wildcardN, "http.cors_origins", `"*" lets every web page call this server; it needs auth: bearer or oidc (or list the origins)`)
	}

	w.crossCheck(c, root, agentsN, defaultAgentN, agents, actors, approvals)
	w.checkWorkflows(c)
	var refs []toolSpecRef
	for _, an := range agents {
		if an.toolSpec != nil {
			refs = append(refs, toolSpecRef{id: an.toolSpecID, node: an.toolSpec, path: an.path + ".toolspec"})
		}
	}
	w.checkToolSpecs(c, toolSpecIDs, refs)
}

// crossCheck validates what spans entries: unique names and actions, the
// default agent, and the actions and actors that actors and approvals name.
func (w *walker) crossCheck(c *Config, root, agentsN, defaultAgentN *yaml.Node, agents []agentNodes, actors, approvals []refNodes) {
	// With definitions, the definitions are the agents: agents: may be
	// left out (the definitions' runtimes are checked with them).
	if len(c.Agents) == 0 && c.Definitions == nil {
		where := agentsN
		if where == nil {
			where = root
		}
		w.errorf(where, "agents", "at least one agent is required")
	}
	names := map[string]int{}   // agent name → index
	actions := map[string]int{} // action → index
	sensitive := map[string]bool{}
	var actionList []string
	for i, a := range c.Agents {
		an := agents[i]
		if a.Name != "" {
			if j, dup := names[a.Name]; dup {
				w.errorf(an.name, an.path+".name", "duplicate agent name %q (first used at line %d)", a.Name, c.Agents[j].Line)
			} else {
				names[a.Name] = i
			}
		}
		if a.Action != "" {
			path, n := an.path+".action", an.action
			if n == nil {
				if j, dup := names[a.Name]; dup && j != i {
					continue // the duplicate name is the error
				}
				path, n = an.path+".name", an.name
			}
			if j, dup := actions[a.Action]; dup {
				w.errorf(n, path, "action %q is already served by agent %q (line %d)", a.Action, c.Agents[j].Name, c.Agents[j].Line)
			} else {
				actions[a.Action] = i
				actionList = append(actionList, a.Action)
				sensitive[a.Action] = a.Sensitive
			}
		}
	}
	if c.DefaultAgent == "" {
		if len(c.Agents) > 0 {
			c.DefaultAgent = c.Agents[0].Name
		}
	} else if _, ok := names[c.DefaultAgent]; !ok {
		if c.Definitions != nil {
			// It may name a definition: internal/node decides.
			c.deferredDefault = w.newError(defaultAgentN, "default_agent", nil, "unknown agent %q (agents: %s, or a definition's name)", c.DefaultAgent, quoteList(slices.Sorted(maps.Keys(names))))
		} else {
			w.errorf(defaultAgentN, "default_agent", "unknown agent %q (agents: %s)", c.DefaultAgent, quoteList(slices.Sorted(maps.Keys(names))))
		}
	}

	actorNames := map[string]bool{}
	for i, a := range c.Actors {
		an := actors[i]
		if a.Name != "" {
			if actorNames[a.Name] {
				w.errorf(an.id, an.path+".name", "duplicate actor %q", a.Name)
			}
			actorNames[a.Name] = true
		}
		for j, act := range a.Actions {
			if act == "*" {
				continue
			}
			if _, ok := actions[act]; !ok {
				e := w.newError(an.actions[j], index(an.path+".actions", j), nil, "unknown action %q (actions: %s)", act, quoteList(actionList))
				if len(c.Contracts) > 0 || strings.HasPrefix(act, "workflow.") {
					// It may name a contract or a workflow's run agent
					// (workflow.NAME): internal/node decides.
					e.Msg = fmt.Sprintf("unknown action %q (actions: %s, a served contract's id, or workflow.NAME of a workflow)", act, quoteList(actionList))
					c.deferred = append(c.deferred, deferredAction{action: act, err: e})
				} else {
					w.add(e)
				}
			}
		}
	}

	ids := map[string]bool{}
	for i, ap := range c.Policy.Approvals {
		an := approvals[i]
		if ap.ID != "" {
			if ids[ap.ID] {
				w.errorf(an.id, an.path+".id", "duplicate approval id %q", ap.ID)
			}
			ids[ap.ID] = true
		}
		for j, act := range ap.Actions {
			p := index(an.path+".actions", j)
			if act == "*" {
				continue
			}
			if _, ok := actions[act]; !ok {
				w.errorf(an.actions[j], p, "unknown action %q (actions: %s)", act, quoteList(actionList))
			} else if !sensitive[act] {
				w.errorf(an.actions[j], p, "action %q is not sensitive; approvals apply only to sensitive actions", act)
			}
		}
		if len(c.Actors) == 0 {
			continue
		}
		for j, actor := range ap.Actors {
			if !actorNames[actor] {
				w.errorf(an.actors[j], index(an.path+".actors", j), "unknown actor %q (actors: %s)", actor, quoteList(actorNamesOf(c)))
			}
		}
	}
}

func actorNamesOf(c *Config) []string {
	out := make([]string, len(c.Actors))
	for i, a := range c.Actors {
		out[i] = a.Name
	}
	return out
}

// hosts decodes a list of allowed host names (http.allowed_hosts,
// mcp.allowed_hosts).
func (w *walker) hosts(n *yaml.Node, path string) []string {
	hosts, nodes := w.strList(n, path)
	for i, h := range hosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			w.errorf(nodes[i], index(path, i), "must be a host name or IP address, without scheme or path")
		}
	}
	return hosts
}

// maxConnections bounds http.max_connections.
const maxConnections = 1 << 20

// http decodes the http section; it returns the node of a "*" among the
// CORS origins, which needs auth: bearer.
func (w *walker) http(n *yaml.Node, path string, h *HTTP) (wildcard *yaml.Node) {
	w.fields(n, path, map[string]handler{
		"allowed_hosts": func(n *yaml.Node, path string) { h.AllowedHosts = w.hosts(n, path) },
		"cors_origins": func(n *yaml.Node, path string) {
			origins, nodes := w.strList(n, path)
			for i, o := range origins {
				if o == "*" {
					wildcard = nodes[i]
					continue
				}
				if err := checkOrigin(o); err != nil {
					w.wrapf(nodes[i], index(path, i), err, "%v", err)
				}
			}
			h.CORSOrigins = origins
		},
		"read_timeout":  func(n *yaml.Node, path string) { h.ReadTimeout, _ = w.duration(n, path, 1) },
		"write_timeout": func(n *yaml.Node, path string) { h.WriteTimeout, _ = w.duration(n, path, 1) },
		"idle_timeout":  func(n *yaml.Node, path string) { h.IdleTimeout, _ = w.duration(n, path, 1) },
		"max_connections": func(n *yaml.Node, path string) {
			v, _ := w.integer(n, path, 1, maxConnections)
			h.MaxConnections = int(v)
		},
	}, nil)
	return wildcard
}

// checkOrigin validates a CORS origin: scheme http or https, a host, an
// optional port, nothing else.
func checkOrigin(s string) error {
	u, err := url.Parse(s)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" && u.User == nil &&
		u.Path == "" && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" && !strings.Contains(s, "#") {
		return nil
	}
	return fmt.Errorf("invalid origin %q: want scheme://host[:port] with scheme http or https and no path, e.g. https://app.example.com or http://localhost:5173", s)
}

// audit decodes the audit section.
func (w *walker) audit(n *yaml.Node, path string, a *Audit) {
	w.fields(n, path, map[string]handler{
		"anchor": func(n *yaml.Node, path string) {
			an := &a.Anchor
			before := len(w.errs)
			w.fields(n, path, map[string]handler{
				"interval": func(n *yaml.Node, path string) { an.Interval, _ = w.duration(n, path, 1) },
				"file": func(n *yaml.Node, path string) {
					if s, ok := w.str(n, path); ok {
						if s == "" {
							w.errorf(n, path, "must not be empty")
						}
						an.File = s
					}
				},
				"log":           func(n *yaml.Node, path string) { an.Log, _ = w.boolean(n, path) },
				"allow_private": func(n *yaml.Node, path string) { an.AllowPrivate, _ = w.boolean(n, path) },
				"webhook": func(n *yaml.Node, path string) {
					if s, ok := w.str(n, path); ok {
						if err := checkWebhook(s); err != nil {
							w.wrapf(n, path, err, "%v", err)
							return
						}
						an.Webhook = s
					}
				},
			}, nil)
			if !an.Enabled() && len(w.errs) == before {
				w.errorf(n, path, "set at least one of file, log or webhook (or remove anchor)")
			}
		},
	}, nil)
}

// checkWebhook validates an absolute http(s) URL without user info.
func checkWebhook(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("invalid webhook URL: %w", err)
	}
	shown := u.Redacted()
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("webhook %q must be an absolute http:// or https:// URL", shown)
	case u.Host == "":
		return fmt.Errorf("webhook %q has no host", shown)
	case u.User != nil:
		return fmt.Errorf("webhook %q must not carry user info", shown)
	}
	return nil
}

// agent decodes one agent and applies its defaults. A runtime entry (an
// entry of definitions.runtimes) is an agent without the keys a
// definition gives or that make no sense for one: only type, timeout,
// retry and the settings key are allowed, and no name is required.
func (w *walker) agent(n *yaml.Node, path string, runtimeEntry bool) (Agent, agentNodes) {
	a := Agent{Line: n.Line, column: n.Column, index: -1}
	an := agentNodes{path: path}
	ps, ok := w.pairs(n, path)
	if !ok {
		return a, an
	}
	if runtimeEntry {
		kept := ps[:0:0]
		for _, p := range ps {
			switch p.key {
			case "name", "description":
				w.errorf(p.keyN, join(path, p.key), "not set on a runtime: each definition gives its own %s", p.key)
			case "version", "action", "sensitive", "dry_run", "skills", "contract", "toolspec", "input_modes", "output_modes":
				w.errorf(p.keyN, join(path, p.key), "not allowed on a definitions runtime (type, timeout, retry and the type's settings key are)")
			default:
				kept = append(kept, p)
				continue
			}
		}
		ps = kept
	}
	// The type decides which settings key is allowed, so read it first.
	var typeN *yaml.Node
	typeInvalid := false
	for _, p := range ps {
		if p.key == "type" {
			typeN = p.keyN // for a null value, point at the key
			w.value(p.value, path+".type", func(v *yaml.Node, tpath string) {
				typeN = v
				s, ok := w.str(v, tpath)
				a.Type, typeInvalid = s, !ok
			})
		}
	}
	var retryMax, retryInit *yaml.Node
	jitterSet := false
	var modes [2]*yaml.Node
	w.fieldsOf(ps, path, map[string]handler{
		"type": func(*yaml.Node, string) {}, // read above
		"name": func(n *yaml.Node, path string) {
			an.name = n
			if s := w.nonEmpty(n, path); s != "" {
				a.Name = s
				if err := CheckName(s); err != nil {
					w.errorf(n, path, "%v", err)
				}
			}
		},
		"description": func(n *yaml.Node, path string) { a.Description, _ = w.str(n, path) },
		"version":     func(n *yaml.Node, path string) { a.Version = w.version(n, path) },
		"action": func(n *yaml.Node, path string) {
			an.action = n
			if s, ok := w.str(n, path); ok {
				a.Action = s
				if !namePattern.MatchString(s) {
					w.errorf(n, path, "invalid action %q: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)", s)
				}
			}
		},
		"timeout":   func(n *yaml.Node, path string) { a.Timeout, _ = w.duration(n, path, 1) },
		"sensitive": func(n *yaml.Node, path string) { a.Sensitive, _ = w.boolean(n, path) },
		"dry_run": func(n *yaml.Node, path string) {
			if v, ok := w.boolean(n, path); ok {
				a.DryRun = &v
			}
		},
		"retry": func(n *yaml.Node, path string) {
			w.fields(n, path, map[string]handler{
				"max_attempts": func(n *yaml.Node, path string) {
					v, _ := w.integer(n, path, 1, maxAttemptLimit)
					a.Retry.MaxAttempts = int(v)
				},
				"initial_backoff": func(n *yaml.Node, path string) {
					retryInit = n
					a.Retry.InitialBackoff, _ = w.duration(n, path, 1)
				},
				"max_backoff": func(n *yaml.Node, path string) {
					retryMax = n
					a.Retry.MaxBackoff, _ = w.duration(n, path, 1)
				},
				"jitter": func(n *yaml.Node, path string) {
					a.Retry.Jitter, jitterSet = w.float(n, path, 0, 1)
				},
			}, nil)
		},
		"skills": func(n *yaml.Node, path string) {
			a.Skills = []Skill{}
			ids := map[string]bool{}
			w.list(n, path, func(i int, item *yaml.Node, path string) {
				s, idN := w.skill(item, path)
				if s.ID != "" {
					if ids[s.ID] {
						w.errorf(idN, path+".id", "duplicate skill id %q", s.ID)
					}
					ids[s.ID] = true
				}
				a.Skills = append(a.Skills, s)
			})
		},
		"contract": func(n *yaml.Node, path string) { a.Contract = w.agentContract(n, path) },
		"toolspec": func(n *yaml.Node, path string) {
			an.toolSpec = n
			a.toolSpecLine, a.toolSpecCol = n.Line, n.Column
			a.ToolSpec = w.nonEmpty(n, path)
			an.toolSpecID = a.ToolSpec
		},
		"input_modes": func(n *yaml.Node, path string) {
			modes[0] = n
			a.InputModes = w.mediaTypes(n, path)
		},
		"output_modes": func(n *yaml.Node, path string) {
			modes[1] = n
			a.OutputModes = w.mediaTypes(n, path)
		},
	}, func(p pair) bool {
		switch {
		case a.Type != "" && p.key == a.Type:
			w.value(p.value, join(path, p.key), func(v *yaml.Node, spath string) {
				if v.Kind != yaml.MappingNode {
					w.errorf(v, spath, "runtime settings must be a mapping, got %s", kindName(v))
					return
				}
				a.Settings = v
				a.settingsLine, a.settingsCol = p.keyN.Line, p.keyN.Column
			})
			return true
		case isTypeName(p.key):
			if a.Type != "" {
				w.errorf(p.keyN, join(path, p.key), "settings for runtime type %q, but this agent's type is %q", p.key, a.Type)
			}
			// Without a type the missing type is the error to report.
			return true
		}
		return false
	})

	switch {
	case a.Type != "":
		a.typeLine, a.typeCol = typeN.Line, typeN.Column
	case !typeInvalid:
		where := typeN
		if where == nil {
			where = n
		}
		w.errorf(where, path+".type", "required: the runtime type, e.g. echo, exec, webhook or a2a")
	}
	if an.name == nil && !runtimeEntry {
		w.errorf(n, path+".name", "required")
	}
	for i, m := range modes {
		if m != nil && m.Kind == yaml.SequenceNode && len(m.Content) == 0 {
			w.errorf(m, path+"."+[]string{"input_modes", "output_modes"}[i], "must list at least one media type")
		}
	}

	a.setDefaults(jitterSet)
	if r := a.Retry; r.MaxBackoff.Duration < r.InitialBackoff.Duration {
		if retryMax != nil {
			w.errorf(retryMax, path+".retry.max_backoff", "%s is less than initial_backoff (%s)", r.MaxBackoff, r.InitialBackoff)
		} else {
			w.errorf(retryInit, path+".retry.initial_backoff", "%s exceeds max_backoff (%s, the default)", r.InitialBackoff, r.MaxBackoff)
		}
	}
	return a, an
}

// maxVersionLen bounds an agent's version.
const maxVersionLen = 64

// version decodes an agent's version: a card field callers compare, so
// not empty, short, and free of control characters and surrounding spaces.
func (w *walker) version(n *yaml.Node, path string) string {
	s, ok := w.str(n, path)
	if !ok {
		return ""
	}
	if msg := versionProblem(s); msg != "" {
		w.errorf(n, path, "%s", msg)
		return ""
	}
	return s
}

// versionProblem says what is wrong with v as an agent's version (see
// Agent.Version), or returns "" when nothing is.
func versionProblem(v string) string {
	switch {
	case v == "":
		return "must not be empty"
	case utf8.RuneCountInString(v) > maxVersionLen:
		return fmt.Sprintf("version %q is longer than %d characters", v, maxVersionLen)
	case strings.TrimSpace(v) != v:
		return fmt.Sprintf("version %q starts or ends with a space", v)
	case strings.ContainsFunc(v, unicode.IsControl):
		return fmt.Sprintf("version %q contains a control character", v)
	case !utf8.ValidString(v):
		return fmt.Sprintf("version %q is not valid UTF-8", v)
	}
	return ""
}

// skill decodes one skill; its defaults depend on the agent and are applied
// by the caller.
func (w *walker) skill(n *yaml.Node, path string) (Skill, *yaml.Node) {
	var s Skill
	var idN *yaml.Node
	if n.Kind != yaml.MappingNode {
		w.errorf(n, path, "expected a mapping, got %s", kindName(n))
		return s, nil
	}
	w.fields(n, path, map[string]handler{
		"id": func(n *yaml.Node, path string) {
			idN = n
			s.ID = w.nonEmpty(n, path)
		},
		"name":        func(n *yaml.Node, path string) { s.Name, _ = w.str(n, path) },
		"description": func(n *yaml.Node, path string) { s.Description, _ = w.str(n, path) },
		"tags":        func(n *yaml.Node, path string) { s.Tags, _ = w.strList(n, path) },
		"examples":    func(n *yaml.Node, path string) { s.Examples, _ = w.strList(n, path) },
	}, nil)
	w.required(n, idN, path+".id")
	return s, idN
}

// mediaTypes decodes a list of media types.
func (w *walker) mediaTypes(n *yaml.Node, path string) []string {
	out, nodes := w.strList(n, path)
	for i, s := range out {
		if !isMediaType(s) {
			w.errorf(nodes[i], index(path, i), "invalid media type %q", s)
		}
	}
	return out
}

// isMediaType reports whether s is a media type (type/subtype, parameters
// allowed).
func isMediaType(s string) bool {
	_, _, err := mime.ParseMediaType(s)
	return err == nil && strings.Contains(s, "/")
}

// CheckCard checks the card fields of an agent built in code
// (NewAgent, pactum.Func and its options) by the rules Parse applies to a
// file: version, skills (ids required and unique) and media types (at
// least one of each). Each error's Path names the field, e.g. "version",
// "skills[1].id" or "input_modes[0]"; File and positions are empty.
func (a *Agent) CheckCard() error {
	var es Errors
	add := func(path, format string, args ...any) {
		es = append(es, &Error{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if a.Version != "" {
		if msg := versionProblem(a.Version); msg != "" {
			add("version", "%s", msg)
		}
	}
	ids := map[string]bool{}
	for i, sk := range a.Skills {
		switch {
		case sk.ID == "":
			add(index("skills", i)+".id", "required")
		case ids[sk.ID]:
			add(index("skills", i)+".id", "duplicate skill id %q", sk.ID)
		}
		ids[sk.ID] = true
	}
	for _, m := range []struct {
		path  string
		modes []string
	}{{"input_modes", a.InputModes}, {"output_modes", a.OutputModes}} {
		if len(m.modes) == 0 {
			add(m.path, "must list at least one media type")
		}
		for i, s := range m.modes {
			if !isMediaType(s) {
				add(index(m.path, i), "invalid media type %q", s)
			}
		}
	}
	return es.err()
}

// actor decodes one actor.
func (w *walker) actor(n *yaml.Node, path string) (Actor, refNodes) {
	var a Actor
	an := refNodes{path: path}
	if n.Kind != yaml.MappingNode {
		w.errorf(n, path, "expected a mapping, got %s", kindName(n))
		return a, an
	}
	var actionsN *yaml.Node
	w.fields(n, path, map[string]handler{
		"name": func(n *yaml.Node, path string) {
			an.id = n
			a.Name = w.nonEmpty(n, path)
		},
		"actions": func(n *yaml.Node, path string) {
			actionsN = n
			a.Actions, an.actions = w.strList(n, path)
		},
		"token_sha256": func(n *yaml.Node, path string) {
			an.token = n
			if s, ok := w.str(n, path); ok {
				if b, err := hex.DecodeString(s); err != nil || len(b) != sha256.Size {
					w.errorf(n, path, "must be 64 hex digits, the SHA-256 of the token (e.g. printf %%s \"$TOKEN\" | sha256sum)")
				}
				a.TokenSHA256 = strings.ToLower(s)
			}
		},
		"subject": func(n *yaml.Node, path string) {
			an.subject = n
			a.Subject = w.nonEmpty(n, path)
		},
		"token_env": func(n *yaml.Node, path string) {
			an.token = n
			if s, ok := w.str(n, path); ok {
				if !envName.MatchString(s) {
					w.errorf(n, path, "must be an environment variable name (letters, digits and _, not starting with a digit)")
				}
				a.TokenEnv = s
			}
		},
	}, nil)
	if a.TokenSHA256 != "" && a.TokenEnv != "" {
		w.errorf(an.token, path, "give token_sha256 or token_env, not both")
	}
	w.required(n, an.id, path+".name")
	w.requiredList(n, actionsN, path+".actions", "the actions this actor may call (\"*\" for all)")
	return a, an
}

// approval decodes one approval.
func (w *walker) approval(n *yaml.Node, path string) (Approval, refNodes) {
	var a Approval
	an := refNodes{path: path}
	if n.Kind != yaml.MappingNode {
		w.errorf(n, path, "expected a mapping, got %s", kindName(n))
		return a, an
	}
	var actionsN *yaml.Node
	w.fields(n, path, map[string]handler{
		"id": func(n *yaml.Node, path string) {
			an.id = n
			a.ID = w.nonEmpty(n, path)
		},
		"actions": func(n *yaml.Node, path string) {
			actionsN = n
			a.Actions, an.actions = w.strList(n, path)
		},
		"actors": func(n *yaml.Node, path string) { a.Actors, an.actors = w.strList(n, path) },
		"expires": func(n *yaml.Node, path string) {
			if t, ok := w.timestamp(n, path); ok {
				a.Expires = &t
			}
		},
		"revoked": func(n *yaml.Node, path string) { a.Revoked, _ = w.boolean(n, path) },
	}, nil)
	w.required(n, an.id, path+".id")
	w.requiredList(n, actionsN, path+".actions", "the sensitive actions this approval covers")
	if len(a.Actors) == 0 {
		a.Actors = nil
	}
	return a, an
}

// required reports a missing or empty required string field.
// required reports a missing required field n of mapping parent.
func (w *walker) required(parent, n *yaml.Node, path string) {
	if n == nil {
		w.errorf(parent, path, "required")
	}
}

// nonEmpty decodes a string that must not be empty.
func (w *walker) nonEmpty(n *yaml.Node, path string) string {
	s, ok := w.str(n, path)
	if ok && s == "" {
		w.errorf(n, path, "must not be empty")
	}
	return s
}

// requiredList reports a missing or empty required list n (resolved). A
// value that is no list was reported when it was decoded.
func (w *walker) requiredList(parent, n *yaml.Node, path, what string) {
	switch {
	case n == nil:
		w.errorf(parent, path, "required: %s", what)
	case n.Kind == yaml.SequenceNode && len(n.Content) == 0:
		w.errorf(n, path, "must not be empty")
	}
}

// checkListen validates a host:port listen address.
func checkListen(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("invalid listen address %q: want host:port, e.g. 127.0.0.1:9000 or :9000: %w", s, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("invalid listen address %q: port %q is not a number in 0..65535: %w", s, port, err)
	}
	return nil
}

// checkDialAddress validates the host:port a client dials: a host and a
// port in 1..65535.
func checkDialAddress(s string) error {
	if strings.Contains(s, "://") {
		return fmt.Errorf("invalid address %q: want host:port, not a URL (gRPC clients dial an address), e.g. grpc.example.com:443", s)
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("invalid address %q: want host:port, e.g. grpc.example.com:443: %w", s, err)
	}
	if host == "" {
		return fmt.Errorf("invalid address %q: the host is empty", s)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("invalid address %q: port %q is not a number in 1..65535", s, port)
	}
	return nil
}

// checkBaseURL validates an absolute http(s) URL without query or fragment
// and returns it without a trailing slash.
func checkBaseURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("invalid base URL: %w", err)
	}
	shown := u.Redacted() // never echo a password
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("base URL %q must be an absolute http:// or https:// URL", shown)
	case u.Host == "":
		return "", fmt.Errorf("base URL %q has no host", shown)
	case u.User != nil:
		return "", fmt.Errorf("base URL %q must not carry user info", shown)
	case u.RawQuery != "" || u.ForceQuery:
		return "", fmt.Errorf("base URL %q must not have a query", shown)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "", fmt.Errorf("base URL %q must not have a fragment", shown)
	}
	return strings.TrimRight(s, "/"), nil
}

// checkStore validates a store DSN's scheme. Messages never repeat the DSN,
// which may hold a password.
func checkStore(s string) error {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || scheme == "" {
		return errors.New("store has no scheme: want sqlite://PATH or postgres://…")
	}
	switch strings.ToLower(scheme) {
	case "sqlite", "postgres", "postgresql":
	default:
		return fmt.Errorf("unknown store scheme %q: want sqlite:// or postgres:// (or postgresql://)", scheme)
	}
	if rest == "" {
		return fmt.Errorf("store %s:// names no database", scheme)
	}
	return nil
}

// envName matches an environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkAuth checks that the actors' tokens agree with the auth mode: with
// bearer every actor has one (and there is at least one actor), without
// none has.
func (w *walker) checkAuth(c *Config, root, authN *yaml.Node, actors []refNodes) {
	if c.Auth != AuthBearer {
		for i, a := range c.Actors {
			if a.TokenSHA256 != "" || a.TokenEnv != "" {
				w.errorf(actors[i].token, actors[i].path, "a token needs auth: bearer (without it callers are not authenticated)")
			}
		}
	}
	if c.Auth != AuthOIDC {
		for i, a := range c.Actors {
			if a.Subject != "" {
				w.errorf(actors[i].subject, actors[i].path+".subject", "a subject needs auth: {mode: oidc, …}")
			}
		}
	}
	if c.Auth == AuthNone {
		return
	}
	what := "with tokens"
	if c.Auth == AuthOIDC {
		what = "with subjects"
	}
	if len(c.Actors) == 0 {
		w.errorf(authN, "auth", "%s needs actors %s: nobody could call", c.Auth, what)
	}
	subjects := map[string]string{}
	for i, a := range c.Actors {
		n := actors[i].id
		if n == nil {
			n = root
		}
		switch {
		case c.Auth == AuthBearer && a.TokenSHA256 == "" && a.TokenEnv == "":
			w.errorf(n, actors[i].path, "auth: bearer needs token_sha256 or token_env for every actor")
		case c.Auth == AuthOIDC && a.Subject == "":
			w.errorf(n, actors[i].path, "auth: oidc needs a subject for every actor (the value of the token's %s claim)", c.OIDC.ActorClaim)
		case c.Auth == AuthOIDC:
			if other, dup := subjects[a.Subject]; dup {
				w.errorf(actors[i].subject, actors[i].path+".subject", "actor %s has the same subject", other)
			}
			subjects[a.Subject] = a.Name
		}
	}
}
