package contract_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/pactum/pactum/contract"
)

// fake is an adapter that claims inputs with a key of its name.
type fake struct {
	name   string
	detect bool
	vals   map[string]contract.Validator
}

func (f fake) Protocol() string    { return f.name }
func (f fake) Version() string     { return "1" }
func (f fake) Description() string { return "fake " + f.name }
func (f fake) ToContract(any, contract.AdapterOptions) (*contract.AgentContract, error) {
	return &contract.AgentContract{ID: f.name}, nil
}
func (f fake) FromContract(*contract.AgentContract) (any, error) { return nil, nil }
func (f fake) ExtractResources(any, *contract.ContractStep) ([]contract.Resource, error) {
	return nil, nil
}
func (f fake) InjectContext(*contract.ContractStep, []contract.Resource) (any, error) {
	return nil, nil
}

// detecting is a fake that implements Detector.
type detecting struct{ fake }

func (d detecting) Detects(v any) bool {
	m, ok := contract.JSONObject(v)
	if !ok {
		return false
	}
	_, ok = m[d.name]
	return ok
}
func (d detecting) LooksFor() string { return "a key " + d.name }

// registering is a fake that brings validators.
type registering struct{ fake }

func (r registering) RegisterValidators(reg func(string, contract.Validator) error) error {
	for n, v := range r.vals {
		if err := reg(n, v); err != nil {
			return err
		}
	}
	return nil
}

func TestRegistryRegisterGetProtocols(t *testing.T) {
	r := contract.NewRegistry()
	for _, n := range []string{"zeta", "alpha", "mid"} {
		if err := r.Register(fake{name: n}); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(r.Protocols(), ","); got != "alpha,mid,zeta" {
		t.Fatalf("Protocols = %s", got)
	}
	if !r.Supports("mid") || r.Supports("nope") {
		t.Fatal("Supports")
	}
	if a, ok := r.Get("alpha"); !ok || a.Description() != "fake alpha" {
		t.Fatalf("Get alpha = %v %v", a, ok)
	}
	if _, err := r.Lookup("nope"); !errors.Is(err, contract.ErrUnknownProtocol) || !strings.Contains(err.Error(), "alpha, mid, zeta") {
		t.Fatalf("Lookup nope: %v", err)
	}

	// A second adapter for a protocol is refused; Replace swaps it.
	if err := r.Register(fake{name: "mid"}); !errors.Is(err, contract.ErrDuplicateAdapter) {
		t.Fatalf("duplicate: %v", err)
	}
	old, err := r.Replace(detecting{fake{name: "mid"}})
	if err != nil || old == nil || old.Protocol() != "mid" {
		t.Fatalf("Replace: %v %v", old, err)
	}
	if a, _ := r.Get("mid"); a.(contract.Detector) == nil {
		t.Fatal("Replace did not replace")
	}
	if old, err := r.Replace(fake{name: "new"}); err != nil || old != nil {
		t.Fatalf("Replace of a new protocol: %v %v", old, err)
	}
	if err := r.Register(nil); err == nil {
		t.Fatal("nil adapter registered")
	}
	if err := r.Register(fake{}); err == nil {
		t.Fatal("adapter without a protocol registered")
	}
}

func TestRegistryDetect(t *testing.T) {
	r := contract.NewRegistry()
	for _, a := range []contract.ProtocolAdapter{detecting{fake{name: "a"}}, detecting{fake{name: "b"}}, fake{name: "blind"}} {
		if err := r.Register(a); err != nil {
			t.Fatal(err)
		}
	}
	a, err := r.Detect([]byte(`{"a": 1}`))
	if err != nil || a.Protocol() != "a" {
		t.Fatalf("Detect a: %v %v", a, err)
	}
	if a, err := r.Detect(map[string]any{"b": true}); err != nil || a.Protocol() != "b" {
		t.Fatalf("Detect b: %v %v", a, err)
	}

	_, err = r.Detect(map[string]any{"a": 1, "b": 2})
	if !errors.Is(err, contract.ErrAmbiguousWorkflow) || !strings.Contains(err.Error(), "a and b") {
		t.Fatalf("ambiguous: %v", err)
	}
	for _, in := range []any{map[string]any{"c": 1}, nil, 42, []byte("not json"), []byte(`[1]`)} {
		_, err = r.Detect(in)
		if !errors.Is(err, contract.ErrUnknownWorkflow) {
			t.Fatalf("unknown %v: %v", in, err)
		}
		for _, want := range []string{"a: a key a", "b: a key b", "blind: (cannot detect)"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("unknown %v: %q lacks %q", in, err, want)
			}
		}
	}
	if _, err := contract.NewRegistry().Detect(map[string]any{}); !errors.Is(err, contract.ErrUnknownWorkflow) {
		t.Fatalf("empty registry: %v", err)
	}
}

