package config_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/config"
)

// oneAgent ends documents whose subject is not the agents list.
const oneAgent = "agents: [{name: a, type: echo}]\n"

// TestParseErrors checks that each mistake is reported once, at its exact
// position, with its field path. want lists every expected error in file
// order; each is a prefix "file:line:col: path: " plus part of the message.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		// Unknown keys, at every level.
		{"unknown top-level key", "listne: :9000\n" + oneAgent,
			[]string{`pactum.yaml:1:1: listne: unknown field "listne" (did you mean "listen"?)`}},
		{"unknown nested key", "log:\n  levl: debug\n" + oneAgent,
			[]string{`pactum.yaml:2:3: log.levl: unknown field "levl" (did you mean "level"?)`}},
		{"unknown push key", "push: {allow_privat: true}\n" + oneAgent,
			[]string{`pactum.yaml:1:8: push.allow_privat: unknown field "allow_privat"`}},
		{"unknown agent key", "agents:\n  - name: a\n    type: echo\n    timout: 1s\n",
			[]string{`pactum.yaml:4:5: agents[0].timout: unknown field "timout" (did you mean "timeout"?)`}},
		// An agent's contract: inline or file and step.
		{"contract policy", "agents:\n  - name: a\n    type: echo\n    contract: {onViolation: sometimes, assertions: []}\n",
			[]string{`pactum.yaml:4:29: agents[0].contract.onViolation: must be one of retry, escalate, fail, continue`}},
		{"contract strictness", "agents:\n  - name: a\n    type: echo\n    contract:\n      strictness: lax\n",
			[]string{`pactum.yaml:5:19: agents[0].contract.strictness: must be one of strict, loose, permissive`}},
		{"contract unknown inline key", "agents:\n  - name: a\n    type: echo\n    contract:\n      on_violation: retry\n",
			[]string{`pactum.yaml:5:7: agents[0].contract.on_violation: unknown field "on_violation" (did you mean "onViolation"?)`}},
		{"contract assertions not a list", "agents:\n  - name: a\n    type: echo\n    contract: {assertions: {type: assert}}\n",
			[]string{`pactum.yaml:4:28: agents[0].contract.assertions: expected a list`}},
		{"contract file without step", "agents:\n  - name: a\n    type: echo\n    contract: {file: c.yaml}\n",
			[]string{`pactum.yaml:4:15: agents[0].contract.step: required with file`}},
		{"contract step without file", "agents:\n  - name: a\n    type: echo\n    contract: {step: s}\n",
			[]string{`pactum.yaml:4:15: agents[0].contract.file: required with step or nodes`}},
		{"contract file with assertions", "agents:\n  - name: a\n    type: echo\n    contract: {file: c.yaml, step: s, assertions: []}\n",
			[]string{`pactum.yaml:4:39: agents[0].contract.assertions: a contract from a file takes file and step (or nodes) only`}},
		{"contract nodes and step", "agents:\n  - name: a\n    type: echo\n    contract: {file: c.yaml, step: s, nodes: true}\n",
			[]string{`pactum.yaml:4:15: agents[0].contract.nodes: nodes checks every step of the file, each on its node; step checks one step on the agent's answer: set one of them`}},
		{"contract nodes false", "agents:\n  - name: a\n    type: echo\n    contract: {file: c.yaml, nodes: false}\n",
			[]string{`pactum.yaml:4:37: agents[0].contract.nodes: false is the default`}},
		{"contract nodes not a bool", "agents:\n  - name: a\n    type: echo\n    contract: {file: c.yaml, nodes: yes}\n",
			[]string{`pactum.yaml:4:37: agents[0].contract.nodes: expected true or false`}},
		{"contract remote not a digest", "agents:\n  - name: a\n    type: a2a\n    contract: {remote: abc}\n",
			[]string{`pactum.yaml:4:24: agents[0].contract.remote: want the contract's digest as the remote agent's card names it`}},
		{"contract remote with file", "agents:\n  - name: a\n    type: a2a\n    contract: {remote: \"sha256:0000000000000000000000000000000000000000000000000000000000000000\", file: c.yaml}\n",
			[]string{`pactum.yaml:4:99: agents[0].contract.file: a remote contract takes remote (and extension) only`}},
		{"contract extension unknown", "agents:\n  - name: a\n    type: echo\n    contract: {file: c.yaml, step: s, extension: must}\n",
			[]string{`pactum.yaml:4:50: agents[0].contract.extension: must be one of optional, required, got "must"`}},
		{"contract nodes without file", "agents:\n  - name: a\n    type: echo\n    contract: {nodes: true}\n",
			[]string{`pactum.yaml:4:15: agents[0].contract.file: required with step or nodes`}},
		{"contract not a mapping", "agents:\n  - name: a\n    type: echo\n    contract: c.yaml\n",
			[]string{`pactum.yaml:4:15: agents[0].contract: expected a mapping`}},
		// The contracts list: a path, or {file, max_parallel}.
		{"contracts entry without file", oneAgent + "contracts:\n  - max_parallel: 2\n",
			[]string{`pactum.yaml:3:5: contracts[0].file: required`}},
		{"contracts unknown key", oneAgent + "contracts:\n  - {file: c.yaml, paralel: 2}\n",
			[]string{`pactum.yaml:3:20: contracts[0].paralel: unknown field "paralel"`}},
		{"contracts max_parallel out of range", oneAgent + "contracts:\n  - {file: c.yaml, max_parallel: 0}\n",
			[]string{`pactum.yaml:3:34: contracts[0].max_parallel: 0 out of range [1, 64]`}},
		{"contracts empty path", oneAgent + "contracts:\n  - \"\"\n",
			[]string{`pactum.yaml:3:5: contracts[0]: must not be empty`}},
		{"contracts not a list", oneAgent + "contracts: c.yaml\n",
			[]string{`pactum.yaml:2:12: contracts: expected a list`}},
		{"unknown retry key", "agents:\n  - name: a\n    type: echo\n    retry: {attempts: 2}\n",
			[]string{`pactum.yaml:4:13: agents[0].retry.attempts: unknown field "attempts"`}},
		{"unknown skill key", "agents:\n  - name: a\n    type: echo\n    skills:\n      - id: s\n        tag: [x]\n",
			[]string{`pactum.yaml:6:9: agents[0].skills[0].tag: unknown field "tag" (did you mean "tags"?)`}},
		{"unknown actor key", oneAgent + "actors:\n  - name: x\n    actions: [a]\n    role: admin\n",
			[]string{`pactum.yaml:5:5: actors[0].role: unknown field "role"`}},
		{"unknown approval key", "agents: [{name: a, type: echo, sensitive: true}]\npolicy:\n  approvals:\n    - {id: p, actions: [a], until: 2027-01-01}\n",
			[]string{`pactum.yaml:4:29: policy.approvals[0].until: unknown field "until"`}},
		{"unknown mcp key", "mcp: {per_agent_tool: true}\n" + oneAgent,
			[]string{`pactum.yaml:1:7: mcp.per_agent_tool: unknown field "per_agent_tool" (did you mean "per_agent_tools"?)`}},
		{"mcp host with a scheme", "mcp:\n  allowed_hosts: [pactum.example.com, \"https://x.example\"]\n" + oneAgent,
			[]string{`pactum.yaml:2:39: mcp.allowed_hosts[1]: must be a host name or IP address, without scheme or path`}},
		{"unknown http key", "http: {read_timout: 1s}\n" + oneAgent,
			[]string{`pactum.yaml:1:8: http.read_timout: unknown field "read_timout" (did you mean "read_timeout"?)`}},
		{"http host with a path", "http:\n  allowed_hosts: [ok.example, \"x.example/api\"]\n" + oneAgent,
			[]string{`pactum.yaml:2:31: http.allowed_hosts[1]: must be a host name or IP address, without scheme or path`}},
		{"http bad origins", "http:\n  cors_origins: [app.example.com, \"https://app.example.com/\", \"ftp://x\", \"null\"]\n" + oneAgent,
			[]string{
				`pactum.yaml:2:18: http.cors_origins[0]: invalid origin "app.example.com": want scheme://host[:port]`,
				`pactum.yaml:2:35: http.cors_origins[1]: invalid origin "https://app.example.com/"`,
				`pactum.yaml:2:63: http.cors_origins[2]: invalid origin "ftp://x"`,
				`pactum.yaml:2:74: http.cors_origins[3]: invalid origin "null"`,
			}},
		{"http any origin without auth", "http: {cors_origins: [\"*\"]}\n" + oneAgent,
			[]string{`pactum.yaml:1:23: http.cors_origins: "*" lets every web page call this server; it needs auth: bearer`}},
		{"http bad timeouts", "http: {read_timeout: 0s, write_timeout: -1s, idle_timeout: 30}\n" + oneAgent,
			[]string{
				`pactum.yaml:1:22: http.read_timeout: must be positive, got 0s`,
				`pactum.yaml:1:41: http.write_timeout: must be positive, got -1s`,
				`pactum.yaml:1:60: http.idle_timeout: invalid duration "30"`,
			}},
		{"http max connections", "http: {max_connections: 0}\n" + oneAgent,
			[]string{`pactum.yaml:1:25: http.max_connections: 0 out of range [1, 1048576]`}},
		{"mcp wait timeout too short", "mcp: {wait_timeout: 10ms}\n" + oneAgent,
			[]string{`pactum.yaml:1:21: mcp.wait_timeout: must be at least 1s`}},
		{"string for migrate", "migrate: no\n" + oneAgent,
			[]string{`pactum.yaml:1:10: migrate: expected true or false, got "no"`}},
		{"duplicate key", "workers: 2\nworkers: 3\n" + oneAgent,
			[]string{`pactum.yaml:2:1: workers: duplicate key (first defined at line 1)`}},

		// Wrong types.
		{"string for integer", "workers: many\n" + oneAgent,
			[]string{`pactum.yaml:1:10: workers: expected an integer, got "many"`}},
		{"list for integer", "workers: [1]\n" + oneAgent,
			[]string{`pactum.yaml:1:10: workers: expected an integer, got a list`}},
		{"float for integer", "max_body_bytes: 4096.5\n" + oneAgent,
			[]string{`pactum.yaml:1:17: max_body_bytes: expected an integer, got "4096.5"`}},
		{"mapping for string", "listen: {host: x}\n" + oneAgent,
			[]string{`pactum.yaml:1:9: listen: expected a string, got a mapping`}},
		{"yes for bool", "agents:\n  - {name: a, type: echo, sensitive: yes}\n",
			[]string{`pactum.yaml:2:38: agents[0].sensitive: expected true or false, got "yes"`}},
		{"scalar for list", oneAgent + "actors:\n  - {name: x, actions: a}\n",
			[]string{`pactum.yaml:3:24: actors[0].actions: expected a list, got "a"`}},
		{"list for mapping", "log: [debug]\n" + oneAgent,
			[]string{`pactum.yaml:1:6: log: expected a mapping, got a list`}},
		{"root not a mapping", "- a\n- b\n",
			[]string{`pactum.yaml:1:1: expected a mapping, got a list`, `pactum.yaml:1:1: agents: at least one agent is required`}},
		{"agents not a list", "agents: {name: a}\n",
			[]string{`pactum.yaml:1:9: agents: expected a list, got a mapping`, `pactum.yaml:1:9: agents: at least one agent is required`}},
		{"agent not a mapping", "agents: [a]\n",
			[]string{`pactum.yaml:1:10: agents[0]: expected a mapping, got "a"`}},

		// Durations.
		{"duration without unit", "lease: 30\n" + oneAgent,
			[]string{`pactum.yaml:1:8: lease: invalid duration "30" (want e.g. 500ms, 30s, 5m, 1h)`}},
		{"duration nonsense", "agents:\n  - name: a\n    type: echo\n    timeout: 5 minutes\n",
			[]string{`pactum.yaml:4:14: agents[0].timeout: invalid duration "5 minutes"`}},
		{"lease below 1s", "lease: 500ms\n" + oneAgent,
			[]string{`pactum.yaml:1:8: lease: must be at least 1s, got 500ms`}},
		{"negative idempotency ttl", "idempotency_ttl: -1s\n" + oneAgent,
			[]string{`pactum.yaml:1:18: idempotency_ttl: must not be negative, got -1s`}},
		{"zero agent timeout", "agents:\n  - {name: a, type: echo, timeout: 0s}\n",
			[]string{`pactum.yaml:2:36: agents[0].timeout: must be positive, got 0s`}},
		{"zero push timeout", "push: {timeout: 0}\n" + oneAgent,
			[]string{`pactum.yaml:1:17: push.timeout: must be positive, got 0`}},
		{"max_backoff below initial", "agents:\n  - name: a\n    type: echo\n    retry: {initial_backoff: 10s, max_backoff: 5s}\n",
			[]string{`pactum.yaml:4:48: agents[0].retry.max_backoff: 5s is less than initial_backoff (10s)`}},
		{"initial_backoff above default max", "agents:\n  - name: a\n    type: echo\n    retry: {initial_backoff: 2m}\n",
			[]string{`pactum.yaml:4:30: agents[0].retry.initial_backoff: 2m0s exceeds max_backoff (1m0s, the default)`}},

		// Ranges.
		{"workers zero", "workers: 0\n" + oneAgent,
			[]string{`pactum.yaml:1:10: workers: 0 out of range [1, 1024]`}},
		{"workers too many", "workers: 2000\n" + oneAgent,
			[]string{`pactum.yaml:1:10: workers: 2000 out of range [1, 1024]`}},
		{"workers pool zero", "workers:\n  processes: 0\n" + oneAgent,
			[]string{`pactum.yaml:2:14: workers.processes: 0 out of range [1, 1024]`}},
		{"workers pool too many", "workers: {others: 5000}\n" + oneAgent,
			[]string{`pactum.yaml:1:19: workers.others: 5000 out of range [1, 1024]`}},
		{"workers unknown pool", "workers: {exec: 4}\n" + oneAgent,
			[]string{`pactum.yaml:1:11: workers.exec: unknown field`}},
		{"integer overflow", "workers: 99999999999999999999\n" + oneAgent,
			[]string{`pactum.yaml:1:10: workers: expected an integer, got "99999999999999999999"`}},
		{"max body too small", "max_body_bytes: 10\n" + oneAgent,
			[]string{`pactum.yaml:1:17: max_body_bytes: 10 out of range [1024, 1073741824]`}},
		{"push attempts", "push:\n  max_attempts: 0\n" + oneAgent,
			[]string{`pactum.yaml:2:17: push.max_attempts: 0 out of range [1, 100]`}},
		{"retry attempts", "agents:\n  - name: a\n    type: echo\n    retry:\n      max_attempts: 101\n",
			[]string{`pactum.yaml:5:21: agents[0].retry.max_attempts: 101 out of range [1, 100]`}},
		{"jitter", "agents:\n  - name: a\n    type: echo\n    retry:\n      jitter: 1.5\n",
			[]string{`pactum.yaml:5:15: agents[0].retry.jitter: 1.5 out of range [0, 1]`}},
		{"jitter nan", "agents:\n  - name: a\n    type: echo\n    retry:\n      jitter: .nan\n",
			[]string{`pactum.yaml:5:15: agents[0].retry.jitter: .nan out of range [0, 1]`}},
		{"log level", "log: {level: loud}\n" + oneAgent,
			[]string{`pactum.yaml:1:14: log.level: must be one of debug, info, warn, error, got "loud"`}},
		{"log format", "log: {format: xml}\n" + oneAgent,
			[]string{`pactum.yaml:1:15: log.format: must be one of text, json, got "xml"`}},

		// Addresses and DSNs.
		{"listen without port", "listen: localhost\n" + oneAgent,
			[]string{`pactum.yaml:1:9: listen: invalid listen address "localhost": want host:port`}},
		{"listen bad port", "listen: 127.0.0.1:99999\n" + oneAgent,
			[]string{`pactum.yaml:1:9: listen: invalid listen address "127.0.0.1:99999": port "99999" is not a number in 0..65535`}},
		{"listen named port", "listen: 127.0.0.1:http\n" + oneAgent,
			[]string{`pactum.yaml:1:9: listen: invalid listen address "127.0.0.1:http"`}},
		{"grpc_listen without port", "grpc_listen: localhost\n" + oneAgent,
			[]string{`pactum.yaml:1:14: grpc_listen: invalid listen address "localhost": want host:port`}},
		{"grpc_listen bad port", "grpc_listen: 127.0.0.1:70000\n" + oneAgent,
			[]string{`pactum.yaml:1:14: grpc_listen: invalid listen address "127.0.0.1:70000": port "70000" is not a number in 0..65535`}},
		{"grpc_url without grpc_listen", "grpc_url: grpc.example.com:443\n" + oneAgent,
			[]string{`pactum.yaml:1:11: grpc_url: needs grpc_listen: gRPC is served only on a grpc_listen address`}},
		{"grpc_url a URL", "grpc_listen: :9001\ngrpc_url: https://grpc.example.com\n" + oneAgent,
			[]string{`pactum.yaml:2:11: grpc_url: invalid address "https://grpc.example.com": want host:port, not a URL`}},
		{"grpc_url no host", "grpc_listen: :9001\ngrpc_url: ':9001'\n" + oneAgent,
			[]string{`pactum.yaml:2:11: grpc_url: invalid address ":9001": the host is empty`}},
		{"grpc_url port 0", "grpc_listen: :9001\ngrpc_url: example.com:0\n" + oneAgent,
			[]string{`pactum.yaml:2:11: grpc_url: invalid address "example.com:0": port "0" is not a number in 1..65535`}},
		{"base_url relative", "base_url: /pactum\n" + oneAgent,
			[]string{`pactum.yaml:1:11: base_url: base URL "/pactum" must be an absolute http:// or https:// URL`}},
		{"base_url scheme", "base_url: ftp://example.com\n" + oneAgent,
			[]string{`pactum.yaml:1:11: base_url: base URL "ftp://example.com" must be an absolute http:// or https:// URL`}},
		{"base_url query", "base_url: https://example.com/a?b=c\n" + oneAgent,
			[]string{`pactum.yaml:1:11: base_url: base URL "https://example.com/a?b=c" must not have a query`}},
		{"base_url no host", "base_url: 'http:///x'\n" + oneAgent,
			[]string{`pactum.yaml:1:11: base_url: base URL "http:///x" has no host`}},
		{"base_url unparsable", "base_url: 'http://a b'\n" + oneAgent,
			[]string{`pactum.yaml:1:11: base_url: invalid base URL: parse "http://a b": invalid character " " in host name`}},
		{"base_url fragment", "base_url: 'https://example.com/#top'\n" + oneAgent,
			[]string{`pactum.yaml:1:11: base_url: base URL "https://example.com/#top" must not have a fragment`}},
		{"base_url user info", "base_url: https://u:hunter2@example.com\n" + oneAgent,
			[]string{`pactum.yaml:1:11: base_url: base URL "https://u:xxxxx@example.com" must not carry user info`}},
		{"store scheme", "store: mysql://localhost/pactum\n" + oneAgent,
			[]string{`pactum.yaml:1:8: store: unknown store scheme "mysql": want sqlite:// or postgres://`}},
		{"store secret not echoed", "store: 'mysql://u:hunter2@db/x'\n" + oneAgent,
			[]string{`pactum.yaml:1:8: store: unknown store scheme "mysql": want sqlite:// or postgres://`}},
		{"store without database", "store: 'sqlite://'\n" + oneAgent,
			[]string{`pactum.yaml:1:8: store: store sqlite:// names no database`}},
		{"store without scheme", "store: pactum.db\n" + oneAgent,
			[]string{`pactum.yaml:1:8: store: store has no scheme: want sqlite://PATH or postgres://…`}},
		{"store empty", "store: ''\n" + oneAgent,
			[]string{`pactum.yaml:1:8: store: must not be empty`}},

		// Agents.
		{"no agents", "listen: :9000\n",
			[]string{`pactum.yaml:1:1: agents: at least one agent is required`}},
		{"empty agents", "agents: []\n",
			[]string{`pactum.yaml:1:9: agents: at least one agent is required`}},
		{"empty file", "",
			[]string{`pactum.yaml: agents: at least one agent is required`}},
		{"missing type", "agents:\n  - name: a\n",
			[]string{`pactum.yaml:2:5: agents[0].type: required: the runtime type`}},
		{"empty type", "agents:\n  - name: a\n    type: ''\n",
			[]string{`pactum.yaml:3:11: agents[0].type: required: the runtime type`}},
		{"null type", "agents:\n  - name: a\n    type:\n",
			[]string{`pactum.yaml:3:5: agents[0].type: required: the runtime type`}},
		{"missing name", "agents:\n  - type: echo\n",
			[]string{`pactum.yaml:2:5: agents[0].name: required`}},
		{"bad name", "agents:\n  - name: my agent\n    type: echo\n",
			[]string{`pactum.yaml:2:11: agents[0].name: invalid name "my agent"`}},
		{"bad action", "agents:\n  - name: a\n    type: echo\n    action: a/b\n",
			[]string{`pactum.yaml:4:13: agents[0].action: invalid action "a/b"`}},
		{"duplicate names", "agents:\n  - name: a\n    type: echo\n  - name: a\n    type: echo\n",
			[]string{`pactum.yaml:4:11: agents[1].name: duplicate agent name "a" (first used at line 2)`}},
		{"duplicate actions", "agents:\n  - {name: a, type: echo, action: run}\n  - {name: b, type: echo, action: run}\n",
			[]string{`pactum.yaml:3:35: agents[1].action: action "run" is already served by agent "a" (line 2)`}},
		{"action clashes with a name", "agents:\n  - {name: a, type: echo}\n  - {name: b, type: echo, action: a}\n",
			[]string{`pactum.yaml:3:35: agents[1].action: action "a" is already served by agent "a" (line 2)`}},
		{"name clashes with an action", "agents:\n  - {name: a, type: echo, action: b}\n  - {name: b, type: echo}\n",
			[]string{`pactum.yaml:3:12: agents[1].name: action "b" is already served by agent "a" (line 2)`}},
		{"settings for another type", "agents:\n  - name: a\n    type: exec\n    webhook:\n      url: http://x\n",
			[]string{`pactum.yaml:4:5: agents[0].webhook: settings for runtime type "webhook", but this agent's type is "exec"`}},
		{"settings not a mapping", "agents:\n  - name: a\n    type: exec\n    exec: ./run.sh\n",
			[]string{`pactum.yaml:4:11: agents[0].exec: runtime settings must be a mapping, got "./run.sh"`}},
		{"default_agent unknown", "default_agent: b\n" + oneAgent,
			[]string{`pactum.yaml:1:16: default_agent: unknown agent "b" (agents: "a")`}},
		{"skill without id", "agents:\n  - name: a\n    type: echo\n    skills:\n      - name: S\n",
			[]string{`pactum.yaml:5:9: agents[0].skills[0].id: required`}},
		{"duplicate skill id", "agents:\n  - name: a\n    type: echo\n    skills: [{id: s}, {id: s}]\n",
			[]string{`pactum.yaml:4:28: agents[0].skills[1].id: duplicate skill id "s"`}},
		{"bad media type", "agents:\n  - name: a\n    type: echo\n    input_modes: [text/plain, 'bad type']\n",
			[]string{`pactum.yaml:4:31: agents[0].input_modes[1]: invalid media type "bad type"`}},
		{"no media types", "agents:\n  - name: a\n    type: echo\n    output_modes: []\n",
			[]string{`pactum.yaml:4:19: agents[0].output_modes: must list at least one media type`}},

		// Authentication.
		{"unknown auth mode", "auth: oauth\n" + oneAgent,
			[]string{`pactum.yaml:1:7: auth: must be one of none, bearer, got "oauth"`}},
		{"bearer without actors", "auth: bearer\n" + oneAgent,
			[]string{`pactum.yaml:1:7: auth: bearer needs actors with tokens: nobody could call`}},
		{"bearer actor without token", "auth: bearer\n" + oneAgent + "actors:\n  - name: bob\n    actions: [a]\n",
			[]string{`pactum.yaml:4:11: actors[0]: auth: bearer needs token_sha256 or token_env for every actor`}},
		{"token without bearer", oneAgent + "actors:\n  - {name: bob, actions: [a], token_env: BOB_TOKEN}\n",
			[]string{`pactum.yaml:3:42: actors[0]: a token needs auth: bearer (without it callers are not authenticated)`}},
		{"both token kinds", "auth: bearer\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], token_env: B, token_sha256: " + strings.Repeat("ab", 32) + "}\n",
			[]string{`pactum.yaml:4:59: actors[0]: give token_sha256 or token_env, not both`}},
		{"bad token hash", "auth: bearer\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], token_sha256: abc}\n",
			[]string{`pactum.yaml:4:45: actors[0].token_sha256: must be 64 hex digits, the SHA-256 of the token (e.g. printf %s "$TOKEN" | sha256sum)`}},
		{"bad token env", "auth: bearer\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], token_env: 1X}\n",
			[]string{`pactum.yaml:4:42: actors[0].token_env: must be an environment variable name (letters, digits and _, not starting with a digit)`}},

		// auth: oidc.
		{"oidc as a scalar", "auth: oidc\n" + oneAgent,
			[]string{`pactum.yaml:1:7: auth: oidc needs the mapping form`}},
		{"oidc without issuer and audience", "auth: {mode: oidc}\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], subject: svc}\n",
			[]string{`pactum.yaml:1:7: auth.issuer: required`, `pactum.yaml:1:7: auth.audience: required`}},
		{"oidc without mode", "auth: {issuer: \"https://id.example\", audience: pactum}\n" + oneAgent,
			[]string{`pactum.yaml:1:7: auth.mode: required`}},
		{"bearer with oidc keys", "auth: {mode: bearer, issuer: \"https://id.example\"}\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], token_env: B}\n",
			[]string{`pactum.yaml:1:7: auth: only mode oidc takes other keys; write auth: bearer`}},
		{"oidc issuer over http", "auth: {mode: oidc, issuer: \"http://id.example\", audience: pactum}\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], subject: svc}\n",
			[]string{`pactum.yaml:1:28: auth.issuer: issuer "http://id.example" must be https:// (http:// only on a loopback host)`}},
		{"oidc hmac and none", "auth: {mode: oidc, issuer: \"https://id.example\", audience: pactum, algorithms: [HS256, none]}\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], subject: svc}\n",
			[]string{`pactum.yaml:1:81: auth.algorithms[0]: "HS256" is not allowed`, `pactum.yaml:1:88: auth.algorithms[1]: "none" is not allowed`}},
		{"oidc empty audience list", "auth: {mode: oidc, issuer: \"https://id.example\", audience: []}\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], subject: svc}\n",
			[]string{`pactum.yaml:1:60: auth.audience: must name at least one audience`}},
		{"oidc leeway too long", "auth: {mode: oidc, issuer: \"https://id.example\", audience: pactum, leeway: 1h}\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], subject: svc}\n",
			[]string{`pactum.yaml:1:76: auth.leeway: must be at most 5m0s, got 1h`}},
		{"oidc actor without subject", "auth: {mode: oidc, issuer: \"https://id.example\", audience: pactum}\n" + oneAgent + "actors:\n  - {name: bob, actions: [a]}\n",
			[]string{`pactum.yaml:4:12: actors[0]: auth: oidc needs a subject for every actor (the value of the token's sub claim)`}},
		{"oidc duplicate subject", "auth: {mode: oidc, issuer: \"https://id.example\", audience: pactum}\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], subject: svc}\n  - {name: eve, actions: [a], subject: svc}\n",
			[]string{`pactum.yaml:5:40: actors[1].subject: actor bob has the same subject`}},
		{"oidc with a token", "auth: {mode: oidc, issuer: \"https://id.example\", audience: pactum}\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], subject: svc, token_env: B}\n",
			[]string{`pactum.yaml:4:56: actors[0]: a token needs auth: bearer`}},
		{"subject without oidc", "auth: bearer\n" + oneAgent + "actors:\n  - {name: bob, actions: [a], token_env: B, subject: svc}\n",
			[]string{`pactum.yaml:4:54: actors[0].subject: a subject needs auth: {mode: oidc, …}`}},

		// Actors and approvals.
		{"actor naming unknown action", oneAgent + "actors:\n  - name: bob\n    actions: [a, deploy]\n",
			[]string{`pactum.yaml:4:18: actors[0].actions[1]: unknown action "deploy" (actions: "a")`}},
		{"actor without actions", oneAgent + "actors:\n  - name: bob\n",
			[]string{`pactum.yaml:3:5: actors[0].actions: required`}},
		{"actor with empty actions", oneAgent + "actors:\n  - {name: bob, actions: []}\n",
			[]string{`pactum.yaml:3:26: actors[0].actions: must not be empty`}},
		{"duplicate actor", oneAgent + "actors:\n  - {name: bob, actions: ['*']}\n  - {name: bob, actions: [a]}\n",
			[]string{`pactum.yaml:4:12: actors[1].name: duplicate actor "bob"`}},
		{"approval of unknown action", "agents: [{name: a, type: echo, sensitive: true}]\npolicy:\n  approvals:\n    - {id: p, actions: [b]}\n",
			[]string{`pactum.yaml:4:25: policy.approvals[0].actions[0]: unknown action "b" (actions: "a")`}},
		{"approval of non-sensitive action", oneAgent + "policy:\n  approvals:\n    - {id: p, actions: [a]}\n",
			[]string{`pactum.yaml:4:25: policy.approvals[0].actions[0]: action "a" is not sensitive`}},
		{"approval of unknown actor", "agents: [{name: a, type: echo, sensitive: true}]\nactors: [{name: bob, actions: [a]}]\npolicy:\n  approvals:\n    - {id: p, actions: [a], actors: [eve]}\n",
			[]string{`pactum.yaml:5:38: policy.approvals[0].actors[0]: unknown actor "eve" (actors: "bob")`}},
		{"approval without id", "agents: [{name: a, type: echo, sensitive: true}]\npolicy:\n  approvals:\n    - actions: [a]\n",
			[]string{`pactum.yaml:4:7: policy.approvals[0].id: required`}},
		{"duplicate approval", "agents: [{name: a, type: echo, sensitive: true}]\npolicy:\n  approvals:\n    - {id: p, actions: [a]}\n    - {id: p, actions: [a]}\n",
			[]string{`pactum.yaml:5:12: policy.approvals[1].id: duplicate approval id "p"`}},
		{"bad expiry", "agents: [{name: a, type: echo, sensitive: true}]\npolicy:\n  approvals:\n    - {id: p, actions: [a], expires: soon}\n",
			[]string{`pactum.yaml:4:38: policy.approvals[0].expires: expected an RFC 3339 timestamp`}},
		{"empty policy version", "policy: {version: ''}\n" + oneAgent,
			[]string{`pactum.yaml:1:19: policy.version: must not be empty`}},

		// YAML itself.
		{"syntax error", "agents:\n  - name: a\n   type: echo\n",
			[]string{`pactum.yaml:2: invalid YAML: did not find expected '-' indicator`}},
		{"syntax error on the first line", "agents: !a!b x\n",
			[]string{`pactum.yaml:1: invalid YAML: found undefined tag handle`}},
		{"syntax error in a mapping", "listen: :9000\n- a\n",
			[]string{`pactum.yaml:2: invalid YAML: did not find expected key`}},
		{"tab indentation", "agents:\n\t- name: a\n",
			[]string{`pactum.yaml:2: invalid YAML: found character that cannot start any token`}},
		{"two documents", oneAgent + "---\n" + oneAgent,
			[]string{`pactum.yaml:2:1: a configuration file holds one YAML document; found a second one`}},
		{"unknown anchor", "agents: *nothing\n",
			[]string{`pactum.yaml: invalid YAML: unknown anchor 'nothing' referenced`}},
		{"merge cycle", "agents:\n  - &a\n    name: a\n    type: echo\n    retry: {<<: *a}\n",
			[]string{`pactum.yaml:5:17: agents[0].retry.<<: alias *a refers to a node that contains it`}},
		{"merge of a scalar", "base: &b 1\n" + "agents:\n  - {<<: *b, name: a, type: echo}\n",
			[]string{`pactum.yaml:1:1: base: unknown field "base"`, `pactum.yaml:3:10: agents[0].<<: merge value must be a mapping or a list of mappings, got "1"`}},
		{"non-string key", "agents:\n  - name: a\n    type: echo\n    [x]: 1\n",
			[]string{`pactum.yaml:4:5: agents[0]: mapping keys must be strings, got a list`}},

		// A value of the wrong type is one error, not several.
		{"skill id not a string", "agents:\n  - name: a\n    type: echo\n    skills: [{id: [x]}]\n",
			[]string{`pactum.yaml:4:19: agents[0].skills[0].id: expected a string, got a list`}},
		{"actor name not a string", oneAgent + "actors: [{name: {x: 1}, actions: [a]}]\n",
			[]string{`pactum.yaml:2:17: actors[0].name: expected a string, got a mapping`}},
		{"modes not a list", "agents:\n  - name: a\n    type: echo\n    input_modes: text/plain\n",
			[]string{`pactum.yaml:4:18: agents[0].input_modes: expected a list, got "text/plain"`}},
		{"action item not a string", oneAgent + "actors: [{name: b, actions: [a, [c]]}]\n",
			[]string{`pactum.yaml:2:33: actors[0].actions[1]: expected a string, got a list`}},
		{"type not a string", "agents:\n  - name: a\n    type: [echo]\n",
			[]string{`pactum.yaml:3:11: agents[0].type: expected a string, got a list`}},
		{"x- keys are free", "x-anything: {whatever: [1, 2]}\nx-more: 1\nxy: 1\n" + oneAgent,
			[]string{`pactum.yaml:3:1: xy: unknown field "xy"`}},

		// Everything at once: all problems are collected, in file order.
		{"collects every error", "workers: 0\nlease: 1\nagents:\n  - name: a\n    type: exec\n    webhook: {}\n  - {name: a, type: ''}\nactors:\n  - {name: x, actions: [nope]}\ndefault_agent: zz\n",
			[]string{
				`pactum.yaml:1:10: workers: 0 out of range`,
				`pactum.yaml:2:8: lease: invalid duration "1"`,
				`pactum.yaml:6:5: agents[0].webhook: settings for runtime type "webhook"`,
				`pactum.yaml:7:12: agents[1].name: duplicate agent name "a"`,
				`pactum.yaml:7:21: agents[1].type: required`,
				`pactum.yaml:9:25: actors[0].actions[0]: unknown action "nope"`,
				`pactum.yaml:10:16: default_agent: unknown agent "zz"`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Parse([]byte(tt.yaml), "pactum.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded (%+v), want errors:\n%s", c, strings.Join(tt.want, "\n"))
			}
			if c != nil {
				t.Errorf("Parse returned a config with its error")
			}
			var errs config.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error %T is not config.Errors: %v", err, err)
			}
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(tt.want), err)
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tt.want[i]) {
					t.Errorf("error %d:\n got %s\nwant %s…", i, e, tt.want[i])
				}
			}
		})
	}
}

