// Package autogen is the protocol adapter between an AutoGen AgentChat
// team, as its declarative component JSON (team.dump_component(): a
// RoundRobinGroupChat, SelectorGroupChat or Swarm with its participants
// and termination condition), and a contract.
//
// The mapping (docs/contracts.md, "AutoGen", has it as a table):
//
//   - the team is the contract: id "contract_autogen_" + a hash of the
//     team; contract metadata autogenTeam keeps the team's component but
//     its participants (provider, label, description, config with the
//     termination condition, the model client, max_turns, …);
//   - each participant is a step, in speaking order: id and agent the
//     participant's name, description its description; each step depends
//     on the one before it. Speaking order is the participants' order
//     (RoundRobinGroupChat; SelectorGroupChat, whose model picks the
//     speaker, is recorded in that order too), or for a Swarm the order
//     its handoffs reach the participants from the first one (then those
//     no handoff reaches); step metadata autogenParticipant keeps the
//     participant's component, autogenIndex its place in the team,
//     systemMessage its system message;
//   - a TextMentionTermination (alone, or inside an And or Or
//     termination) is a contains assertion on the last step's answer:
//     the text the conversation ends with (an assert; a suggest when an
//     Or termination can also end the conversation another way); a
//     MaxMessageTermination's max_messages is contract metadata
//     maxMessages.
package autogen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// Names of the adapter.
const (
	Protocol = "autogen"
	// Version is the component format's (AgentChat 0.4 and later:
	// component version 1).
	Version          = "0.4"
	ContractIDPrefix = "contract_autogen_"
)

// Providers of the team and termination components the mapping reads.
const (
	RoundRobin  = "autogen_agentchat.teams.RoundRobinGroupChat"
	Selector    = "autogen_agentchat.teams.SelectorGroupChat"
	Swarm       = "autogen_agentchat.teams.Swarm"
	TextMention = "autogen_agentchat.conditions.TextMentionTermination"
	MaxMessage  = "autogen_agentchat.conditions.MaxMessageTermination"
	OrCondition = "autogen_agentchat.base.OrTerminationCondition"
	AndCond     = "autogen_agentchat.base.AndTerminationCondition"
	Assistant   = "autogen_agentchat.agents.AssistantAgent"
)

// Metadata keys.
const (
	MetaTeam           = "autogenTeam"        // contract: the team's component without participants
	MetaMaxMessages    = "maxMessages"        // contract
	MetaParticipant    = "autogenParticipant" // step: the participant's component
	MetaIndex          = "autogenIndex"       // step: its place among the participants
	MetaSystemMessage  = "systemMessage"      // step
	MetaAutoAssertions = "autoAssertions"     // step: how many of its first assertions the mapping made
)

// Component is AutoGen's declarative component: what made it (provider),
// what kind it is (component_type: team, agent, termination, model, …),
// and its config.
type Component struct {
	Provider         string         `json:"provider"`
	ComponentType    string         `json:"component_type,omitempty"`
	Version          int            `json:"version,omitempty"`
	ComponentVersion int            `json:"component_version,omitempty"`
	Description      string         `json:"description,omitempty"`
	Label            string         `json:"label,omitempty"`
	Config           map[string]any `json:"config"`
}

// Team is a team's component.
type Team = Component

// Adapter is the AutoGen protocol adapter.
type Adapter struct{}

var (
	_ contract.ProtocolAdapter = Adapter{}
	_ contract.Detector        = Adapter{}
)

// New returns the adapter.
func New() Adapter { return Adapter{} }

func (Adapter) Protocol() string { return Protocol }
func (Adapter) Version() string  { return Version }
func (Adapter) Description() string {
	return "AutoGen AgentChat: a team's component JSON (dump_component()) as contract steps in speaking order"
}

// LooksFor implements contract.Detector.
func (Adapter) LooksFor() string {
	return `an object with "component_type": "team" and "config" holding "participants" (a list)`
}

// Detects implements contract.Detector: a Team, or an object whose
// component_type is "team" and whose config has a participants list.
func (Adapter) Detects(v any) bool {
	switch x := v.(type) {
	case Component:
		return x.ComponentType == "team"
	case *Component:
		return x != nil && x.ComponentType == "team"
	}
	m, ok := contract.JSONObject(v)
	if !ok {
		return false
	}
	var ct string
	if json.Unmarshal(m["component_type"], &ct) != nil || ct != "team" {
		return false
	}
	var cfg map[string]json.RawMessage
	if json.Unmarshal(m["config"], &cfg) != nil {
		return false
	}
	return contract.JSONKind(cfg["participants"]) == "array"
}

// ToContract implements contract.ProtocolAdapter: workflow is a Team or
// its JSON.
func (Adapter) ToContract(v any, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	t, err := contract.Decode[Team](v)
	if err != nil {
		return nil, fmt.Errorf("autogen: %w", err)
	}
	return ToContract(t, opts)
}

