package toolspec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// String names the bump as the seed does: NONE, PATCH, MINOR, MAJOR.
func (b Bump) String() string {
	switch b {
	case None:
		return "NONE"
	case Patch:
		return "PATCH"
	case Minor:
		return "MINOR"
	case Major:
		return "MAJOR"
	}
	return fmt.Sprintf("Bump(%d)", int(b))
}

// Change is one classified difference between two versions of a
// catalogue: which adapter (and operation, if any) changed, how (Kind, a
// short code such as "operation_removed" or "input_required_added"), the
// version bump it needs at least, and a sentence saying exactly what
// changed and where.
type Change struct {
	AdapterID string `json:"adapter_id"`
	Operation string `json:"operation,omitempty"`
	Kind      string `json:"kind"`
	Bump      Bump   `json:"bump"`
	Detail    string `json:"detail"`
}

// String renders the change on one line: "MAJOR qdrant-vector.search
// input_required_added: …".
func (c Change) String() string {
	where := c.AdapterID
	if c.Operation != "" {
		where += "." + c.Operation
	}
	return fmt.Sprintf("%s %s %s: %s", c.Bump, where, c.Kind, c.Detail)
}

// Change kinds of adapters and operations. Schema kinds are the
// direction ("input" or "output") joined to a schema kind, e.g.
// "input_required_added"; see schemaRules.
const (
	KindAdapterRemoved     = "adapter_removed"
	KindAdapterAdded       = "adapter_added"
	KindStatusChanged      = "status_changed"
	KindOperationRemoved   = "operation_removed"
	KindOperationAdded     = "operation_added"
	KindDescriptionChanged = "description_changed"
)

// Schema change kinds, without their direction prefix.
const (
	SchemaPropertyAdded      = "property_added"
	SchemaPropertyRemoved    = "property_removed"
	SchemaRequiredAdded      = "required_added"
	SchemaRequiredRemoved    = "required_removed"
	SchemaTypeNarrowed       = "type_narrowed"
	SchemaTypeWidened        = "type_widened"
	SchemaTypeChanged        = "type_changed"
	SchemaEnumNarrowed       = "enum_narrowed"
	SchemaEnumWidened        = "enum_widened"
	SchemaEnumChanged        = "enum_changed"
	SchemaConstraintNarrowed = "constraint_narrowed"
	SchemaConstraintWidened  = "constraint_widened"
	SchemaConstraintChanged  = "constraint_changed"
	SchemaDefaultChanged     = "default_changed"
	SchemaAnnotationChanged  = "annotation_changed"
	SchemaUncomparable       = "schema_uncomparable"
)

