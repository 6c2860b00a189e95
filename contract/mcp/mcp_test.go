package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"testing/quick"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/mcp"
	"github.com/pactum/pactum/task"
)

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func roundTrip(t *testing.T, s mcp.Sequence, opts contract.AdapterOptions) (mcp.Sequence, *contract.AgentContract) {
	t.Helper()
	c, err := mcp.ToContract(s, opts)
	if err != nil {
		t.Fatalf("ToContract: %v", err)
	}
	if _, err := contract.Compile(c); err != nil {
		t.Fatalf("the contract does not compile: %v", err)
	}
	back, err := mcp.FromContract(c)
	if err != nil {
		t.Fatalf("FromContract: %v", err)
	}
	var decoded contract.AgentContract
	if err := json.Unmarshal([]byte(jsonOf(t, c)), &decoded); err != nil {
		t.Fatal(err)
	}
	back2, err := mcp.FromContract(&decoded)
	if err != nil {
		t.Fatalf("FromContract (decoded): %v", err)
	}
	if a, b := jsonOf(t, back), jsonOf(t, back2); a != b {
		t.Fatalf("the contract read back from JSON converts differently:\n in memory: %s\n from JSON: %s", a, b)
	}
	return back, c
}

var forecastSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"tempC": map[string]any{"type": "number"}, "summary": map[string]any{"type": "string"}},
	"required":   []any{"tempC"},
}

func weather() mcp.Sequence {
	return mcp.Sequence{
		Tools: []*sdk.Tool{
			{Name: "geocode", Description: "city to coordinates", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}},
			{Name: "forecast", Title: "Forecast", Description: "weather at coordinates", InputSchema: map[string]any{"type": "object"}, OutputSchema: forecastSchema},
			{Name: "unused", Description: "never called", InputSchema: map[string]any{"type": "object"}},
		},
		Calls: []mcp.Call{
			{Name: "geocode", Arguments: map[string]any{"city": "Lyon"}},
			{Name: "forecast", Arguments: map[string]any{"lat": 45.76, "lon": 4.83, "source": "file:///data/stations.csv"}},
			{Name: "forecast", Arguments: map[string]any{"lat": 48.85, "lon": 2.35}},
		},
		Resources: []*sdk.Resource{
			{URI: "file:///data/stations.csv", Name: "stations", MIMEType: "text/csv", Description: "weather stations"},
			{URI: "https://api.example.com/alerts", Name: "alerts", Title: "Alerts"},
		},
	}
}

func TestMappingTable(t *testing.T) {
	s := weather()
	back, c := roundTrip(t, s, contract.AdapterOptions{})
	if got, want := jsonOf(t, back), jsonOf(t, s); got != want {
		t.Fatalf("round trip:\n got  %s\n want %s", got, want)
	}
	if c.Protocol != "mcp" || !strings.HasPrefix(c.ID, mcp.ContractIDPrefix) || len(c.Steps) != 3 {
		t.Fatalf("contract %s", jsonOf(t, c))
	}
	c2, _ := mcp.ToContract(weather(), contract.AdapterOptions{})
	if c2.ID != c.ID {
		t.Fatal("the same sequence made two contract ids")
	}
	st := c.Steps[1]
	if st.ID != "step_1_forecast" || st.Agent != "forecast" || st.Description != "weather at coordinates" ||
		strings.Join(st.DependsOn, ",") != "step_0_geocode" || st.Metadata[mcp.MetaTool] != "forecast" || len(st.Consumes) != 0 {
		t.Fatalf("step: %s", jsonOf(t, st))
	}
	if len(st.Assertions) != 1 || st.Assertions[0].Check.Type != "schema_match" || st.Assertions[0].Check.Target != "output" ||
		jsonOf(t, st.Assertions[0].Check.Schema) != jsonOf(t, forecastSchema) {
		t.Fatalf("output schema assertion: %s", jsonOf(t, st.Assertions))
	}
	if len(c.Steps[0].Assertions) != 0 || c.Steps[0].DependsOn != nil {
		t.Fatalf("first step: %s", jsonOf(t, c.Steps[0]))
	}
	if refs := st.Metadata[mcp.MetaResourceRefs].([]string); len(refs) != 1 || refs[0] != c.Resources[0].ID {
		t.Fatalf("resource refs %v", refs)
	}
	r0, r1 := c.Resources[0], c.Resources[1]
	if r0.Type != contract.ResourceFile || r0.Location != "/data/stations.csv" || r0.Format != "text/csv" ||
		r1.Type != contract.ResourceArtifact || r1.Location != "https://api.example.com/alerts" {
		t.Fatalf("resources: %s", jsonOf(t, c.Resources))
	}
	if c.Metadata[mcp.MetaUnusedTools] == nil {
		t.Fatal("the unused tool is not kept")
	}
}

