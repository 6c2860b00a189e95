package contract

import (
	"encoding/json"
	"path"
	"strings"
	"unicode/utf8"
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
//     else of the output;
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
		r, ok := extractResource(def, in)
		if !ok {
			continue
		}
		found[id] = r
		created = append(created, r.ContractResource)
	}
	return found, created
}

func extractResource(def ContractResource, in *Input) (Resource, bool) {
	out := in.Result
	switch def.Type {
	case ResourceFile:
		def.Location = cmpOr(def.Location, def.ID)
		_, b, err := openInWorkDir(in.WorkDir, def.Location, true)
		if err != nil {
			return Resource{}, false
		}
		r := Resource{ContractResource: def, Text: string(b), MediaType: fileMediaType(def.Location, b)}
		if strings.EqualFold(def.Format, "json") || strings.EqualFold(path.Ext(def.Location), ".json") {
			var x any
			if json.Unmarshal(b, &x) == nil {
				r.Data = x
			}
		}
		return r, true
	case ResourceArtifact:
		if out == nil {
			return Resource{}, false
		}
		a := findArtifact(out.Artifacts, cmpOr(def.Location, def.ID))
		if a == nil {
			return Resource{}, false
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
		return r, true
	case ResourceData, "":
		if out == nil {
			return Resource{}, false
		}
		var v *value
		if def.Location != "" {
			a := findArtifact(out.Artifacts, def.Location)
			if a == nil {
				return Resource{}, false
			}
			v = partsValue(a.Parts)
		} else {
			v = outputValue(out)
		}
		if v.data == nil {
			return Resource{}, false
		}
		var x any
		if json.Unmarshal(v.data, &x) != nil {
			return Resource{}, false
		}
		return Resource{ContractResource: def, Text: strings.TrimSpace(string(v.data)), Data: x, MediaType: "application/json"}, true
	case ResourceMessage:
		if out == nil {
			return Resource{}, false
		}
		text := outputValue(out).text
		if strings.TrimSpace(text) == "" {
			return Resource{}, false
		}
		return Resource{ContractResource: def, Text: text, MediaType: "text/plain"}, true
	}
	return Resource{}, false
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
