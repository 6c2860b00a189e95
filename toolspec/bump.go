package toolspec

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
)

// CheckBumps checks assertion 5 between two versions of a catalogue: for
// every frozen contract (frozen in the old catalogue) that changed, the
// version bump from old to new must be at least the largest change's bump
// (Classify), and at least PATCH for any change at all. Draft contracts
// may change without a bump. For every contract, a version that is not
// MAJOR.MINOR.PATCH semver or that went down is a violation, and a frozen
// contract may not be removed (removing one is a MAJOR change no version
// can record: unfreeze it first). Violations are ordered by adapter.
//
// Semver is applied strictly, also below 1.0.0: a MAJOR change needs the
// MAJOR number raised.
func CheckBumps(old, new *Catalogue) []Violation {
	oldAd, newAd := adaptersByID(old), adaptersByID(new)
	var out []Violation
	for _, id := range unionKeys(oldAd, newAd) {
		o, inOld := oldAd[id]
		n, inNew := newAd[id]
		switch {
		case !inNew:
			if o.Status == Frozen {
				out = append(out, Violation{Assertion: FrozenUnchanged, AdapterID: id, Field: "adapter_id",
					Msg: fmt.Sprintf("frozen adapter contract %q (version %s) was removed (adapter_removed, MAJOR)", id, o.Version),
					Fix: "restore the contract, or make it status: draft with a version bump and lock that before removing it"})
			}
			continue
		case !inOld:
			if _, err := semver.StrictNewVersion(n.Version); err != nil {
				out = append(out, malformed(id, n.Version, err))
			}
			continue
		}
		if v := checkBump(o, n); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

func malformed(id, version string, err error) Violation {
	return Violation{Assertion: FrozenUnchanged, AdapterID: id, Field: "version",
		Msg: fmt.Sprintf("version %q of adapter contract %q is not a semantic version MAJOR.MINOR.PATCH: %v", version, id, err),
		Fix: `write the version as MAJOR.MINOR.PATCH, e.g. "1.0.0"`}
}

// RequiredBump is the smallest version bump the changes need for a
// contract of the given (old) status: none for a draft, the largest
// change's bump (at least PATCH if anything changed) for a frozen one.
func RequiredBump(status Status, changes []Change) Bump {
	if status != Frozen || len(changes) == 0 {
		return None
	}
	return max(Largest(changes), Patch)
}

// ActualBump is the bump from one version to another: MAJOR if the MAJOR
// number went up, MINOR if the MINOR number did, PATCH if the PATCH
// number did, else none (pre-release and build changes are no bump).
func ActualBump(old, new *semver.Version) Bump {
	switch {
	case new.Major() > old.Major():
		return Major
	case new.Major() < old.Major():
		return None
	case new.Minor() > old.Minor():
		return Minor
	case new.Minor() < old.Minor():
		return None
	case new.Patch() > old.Patch():
		return Patch
	}
	return None
}

func checkBump(o, n AdapterContract) *Violation {
	id := n.AdapterID
	ov, err := semver.StrictNewVersion(o.Version)
	if err != nil {
		v := malformed(id, o.Version, err)
		v.Msg = "old " + v.Msg
		return &v
	}
	nv, err := semver.StrictNewVersion(n.Version)
	if err != nil {
		v := malformed(id, n.Version, err)
		return &v
	}
	changes := ClassifyContract(o, n)
	if nv.LessThan(ov) {
		return &Violation{Assertion: FrozenUnchanged, AdapterID: id, Field: "version",
			Msg: fmt.Sprintf("version of adapter contract %q went down: %s → %s", id, o.Version, n.Version),
			Fix: fmt.Sprintf("use a version above %s (%s)", o.Version, nextVersion(ov, max(RequiredBump(o.Status, changes), Patch)))}
	}
	need := RequiredBump(o.Status, changes)
	have := ActualBump(ov, nv)
	if have >= need {
		return nil
	}
	// Name the change that needs the most.
	worst := changes[0]
	for _, c := range changes {
		if c.Bump > worst.Bump {
			worst = c
		}
	}
	more := ""
	if len(changes) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(changes)-1)
	}
	return &Violation{Assertion: FrozenUnchanged, AdapterID: id, Field: "version",
		Msg: fmt.Sprintf("frozen adapter contract %q changed without the version bump it needs: %s (%s)%s needs a %s bump, but the version went %s → %s (%s)",
			id, worst.Kind, worst.Detail, more, need, o.Version, n.Version, have),
		Fix: fmt.Sprintf("set version: %s, or undo the change", nextVersion(ov, need))}
}

// nextVersion is the smallest version above v with the given bump.
func nextVersion(v *semver.Version, b Bump) string {
	switch b {
	case Major:
		return v.IncMajor().String()
	case Minor:
		return v.IncMinor().String()
	}
	return v.IncPatch().String()
}

// CheckContractBump is CheckBumps for one adapter: old or new is nil when
// the adapter was added or removed. It is a ContractCheck, the hook of
// assertion 5 that Set.Replace calls for every changed contract.
func CheckContractBump(old, new *AdapterContract) []Violation {
	var o, n Catalogue
	if old != nil {
		o.Adapters = []AdapterContract{*old}
	}
	if new != nil {
		n.Adapters = []AdapterContract{*new}
	}
	return CheckBumps(&o, &n)
}

var _ ContractCheck = CheckContractBump