// FromContract implements contract.ProtocolAdapter; it returns a Team.
func (Adapter) FromContract(c *contract.AgentContract) (any, error) { return FromContract(c) }

// Participants returns a team's participants.
func Participants(t Team) ([]Component, error) {
	raw, ok := t.Config["participants"]
	if !ok {
		return nil, errors.New("the team's config has no participants")
	}
	var ps []Component
	if err := convert.Into(raw, &ps); err != nil {
		return nil, fmt.Errorf("config.participants: %w", err)
	}
	return ps, nil
}

// ToContract converts a team as the package documentation says. A team
// without participants, a participant without a name, or two of one name
// is an error. AutoAssertions and ResourceMappings are not used.
func ToContract(t Team, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	if t.ComponentType != "team" {
		return nil, fmt.Errorf("autogen: component_type %q is not a team", t.ComponentType)
	}
	ps, err := Participants(t)
	if err != nil {
		return nil, fmt.Errorf("autogen: %w", err)
	}
	if len(ps) == 0 {
		return nil, errors.New("autogen: the team has no participants")
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = convert.String(p.Config, "name")
		if names[i] == "" {
			return nil, fmt.Errorf("autogen: config.participants[%d] has no config.name", i)
		}
		if j := slices.Index(names[:i], names[i]); j >= 0 {
			return nil, fmt.Errorf("autogen: config.participants[%d]: name %q is also participants[%d]'s", i, names[i], j)
		}
	}
	order := speakingOrder(t.Provider, ps, names)

	team := t
	team.Config = convert.Object(t.Config)
	delete(team.Config, "participants")
	c := &contract.AgentContract{
		Version:    "1.0",
		ID:         ContractIDPrefix + teamHash(team, ps),
		Protocol:   Protocol,
		Strictness: opts.Strictness,
		Metadata:   map[string]any{MetaTeam: convert.JSON(team)},
	}
	if opts.MaxSteps > 0 && len(order) > opts.MaxSteps {
		order = order[:opts.MaxSteps]
		c.Metadata["truncatedFrom"] = len(ps)
	}
	var ids []string
	for k, i := range order {
		p := ps[i]
		st := contract.ContractStep{
			ID:          names[i],
			Agent:       names[i],
			Description: convert.String(p.Config, "description"),
			Metadata:    map[string]any{MetaParticipant: convert.JSON(p), MetaIndex: i},
		}
		if st.Description == "" {
			st.Description = p.Description
		}
		if sm := convert.String(p.Config, "system_message"); sm != "" {
			st.Metadata[MetaSystemMessage] = sm
		}
		if k > 0 {
			st.DependsOn = []string{ids[k-1]}
		}
		ids = append(ids, st.ID)
		c.Steps = append(c.Steps, st)
	}
	term := convert.Object(t.Config["termination_condition"])
	if n, ok := maxMessages(term); ok {
		c.Metadata[MetaMaxMessages] = n
	}
	last := &c.Steps[len(c.Steps)-1]
	for _, m := range textMentions(term, false) {
		typ := contract.Assert
		if m.alternative {
			typ = contract.Suggest
		}
		last.Assertions = append(last.Assertions, contract.ContractAssertion{
			Type: typ, Condition: fmt.Sprintf("the conversation ends with %q", m.text),
			Message: fmt.Sprintf("the last answer mentions %q (the team's TextMentionTermination)", m.text),
			Check:   contract.Check{Type: "contains", Value: m.text},
		})
	}
	if n := len(last.Assertions); n > 0 {
		last.Metadata[MetaAutoAssertions] = n
	}
	label := t.Label
	if label == "" {
		label = t.Provider[strings.LastIndex(t.Provider, ".")+1:]
	}
	c.Description = "AutoGen " + label + ": " + strings.Join(ids, " → ")
	return c, nil
}

// speakingOrder returns the participants' indexes in speaking order: a
// Swarm's from its first participant along the handoffs (in their
// order), then the ones no handoff reaches; any other team's as listed.
func speakingOrder(provider string, ps []Component, names []string) []int {
	order := make([]int, 0, len(ps))
	if provider != Swarm {
		for i := range ps {
			order = append(order, i)
		}
		return order
	}
	seen := make([]bool, len(ps))
	var visit func(i int)
	visit = func(i int) {
		// The order of first visits along handoffs, without recursion
		// deeper than the participants (each is visited once).
		queue := []int{i}
		seen[i] = true
		for len(queue) > 0 {
			j := queue[0]
			queue = queue[1:]
			order = append(order, j)
			for _, target := range handoffs(ps[j]) {
				k := slices.Index(names, target)
				if k >= 0 && !seen[k] {
					seen[k] = true
					queue = append(queue, k)
				}
			}
		}
	}
	for i := range ps {
		if !seen[i] {
			visit(i)
		}
	}
	return order
}

