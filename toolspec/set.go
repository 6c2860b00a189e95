package toolspec

import (
	"reflect"
	"slices"
	"sync"
)

// ContractCheck is the hook of assertion 5 (a frozen contract does not
// change without the version bump its change calls for). Set.Replace
// calls it for every adapter whose contract differs between the old and
// the new registry (old or new is nil when the adapter was added or
// removed); the violations it returns (Assertion FrozenUnchanged) are
// given to every ToolSpec that uses the adapter. The classification of
// changes lives with the lock file (classify.go); a Set without a
// ContractCheck checks assertions 1 to 4 only.
type ContractCheck func(old, new *AdapterContract) []Violation

// Set is the registered ToolSpecs and the registry they are checked
// against: assertion 6. A ToolSpec is validated when it is registered
// (Put), again whenever it is modified (Put again), and every ToolSpec
// whose adapter contract changes is re-checked when the registry is
// replaced (Replace). A Set is safe for concurrent use.
type Set struct {
	// ContractCheck, when set (before the first Replace), adds the
	// violations of assertion 5 to the ToolSpecs a contract change
	// affects.
	ContractCheck ContractCheck

	mu    sync.Mutex
	reg   *Registry
	specs map[string]ToolSpec
	viol  map[string][]Violation
}

// NewSet returns an empty Set checking against reg.
func NewSet(reg *Registry) *Set {
	return &Set{reg: reg, specs: map[string]ToolSpec{}, viol: map[string][]Violation{}}
}

// Put registers ts, or replaces the ToolSpec of the same tool_id, after
// checking it (assertions 1 to 4). A ToolSpec that violates any is
// rejected, as the seed requires ("ToolSpec cannot be registered if
// validation fails"): the Set keeps what it had, and Put returns the
// violations. Put returns nil when ts was registered.
func (s *Set) Put(ts ToolSpec) []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	if vs := s.reg.Check(ts); len(vs) > 0 {
		return vs
	}
	s.specs[ts.ToolID] = ts
	delete(s.viol, ts.ToolID)
	return nil
}

// Remove unregisters the tool toolID.
func (s *Set) Remove(toolID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.specs, toolID)
	delete(s.viol, toolID)
}

// Get returns the registered ToolSpec of toolID.
func (s *Set) Get(toolID string) (ToolSpec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts, ok := s.specs[toolID]
	return ts, ok
}

// Registry returns the registry the Set checks against.
func (s *Set) Registry() *Registry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reg
}

// Replace makes reg the Set's registry and re-checks every registered
// ToolSpec whose adapter's contract changed: added, removed or different
// in any way. Registered ToolSpecs stay registered, violations or not
// (they fail where they are used: Violations). It returns, for every
// ToolSpec it re-checked, by tool_id, its violations (an empty slice
// when it still holds).
func (s *Set) Replace(reg *Registry) map[string][]Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.reg
	s.reg = reg
	changed := map[string][]Violation{} // adapter id → assertion 5 violations
	ids := append(old.AdapterIDs(), reg.AdapterIDs()...)
	for _, id := range ids {
		if _, done := changed[id]; done {
			continue
		}
		oe, oldOK := old.entry(id)
		ne, newOK := reg.entry(id)
		if oldOK && newOK && reflect.DeepEqual(oe.contract, ne.contract) {
			continue
		}
		changed[id] = []Violation{}
		if s.ContractCheck == nil {
			continue
		}
		var oc, nc *AdapterContract
		if oldOK {
			oc = &oe.contract
		}
		if newOK {
			nc = &ne.contract
		}
		changed[id] = s.ContractCheck(oc, nc)
	}
	out := map[string][]Violation{}
	for _, tid := range sortedKeys(s.specs) {
		ts := s.specs[tid]
		frozen, ok := changed[ts.AdapterID]
		if !ok {
			continue
		}
		vs := reg.Check(ts)
		for _, v := range frozen {
			v.ToolID = tid
			vs = append(vs, v)
		}
		if vs == nil {
			vs = []Violation{}
		}
		out[tid] = vs
		if len(vs) == 0 {
			delete(s.viol, tid)
		} else {
			s.viol[tid] = vs
		}
	}
	return out
}

// Violations returns the violations of the registered ToolSpec toolID
// since the last Replace (nil when it holds or is not registered).
func (s *Set) Violations(toolID string) []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.viol[toolID])
}

// Invalid returns every registered ToolSpec that violates an assertion,
// with its violations, by tool_id.
func (s *Set) Invalid() map[string][]Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]Violation, len(s.viol))
	for id, vs := range s.viol {
		out[id] = slices.Clone(vs)
	}
	return out
}
