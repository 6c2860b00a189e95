package specwright

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// fileLine finds files a chunk's output says it created or changed: a line
// starting with create, modify, update or delete (git's summary
// "create mode 100644 PATH" included) followed by a path.
var fileLine = regexp.MustCompile(`(?im)^\s*(create|modify|update|delete)(?:\s+mode\s+\d+)?\s+(\S+)\s*$`)

// exportDecl finds TypeScript exports.
var exportDecl = regexp.MustCompile(`export\s+(?:default\s+)?(?:declare\s+)?(?:async\s+)?(const|let|function|interface|type|class|enum)\s+([A-Za-z_$][\w$]*)`)

// ExtractResources implements contract.ProtocolAdapter: output is a
// ChunkOutput (or its JSON) or a string (the output alone). A chunk's
// output only names the files it wrote and the exports it declared, so
// the resources carry no content (Text and Data are empty): a step that
// consumes one reads the file from its working directory.
func (Adapter) ExtractResources(output any, step *contract.ContractStep) ([]contract.Resource, error) {
	if s, ok := output.(string); ok {
		return ExtractOutput(ChunkOutput{Output: s}, step), nil
	}
	o, err := contract.Decode[ChunkOutput](output)
	if err != nil {
		return nil, fmt.Errorf("specwright: ExtractResources: %w", err)
	}
	return ExtractOutput(o, step), nil
}

// ExtractOutput describes what a chunk's output says it made: each file a
// line names (create, modify, update, delete — git's "create mode 100644
// PATH" too) is a file resource (FileResourceID, location the path,
// metadata action); each TypeScript export declaration is a file resource
// "export_NAME" (metadata exportName, exportType). Each resource's
// metadata names the step (createdByStep).
func ExtractOutput(o ChunkOutput, step *contract.ContractStep) []contract.Resource {
	sid := ""
	if step != nil {
		sid = step.ID
	}
	seen := map[string]bool{}
	var out []contract.Resource
	for _, m := range fileLine.FindAllStringSubmatch(o.Output, -1) {
		id := FileResourceID(m[2])
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, contract.Resource{ContractResource: contract.ContractResource{
			ID: id, Type: contract.ResourceFile, Location: m[2], Format: formatOf(m[2]),
			Metadata: map[string]any{"action": strings.ToLower(m[1]), "createdByStep": sid},
		}})
	}
	for _, m := range exportDecl.FindAllStringSubmatch(o.Output, -1) {
		id := convert.ID("export_", m[2])
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, contract.Resource{ContractResource: contract.ContractResource{
			ID: id, Type: contract.ResourceFile, Format: "typescript",
			Metadata: map[string]any{"exportName": m[2], "exportType": m[1], "createdByStep": sid},
		}})
	}
	return out
}

// InjectContext implements contract.ProtocolAdapter; it returns the
// step's prompt, a string (Prompt).
func (Adapter) InjectContext(step *contract.ContractStep, available []contract.Resource) (any, error) {
	if step == nil {
		return nil, fmt.Errorf("specwright: InjectContext: nil step")
	}
	return Prompt(step, available), nil
}