// schemaRules is the classification table of schema changes. An input
// schema describes what callers send (a change that refuses something
// callers could send before is breaking); an output schema describes what
// callers receive (a change that can hand callers something they did not
// expect before is breaking). Anything the comparison cannot reason about
// safely is MAJOR. docs/toolspecs.md ("How changes are classified") shows the same table.
//
//	kind                  input   output  meaning
//	property_added        MINOR   MINOR   a new (optional, for input) property
//	property_removed      MAJOR   MAJOR   a property no longer accepted / no longer given
//	required_added        MAJOR   MINOR   a property became (or was added as) required
//	required_removed      MINOR   MAJOR   a required property became optional
//	type_narrowed         MAJOR   MINOR   fewer JSON types allowed
//	type_widened          MINOR   MAJOR   more JSON types allowed
//	type_changed          MAJOR   MAJOR   neither a subset nor a superset
//	enum_narrowed         MAJOR   MINOR   fewer values allowed (or an enum/const added)
//	enum_widened          MINOR   MAJOR   more values allowed (or the enum removed)
//	enum_changed          MAJOR   MAJOR   values both added and removed
//	constraint_narrowed   MAJOR   MINOR   a bound tightened or a pattern/format/… added
//	constraint_widened    MINOR   MAJOR   a bound loosened or a pattern/format/… removed
//	constraint_changed    MAJOR   MAJOR   a pattern/format/… replaced by another
//	default_changed       MINOR   MINOR   the default value changed
//	annotation_changed    PATCH   PATCH   title, description, examples, $comment, …
//	schema_uncomparable   MAJOR   MAJOR   $ref, oneOf, anyOf, allOf, not, if/then/else,
//	                                      tuple items, … changed: not compared
var schemaRules = map[string][2]Bump{
	SchemaPropertyAdded:      {Minor, Minor},
	SchemaPropertyRemoved:    {Major, Major},
	SchemaRequiredAdded:      {Major, Minor},
	SchemaRequiredRemoved:    {Minor, Major},
	SchemaTypeNarrowed:       {Major, Minor},
	SchemaTypeWidened:        {Minor, Major},
	SchemaTypeChanged:        {Major, Major},
	SchemaEnumNarrowed:       {Major, Minor},
	SchemaEnumWidened:        {Minor, Major},
	SchemaEnumChanged:        {Major, Major},
	SchemaConstraintNarrowed: {Major, Minor},
	SchemaConstraintWidened:  {Minor, Major},
	SchemaConstraintChanged:  {Major, Major},
	SchemaDefaultChanged:     {Minor, Minor},
	SchemaAnnotationChanged:  {Patch, Patch},
	SchemaUncomparable:       {Major, Major},
}

// Direction is which side of an operation a schema describes.
type Direction int

// The two directions.
const (
	Input  Direction = iota // what callers send
	Output                  // what callers receive
)

func (d Direction) String() string {
	if d == Output {
		return "output"
	}
	return "input"
}

// SchemaBump is the bump a schema change kind needs in a direction
// (schemaRules); unknown kinds are MAJOR.
func SchemaBump(d Direction, kind string) Bump {
	r, ok := schemaRules[kind]
	if !ok {
		return Major
	}
	return r[d]
}

// Classify compares two versions of a catalogue and returns every change,
// classified by the seed's rules (assertion 4): removing an adapter or an
// operation, or a breaking schema change (a new required input, a changed
// output structure) is MAJOR; adding an operation or an optional input,
// or widening an input enum is MINOR; a description is PATCH. Changes are
// ordered by adapter, operation, then where they are in the schema. Either
// catalogue may be nil (empty). Changing a contract's status needs no bump
// by itself (CheckBumps asks frozen contracts for one).
func Classify(old, new *Catalogue) []Change {
	oldAd, newAd := adaptersByID(old), adaptersByID(new)
	var changes []Change
	for _, id := range unionKeys(oldAd, newAd) {
		o, inOld := oldAd[id]
		n, inNew := newAd[id]
		switch {
		case !inNew:
			changes = append(changes, Change{AdapterID: id, Kind: KindAdapterRemoved, Bump: Major,
				Detail: fmt.Sprintf("adapter %q (version %s) removed", id, o.Version)})
		case !inOld:
			changes = append(changes, Change{AdapterID: id, Kind: KindAdapterAdded, Bump: Minor,
				Detail: fmt.Sprintf("adapter %q (version %s) added", id, n.Version)})
		default:
			changes = append(changes, ClassifyContract(o, n)...)
		}
	}
	return changes
}

