package langgraph_test

import (
	"testing"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
)

// TestConfigErrors: a wrong setting is reported at its file:line and field
// path, as `pactum config check` and `pactum serve` show it.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	const head = "agents:\n  - name: graph\n    type: langgraph\n    langgraph:\n"
	for _, tc := range []struct{ settings, want string }{
		{"      assistant: agent\n",
			`lg.yaml:4:5: agents[0].langgraph: agent "graph" (langgraph): url: required, e.g. http://127.0.0.1:2024`},
		{"      url: ftp://example.com\n      assistant: agent\n",
			`lg.yaml:5:12: agents[0].langgraph.url: scheme must be http or https, not "ftp"`},
		{"      url: http://u:p@example.com\n      assistant: agent\n",
			`lg.yaml:5:12: agents[0].langgraph.url: credentials in the URL are not supported; use api_key_env`},
		{"      url: http://127.0.0.1:2024\n",
			`lg.yaml:4:5: agents[0].langgraph: agent "graph" (langgraph): assistant: required: the assistant id or graph id to run`},
		{"      url: http://127.0.0.1:2024\n      assistant: agent\n      api_key_env: PACTUM_TEST_UNSET_LANGGRAPH_KEY\n",
			`lg.yaml:7:20: agents[0].langgraph.api_key_env: environment variable PACTUM_TEST_UNSET_LANGGRAPH_KEY is not set`},
		{"      url: http://127.0.0.1:2024\n      assistant: agent\n      stream_modes: [values, tokens]\n",
			`lg.yaml:7:21: agents[0].langgraph.stream_modes: unknown mode "tokens" (known: values, messages, messages-tuple, updates, events, tasks, checkpoints, debug, custom)`},
		{"      url: http://127.0.0.1:2024\n      assistant: agent\n      output: json\n",
			`lg.yaml:7:15: agents[0].langgraph.output: must be text or state, not "json"`},
		{"      url: http://127.0.0.1:2024\n      assistant: agent\n      input: text\n",
			`lg.yaml:7:14: agents[0].langgraph.input: must be messages or data, not "text"`},
		{"      url: http://127.0.0.1:2024\n      assistant: agent\n      timeout: -1s\n",
			`lg.yaml:7:16: agents[0].langgraph.timeout: must be positive, got -1s`},
		{"      url: http://127.0.0.1:2024\n      assistant: agent\n      oauth2: {client_id: c, client_secret_env: HOME}\n",
			`lg.yaml:7:15: agents[0].langgraph.oauth2.token_url: required: the authorization server's token endpoint`},
		{"      url: http://127.0.0.1:2024\n      assistant: agent\n      oauth2: {token_url: http://idp.example/t, client_id: c, client_secret_env: HOME}\n",
			`lg.yaml:7:27: agents[0].langgraph.oauth2.token_url: a client secret goes to the token endpoint: use https (http only on loopback)`},
		{"      url: http://127.0.0.1:2024\n      asistant: agent\n",
			`lg.yaml:6:7: agents[0].langgraph.asistant: unknown field "asistant" (did you mean "assistant"?)`},
	} {
		c, err := config.Parse([]byte(head+tc.settings), "lg.yaml")
		if err != nil {
			t.Fatal(err)
		}
		err = node.Check(t.Context(), c, "")
		if err == nil || err.Error() != tc.want {
			t.Errorf("settings:\n%s\nCheck = %v\nwant    %s", tc.settings, err, tc.want)
		}
	}
}

// TestConfigValid: a complete configuration builds without contacting the
// server.
func TestConfigValid(t *testing.T) {
	t.Setenv("PACTUM_TEST_LANGGRAPH_KEY", "k")
	c, err := config.Parse([]byte(`agents:
  - name: graph
    type: langgraph
    langgraph:
      url: http://127.0.0.1:1
      assistant: agent
      api_key_env: PACTUM_TEST_LANGGRAPH_KEY
      stream_modes: [values, messages-tuple]
      output: state
      input: data
      timeout: 2m
`), "lg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Check(t.Context(), c, ""); err != nil {
		t.Errorf("Check = %v", err)
	}
}
