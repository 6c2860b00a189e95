// Package a2a is the protocol adapter between an A2A 1.0 task (with the
// agent card of the agent that runs it, when known) and a contract, on the
// official SDK's types (github.com/a2aproject/a2a-go/v2/a2a).
//
// The mapping (docs/contracts.md, "Protocol adapters", has it as a table):
//
//   - the task is the contract: its id is the contract's id
//     ("contract_a2a_" + task id) and metadata a2aTaskId; its context id is
//     metadata a2aContextId; its state is metadata a2aState (the contract's
//     and the step's);
//   - the task is one step, StepID, run by the agent card's name (else
//     DefaultAgent); its description is the text of the task's first user
//     message; it creates one artifact resource per artifact of the task;
//   - each part of that first user message is a resource (metadata
//     a2aRole "input", a2aPart "text", "data" or "file", the part's
//     content in metadata text, data, raw; a file's URL is the location):
//     a text part a message resource of format "text", a data part a data
//     resource of format "json", a file part a file resource of the part's
//     media type;
//   - each artifact is an artifact resource: location its name (else its
//     id), metadata a2aArtifactId, name, description and parts;
//   - the agent card's name, description, version, first interface URL,
//     input and output modes, capabilities and skills are contract metadata
//     (a2aAgent…); the skills' ids are the step's metadata capabilities.
//
// FromContract gives back all of that. With PreserveMetadata the task's
// metadata, its history after the first user message and the whole agent
// card are kept as well; without it they are not.
package a2a

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// Names of the adapter.
const (
	// Protocol is the adapter's protocol name.
	Protocol = "a2a"
	// Version is the A2A protocol version it speaks.
	Version = string(sdk.Version)
	// StepID is the id of the one step a task becomes.
	StepID = "step_init"
	// DefaultAgent runs the step when no agent card is given.
	DefaultAgent = "a2a_agent"
	// ContractIDPrefix is put before the task id to make the contract id.
	ContractIDPrefix = "contract_a2a_"
)

// Contract metadata keys.
const (
	MetaTaskID           = "a2aTaskId"
	MetaContextID        = "a2aContextId"
	MetaState            = "a2aState"
	MetaMessageID        = "a2aMessageId"
	MetaAgentName        = "a2aAgentName"
	MetaAgentDescription = "a2aAgentDescription"
	MetaAgentVersion     = "a2aAgentVersion"
	MetaAgentURL         = "a2aAgentUrl"
	MetaInputModes       = "a2aInputModes"
	MetaOutputModes      = "a2aOutputModes"
	MetaCapabilities     = "a2aCapabilities"
	MetaSkills           = "a2aSkills"
	// Kept only with PreserveMetadata.
	MetaTaskMetadata = "a2aTaskMetadata"
	MetaHistory      = "a2aHistory"
	MetaAgentCard    = "a2aAgentCard"
)

// Resource metadata keys.
const (
	MetaRole       = "a2aRole" // "input" for the first user message's parts
	MetaPart       = "a2aPart" // "text", "data" or "file"
	MetaArtifactID = "a2aArtifactId"
)

// Workflow is what the adapter converts: a task and, optionally, the card
// of the agent that runs it.
type Workflow struct {
	Task      *sdk.Task      `json:"task"`
	AgentCard *sdk.AgentCard `json:"agentCard,omitempty"`
}

// Adapter is the A2A protocol adapter.
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
	return "A2A 1.0: a task (and its agent's card) as a one-step contract; artifacts and message parts as resources"
}

// LooksFor implements contract.Detector.
func (Adapter) LooksFor() string {
	return `an object with "task" (an A2A task: "id", "status", or a 0.2 "message" with "parts") and optional "agentCard", or a bare A2A task ("id" and "status" with "state")`
}

// Detects implements contract.Detector.
func (Adapter) Detects(v any) bool {
	switch x := v.(type) {
	case Workflow:
		return x.Task != nil
	case *Workflow:
		return x != nil && x.Task != nil
	case *sdk.Task:
		return x != nil
	case sdk.Task:
		return true
	}
	m, ok := contract.JSONObject(v)
	if !ok {
		return false
	}
	if raw, ok := m["task"]; ok {
		t, ok := contract.JSONObject(raw)
		if !ok {
			return false
		}
		_, id := t["id"]
		_, st := t["status"]
		return id || st || hasParts(t["message"])
	}
	return isBareTask(m)
}

// hasParts reports whether raw is a message with a list of parts: the
// 0.2 shape of a task that has only the message that starts it.
func hasParts(raw json.RawMessage) bool {
	m, ok := contract.JSONObject(raw)
	return ok && contract.JSONKind(m["parts"]) == "array"
}

