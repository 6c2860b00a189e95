package contract

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Errors of the adapter registry, for errors.Is.
var (
	// ErrDuplicateAdapter: Register was given a protocol already
	// registered (Replace swaps adapters on purpose).
	ErrDuplicateAdapter = errors.New("adapter already registered")
	// ErrUnknownProtocol: no adapter is registered for the protocol.
	ErrUnknownProtocol = errors.New("no adapter for protocol")
	// ErrAmbiguousWorkflow: more than one adapter claims the input.
	ErrAmbiguousWorkflow = errors.New("workflow matches more than one protocol")
	// ErrUnknownWorkflow: no adapter claims the input.
	ErrUnknownWorkflow = errors.New("workflow matches no protocol")
)

// Registry holds protocol adapters by protocol name. It is safe for
// concurrent use. The zero value is not usable; call NewRegistry. The
// package contract/adapters has one with every built-in adapter.
type Registry struct {
	mu       sync.RWMutex
	adapters map[string]ProtocolAdapter
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{adapters: map[string]ProtocolAdapter{}}
}

// Register adds a. Unlike the seed's registry, which overwrote silently,
// a second adapter for a protocol already registered is refused
// (ErrDuplicateAdapter): two packages both claiming "a2a" is a mistake to
// see, not to resolve by registration order. Replace swaps an adapter on
// purpose. When a implements ValidatorRegistrar its validators are
// registered first; if that fails a is not added.
func (r *Registry) Register(a ProtocolAdapter) error {
	return r.add(a, false)
}

// Replace adds a, replacing the adapter registered for its protocol if
// there is one, and returns the one it replaced (nil if none).
func (r *Registry) Replace(a ProtocolAdapter) (ProtocolAdapter, error) {
	r.mu.RLock()
	old := r.adapters[protocolOf(a)]
	r.mu.RUnlock()
	if err := r.add(a, true); err != nil {
		return nil, err
	}
	return old, nil
}

func protocolOf(a ProtocolAdapter) string {
	if a == nil {
		return ""
	}
	return a.Protocol()
}

func (r *Registry) add(a ProtocolAdapter, replace bool) error {
	if a == nil {
		return errors.New("contract: Register: nil adapter")
	}
	p := a.Protocol()
	if p == "" {
		return fmt.Errorf("contract: Register: adapter %T has an empty protocol name", a)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.adapters[p]; dup && !replace {
		return fmt.Errorf("contract: Register %q: %w", p, ErrDuplicateAdapter)
	}
	if vr, ok := a.(ValidatorRegistrar); ok {
		if err := vr.RegisterValidators(func(name string, v Validator) error {
			return registerAdapterValidator(p, name, v)
		}); err != nil {
			return fmt.Errorf("contract: Register %q: validators: %w", p, err)
		}
	}
	r.adapters[p] = a
	return nil
}

// Get returns the adapter for protocol.
func (r *Registry) Get(protocol string) (ProtocolAdapter, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.adapters[protocol]
	return a, ok
}

// Lookup is Get with an error naming the protocols registered.
func (r *Registry) Lookup(protocol string) (ProtocolAdapter, error) {
	if a, ok := r.Get(protocol); ok {
		return a, nil
	}
	return nil, fmt.Errorf("%w %q (registered: %s)", ErrUnknownProtocol, protocol, strings.Join(r.Protocols(), ", "))
}

// Protocols returns the registered protocol names, sorted.
func (r *Registry) Protocols() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.adapters))
	for p := range r.adapters {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Supports reports whether an adapter is registered for protocol.
func (r *Registry) Supports(protocol string) bool {
	_, ok := r.Get(protocol)
	return ok
}

// Detect returns the one adapter whose Detector claims workflow. Adapters
// are asked in protocol order; adapters that do not implement Detector are
// never chosen. Unlike the seed's first match, an input two or more
// adapters claim is an error naming them all (ErrAmbiguousWorkflow): pick
// one with Get. An input none claims is an error saying what each adapter
// looked for (ErrUnknownWorkflow).
func (r *Registry) Detect(workflow any) (ProtocolAdapter, error) {
	r.mu.RLock()
	protocols := make([]string, 0, len(r.adapters))
	for p := range r.adapters {
		protocols = append(protocols, p)
	}
	slices.Sort(protocols)
	adapters := make([]ProtocolAdapter, len(protocols))
	for i, p := range protocols {
		adapters[i] = r.adapters[p]
	}
	r.mu.RUnlock()

	var matched []ProtocolAdapter
	var looked []string
	for i, a := range adapters {
		d, ok := a.(Detector)
		if !ok {
			looked = append(looked, protocols[i]+": (cannot detect)")
			continue
		}
		if d.Detects(workflow) {
			matched = append(matched, a)
		}
		looked = append(looked, protocols[i]+": "+d.LooksFor())
	}
	switch len(matched) {
	case 1:
		return matched[0], nil
	case 0:
		if len(looked) == 0 {
			return nil, fmt.Errorf("%w: no adapters registered", ErrUnknownWorkflow)
		}
		return nil, fmt.Errorf("%w; looked for:\n  %s", ErrUnknownWorkflow, strings.Join(looked, "\n  "))
	}
	names := make([]string, len(matched))
	for i, a := range matched {
		names[i] = a.Protocol()
	}
	return nil, fmt.Errorf("%w: %s; choose one by name", ErrAmbiguousWorkflow, strings.Join(names, " and "))
}

// adapterValidators remembers which protocol registered each validator
// name through a registry, so registering an adapter again (in another
// registry) does not register its validators twice.
var (
	adapterValidatorsMu sync.Mutex
	adapterValidators   = map[string]string{}
)

func registerAdapterValidator(protocol, name string, v Validator) (err error) {
	if name == "" || v == nil {
		return errors.New("a validator needs a name and a function")
	}
	adapterValidatorsMu.Lock()
	defer adapterValidatorsMu.Unlock()
	if owner, ok := adapterValidators[name]; ok {
		if owner == protocol {
			return nil
		}
		return fmt.Errorf("validator %q is already registered by adapter %q", name, owner)
	}
	if KnownCheck(name) {
		return fmt.Errorf("validator %q: a check type of that name already exists", name)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("validator %q: %v", name, p)
		}
	}()
	RegisterValidator(name, v)
	adapterValidators[name] = protocol
	return nil
}
