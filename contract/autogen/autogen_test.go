package autogen_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/autogen"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fromJSON(t *testing.T, c *contract.AgentContract) *contract.AgentContract {
	t.Helper()
	var out contract.AgentContract
	if err := json.Unmarshal([]byte(jsonOf(t, c)), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// canonical is a value's JSON with numbers as JSON decodes them.
func canonical(t *testing.T, v any) string {
	t.Helper()
	var x any
	if err := json.Unmarshal([]byte(jsonOf(t, v)), &x); err != nil {
		t.Fatal(err)
	}
	return jsonOf(t, x)
}

func TestMappingTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file       string
		order      []string
		assertions []string // the last step's: type contains value
		maxMsgs    any
	}{
		{"round_robin.json", []string{"writer", "critic"}, []string{"assert APPROVE"}, nil},
		{"selector.json", []string{"planning_agent", "web_search_agent", "data_analyst_agent"}, []string{"suggest TERMINATE"}, 25},
		// travel_agent hands off to flights_refunder; nobody to hotel_agent.
		{"swarm.json", []string{"travel_agent", "flights_refunder", "hotel_agent"}, []string{"suggest TERMINATE"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			a := autogen.New()
			in := read(t, tc.file)
			if !a.Detects(in) {
				t.Fatal("not detected")
			}
			c, err := a.ToContract(in, contract.AdapterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := contract.Compile(c); err != nil {
				t.Fatalf("the contract does not compile: %v", err)
			}
			if errs := contract.Validate(c, contract.ValidateOptions{}); len(errs) > 0 {
				t.Fatal(errs)
			}
			var order []string
			for i, st := range c.Steps {
				order = append(order, st.ID)
				if st.Agent != st.ID || st.Description == "" || st.Metadata[autogen.MetaSystemMessage] == "" {
					t.Errorf("step %+v", st)
				}
				if i > 0 && !reflect.DeepEqual(st.DependsOn, []string{order[i-1]}) {
					t.Errorf("%s dependsOn %v", st.ID, st.DependsOn)
				}
			}
			if !reflect.DeepEqual(order, tc.order) {
				t.Fatalf("order %v, want %v", order, tc.order)
			}
			var as []string
			for _, x := range c.Steps[len(c.Steps)-1].Assertions {
				if x.Check.Type != "contains" {
					t.Errorf("check %+v", x.Check)
				}
				as = append(as, string(x.Type)+" "+x.Check.Value.(string))
			}
			if !reflect.DeepEqual(as, tc.assertions) {
				t.Errorf("assertions %v, want %v", as, tc.assertions)
			}
			if c.Metadata[autogen.MetaMaxMessages] != tc.maxMsgs && !(tc.maxMsgs == nil && c.Metadata[autogen.MetaMaxMessages] == nil) {
				t.Errorf("maxMessages %v", c.Metadata[autogen.MetaMaxMessages])
			}

			// The team comes back as it was, from the contract in memory
			// and read back from JSON; and converts to the same contract.
			for _, from := range []*contract.AgentContract{c, fromJSON(t, c)} {
				team, err := autogen.FromContract(from)
				if err != nil {
					t.Fatal(err)
				}
				var orig any
				_ = json.Unmarshal(in, &orig)
				if a, b := jsonOf(t, orig), canonical(t, team); a != b {
					t.Fatalf("round trip:\n in:   %s\n back: %s", a, b)
				}
				again, err := autogen.ToContract(team, contract.AdapterOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if a, b := jsonOf(t, fromJSON(t, c)), jsonOf(t, fromJSON(t, again)); a != b {
					t.Fatalf("ToContract(FromContract(c)):\n c:     %s\n again: %s", a, b)
				}
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"component_type": "agent", "config": {}}`:                                                                      `component_type "agent" is not a team`,
		`{"component_type": "team", "config": {}}`:                                                                       "no participants",
		`{"component_type": "team", "config": {"participants": []}}`:                                                     "no participants",
		`{"component_type": "team", "config": {"participants": [{"config": {}}]}}`:                                       "participants[0] has no config.name",
		`{"component_type": "team", "config": {"participants": [{"config": {"name": "a"}}, {"config": {"name": "a"}}]}}`: `participants[1]: name "a" is also participants[0]'s`,
		`{"component_type": "team", "config": {"participants": 3}}`:                                                      "config.participants",
	} {
		if _, err := autogen.New().ToContract([]byte(in), contract.AdapterOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

func TestDetects(t *testing.T) {
	t.Parallel()
	a := autogen.New()
	if !a.Detects(autogen.Team{ComponentType: "team"}) || a.Detects(autogen.Team{}) || a.Detects((*autogen.Team)(nil)) {
		t.Error("Go values")
	}
	for _, in := range []string{`{}`, `{"component_type": "team"}`, `{"component_type": "team", "config": {"participants": {}}}`,
		`{"component_type": "agent", "config": {"participants": []}}`, `{"provider": "autogen_agentchat.teams.Swarm"}`} {
		if a.Detects([]byte(in)) {
			t.Errorf("%s detected", in)
		}
	}
}

// TestFromOtherContract: a contract not made from a team becomes a round
// robin of assistants, ending on the last step's contains check.
func TestFromOtherContract(t *testing.T) {
	t.Parallel()
	c := &contract.AgentContract{Version: "1.0", ID: "x", Steps: []contract.ContractStep{
		{ID: "draft", Agent: "writer-1", Description: "writes"},
		{ID: "again", Agent: "writer-1", DependsOn: []string{"draft"}},
		{ID: "review", Agent: "critic", DependsOn: []string{"again"}, Assertions: []contract.ContractAssertion{{Type: contract.Assert, Message: "m", Check: contract.Check{Type: "contains", Value: "LGTM"}}}},
	}}
	team, err := autogen.FromContract(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := autogen.ToContract(team, contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if back.Steps[0].ID != "writer_1" || back.Steps[1].ID != "writer_1_2" || back.Steps[2].ID != "critic" || back.Steps[2].Assertions[0].Check.Value != "LGTM" {
		t.Fatalf("%s", jsonOf(t, back))
	}
}

func TestResources(t *testing.T) {
	t.Parallel()
	a := autogen.New()
	st := &contract.ContractStep{ID: "critic", Agent: "critic", Description: "Review it"}
	rs, err := a.ExtractResources([]byte(`{"messages": [{"source": "user", "content": "poem", "type": "TextMessage"}, {"source": "critic", "content": "fix line 2", "type": "TextMessage"}, {"source": "writer", "content": "done"}, {"source": "critic", "content": "APPROVE", "type": "TextMessage"}], "stop_reason": "Text 'APPROVE' mentioned"}`), st)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].ID != "message_critic" || rs[0].Metadata["stopReason"] != "Text 'APPROVE' mentioned" || rs[0].Text != "APPROVE" {
		t.Fatalf("%+v", rs)
	}
	task, err := a.InjectContext(st, nil)
	if err != nil || task != "Review it\n\nContext from previous steps: none" {
		t.Fatalf("%q %v", task, err)
	}
}

// FuzzToContract: any input converts or is refused without a panic; a
// contract made validates and comes back to itself.
func FuzzToContract(f *testing.F) {
	for _, name := range []string{"round_robin.json", "selector.json", "swarm.json"} {
		b, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(b)
	}
	f.Add([]byte(`{"component_type": "team", "provider": "autogen_agentchat.teams.Swarm", "config": {"participants": [{"config": {"name": "a", "handoffs": ["b", {"target": "a"}, 3]}}, {"config": {"name": "b"}}], "termination_condition": {"provider": "autogen_agentchat.base.AndTerminationCondition", "config": {"conditions": [null, {"provider": "autogen_agentchat.conditions.TextMentionTermination", "config": {"text": 5}}]}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a := autogen.New()
		_ = a.Detects(data)
		c, err := a.ToContract(data, contract.AdapterOptions{})
		if err != nil {
			return
		}
		if errs := contract.Validate(c, contract.ValidateOptions{}); len(errs) > 0 {
			t.Fatalf("invalid contract: %v", errs)
		}
		_, _ = contract.Compile(c)
		team, err := autogen.FromContract(fromJSON(t, c))
		if err != nil {
			t.Fatal(err)
		}
		again, err := autogen.ToContract(team, contract.AdapterOptions{})
		if err != nil {
			t.Fatalf("its own team: %v", err)
		}
		if x, y := jsonOf(t, fromJSON(t, c)), jsonOf(t, fromJSON(t, again)); x != y {
			t.Fatalf("round trip:\n %s\n %s", x, y)
		}
	})
}