func isBareTask(m map[string]json.RawMessage) bool {
	if _, ok := m["id"]; !ok {
		return false
	}
	st, ok := contract.JSONObject(m["status"])
	if !ok {
		return false
	}
	_, ok = st["state"]
	return ok
}

// workflow converts the any-typed input of ToContract.
func workflow(v any) (Workflow, error) {
	switch x := v.(type) {
	case Workflow:
		return x, nil
	case *Workflow:
		if x != nil {
			return *x, nil
		}
	case *sdk.Task:
		if x != nil {
			return Workflow{Task: x}, nil
		}
	case sdk.Task:
		return Workflow{Task: &x}, nil
	}
	m, err := generic(v)
	if err != nil {
		return Workflow{}, err
	}
	if t, ok := m["task"].(map[string]any); ok {
		upgradeTask(t)
		return contract.Decode[Workflow](m)
	}
	if raw, ok := contract.JSONObject(m); ok && isBareTask(raw) {
		upgradeTask(m)
		t, err := contract.Decode[sdk.Task](m)
		if err != nil {
			return Workflow{}, err
		}
		return Workflow{Task: &t}, nil
	}
	return contract.Decode[Workflow](m)
}

func isObjectWith(m map[string]json.RawMessage, key string) bool {
	_, ok := m[key]
	return ok
}

// ToContract implements contract.ProtocolAdapter: workflow is a Workflow,
// an *sdk.Task, or either as JSON, of A2A 1.0 or of the 0.2 and 0.3
// shapes (Upgrade: a 0.2 task's "message" is its input message, its
// "sessionId" its context id; a task given only as its message, without
// an id, is named "task_" and a hash of its content).
func (Adapter) ToContract(v any, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	w, err := workflow(v)
	if err != nil {
		return nil, fmt.Errorf("a2a: %w", err)
	}
	return ToContract(w, opts)
}

// FromContract implements contract.ProtocolAdapter; it returns a Workflow.
func (Adapter) FromContract(c *contract.AgentContract) (any, error) {
	return FromContract(c)
}

// ToContract converts an A2A task (and its agent's card) to a contract,
// as the package documentation says. AutoAssertions adds, for each
// artifact of the task, an assertion that the step produces it (exists,
// target artifact:NAME), and a schema inferred from each input data part
// on its resource. ResourceMappings keys: "text", "data", "file",
// "artifact".
func ToContract(w Workflow, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	t := w.Task
	if t == nil {
		return nil, errors.New("a2a: the workflow has no task")
	}
	if t.ID == "" {
		if len(t.History) == 0 && len(t.Artifacts) == 0 {
			return nil, errors.New("a2a: the task has no id")
		}
		// A 0.2 task given as only its message: named by its content, so
		// the same task always makes the same contract id.
		cp := *t
		cp.ID = sdk.TaskID(contentID(t))
		t = &cp
	}
	state := t.Status.State
	if state == sdk.TaskStateUnspecified {
		state = sdk.TaskStateSubmitted
	}
	c := &contract.AgentContract{
		Version:    "1.0",
		ID:         ContractIDPrefix + string(t.ID),
		Protocol:   Protocol,
		Strictness: opts.Strictness,
		Metadata: map[string]any{
			MetaTaskID: string(t.ID),
			MetaState:  string(state),
		},
	}
	if t.ContextID != "" {
		c.Metadata[MetaContextID] = t.ContextID
	}
	step := contract.ContractStep{
		ID:       StepID,
		Agent:    DefaultAgent,
		Metadata: map[string]any{MetaState: string(state)},
	}
	seen := map[string]bool{}

	msg, rest := inputMessage(t.History)
	if msg != nil {
		c.Metadata[MetaMessageID] = msg.ID
		step.Metadata["role"] = string(msg.Role)
		var texts []string
		for i, p := range msg.Parts {
			if p == nil {
				return nil, fmt.Errorf("a2a: task message part %d is null", i)
			}
			r, err := inputResource(p, i, seen, opts)
			if err != nil {
				return nil, fmt.Errorf("a2a: task message part %d: %w", i, err)
			}
			if s, ok := p.Content.(sdk.Text); ok {
				texts = append(texts, string(s))
			}
			c.Resources = append(c.Resources, r)
		}
		step.Description = strings.Join(texts, "\n")
	}
	for i, a := range t.Artifacts {
		if a == nil {
			return nil, fmt.Errorf("a2a: artifact %d is null", i)
		}
		typ, err := opts.MapResourceType("artifact", contract.ResourceArtifact)
		if err != nil {
			return nil, fmt.Errorf("a2a: %w", err)
		}
		r := contract.ContractResource{
			ID:       convert.Unique(seen, ArtifactResourceID(a)),
			Type:     typ,
			Location: artifactName(a),
			Format:   partsFormat(a.Parts),
			Metadata: map[string]any{
				MetaArtifactID: string(a.ID),
				"parts":        convert.JSON(a.Parts),
			},
		}
		if a.Name != "" {
			r.Metadata["name"] = a.Name
		}
		if a.Description != "" {
			r.Metadata["description"] = a.Description
		}
		if opts.PreserveMetadata && len(a.Metadata) > 0 {
			r.Metadata["a2aMetadata"] = convert.JSON(a.Metadata)
		}
		c.Resources = append(c.Resources, r)
		step.Creates = append(step.Creates, r.ID)
		if opts.AutoAssertions {
			step.Assertions = append(step.Assertions, contract.ContractAssertion{
				Type:    contract.Assert,
				Message: fmt.Sprintf("the task produces artifact %s", artifactName(a)),
				Check:   contract.Check{Type: "exists", Target: "artifact:" + artifactName(a)},
			})
		}
	}
	if card := w.AgentCard; card != nil {
		if card.Name != "" {
			step.Agent = card.Name
		}
		c.Description = card.Description
		putCard(c.Metadata, card)
		if ids := skillIDs(card.Skills); len(ids) > 0 {
			step.Metadata["capabilities"] = ids
		}
		if opts.PreserveMetadata {
			c.Metadata[MetaAgentCard] = convert.JSON(card)
		}
	}
	if opts.PreserveMetadata {
		if len(t.Metadata) > 0 {
			c.Metadata[MetaTaskMetadata] = convert.JSON(t.Metadata)
		}
		if len(rest) > 0 {
			c.Metadata[MetaHistory] = convert.JSON(rest)
		}
	}
	c.Steps = []contract.ContractStep{step}
	return c, nil
}