// ClassifyContract compares two versions of one adapter contract (the
// version fields themselves are not compared: CheckBumps does that).
func ClassifyContract(old, new AdapterContract) []Change {
	id := new.AdapterID
	var changes []Change
	if old.Status != new.Status {
		changes = append(changes, Change{AdapterID: id, Kind: KindStatusChanged, Bump: None,
			Detail: fmt.Sprintf("status %q → %q", old.Status, new.Status)})
	}
	for _, name := range unionKeys(old.Operations, new.Operations) {
		o, inOld := old.Operations[name]
		n, inNew := new.Operations[name]
		switch {
		case !inNew:
			changes = append(changes, Change{AdapterID: id, Operation: name, Kind: KindOperationRemoved, Bump: Major,
				Detail: fmt.Sprintf("operation %q removed", name)})
		case !inOld:
			changes = append(changes, Change{AdapterID: id, Operation: name, Kind: KindOperationAdded, Bump: Minor,
				Detail: fmt.Sprintf("operation %q added", name)})
		default:
			if o.Description != n.Description {
				changes = append(changes, Change{AdapterID: id, Operation: name, Kind: KindDescriptionChanged, Bump: Patch,
					Detail: fmt.Sprintf("description of operation %q changed", name)})
			}
			for _, sc := range CompareSchemas(Input, o.InputSchema, n.InputSchema) {
				changes = append(changes, Change{AdapterID: id, Operation: name, Kind: sc.Kind, Bump: sc.Bump, Detail: sc.Detail})
			}
			for _, sc := range CompareSchemas(Output, o.OutputSchema, n.OutputSchema) {
				changes = append(changes, Change{AdapterID: id, Operation: name, Kind: sc.Kind, Bump: sc.Bump, Detail: sc.Detail})
			}
		}
	}
	return changes
}

// SchemaChange is one classified difference between two JSON Schemas.
// Kind carries the direction prefix ("input_enum_widened"); Path is where
// in the instance the change applies ("input.filter.tags[]").
type SchemaChange struct {
	Kind   string
	Bump   Bump
	Path   string
	Detail string
}

// CompareSchemas compares two JSON Schemas (2020-12) of one side of an
// operation and classifies every difference by schemaRules. A nil schema
// accepts anything (as {} or true does). Objects' properties and arrays'
// items are compared recursively; keywords the comparison does not reason
// about are compared for equality, and any difference is
// schema_uncomparable (MAJOR).
func CompareSchemas(d Direction, old, new map[string]any) []SchemaChange {
	c := &schemaComparer{dir: d}
	c.compare(d.String(), normalizeJSON(old), normalizeJSON(new))
	return c.out
}

type schemaComparer struct {
	dir Direction
	out []SchemaChange
}

func (c *schemaComparer) add(kind, path, format string, args ...any) {
	full := c.dir.String() + "_" + kind
	c.out = append(c.out, SchemaChange{Kind: full, Bump: SchemaBump(c.dir, kind), Path: path,
		Detail: path + ": " + fmt.Sprintf(format, args...)})
}

// asSchema turns a schema value into a keyword map: nil and true are the
// empty schema; false stays false (ok=false).
func asSchema(v any) (m map[string]any, ok bool) {
	switch s := v.(type) {
	case nil:
		return map[string]any{}, true
	case bool:
		if s {
			return map[string]any{}, true
		}
		return nil, false
	case map[string]any:
		return s, true
	}
	return nil, false
}