// Prompt is a chunk's prompt, as the seed writes it: "# Task: TITLE", the
// description; "## YOU MUST CREATE" with what the step creates; "##
// AVAILABLE IMPORTS (verified to exist)" with the exports among the
// available resources (metadata exportName), grouped by the file they come
// from; "## REQUIREMENTS (Must Pass)" with the assert messages and "##
// GUIDANCE (Should Follow)" with the suggest messages. A section with
// nothing to list is left out.
func Prompt(step *contract.ContractStep, available []contract.Resource) string {
	var b strings.Builder
	title := convert.String(step.Metadata, MetaTitle)
	if title == "" {
		title = step.Description
	}
	fmt.Fprintf(&b, "# Task: %s\n\n%s", title, step.Description)
	if len(step.Creates) > 0 {
		b.WriteString("\n\n## YOU MUST CREATE")
		for _, c := range step.Creates {
			b.WriteString("\n- " + c)
		}
		b.WriteString("\n\nThese are REQUIRED. The step will fail if any are missing.")
	}
	var sources []string
	bySource := map[string][]contract.Resource{}
	for _, r := range available {
		if convert.String(r.Metadata, "exportName") == "" {
			continue
		}
		from := convert.String(r.Metadata, "exportedFrom")
		if from == "" {
			from = r.Location
		}
		if from == "" {
			from = "unknown"
		}
		if _, ok := bySource[from]; !ok {
			sources = append(sources, from)
		}
		bySource[from] = append(bySource[from], r)
	}
	if len(sources) > 0 {
		b.WriteString("\n\n## AVAILABLE IMPORTS (verified to exist)")
		for _, from := range sources {
			fmt.Fprintf(&b, "\n\nFrom %q:", from)
			for _, r := range bySource[from] {
				kind := convert.String(r.Metadata, "exportType")
				if kind == "" {
					kind = "export"
				}
				fmt.Fprintf(&b, "\n  - %s (%s)", convert.String(r.Metadata, "exportName"), kind)
			}
		}
	}
	section := func(heading string, t contract.AssertionType) {
		first := true
		for _, a := range step.Assertions {
			if a.Type != t {
				continue
			}
			if first {
				b.WriteString("\n\n## " + heading)
				first = false
			}
			b.WriteString("\n- " + a.Message)
		}
	}
	section("REQUIREMENTS (Must Pass)", contract.Assert)
	section("GUIDANCE (Should Follow)", contract.Suggest)
	return b.String()
}

// FileExportValidator is the file-export check: the resource its target
// names ("resource:ID") must be present and its content must export the
// names the resource's metadata gives (exportName, exports) and the check's
// config (exports). The content is the resource's Text, else the file at
// its location under the input's working directory. A resource that names
// no export passes once present.
func FileExportValidator(_ context.Context, c *contract.Check, in *contract.Input) contract.Verdict {
	id, ok := strings.CutPrefix(c.Target, "resource:")
	if !ok {
		return contract.Verdict{Reason: fmt.Sprintf("file-export needs a resource:ID target, not %q", c.Target)}
	}
	r, ok := in.Resources[id]
	if !ok {
		return contract.Verdict{Reason: fmt.Sprintf("resource %s is not available", id)}
	}
	var names []string
	if n := convert.String(r.Metadata, "exportName"); n != "" {
		names = append(names, n)
	}
	names = append(names, convert.Strings(r.Metadata, "exports")...)
	names = append(names, convert.Strings(c.Config, "exports")...)
	if len(names) == 0 {
		return contract.Verdict{Passed: true}
	}
	text := r.Text
	if text == "" {
		loc := r.Location
		if loc == "" || in.WorkDir == "" || !filepath.IsLocal(filepath.FromSlash(loc)) {
			return contract.Verdict{Reason: fmt.Sprintf("resource %s has no content to look for exports in", id)}
		}
		root, err := os.OpenRoot(in.WorkDir)
		if err != nil {
			return contract.Verdict{Reason: fmt.Sprintf("working directory: %v", err)}
		}
		defer root.Close()
		b, err := root.ReadFile(filepath.FromSlash(loc))
		if err != nil {
			return contract.Verdict{Reason: fmt.Sprintf("resource %s: %v", id, err)}
		}
		text = string(b)
	}
	exported := map[string]bool{}
	for _, m := range exportDecl.FindAllStringSubmatch(text, -1) {
		exported[m[2]] = true
	}
	for _, m := range exportList.FindAllStringSubmatch(text, -1) {
		for _, n := range strings.Split(m[1], ",") {
			n = strings.TrimSpace(n)
			if i := strings.Index(n, " as "); i >= 0 {
				n = strings.TrimSpace(n[i+4:])
			}
			exported[strings.TrimPrefix(n, "type ")] = true
		}
	}
	var missing []string
	for _, n := range names {
		if !exported[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return contract.Verdict{Reason: fmt.Sprintf("resource %s does not export %s", id, strings.Join(missing, ", "))}
	}
	return contract.Verdict{Passed: true}
}

// exportList finds "export { a, b as c }".
var exportList = regexp.MustCompile(`export\s+(?:type\s+)?\{([^}]*)\}`)