func TestRegistryValidators(t *testing.T) {
	pass := func(context.Context, *contract.Check, *contract.Input) contract.Verdict {
		return contract.Verdict{Passed: true}
	}
	name := "registry-test-validator"
	a := registering{fake{name: "withval", vals: map[string]contract.Validator{name: pass}}}
	if err := contract.NewRegistry().Register(a); err != nil {
		t.Fatal(err)
	}
	if !contract.KnownCheck(name) {
		t.Fatal("validator not registered")
	}
	// The same adapter in another registry: its validators are already there.
	if err := contract.NewRegistry().Register(a); err != nil {
		t.Fatalf("second registry: %v", err)
	}
	// Another protocol bringing the same name, or a built-in name, is refused
	// and the adapter is not added.
	r := contract.NewRegistry()
	other := registering{fake{name: "other", vals: map[string]contract.Validator{name: pass}}}
	if err := r.Register(other); err == nil || !strings.Contains(err.Error(), `adapter "withval"`) || r.Supports("other") {
		t.Fatalf("clash: %v", err)
	}
	builtin := registering{fake{name: "builtin", vals: map[string]contract.Validator{"regex": pass}}}
	if err := r.Register(builtin); err == nil || r.Supports("builtin") {
		t.Fatalf("builtin name: %v", err)
	}
	// A contract using the validator compiles.
	if _, err := contract.Compile(&contract.AgentContract{ID: "x", Steps: []contract.ContractStep{{ID: "s",
		Assertions: []contract.ContractAssertion{{Type: contract.Assert, Message: "m", Check: contract.Check{Type: name}}}}}}); err != nil {
		t.Fatal(err)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	r := contract.NewRegistry()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			_ = r.Register(detecting{fake{name: string(rune('a' + i))}})
			_, _ = r.Detect(map[string]any{"a": 1})
			_ = r.Protocols()
		})
	}
	wg.Wait()
	if len(r.Protocols()) != 8 {
		t.Fatalf("Protocols = %v", r.Protocols())
	}
}

func TestDecode(t *testing.T) {
	type W struct {
		A int `json:"a"`
	}
	for _, in := range []any{W{A: 1}, &W{A: 1}, []byte(`{"a":1}`), map[string]any{"a": 1}} {
		w, err := contract.Decode[W](in)
		if err != nil || w.A != 1 {
			t.Fatalf("Decode(%T) = %+v, %v", in, w, err)
		}
	}
	for _, in := range []any{nil, (*W)(nil), 3, "x", []byte(`{"a":"x"}`)} {
		if _, err := contract.Decode[W](in); err == nil {
			t.Fatalf("Decode(%#v) succeeded", in)
		}
	}
	if _, err := contract.Decode[W](5); !errors.Is(err, contract.ErrUnsupportedInput) {
		t.Fatalf("Decode(5): %v", err)
	}
}

func TestMapResourceType(t *testing.T) {
	o := contract.AdapterOptions{ResourceMappings: map[string]string{"file": "artifact", "bad": "blob"}}
	if rt, err := o.MapResourceType("file", contract.ResourceFile); err != nil || rt != contract.ResourceArtifact {
		t.Fatalf("file: %v %v", rt, err)
	}
	if rt, err := o.MapResourceType("data", contract.ResourceData); err != nil || rt != contract.ResourceData {
		t.Fatalf("data: %v %v", rt, err)
	}
	if _, err := o.MapResourceType("bad", contract.ResourceData); err == nil {
		t.Fatal("bad mapping accepted")
	}
}