// handoffs returns the names a participant hands off to: its config's
// handoffs, each a name or an object with target.
func handoffs(p Component) []string {
	var out []string
	list, _ := convert.JSON(p.Config["handoffs"]).([]any)
	for _, h := range list {
		switch x := h.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			out = append(out, convert.String(x, "target"))
		}
	}
	return out
}

type mention struct {
	text        string
	alternative bool // inside an Or: the conversation may end otherwise
}

// textMentions finds the TextMentionTerminations of a termination
// condition, through And and Or conditions.
func textMentions(term map[string]any, inOr bool) []mention {
	if term == nil {
		return nil
	}
	cfg := convert.Object(term["config"])
	switch provider := convert.String(term, "provider"); provider {
	case TextMention:
		if s := convert.String(cfg, "text"); s != "" {
			return []mention{{text: s, alternative: inOr}}
		}
	case OrCondition, AndCond:
		conds, _ := cfg["conditions"].([]any)
		var out []mention
		for _, sub := range conds {
			out = append(out, textMentions(convert.Object(sub), inOr || provider == OrCondition && len(conds) > 1)...)
		}
		return out
	}
	return nil
}

// maxMessages finds a MaxMessageTermination's max_messages (the smallest
// when there are several).
func maxMessages(term map[string]any) (int, bool) {
	if term == nil {
		return 0, false
	}
	cfg := convert.Object(term["config"])
	switch convert.String(term, "provider") {
	case MaxMessage:
		return convert.Int(cfg, "max_messages")
	case OrCondition, AndCond:
		conds, _ := cfg["conditions"].([]any)
		best, found := 0, false
		for _, sub := range conds {
			if n, ok := maxMessages(convert.Object(sub)); ok && (!found || n < best) {
				best, found = n, true
			}
		}
		return best, found
	}
	return 0, false
}

// teamHash names a team by its content, so that the same team always
// makes the same contract id (participants are hashed as Components,
// as FromContract gives them back).
func teamHash(team Team, ps []Component) string {
	b, _ := json.Marshal([]any{convert.JSON(team), convert.JSON(ps)})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// FromContract converts a contract back to a team. A contract made by
// ToContract gives back the team's component (autogenTeam) with its
// participants in their places (autogenParticipant, autogenIndex). Any
// other contract gives a RoundRobinGroupChat of one AssistantAgent per
// step (name the step's agent, else its id, made an identifier, with
// "_2", "_3", … on a name taken; description the step's), in the steps'
// order, ending on a
// TextMentionTermination of the last step's first contains check, if it
// has one.
func FromContract(c *contract.AgentContract) (Team, error) {
	if c == nil {
		return Team{}, errors.New("autogen: nil contract")
	}
	var t Team
	if raw, ok := c.Metadata[MetaTeam]; ok {
		if err := convert.Into(raw, &t); err != nil {
			return Team{}, fmt.Errorf("autogen: metadata %s: %w", MetaTeam, err)
		}
	} else {
		t = Team{Provider: RoundRobin, ComponentType: "team", Version: 1, ComponentVersion: 1, Label: "RoundRobinGroupChat",
			Config: map[string]any{}}
		if len(c.Steps) > 0 {
			last := c.Steps[len(c.Steps)-1]
			for _, a := range last.Assertions {
				if s, ok := a.Check.Value.(string); ok && a.Check.Type == "contains" && s != "" {
					t.Config["termination_condition"] = map[string]any{
						"provider": TextMention, "component_type": "termination", "version": 1, "component_version": 1,
						"label": "TextMentionTermination", "config": map[string]any{"text": s},
					}
					break
				}
			}
		}
	}
	if t.Config == nil {
		t.Config = map[string]any{}
	}
	type placed struct {
		index int
		p     any
	}
	var ps []placed
	names := map[string]bool{}
	for i, st := range c.Steps {
		idx, ok := convert.Int(st.Metadata, MetaIndex)
		if !ok {
			idx = i
		}
		if p := convert.Object(st.Metadata[MetaParticipant]); p != nil {
			ps = append(ps, placed{idx, p})
			continue
		}
		name := st.Agent
		if name == "" {
			name = st.ID
		}
		ps = append(ps, placed{idx, map[string]any{
			"provider": Assistant, "component_type": "agent", "version": 1, "component_version": 1, "label": "AssistantAgent",
			"config": map[string]any{"name": convert.Unique(names, identifier(name)), "description": st.Description},
		}})
	}
	slices.SortStableFunc(ps, func(a, b placed) int { return a.index - b.index })
	list := make([]any, len(ps))
	for i, p := range ps {
		list[i] = p.p
	}
	t.Config["participants"] = list
	return t, nil
}

// identifier makes a Python identifier of name (AutoGen refuses other
// agent names).
func identifier(name string) string {
	id := strings.ReplaceAll(convert.ID("", name), "-", "_")
	if id == "" || id[0] >= '0' && id[0] <= '9' {
		id = "agent_" + id
	}
	return id
}
