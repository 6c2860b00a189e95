package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pactum/pactum/task"
)

// ExtractResources reads the resources step s creates from what it
// produced (in.Result, and files under in.WorkDir), by each resource's
// definition in the contract (an id the contract does not define is a data
// resource named by the id):
//
//   - file: the file at Location (else the id) under in.WorkDir, which
//     must exist inside it; its Data is set when it is JSON (format json
//     or a .json name) and parses;
//   - artifact: the artifact whose name, else id, is Location (else the
//     id): its text, and its first data part as Data;
//   - data: the first data part of the artifact named Location when set,
//     else of the output; without a data part, the text when it is a JSON
//     object or array (the rule the output target reads JSON by);
//   - message: the output's text, when it is not blank.
//
// It returns the resources it found, by id, and their definitions in the
// order the step lists them (for VerifiedResult's ResourcesCreated); a
// resource it does not find is in neither. Give the map to the post-gate
// (Input.Resources) and to the steps that consume them.
func ExtractResources(s *CompiledStep, in *Input) (map[string]Resource, []ContractResource) {
	found := make(map[string]Resource, len(s.step.Creates))
	var created []ContractResource
	if in == nil {
		in = &Input{}
	}
	for _, id := range s.step.Creates {
		if _, dup := found[id]; dup {
			continue
		}
		def := s.contract.resource(id).def
		r, why := extractResource(def, in)
		if why != "" {
			continue
		}
		found[id] = r
		created = append(created, r.ContractResource)
	}
	return found, created
}

// extractResource reads one resource def from in; when it is not there,
// why says what the step did instead ("answered text that is not JSON"),
// for the pre-gate of the step that needed it.
func extractResource(def ContractResource, in *Input) (Resource, string) {
	out := in.Result
	switch def.Type {
	case ResourceFile:
		def.Location = cmpOr(def.Location, def.ID)
		_, b, err := openInWorkDir(in.WorkDir, def.Location, true)
		if err != nil {
			return Resource{}, fmt.Sprintf("left no file %s in its working directory (%v)", def.Location, err)
		}
		r := Resource{ContractResource: def, Text: string(b), MediaType: fileMediaType(def.Location, b)}
		if strings.EqualFold(def.Format, "json") || strings.EqualFold(path.Ext(def.Location), ".json") {
			var x any
			if json.Unmarshal(b, &x) == nil {
				r.Data = x
			}
		}
		return r, ""
	case ResourceArtifact:
		if out == nil {
			return Resource{}, answeredNothing
		}
		a := findArtifact(out.Artifacts, cmpOr(def.Location, def.ID))
		if a == nil {
			return Resource{}, noArtifact(out, cmpOr(def.Location, def.ID))
		}
		v := partsValue(a.Parts)
		r := Resource{ContractResource: def, Text: v.text}
		if len(a.Parts) > 0 {
			r.MediaType = partMediaType(a.Parts[0])
		}
		if v.data != nil {
			if x, err := v.JSON(); err == nil {
				r.Data = x
			}
		}
		return r, ""
	case ResourceData, "":
		if out == nil {
			return Resource{}, answeredNothing
		}
		var v *value
		if def.Location != "" {
			a := findArtifact(out.Artifacts, def.Location)
			if a == nil {
				return Resource{}, noArtifact(out, def.Location)
			}
			v = partsValue(a.Parts)
		} else {
			v = outputValue(out)
		}
		src := v.data
		if src == nil {
			// No data part: the text, when it is a JSON object or array,
			// as the output target reads it (an exec agent printing JSON).
			t := bytes.TrimSpace([]byte(v.text))
			switch {
			case len(t) == 0:
				return Resource{}, answeredNothing
			case t[0] != '{' && t[0] != '[':
				return Resource{}, "answered text that is not a JSON object or array: " + excerpt(string(t))
			}
			src = t
		}
		var x any
		if err := json.Unmarshal(src, &x); err != nil {
			return Resource{}, fmt.Sprintf("answered text that is not JSON (%v): %s", err, excerpt(string(src)))
		}
		return Resource{ContractResource: def, Text: strings.TrimSpace(string(src)), Data: x, MediaType: "application/json"}, ""
	case ResourceMessage:
		if out == nil {
			return Resource{}, answeredNothing
		}
		text := outputValue(out).text
		if strings.TrimSpace(text) == "" {
			return Resource{}, "answered no text"
		}
		return Resource{ContractResource: def, Text: text, MediaType: "text/plain"}, ""
	}
	return Resource{}, fmt.Sprintf("cannot create a resource of type %q", def.Type)
}

const answeredNothing = "answered nothing"

// noArtifact says that out has no artifact named name, and which it has.
func noArtifact(out *task.Result, name string) string {
	var names []string
	for _, a := range out.Artifacts {
		names = append(names, strconv.Quote(cmpOr(a.Name, a.ID)))
	}
	if len(names) == 0 {
		return fmt.Sprintf("answered no artifact named %q (it answered none)", name)
	}
	return fmt.Sprintf("answered no artifact named %q (it answered %s)", name, strings.Join(names, ", "))
}

// fileMediaType guesses a file's media type from a few well-known
// extensions, else from whether it is text (the system's MIME tables are
// not asked: they differ between machines, and call a TypeScript file
// video/mp2t).
func fileMediaType(name string, b []byte) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".json":
		return "application/json"
	case ".md", ".markdown":
		return "text/markdown"
	case ".yaml", ".yml":
		return "application/yaml"
	case ".html", ".htm":
		return "text/html"
	case ".csv":
		return "text/csv"
	case ".xml":
		return "application/xml"
	case ".pdf":
		return "application/pdf"
	case ".png":
		return "image/png"
	}
	if utf8.Valid(b) {
		return "text/plain"
	}
	return "application/octet-stream"
}