// Keywords the comparer understands; every other keyword is compared for
// equality only.
var (
	annotationKeywords = []string{"title", "description", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema", "$id"}
	// lower bounds: a larger value narrows.
	lowerBounds = []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
	// upper bounds: a smaller value narrows.
	upperBounds = []string{"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
	// opaque constraints: adding one narrows, removing one widens,
	// replacing one is a change in both directions.
	opaqueConstraints = []string{"pattern", "format", "multipleOf", "uniqueItems", "contentEncoding", "contentMediaType"}
	handledKeywords   = map[string]bool{"type": true, "enum": true, "const": true, "properties": true, "required": true,
		"additionalProperties": true, "items": true, "default": true}
)

func init() {
	for _, list := range [][]string{annotationKeywords, lowerBounds, upperBounds, opaqueConstraints} {
		for _, k := range list {
			handledKeywords[k] = true
		}
	}
}

func (c *schemaComparer) compare(path string, oldV, newV any) {
	if reflect.DeepEqual(oldV, newV) {
		return
	}
	o, okO := asSchema(oldV)
	n, okN := asSchema(newV)
	if !okO || !okN {
		c.add(SchemaUncomparable, path, "schema %s → %s cannot be compared safely", short(oldV), short(newV))
		return
	}
	// Keywords compared for equality only, in a stable order.
	for _, k := range unionKeys(o, n) {
		if handledKeywords[k] || reflect.DeepEqual(o[k], n[k]) {
			continue
		}
		c.add(SchemaUncomparable, path, "keyword %q changed (%s → %s); pactum does not compare it, so the change counts as breaking", k, short(o[k]), short(n[k]))
	}
	c.compareTypes(path, o, n)
	c.compareEnums(path, o, n)
	c.compareBounds(path, o, n)
	if !reflect.DeepEqual(o["default"], n["default"]) {
		c.add(SchemaDefaultChanged, path, "default %s → %s", short(o["default"]), short(n["default"]))
	}
	for _, k := range annotationKeywords {
		if !reflect.DeepEqual(o[k], n[k]) {
			c.add(SchemaAnnotationChanged, path, "%s changed", k)
		}
	}
	c.compareProperties(path, o, n)
	c.compareItems(path, o, n)
}

// jsonTypes is the set of JSON Schema types a schema allows; nil means any.
func jsonTypes(s map[string]any) (set []string, ok bool) {
	switch t := s["type"].(type) {
	case nil:
		return nil, true
	case string:
		return []string{t}, true
	case []any:
		for _, e := range t {
			str, isStr := e.(string)
			if !isStr {
				return nil, false
			}
			set = append(set, str)
		}
		return set, true
	}
	return nil, false
}

// typesSubset says whether every type of a is allowed by b (nil = any;
// integer is a subset of number).
func typesSubset(a, b []string) bool {
	if b == nil {
		return true
	}
	if a == nil {
		return false
	}
	for _, t := range a {
		if !slices.Contains(b, t) && (t != "integer" || !slices.Contains(b, "number")) {
			return false
		}
	}
	return true
}

func (c *schemaComparer) compareTypes(path string, o, n map[string]any) {
	if reflect.DeepEqual(o["type"], n["type"]) {
		return
	}
	ot, ok1 := jsonTypes(o)
	nt, ok2 := jsonTypes(n)
	if !ok1 || !ok2 {
		c.add(SchemaUncomparable, path, "type %s → %s cannot be compared safely", short(o["type"]), short(n["type"]))
		return
	}
	sub, super := typesSubset(nt, ot), typesSubset(ot, nt)
	switch {
	case sub && super: // the same set written differently
	case sub:
		c.add(SchemaTypeNarrowed, path, "type %s → %s", typeName(ot), typeName(nt))
	case super:
		c.add(SchemaTypeWidened, path, "type %s → %s", typeName(ot), typeName(nt))
	default:
		c.add(SchemaTypeChanged, path, "type %s → %s", typeName(ot), typeName(nt))
	}
}

func typeName(t []string) string {
	if t == nil {
		return "any"
	}
	return strings.Join(t, "|")
}

// enumValues is the set of values a schema allows by enum (or const, when
// there is no enum), as canonical JSON strings; nil means any.
func enumValues(s map[string]any) (vals []string, ok bool) {
	var raw []any
	switch {
	case s["enum"] != nil:
		list, isList := s["enum"].([]any)
		if !isList {
			return nil, false
		}
		raw = list
	case schemaHas(s, "const"):
		raw = []any{s["const"]}
	default:
		return nil, true
	}
	vals = []string{}
	for _, v := range raw {
		vals = append(vals, short(v))
	}
	sort.Strings(vals)
	return slices.Compact(vals), true
}

func schemaHas(m map[string]any, k string) bool { _, ok := m[k]; return ok }

func (c *schemaComparer) compareEnums(path string, o, n map[string]any) {
	if reflect.DeepEqual(o["enum"], n["enum"]) && reflect.DeepEqual(o["const"], n["const"]) {
		return
	}
	if schemaHas(o, "enum") && schemaHas(o, "const") || schemaHas(n, "enum") && schemaHas(n, "const") {
		c.add(SchemaUncomparable, path, "enum and const together changed; cannot compare safely")
		return
	}
	ov, ok1 := enumValues(o)
	nv, ok2 := enumValues(n)
	if !ok1 || !ok2 {
		c.add(SchemaUncomparable, path, "enum %s → %s cannot be compared safely", short(o["enum"]), short(n["enum"]))
		return
	}
	added, removed := setDiff(nv, ov), setDiff(ov, nv)
	switch {
	case ov == nil:
		c.add(SchemaEnumNarrowed, path, "values restricted to %s", strings.Join(nv, ", "))
	case nv == nil:
		c.add(SchemaEnumWidened, path, "values no longer restricted (were %s)", strings.Join(ov, ", "))
	case len(added) > 0 && len(removed) > 0:
		c.add(SchemaEnumChanged, path, "values %s added, %s removed", strings.Join(added, ", "), strings.Join(removed, ", "))
	case len(added) > 0:
		c.add(SchemaEnumWidened, path, "values %s added", strings.Join(added, ", "))
	case len(removed) > 0:
		c.add(SchemaEnumNarrowed, path, "values %s removed", strings.Join(removed, ", "))
	}
}

// setDiff returns the elements of a not in b (both sorted, b non-nil).
func setDiff(a, b []string) []string {
	var out []string
	for _, v := range a {
		if !slices.Contains(b, v) {
			out = append(out, v)
		}
	}
	return out
}

func (c *schemaComparer) compareBounds(path string, o, n map[string]any) {
	bound := func(k string, lower bool) {
		ov, nv := o[k], n[k]
		if reflect.DeepEqual(ov, nv) {
			return
		}
		of, okO := ov.(float64)
		nf, okN := nv.(float64)
		switch {
		case ov == nil && okN:
			c.add(SchemaConstraintNarrowed, path, "%s %v added", k, nf)
		case nv == nil && okO:
			c.add(SchemaConstraintWidened, path, "%s %v removed", k, of)
		case okO && okN && (nf > of) == lower:
			c.add(SchemaConstraintNarrowed, path, "%s %v → %v", k, of, nf)
		case okO && okN:
			c.add(SchemaConstraintWidened, path, "%s %v → %v", k, of, nf)
		default:
			c.add(SchemaUncomparable, path, "%s %s → %s cannot be compared safely", k, short(ov), short(nv))
		}
	}
	for _, k := range lowerBounds {
		bound(k, true)
	}
	for _, k := range upperBounds {
		bound(k, false)
	}
	for _, k := range opaqueConstraints {
		ov, nv := o[k], n[k]
		switch {
		case reflect.DeepEqual(ov, nv):
		case k == "uniqueItems" && (ov == nil || ov == false) && (nv == nil || nv == false):
		case k == "uniqueItems" && nv == true:
			c.add(SchemaConstraintNarrowed, path, "uniqueItems added")
		case k == "uniqueItems":
			c.add(SchemaConstraintWidened, path, "uniqueItems removed")
		case ov == nil:
			c.add(SchemaConstraintNarrowed, path, "%s %s added", k, short(nv))
		case nv == nil:
			c.add(SchemaConstraintWidened, path, "%s %s removed", k, short(ov))
		default:
			c.add(SchemaConstraintChanged, path, "%s %s → %s", k, short(ov), short(nv))
		}
	}
}

func requiredSet(s map[string]any) (map[string]bool, bool) {
	set := map[string]bool{}
	switch r := s["required"].(type) {
	case nil:
	case []any:
		for _, e := range r {
			name, ok := e.(string)
			if !ok {
				return nil, false
			}
			set[name] = true
		}
	default:
		return nil, false
	}
	return set, true
}

func (c *schemaComparer) compareProperties(path string, o, n map[string]any) {
	op, ok1 := propertiesOf(o)
	np, ok2 := propertiesOf(n)
	or, ok3 := requiredSet(o)
	nr, ok4 := requiredSet(n)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		if !reflect.DeepEqual(o["properties"], n["properties"]) || !reflect.DeepEqual(o["required"], n["required"]) {
			c.add(SchemaUncomparable, path, "properties or required malformed; cannot compare safely")
		}
		return
	}
	names := unionKeys(op, np)
	for name := range or {
		if _, ok := op[name]; !ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for name := range nr {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		sub := path + "." + name
		ov, inOld := op[name]
		nv, inNew := np[name]
		inOld = inOld || or[name]
		inNew = inNew || nr[name]
		switch {
		case inOld && !inNew:
			c.add(SchemaPropertyRemoved, sub, "property %q removed", name)
			continue
		case !inOld && inNew && nr[name]:
			c.add(SchemaRequiredAdded, sub, "required property %q added", name)
		case !inOld && inNew:
			c.add(SchemaPropertyAdded, sub, "optional property %q added", name)
		case !or[name] && nr[name]:
			c.add(SchemaRequiredAdded, sub, "property %q became required", name)
		case or[name] && !nr[name]:
			c.add(SchemaRequiredRemoved, sub, "property %q became optional", name)
		}
		if inOld && inNew {
			c.compare(sub, ov, nv)
		}
	}
	c.compareAdditional(path, o, n)
}

func propertiesOf(s map[string]any) (map[string]any, bool) {
	switch p := s["properties"].(type) {
	case nil:
		return map[string]any{}, true
	case map[string]any:
		return p, true
	}
	return nil, false
}

func (c *schemaComparer) compareAdditional(path string, o, n map[string]any) {
	ov, nv := o["additionalProperties"], n["additionalProperties"]
	if reflect.DeepEqual(ov, nv) {
		return
	}
	open := func(v any) bool { return v == nil || v == true }
	switch {
	case open(ov) && open(nv):
	case open(ov) && nv == false:
		c.add(SchemaConstraintNarrowed, path, "additional properties no longer allowed")
	case ov == false && open(nv):
		c.add(SchemaConstraintWidened, path, "additional properties now allowed")
	default:
		c.compare(path+".*", ov, nv)
	}
}

func (c *schemaComparer) compareItems(path string, o, n map[string]any) {
	ov, nv := o["items"], n["items"]
	if reflect.DeepEqual(ov, nv) {
		return
	}
	_, okO := ov.([]any)
	_, okN := nv.([]any)
	if okO || okN {
		c.add(SchemaUncomparable, path, "tuple items changed; cannot compare safely")
		return
	}
	c.compare(path+"[]", ov, nv)
}

// normalizeJSON turns a decoded YAML or JSON value into what
// encoding/json decodes (float64 numbers, map[string]any objects), so
// schemas from different decoders compare equal. A value that JSON cannot
// encode is returned as it is (and compares as uncomparable).
func normalizeJSON(v map[string]any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

// short renders a value as compact JSON for details.
func short(v any) string {
	if v == nil {
		return "none"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

func adaptersByID(c *Catalogue) map[string]AdapterContract {
	m := map[string]AdapterContract{}
	if c != nil {
		for _, a := range c.Adapters {
			m[a.AdapterID] = a
		}
	}
	return m
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// Largest returns the largest bump among changes (None for none).
func Largest(changes []Change) Bump {
	b := None
	for _, c := range changes {
		b = max(b, c.Bump)
	}
	return b
}

// AffectedToolSpecs returns the tool_ids of the ToolSpecs a change
// affects: those naming its adapter, and its operation when the change is
// about one operation.
func AffectedToolSpecs(c Change, specs []ToolSpec) []string {
	var ids []string
	for _, s := range specs {
		if s.AdapterID != c.AdapterID {
			continue
		}
		if c.Operation != "" && s.AdapterOperation != c.Operation {
			continue
		}
		ids = append(ids, s.ToolID)
	}
	return ids
}
