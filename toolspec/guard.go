package toolspec

import (
	"reflect"
	"sync"
)

// BumpGuard enforces assertion 5 (a frozen contract does not change
// without the version bump its change calls for) across reloads of a
// catalogue, for a Source that rebuilds its registry (Reloader). It
// remembers each adapter's accepted contract: every contract of the first
// registry it admits, then each change that check accepts. A change that
// check refuses is not accepted: every ToolSpec of that adapter fails
// with check's violations until the contract is bumped properly or
// restored (compared with the accepted contract, so undoing the change
// repairs it). Set.ContractCheck is the same hook for a Set. A BumpGuard
// is safe for concurrent use.
type BumpGuard struct {
	check ContractCheck

	mu       sync.Mutex
	started  bool
	accepted map[string]AdapterContract
}

// NewBumpGuard returns a BumpGuard that checks changes with check
// (CheckContractBump for the seed's rules).
func NewBumpGuard(check ContractCheck) *BumpGuard {
	return &BumpGuard{check: check, accepted: map[string]AdapterContract{}}
}

// Admit returns a Checker over reg: reg.Check (assertions 1–4) plus, for
// a ToolSpec whose adapter's contract changed since it was accepted in a
// way check refuses, check's violations.
func (g *BumpGuard) Admit(reg *Registry) Checker {
	g.mu.Lock()
	defer g.mu.Unlock()
	refused := map[string][]Violation{}
	if !g.started {
		g.started = true
		for _, id := range reg.AdapterIDs() {
			g.accepted[id], _ = reg.Lookup(id)
		}
		return reg
	}
	ids := reg.AdapterIDs()
	for id := range g.accepted {
		if _, ok := reg.Lookup(id); !ok {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		old, inOld := g.accepted[id]
		cur, inNew := reg.Lookup(id)
		if inOld && inNew && reflect.DeepEqual(old, cur) {
			continue
		}
		var o, n *AdapterContract
		if inOld {
			o = &old
		}
		if inNew {
			n = &cur
		}
		if vs := g.check(o, n); len(vs) > 0 {
			refused[id] = vs
			continue
		}
		if inNew {
			g.accepted[id] = cur
		} else {
			delete(g.accepted, id)
		}
	}
	if len(refused) == 0 {
		return reg
	}
	return CheckerFunc(func(ts ToolSpec) []Violation {
		vs := reg.Check(ts)
		for _, v := range refused[ts.AdapterID] {
			v.ToolID = ts.ToolID
			vs = append(vs, v)
		}
		return vs
	})
}