// contentID names a task that has no id by a hash of its JSON.
func contentID(t *sdk.Task) string {
	b, _ := json.Marshal(t)
	sum := sha256.Sum256(b)
	return "task_" + hex.EncodeToString(sum[:6])
}

// inputMessage returns the task's first user message (else its first
// message) and the rest of the history.
func inputMessage(history []*sdk.Message) (*sdk.Message, []*sdk.Message) {
	at := -1
	for i, m := range history {
		if m != nil && m.Role == sdk.MessageRoleUser {
			at = i
			break
		}
	}
	if at < 0 {
		for i, m := range history {
			if m != nil {
				at = i
				break
			}
		}
	}
	if at < 0 {
		return nil, nil
	}
	rest := make([]*sdk.Message, 0, len(history)-1)
	for i, m := range history {
		if i != at && m != nil {
			rest = append(rest, m)
		}
	}
	return history[at], rest
}

// partKind names a part's kind as the mapping table does.
func partKind(p *sdk.Part) string {
	switch p.Content.(type) {
	case sdk.Text:
		return "text"
	case sdk.Data:
		return "data"
	case sdk.URL, sdk.Raw:
		return "file"
	}
	return ""
}

func inputResource(p *sdk.Part, i int, seen map[string]bool, opts contract.AdapterOptions) (contract.ContractResource, error) {
	kind := partKind(p)
	r := contract.ContractResource{Metadata: map[string]any{MetaRole: "input", MetaPart: kind}}
	if p.MediaType != "" {
		r.Metadata["mediaType"] = p.MediaType
	}
	if p.Filename != "" {
		r.Metadata["filename"] = p.Filename
	}
	if opts.PreserveMetadata && len(p.Metadata) > 0 {
		r.Metadata["a2aMetadata"] = convert.JSON(p.Metadata)
	}
	var def contract.ResourceType
	switch x := p.Content.(type) {
	case sdk.Text:
		def = contract.ResourceMessage
		r.ID = fmt.Sprintf("text_%d", i)
		r.Format = "text"
		r.Metadata["text"] = string(x)
	case sdk.Data:
		def = contract.ResourceData
		r.ID = fmt.Sprintf("data_%d", i)
		r.Format = "json"
		r.Metadata["data"] = convert.JSON(x.Value)
		if opts.AutoAssertions {
			r.Schema = convert.InferSchema(x.Value)
		}
	case sdk.URL:
		def = contract.ResourceFile
		r.ID = fileID(p.Filename, i)
		r.Location = string(x)
		r.Format = p.MediaType
	case sdk.Raw:
		def = contract.ResourceFile
		r.ID = fileID(p.Filename, i)
		r.Format = p.MediaType
		r.Metadata["raw"] = base64.StdEncoding.EncodeToString(x)
	default:
		return r, errors.New("a part with no content")
	}
	typ, err := opts.MapResourceType(kind, def)
	if err != nil {
		return r, err
	}
	r.Type = typ
	r.ID = convert.Unique(seen, r.ID)
	return r, nil
}