func TestParseDefaults(t *testing.T) {
	t.Parallel()
	c, err := config.Parse([]byte("agents:\n  - name: hello\n    type: echo\n    description: Says hello.\n"), "min.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := config.Empty()
	if c.Listen != want.Listen || c.Listen != "127.0.0.1:9000" {
		t.Errorf("Listen = %q", c.Listen)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Listen", c.Listen, "127.0.0.1:9000"},
		{"BaseURL", c.BaseURL, "http://127.0.0.1:9000"},
		{"Store", c.Store, "sqlite://pactum.db"},
		{"Node", c.Node, ""},
		{"Log", c.Log, config.Log{Level: "info", Format: "text"}},
		{"Workers", c.Workers, config.Workers{Processes: 16, Others: 256}},
		{"Lease", c.Lease, config.D(30 * time.Second)},
		{"IdempotencyTTL", c.IdempotencyTTL, config.D(24 * time.Hour)},
		{"MaxBodyBytes", c.MaxBodyBytes, int64(4 << 20)},
		{"Push", c.Push, config.Push{AllowPrivate: false, MaxAttempts: 5, Timeout: config.D(10 * time.Second)}},
		{"HTTP", c.HTTP, config.HTTP{ReadTimeout: config.D(30 * time.Second), WriteTimeout: config.D(30 * time.Second), IdleTimeout: config.D(2 * time.Minute), MaxConnections: 1024}},
		{"DefaultAgent", c.DefaultAgent, "hello"},
		{"Actors", len(c.Actors), 0},
		{"Policy", c.Policy.Version, "1"},
		{"Approvals", len(c.Policy.Approvals), 0},
		{"File", c.File(), "min.yaml"},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
	if len(c.Agents) != 1 {
		t.Fatalf("agents = %d", len(c.Agents))
	}
	a := c.Agents[0]
	agentChecks := []struct {
		name      string
		got, want any
	}{
		{"Name", a.Name, "hello"},
		{"Type", a.Type, "echo"},
		{"Action", a.Action, "hello"},
		{"Timeout", a.Timeout, config.D(5 * time.Minute)},
		{"Retry", a.Retry, config.Retry{MaxAttempts: 3, InitialBackoff: config.D(time.Second), MaxBackoff: config.D(time.Minute), Jitter: 0.2}},
		{"Sensitive", a.Sensitive, false},
		{"DryRun", a.DryRun, (*bool)(nil)},
		{"Skills", a.Skills, []config.Skill{{ID: "hello", Name: "hello", Description: "Says hello.", Tags: []string{"echo"}}}},
		{"InputModes", a.InputModes, []string{"text/plain"}},
		{"OutputModes", a.OutputModes, []string{"text/plain"}},
		{"Settings", a.Settings == nil, true},
		{"Line", a.Line, 2},
	}
	for _, ch := range agentChecks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("agent %s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
}

// TestParseValues checks values that differ from the defaults, including
// zeros that mean something (idempotency_ttl: 0, jitter: 0).
func TestParseValues(t *testing.T) {
	t.Parallel()
	const doc = `
listen: ":8080"
base_url: https://agents.example.com/pactum/
store: postgres://pactum@db/pactum
node: node-a
log: {level: debug, format: json}
workers: 4
lease: 1m
idempotency_ttl: 0
max_body_bytes: 0x10000
push: {allow_private: true, max_attempts: 2, timeout: 1s}
http:
  allowed_hosts: [agents.internal, "ops.example.com:8443"]
  cors_origins: ["https://app.example.com", "http://localhost:5173"]
  read_timeout: 5s
  write_timeout: 1m
  idle_timeout: 10s
  max_connections: 64
mcp: {allowed_hosts: [legacy.internal]}
default_agent: b
x-retry: &retry
  max_attempts: 5
  jitter: 0
agents:
  - name: a
    type: echo
    action: say
    timeout: 10s
    retry:
      <<: *retry
      max_attempts: 7
    sensitive: true
    dry_run: true
    input_modes: [text/plain, application/json]
    output_modes: [application/json]
    skills:
      - {id: s1, tags: [t], examples: [hi]}
      - {id: s2, name: Two, description: Second.}
  - name: b
    type: echo
    retry: *retry
actors:
  - {name: alice, actions: ["*"]}
  - {name: bob, actions: [say, b]}
policy:
  version: v7
  approvals:
    - {id: p1, actions: [say], actors: [alice], expires: 2027-01-02T03:04:05+01:00}
    - {id: p2, actions: ["*"], expires: 2027-06-30, revoked: true}
`
	c, err := config.Parse([]byte(doc), "values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != ":8080" || c.BaseURL != "https://agents.example.com/pactum" || c.Store != "postgres://pactum@db/pactum" || c.Node != "node-a" {
		t.Errorf("server fields = %q %q %q %q", c.Listen, c.BaseURL, c.Store, c.Node)
	}
	if c.Log != (config.Log{Level: "debug", Format: "json"}) || c.Workers != (config.Workers{All: 4}) || c.Lease.Duration != time.Minute {
		t.Errorf("log/workers/lease = %+v %+v %s", c.Log, c.Workers, c.Lease)
	}
	if c.IdempotencyTTL.Duration != 0 {
		t.Errorf("idempotency_ttl: 0 = %s, want 0 (disabled)", c.IdempotencyTTL)
	}
	if c.MaxBodyBytes != 0x10000 {
		t.Errorf("MaxBodyBytes = %d", c.MaxBodyBytes)
	}
	if c.Push != (config.Push{AllowPrivate: true, MaxAttempts: 2, Timeout: config.D(time.Second)}) {
		t.Errorf("Push = %+v", c.Push)
	}
	wantHTTP := config.HTTP{
		AllowedHosts: []string{"agents.internal", "ops.example.com:8443"}, CORSOrigins: []string{"https://app.example.com", "http://localhost:5173"},
		ReadTimeout: config.D(5 * time.Second), WriteTimeout: config.D(time.Minute), IdleTimeout: config.D(10 * time.Second), MaxConnections: 64,
	}
	if !reflect.DeepEqual(c.HTTP, wantHTTP) || !reflect.DeepEqual(c.MCP.AllowedHosts, []string{"legacy.internal"}) {
		t.Errorf("HTTP = %+v, MCP.AllowedHosts = %v", c.HTTP, c.MCP.AllowedHosts)
	}
	a, b := c.Agents[0], c.Agents[1]
	if a.Action != "say" || a.Timeout.Duration != 10*time.Second || !a.Sensitive || a.DryRun == nil || !*a.DryRun {
		t.Errorf("agent a = %+v", a)
	}
	// a merges the shared retry and overrides max_attempts; b uses it as is.
	wantA := config.Retry{MaxAttempts: 7, InitialBackoff: config.D(time.Second), MaxBackoff: config.D(time.Minute), Jitter: 0}
	wantB := wantA
	wantB.MaxAttempts = 5
	if a.Retry != wantA || b.Retry != wantB {
		t.Errorf("retries = %+v, %+v, want %+v, %+v (jitter 0 kept)", a.Retry, b.Retry, wantA, wantB)
	}
	wantSkills := []config.Skill{
		{ID: "s1", Name: "s1", Description: "s1", Tags: []string{"t"}, Examples: []string{"hi"}},
		{ID: "s2", Name: "Two", Description: "Second.", Tags: []string{"echo"}},
	}
	if !reflect.DeepEqual(a.Skills, wantSkills) {
		t.Errorf("skills = %+v, want %+v", a.Skills, wantSkills)
	}
	if !reflect.DeepEqual(a.InputModes, []string{"text/plain", "application/json"}) || !reflect.DeepEqual(a.OutputModes, []string{"application/json"}) {
		t.Errorf("modes = %v %v", a.InputModes, a.OutputModes)
	}
	if c.DefaultAgent != "b" {
		t.Errorf("DefaultAgent = %q", c.DefaultAgent)
	}
	wantActors := []config.Actor{{Name: "alice", Actions: []string{"*"}}, {Name: "bob", Actions: []string{"say", "b"}}}
	if !reflect.DeepEqual(c.Actors, wantActors) {
		t.Errorf("actors = %+v", c.Actors)
	}
	if c.Policy.Version != "v7" || len(c.Policy.Approvals) != 2 {
		t.Fatalf("policy = %+v", c.Policy)
	}
	p1, p2 := c.Policy.Approvals[0], c.Policy.Approvals[1]
	if want := time.Date(2027, 1, 2, 2, 4, 5, 0, time.UTC); p1.Expires == nil || !p1.Expires.Equal(want) || p1.Revoked || !reflect.DeepEqual(p1.Actors, []string{"alice"}) {
		t.Errorf("approval p1 = %+v", p1)
	}
	if want := time.Date(2027, 6, 30, 0, 0, 0, 0, time.UTC); p2.Expires == nil || !p2.Expires.Equal(want) || !p2.Revoked || p2.Actors != nil || !reflect.DeepEqual(p2.Actions, []string{"*"}) {
		t.Errorf("approval p2 = %+v", p2)
	}
}

func TestDefaultBaseURL(t *testing.T) {
	t.Parallel()
	for listen, want := range map[string]string{
		"127.0.0.1:9000": "http://127.0.0.1:9000",
		":9000":          "http://localhost:9000",
		"0.0.0.0:80":     "http://localhost:80",
		"[::]:9000":      "http://localhost:9000",
		"[::1]:9000":     "http://[::1]:9000",
		"example.com:1":  "http://example.com:1",
	} {
		if got := config.DefaultBaseURL(listen); got != want {
			t.Errorf("DefaultBaseURL(%q) = %q, want %q", listen, got, want)
		}
		c, err := config.Parse([]byte("listen: '"+listen+"'\n"+oneAgent), "x.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if c.BaseURL != want {
			t.Errorf("listen %q: BaseURL = %q, want %q", listen, c.BaseURL, want)
		}
	}
}

// TestGRPCDefaults checks that gRPC is off by default and that grpc_url
// follows grpc_listen as base_url follows listen.
func TestGRPCDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, listen, url string }{
		{"", "", ""},
		{"grpc_listen: 127.0.0.1:9001\n", "127.0.0.1:9001", "127.0.0.1:9001"},
		{"grpc_listen: ':9001'\n", ":9001", "localhost:9001"},
		{"grpc_listen: '[::]:9001'\n", "[::]:9001", "localhost:9001"},
		{"grpc_listen: ':9001'\ngrpc_url: grpc.example.com:443\n", ":9001", "grpc.example.com:443"},
	} {
		c, err := config.Parse([]byte(tc.src+oneAgent), "x.yaml")
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if c.GRPCListen != tc.listen || c.GRPCURL != tc.url {
			t.Errorf("%q: grpc_listen %q, grpc_url %q; want %q, %q", tc.src, c.GRPCListen, c.GRPCURL, tc.listen, tc.url)
		}
	}
}

func TestDefault(t *testing.T) {
	t.Parallel()
	c := config.Default()
	if len(c.Agents) != 2 || c.Agents[0].Name != "echo" || c.Agents[1].Name != "slow-echo" {
		t.Fatalf("agents = %+v", c.Agents)
	}
	if c.DefaultAgent != "echo" {
		t.Errorf("DefaultAgent = %q", c.DefaultAgent)
	}
	for _, a := range c.Agents {
		if a.Type != "echo" || a.Timeout.Duration != config.DefaultAgentTimeout {
			t.Errorf("agent %+v", a)
		}
	}
	if c.Agents[0].Settings != nil {
		t.Errorf("echo has settings")
	}
	var s struct {
		Delay  time.Duration `yaml:"delay"`
		Prefix string        `yaml:"prefix"`
	}
	if err := c.AgentSpec(c.Agents[1], "").Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.Delay != 2*time.Second || s.Prefix != "slow: " {
		t.Errorf("slow-echo settings = %+v", s)
	}
	// Each call returns a fresh configuration callers may change.
	c.Agents[0].Name = "changed"
	if config.Default().Agents[0].Name != "echo" {
		t.Error("Default shares state between calls")
	}
}

func TestEmptyAndNewAgent(t *testing.T) {
	t.Parallel()
	c := config.Empty()
	if len(c.Agents) != 0 || c.Listen != config.DefaultListen || c.BaseURL != "http://"+config.DefaultListen || c.Workers != (config.Workers{Processes: 16, Others: 256}) || c.IdempotencyTTL.Duration != 24*time.Hour {
		t.Errorf("Empty() = %+v", c)
	}
	a := config.NewAgent("f")
	if a.Action != "f" || a.Timeout.Duration != 5*time.Minute || a.Retry.MaxAttempts != 3 || a.Retry.Jitter != 0.2 ||
		len(a.Skills) != 1 || a.Skills[0].ID != "f" || a.InputModes[0] != "text/plain" {
		t.Errorf("NewAgent = %+v", a)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "pactum.yaml")
	if err := os.WriteFile(path, []byte("agents:\n  - name: a\n    type: echo\n    bogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(path)
	if want := path + `:4:5: agents[0].bogus: unknown field "bogus"`; err == nil || err.Error() != want {
		t.Errorf("Load error = %v, want %s", err, want)
	}
	_, err = config.Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestErrorsUnwrap(t *testing.T) {
	t.Parallel()
	_, err := config.Parse([]byte("lease: soon\n"+oneAgent), "x.yaml")
	var e *config.Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(*Error) failed on %v", err)
	}
	if e.File != "x.yaml" || e.Line != 1 || e.Column != 8 || e.Path != "lease" {
		t.Errorf("error fields = %+v", e)
	}
	// The duration error wraps time.ParseDuration's.
	if e.Err == nil || !strings.Contains(e.Err.Error(), "time: invalid duration") {
		t.Errorf("cause = %v", e.Err)
	}
}

// TestDryRunDefault: dry_run is unset, true or false in the file; unset
// means simulation for a sensitive agent whose action no approval covers,
// and false otherwise.
func TestDryRunDefault(t *testing.T) {
	t.Parallel()
	tru, fals := true, false
	for _, tc := range []struct {
		name      string
		agent     string // the agent's extra keys
		policy    string
		set       *bool // the parsed DryRun
		dryRun    bool
		byDefault bool
	}{
		{name: "sensitive, unset, no policy", agent: "sensitive: true", dryRun: true, byDefault: true},
		{name: "sensitive, unset, policy version only", agent: "sensitive: true", policy: "policy: {version: v2}", dryRun: true, byDefault: true},
		{name: "sensitive, unset, approval for another action", agent: "sensitive: true",
			policy: "policy: {approvals: [{id: a1, actions: [other]}]}", dryRun: true, byDefault: true},
		{name: "sensitive, unset, approval covers it", agent: "sensitive: true", policy: "policy: {approvals: [{id: a1, actions: [deploy]}]}"},
		{name: "sensitive, unset, approval for *", agent: "sensitive: true", policy: "policy: {approvals: [{id: a1, actions: ['*'], revoked: true}]}"},
		{name: "sensitive, false, no policy", agent: "sensitive: true\n    dry_run: false", set: &fals},
		{name: "sensitive, true, approval covers it", agent: "sensitive: true\n    dry_run: true",
			policy: "policy: {approvals: [{id: a1, actions: [deploy]}]}", set: &tru, dryRun: true},
		{name: "not sensitive, unset", agent: "sensitive: false"},
		{name: "not sensitive, true", agent: "dry_run: true", set: &tru, dryRun: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc := "agents:\n  - name: deploy\n    type: echo\n    " + tc.agent + "\n  - {name: other, type: echo, sensitive: true}\n" + tc.policy + "\n"
			c, err := config.Parse([]byte(doc), "dry.yaml")
			if err != nil {
				t.Fatalf("%v\n%s", err, doc)
			}
			a := &c.Agents[0]
			if !reflect.DeepEqual(a.DryRun, tc.set) {
				t.Errorf("parsed DryRun = %v, want %v", a.DryRun, tc.set)
			}
			if dry, def := c.DryRun(a); dry != tc.dryRun || def != tc.byDefault {
				t.Errorf("Config.DryRun = %v (by default %v), want %v (%v)", dry, def, tc.dryRun, tc.byDefault)
			}
		})
	}
	if _, err := config.Parse([]byte("agents:\n  - {name: x, type: echo, dry_run: maybe}\n"), "bad.yaml"); err == nil || !strings.Contains(err.Error(), "bad.yaml:2:") || !strings.Contains(err.Error(), "agents[0].dry_run") {
		t.Errorf("dry_run: maybe: %v, want an error at bad.yaml:2 naming agents[0].dry_run", err)
	}
}

// TestParseAnyOriginWithBearer: "*" among the CORS origins is accepted
// with auth: bearer, where a web page still needs a token to call.
func TestParseAnyOriginWithBearer(t *testing.T) {
	t.Parallel()
	const doc = "auth: bearer\nhttp: {cors_origins: [\"*\"]}\n" + oneAgent + "actors:\n  - {name: x, actions: [\"*\"], token_env: X_TOKEN}\n"
	c, err := config.Parse([]byte(doc), "pactum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.HTTP.CORSOrigins, []string{"*"}) {
		t.Errorf("CORSOrigins = %v", c.HTTP.CORSOrigins)
	}
}

// TestParseContracts: a contracts entry is a path or {file, max_parallel};
// ContractFile resolves it against the configuration's directory and
// places errors at the file; an actor's action that no agent serves is
// left to UnknownActions when contracts are configured.
func TestParseContracts(t *testing.T) {
	t.Parallel()
	doc := oneAgent + "contracts:\n  - c/one.yaml\n  - {file: /abs/two.yaml, max_parallel: 2}\nactors:\n  - {name: x, actions: [a, one, nope]}\n"
	c, err := config.Parse([]byte(doc), "dir/pactum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Contracts) != 2 || c.Contracts[0].File != "c/one.yaml" || c.Contracts[0].MaxParallel != config.DefaultMaxParallel || c.Contracts[1].MaxParallel != 2 {
		t.Fatalf("contracts: %+v", c.Contracts)
	}
	one, two := c.ContractFile(0, ""), c.ContractFile(1, "")
	if one.File != filepath.Join("dir", "c/one.yaml") || two.File != "/abs/two.yaml" || one.Path != "contracts[0]" {
		t.Fatalf("files: %+v %+v", one, two)
	}
	if got := one.Error("boom", nil).Error(); got != "dir/pactum.yaml:3:5: contracts[0]: boom" {
		t.Errorf("entry error: %s", got)
	}
	if got := two.Error("boom", nil).Error(); got != "dir/pactum.yaml:4:12: contracts[1].file: boom" {
		t.Errorf("entry error: %s", got)
	}
	errs := c.UnknownActions(func(a string) bool { return a == "one" })
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `dir/pactum.yaml:6:33: actors[0].actions[2]: unknown action "nope"`) {
		t.Fatalf("unknown actions: %v", errs)
	}
	// Without contracts, an unknown action is Parse's error.
	if _, err := config.Parse([]byte(oneAgent+"actors:\n  - {name: x, actions: [one]}\n"), "p.yaml"); err == nil || !strings.Contains(err.Error(), `unknown action "one"`) {
		t.Fatalf("parse: %v", err)
	}
}

// TestParseOIDC checks the mapping form of auth with mode oidc: its values
// and its defaults (algorithms, leeway, actor claim).
func TestParseOIDC(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, auth string
		want       config.OIDC
	}{
		{"defaults", `{mode: oidc, issuer: "https://id.example/realm", audience: pactum}`, config.OIDC{
			Issuer: "https://id.example/realm", Audience: []string{"pactum"},
			Algorithms: []string{"RS256", "ES256", "EdDSA"}, Leeway: config.D(30 * time.Second), ActorClaim: "sub",
		}},
		{"every key", `{mode: oidc, issuer: "http://127.0.0.1:8080", audience: [a, b], jwks_file: keys.json, algorithms: [PS256], leeway: 0s, actor_claim: client_id, actions_claim: scope}`, config.OIDC{
			Issuer: "http://127.0.0.1:8080", Audience: []string{"a", "b"}, JWKSFile: "keys.json",
			Algorithms: []string{"PS256"}, ActorClaim: "client_id", ActionsClaim: "scope",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Parse([]byte("auth: "+tc.auth+"\n"+oneAgent+"actors:\n  - {name: bob, actions: [a], subject: svc}\n"), "pactum.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if c.Auth != config.AuthOIDC || !reflect.DeepEqual(c.OIDC, tc.want) || c.Actors[0].Subject != "svc" {
				t.Errorf("auth %q, oidc %+v, subject %q; want oidc, %+v, svc", c.Auth, c.OIDC, c.Actors[0].Subject, tc.want)
			}
		})
	}
}

// TestWorkersForms: `workers: N` is one bound for every agent; a mapping
// sizes the two pools, each defaulted on its own; nothing gives both
// defaults.
func TestWorkersForms(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]config.Workers{
		"":                                   {Processes: config.DefaultWorkers, Others: config.DefaultOtherWorkers},
		"workers: 64\n":                      {All: 64},
		"workers: {processes: 2}\n":          {Processes: 2, Others: config.DefaultOtherWorkers},
		"workers:\n  others: 32\n":           {Processes: config.DefaultWorkers, Others: 32},
		"workers: {processes: 4, others: 8}": {Processes: 4, Others: 8},
	} {
		c, err := config.Parse([]byte(doc+"\n"+oneAgent), "pactum.yaml")
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if c.Workers != want {
			t.Errorf("%q: Workers = %+v, want %+v", doc, c.Workers, want)
		}
	}
}