func TestOutputSchemaAssertionChecksTheOutput(t *testing.T) {
	c, err := mcp.ToContract(weather(), contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := contract.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	call := func(structured string) error {
		_, _, err := contract.Wrap(context.Background(), cc, "step_1_forecast", nil, func(context.Context) (any, *task.Result, error) {
			return nil, &task.Result{Artifacts: []task.Artifact{{ID: "out", Parts: []task.Part{task.DataPart(json.RawMessage(structured))}}}}, nil
		})
		return err
	}
	if err := call(`{"tempC": 21.5, "summary": "sunny"}`); err != nil {
		t.Fatalf("valid output: %v", err)
	}
	if err := call(`{"summary": "no temperature"}`); !errors.Is(err, contract.ErrViolated) || !strings.Contains(err.Error(), "forecast must return output matching its output schema") {
		t.Fatalf("invalid output: %v", err)
	}
}

func TestToContractOptionsAndErrors(t *testing.T) {
	c, err := mcp.ToContract(weather(), contract.AdapterOptions{MaxSteps: 2, Strictness: contract.Permissive, PreserveMetadata: true,
		ResourceMappings: map[string]string{"resource": "data"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 2 || c.Strictness != contract.Permissive || c.Resources[0].Type != contract.ResourceData {
		t.Fatalf("%s", jsonOf(t, c))
	}
	s := weather()
	s.Tools[1].Annotations = &sdk.ToolAnnotations{Title: "t", ReadOnlyHint: true}
	s.Tools[1].Meta = sdk.Meta{"x": "y"}
	back, _ := roundTrip(t, s, contract.AdapterOptions{PreserveMetadata: true})
	if jsonOf(t, back) != jsonOf(t, s) {
		t.Fatalf("preserved:\n got  %s\n want %s", jsonOf(t, back), jsonOf(t, s))
	}
	back, _ = roundTrip(t, s, contract.AdapterOptions{})
	if back.Tools[1].Annotations != nil || back.Tools[1].Meta != nil {
		t.Fatal("annotations kept without PreserveMetadata")
	}

	bad := map[string]mcp.Sequence{
		"no calls":       {Tools: weather().Tools},
		"unknown tool":   {Tools: weather().Tools, Calls: []mcp.Call{{Name: "nope"}}},
		"duplicate tool": {Tools: []*sdk.Tool{{Name: "a"}, {Name: "a"}}, Calls: []mcp.Call{{Name: "a"}}},
		"nameless tool":  {Tools: []*sdk.Tool{{}}, Calls: []mcp.Call{{Name: ""}}},
		"null tool":      {Tools: []*sdk.Tool{nil}, Calls: []mcp.Call{{Name: "a"}}},
		"bad schema":     {Tools: []*sdk.Tool{{Name: "a", OutputSchema: 5}}, Calls: []mcp.Call{{Name: "a"}}},
	}
	for name, s := range bad {
		if _, err := mcp.ToContract(s, contract.AdapterOptions{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := mcp.New().ToContract("tools", contract.AdapterOptions{}); !errors.Is(err, contract.ErrUnsupportedInput) {
		t.Fatalf("string input: %v", err)
	}
	raw := `{"tools": [{"name": "echo", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}], "calls": [{"name": "echo", "arguments": {"x": 1}}]}`
	if c, err := mcp.New().ToContract([]byte(raw), contract.AdapterOptions{}); err != nil || len(c.Steps[0].Assertions) != 1 {
		t.Fatalf("JSON input: %v", err)
	}
}

func TestFromOtherContract(t *testing.T) {
	c := &contract.AgentContract{ID: "x", Steps: []contract.ContractStep{
		{ID: "a", Agent: "fetch", Description: "fetch it", Assertions: []contract.ContractAssertion{{Type: contract.Assert, Message: "m",
			Check: contract.Check{Type: "schema_match", Schema: map[string]any{"type": "object"}}}}},
		{ID: "b", Agent: "fetch"},
		{ID: "c"},
	}}
	s, err := mcp.FromContract(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 2 || s.Tools[0].Name != "fetch" || s.Tools[1].Name != "c" || s.Tools[0].OutputSchema == nil ||
		jsonOf(t, s.Tools[1].InputSchema) != `{"type":"object"}` || len(s.Calls) != 3 {
		t.Fatalf("%s", jsonOf(t, s))
	}
}

func TestExtractResources(t *testing.T) {
	res := &sdk.CallToolResult{
		StructuredContent: map[string]any{"tempC": 21},
		Content: []sdk.Content{
			&sdk.TextContent{Text: "21 degrees"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///out/report.md", MIMEType: "text/markdown", Text: "# r"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "db://rows/1", MIMEType: "application/json"}},
			&sdk.ResourceLink{URI: "https://h/chart.png", Name: "chart", MIMEType: "image/png"},
			&sdk.ImageContent{Data: []byte{1}, MIMEType: "image/png"},
		},
	}
	step := &contract.ContractStep{ID: "s1"}
	want := []string{
		"data_s1 data  json",
		"text_s1_0 message  text",
		"resource_file_out_report_md file /out/report.md text/markdown",
		"resource_db_rows_1 artifact db://rows/1 application/json",
		"resource_https_h_chart_png artifact https://h/chart.png image/png",
		"image_s1_4 artifact  image/png",
	}
	describe := func(rs []contract.Resource) string {
		var out []string
		for _, r := range rs {
			if r.Metadata["createdByStep"] != "s1" {
				t.Fatalf("%s lacks createdByStep", r.ID)
			}
			out = append(out, fmt.Sprintf("%s %s %s %s", r.ID, r.Type, r.Location, r.Format))
		}
		return strings.Join(out, "\n")
	}
	got, err := mcp.New().ExtractResources(res, step)
	if err != nil || describe(got) != strings.Join(want, "\n") {
		t.Fatalf("got %v\n%s", err, describe(got))
	}
	// The content comes with the descriptions.
	if d, _ := got[0].Data.(map[string]any); d["tempC"] != float64(21) || got[1].Text != "21 degrees" || got[2].Text != "# r" || got[2].MediaType != "text/markdown" {
		t.Fatalf("content: %+v", got[:3])
	}
	raw, _ := json.Marshal(res)
	got, err = mcp.New().ExtractResources(json.RawMessage(raw), step)
	if err != nil || describe(got) != strings.Join(want, "\n") {
		t.Fatalf("from JSON: %v\n%s", err, describe(got))
	}
	res.IsError = true
	if got, err := mcp.New().ExtractResources(res, step); err != nil || len(got) != 0 {
		t.Fatalf("error result: %v %v", got, err)
	}
	if _, err := mcp.New().ExtractResources(3, step); !errors.Is(err, contract.ErrUnsupportedInput) {
		t.Fatalf("int: %v", err)
	}
}

func TestInjectContext(t *testing.T) {
	c, err := mcp.ToContract(mcp.Sequence{
		Tools: []*sdk.Tool{
			{Name: "open", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"spec": map[string]any{}, "notes": map[string]any{}, "mode": map[string]any{}}}},
			{Name: "closed", InputSchema: map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{"mode": map[string]any{}}}},
		},
		Calls: []mcp.Call{{Name: "open", Arguments: map[string]any{"mode": "fast", "spec": "given"}}, {Name: "closed", Arguments: map[string]any{"mode": "slow"}}},
	}, contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	available := []contract.Resource{
		{ContractResource: contract.ContractResource{ID: "spec", Type: contract.ResourceData}, Data: map[string]any{"k": "v"}},
		{ContractResource: contract.ContractResource{ID: "notes", Type: contract.ResourceMessage}, Text: "remember"},
		{ContractResource: contract.ContractResource{ID: "f", Type: contract.ResourceFile, Location: "a.txt"}},
	}
	v, err := mcp.New().InjectContext(&c.Steps[0], available)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_context":[{"id":"spec","type":"data"},{"id":"notes","type":"message"},{"id":"f","location":"a.txt","type":"file"}],"mode":"fast","notes":"remember","spec":"given"}`
	if got := jsonOf(t, v); got != want {
		t.Fatalf("open:\n got  %s\n want %s", got, want)
	}
	v, _ = mcp.New().InjectContext(&c.Steps[1], available)
	if got := jsonOf(t, v); got != `{"mode":"slow"}` {
		t.Fatalf("closed: %s", got)
	}
	// The step's own arguments are not changed.
	if jsonOf(t, c.Steps[0].Metadata[mcp.MetaArguments]) != `{"mode":"fast","spec":"given"}` {
		t.Fatal("InjectContext changed the step's arguments")
	}
}

// genSequence generates sequences within the mapping table.
type genSequence struct{ S mcp.Sequence }

func (genSequence) Generate(r *rand.Rand, _ int) reflect.Value {
	word := func() string {
		ws := []string{"alpha", "beta", "a b", "ünï", "", "x-1", "step_0"}
		return ws[r.Intn(len(ws))]
	}
	var s mcp.Sequence
	nTools := 1 + r.Intn(4)
	for i := range nTools {
		t := &sdk.Tool{Name: fmt.Sprintf("tool%d-%s", i, word()), Description: word(), Title: word()}
		if r.Intn(4) > 0 {
			t.InputSchema = map[string]any{"type": "object", "properties": map[string]any{word() + "p": map[string]any{"type": "string"}}}
		}
		if r.Intn(2) == 0 {
			t.OutputSchema = map[string]any{"type": "object", "required": []any{word() + "r"}}
		}
		s.Tools = append(s.Tools, t)
	}
	for range 1 + r.Intn(5) {
		c := mcp.Call{Name: s.Tools[r.Intn(nTools)].Name}
		if r.Intn(3) > 0 {
			c.Arguments = map[string]any{word() + "a": []any{float64(r.Intn(9)), word(), r.Intn(2) == 0}}
		}
		s.Calls = append(s.Calls, c)
	}
	for range r.Intn(3) {
		uris := []string{"file:///tmp/" + word(), "https://h/" + word(), "rel/" + word(), "db://x"}
		s.Resources = append(s.Resources, &sdk.Resource{URI: uris[r.Intn(len(uris))], Name: word(), Title: word(), Description: word(), MIMEType: word()})
	}
	return reflect.ValueOf(genSequence{s})
}

func TestRoundTripProperty(t *testing.T) {
	prop := func(g genSequence) bool {
		back, c := roundTrip(t, g.S, contract.AdapterOptions{})
		if got, want := jsonOf(t, back), jsonOf(t, g.S); got != want {
			t.Logf("round trip:\n got  %s\n want %s", got, want)
			return false
		}
		return len(c.Steps) == len(g.S.Calls)
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 300, Rand: rand.New(rand.NewSource(1))}); err != nil {
		t.Fatal(err)
	}
}