func fileID(filename string, i int) string {
	if filename != "" {
		return convert.ID("file_", filename)
	}
	return fmt.Sprintf("file_%d", i)
}

// ArtifactResourceID is the id of the resource an artifact becomes:
// "artifact_" and its name (else its id).
func ArtifactResourceID(a *sdk.Artifact) string {
	return convert.ID("artifact_", artifactName(a))
}

func artifactName(a *sdk.Artifact) string {
	if a.Name != "" {
		return a.Name
	}
	return string(a.ID)
}

// partsFormat is the format of an artifact: the first part's media type,
// else "json" for data and "text" for text.
func partsFormat(parts []*sdk.Part) string {
	for _, p := range parts {
		if p != nil && p.MediaType != "" {
			return p.MediaType
		}
	}
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch p.Content.(type) {
		case sdk.Data:
			return "json"
		case sdk.Text:
			return "text"
		}
	}
	return ""
}

func putCard(m map[string]any, card *sdk.AgentCard) {
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	m[MetaAgentName] = card.Name
	set(MetaAgentDescription, card.Description)
	set(MetaAgentVersion, card.Version)
	for _, in := range card.SupportedInterfaces {
		if in != nil && in.URL != "" {
			m[MetaAgentURL] = in.URL
			break
		}
	}
	if len(card.DefaultInputModes) > 0 {
		m[MetaInputModes] = convert.JSON(card.DefaultInputModes)
	}
	if len(card.DefaultOutputModes) > 0 {
		m[MetaOutputModes] = convert.JSON(card.DefaultOutputModes)
	}
	if caps := convert.Object(card.Capabilities); len(caps) > 0 {
		m[MetaCapabilities] = caps
	}
	if len(card.Skills) > 0 {
		m[MetaSkills] = convert.JSON(card.Skills)
	}
}

func skillIDs(skills []sdk.AgentSkill) []string {
	var out []string
	for _, s := range skills {
		if s.ID != "" {
			out = append(out, s.ID)
		}
	}
	return out
}

// FromContract converts a contract back to an A2A task (and agent card):
// a contract made by ToContract comes back as the package documentation
// says. Any other contract becomes a submitted task whose id is the
// contract's, whose user message is the first step's description and
// whose artifacts are the contract's artifact resources (without parts);
// its card is nil.
func FromContract(c *contract.AgentContract) (Workflow, error) {
	if c == nil {
		return Workflow{}, errors.New("a2a: nil contract")
	}
	md := c.Metadata
	t := &sdk.Task{
		ID:        sdk.TaskID(strings.TrimPrefix(c.ID, ContractIDPrefix)),
		ContextID: convert.String(md, MetaContextID),
		Status:    sdk.TaskStatus{State: sdk.TaskStateSubmitted},
	}
	if id := convert.String(md, MetaTaskID); id != "" {
		t.ID = sdk.TaskID(id)
	}
	if s := convert.String(md, MetaState); s != "" {
		t.Status.State = sdk.TaskState(s)
	}
	var parts sdk.ContentParts
	for i := range c.Resources {
		r := &c.Resources[i]
		if convert.String(r.Metadata, MetaRole) == "input" {
			p, err := partFromResource(r)
			if err != nil {
				return Workflow{}, fmt.Errorf("a2a: resources[%d]: %w", i, err)
			}
			parts = append(parts, p)
			continue
		}
		if _, ok := r.Metadata[MetaArtifactID]; ok || (r.Type == contract.ResourceArtifact && convert.String(r.Metadata, MetaPart) == "") {
			a, err := artifactFromResource(r)
			if err != nil {
				return Workflow{}, fmt.Errorf("a2a: resources[%d]: %w", i, err)
			}
			t.Artifacts = append(t.Artifacts, a)
		}
	}
	msgID, hadMsg := md[MetaMessageID].(string)
	if !hadMsg && len(c.Steps) > 0 && c.Steps[0].Description != "" {
		parts = sdk.ContentParts{sdk.NewTextPart(c.Steps[0].Description)}
		msgID = "msg_" + string(t.ID)
		hadMsg = true
	}
	if hadMsg {
		role := sdk.MessageRoleUser
		if len(c.Steps) > 0 {
			if r := convert.String(c.Steps[0].Metadata, "role"); r != "" {
				role = sdk.MessageRole(r)
			}
		}
		if parts == nil {
			parts = sdk.ContentParts{}
		}
		t.History = []*sdk.Message{{ID: msgID, Role: role, Parts: parts}}
	}
	if h, ok := md[MetaHistory]; ok {
		var rest []*sdk.Message
		if err := convert.Into(h, &rest); err != nil {
			return Workflow{}, fmt.Errorf("a2a: metadata %s: %w", MetaHistory, err)
		}
		t.History = append(t.History, rest...)
	}
	if m, ok := md[MetaTaskMetadata]; ok {
		if err := convert.Into(m, &t.Metadata); err != nil {
			return Workflow{}, fmt.Errorf("a2a: metadata %s: %w", MetaTaskMetadata, err)
		}
	}
	card, err := cardFromContract(c)
	if err != nil {
		return Workflow{}, err
	}
	return Workflow{Task: t, AgentCard: card}, nil
}

func partFromResource(r *contract.ContractResource) (*sdk.Part, error) {
	md := r.Metadata
	p := &sdk.Part{Filename: convert.String(md, "filename"), MediaType: convert.String(md, "mediaType")}
	switch kind := convert.String(md, MetaPart); kind {
	case "text":
		p.Content = sdk.Text(convert.String(md, "text"))
	case "data":
		p.Content = sdk.Data{Value: md["data"]}
	case "file":
		if raw, ok := md["raw"].(string); ok {
			b, err := base64.StdEncoding.DecodeString(raw)
			if err != nil {
				return nil, fmt.Errorf("metadata raw: %w", err)
			}
			p.Content = sdk.Raw(b)
		} else {
			p.Content = sdk.URL(r.Location)
		}
	default:
		return nil, fmt.Errorf("metadata %s: unknown part kind %q", MetaPart, kind)
	}
	if m, ok := md["a2aMetadata"]; ok {
		if err := convert.Into(m, &p.Metadata); err != nil {
			return nil, fmt.Errorf("metadata a2aMetadata: %w", err)
		}
	}
	return p, nil
}

func artifactFromResource(r *contract.ContractResource) (*sdk.Artifact, error) {
	md := r.Metadata
	a := &sdk.Artifact{
		ID:          sdk.ArtifactID(r.ID),
		Name:        convert.String(md, "name"),
		Description: convert.String(md, "description"),
		Parts:       sdk.ContentParts{},
	}
	if id, ok := md[MetaArtifactID].(string); ok {
		a.ID = sdk.ArtifactID(id)
	} else if a.Name == "" {
		a.Name = r.Location
	}
	if parts, ok := md["parts"]; ok && parts != nil {
		if err := convert.Into(parts, &a.Parts); err != nil {
			return nil, fmt.Errorf("metadata parts: %w", err)
		}
	}
	if m, ok := md["a2aMetadata"]; ok {
		if err := convert.Into(m, &a.Metadata); err != nil {
			return nil, fmt.Errorf("metadata a2aMetadata: %w", err)
		}
	}
	return a, nil
}

func cardFromContract(c *contract.AgentContract) (*sdk.AgentCard, error) {
	md := c.Metadata
	if raw, ok := md[MetaAgentCard]; ok {
		var card sdk.AgentCard
		if err := convert.Into(raw, &card); err != nil {
			return nil, fmt.Errorf("a2a: metadata %s: %w", MetaAgentCard, err)
		}
		return &card, nil
	}
	name, ok := md[MetaAgentName].(string)
	if !ok {
		return nil, nil
	}
	card := &sdk.AgentCard{
		Name:               name,
		Description:        convert.String(md, MetaAgentDescription),
		Version:            convert.String(md, MetaAgentVersion),
		DefaultInputModes:  convert.Strings(md, MetaInputModes),
		DefaultOutputModes: convert.Strings(md, MetaOutputModes),
	}
	if u := convert.String(md, MetaAgentURL); u != "" {
		card.SupportedInterfaces = []*sdk.AgentInterface{sdk.NewAgentInterface(u, sdk.TransportProtocolJSONRPC)}
	}
	if caps, ok := md[MetaCapabilities]; ok {
		if err := convert.Into(caps, &card.Capabilities); err != nil {
			return nil, fmt.Errorf("a2a: metadata %s: %w", MetaCapabilities, err)
		}
	}
	if skills, ok := md[MetaSkills]; ok {
		if err := convert.Into(skills, &card.Skills); err != nil {
			return nil, fmt.Errorf("a2a: metadata %s: %w", MetaSkills, err)
		}
	}
	return card, nil
}
