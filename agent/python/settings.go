package python

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/pactum/pactum/agent/internal/procgroup"
)

// Defaults of Settings.
const (
	DefaultPython            = "python3"
	DefaultFramework         = FrameworkAuto
	DefaultStartTimeout      = time.Minute
	DefaultRestartBackoff    = time.Second
	DefaultMaxRestartBackoff = 30 * time.Second
)

// Frameworks, the values of Settings.Framework.
const (
	FrameworkAuto      = "auto"
	FrameworkLangGraph = "langgraph"
	FrameworkLangChain = "langchain"
	FrameworkCrewAI    = "crewai"
	FrameworkCallable  = "callable"
)

var frameworks = []string{FrameworkAuto, FrameworkLangGraph, FrameworkLangChain, FrameworkCrewAI, FrameworkCallable}

// Settings configures a python runtime: the mapping under `python:` in an
// agent's configuration.
//
//	agents:
//	  - name: research
//	    type: python
//	    python:
//	      object: myagents.graph:app
//	      python: .venv/bin/python
type Settings struct {
	// Object names what to run, as package.module:attr (attr may be a
	// dotted path): a LangGraph compiled graph, a LangChain Runnable, a
	// CrewAI Crew, or a sync or async callable or (async) generator.
	// Required.
	Object string `yaml:"object"`
	// Python is the interpreter. A name without a slash is looked up in
	// PATH; a path with a slash is relative to Dir (in configuration: to
	// the configuration file's directory), as written, so that a
	// virtualenv's bin/python keeps its environment. Default: python3.
	Python string `yaml:"python"`
	// Path lists directories put in front of sys.path, in order; relative
	// ones are relative to Dir. Dir itself is always on sys.path (as the
	// current directory). Default: none.
	Path []string `yaml:"path"`
	// Dir is the worker's working directory. Default: the configuration
	// file's directory (in Go: the current directory).
	Dir string `yaml:"dir"`
	// Framework says how Object is called: auto (by duck typing, see the
	// package doc), langgraph, langchain, crewai or callable. Default:
	// auto.
	Framework string `yaml:"framework"`
	// InputKey is the key the message's text goes under: the state key of
	// the messages of a LangGraph graph (default "messages"), the input
	// key of a LangChain Runnable (default "input"; "" passes the text
	// itself), the inputs key of a CrewAI Crew (default "topic"). Unused
	// for callables.
	InputKey *string `yaml:"input_key"`
	// OutputKey picks the answer out of a dict result (a LangChain chain's
	// output, a LangGraph state). Default: the last message of a LangGraph
	// state; for LangChain the only key, else output, answer, result or
	// text.
	OutputKey string `yaml:"output_key"`
	// Env sets environment variables of the worker. A value may reference
	// pactum's own environment as ${VAR}; an unset VAR is a configuration
	// error. Default: none.
	Env map[string]string `yaml:"env"`
	// InheritEnv passes pactum's environment on to the worker, under Env.
	// Default: true.
	InheritEnv *bool `yaml:"inherit_env"`
	// StartTimeout bounds the worker's start: the interpreter's start and
	// the import of Object. Default: 1m.
	StartTimeout time.Duration `yaml:"start_timeout"`
	// RestartBackoff is the wait before starting a worker again after the
	// second failure in a row, doubled for each further one up to
	// MaxRestartBackoff. The first restart is immediate. Defaults: 1s and
	// 30s.
	RestartBackoff    time.Duration `yaml:"restart_backoff"`
	MaxRestartBackoff time.Duration `yaml:"max_restart_backoff"`
}

func (s Settings) withDefaults() Settings {
	if s.Python == "" {
		s.Python = DefaultPython
	}
	if s.Framework == "" {
		s.Framework = DefaultFramework
	}
	if s.StartTimeout == 0 {
		s.StartTimeout = DefaultStartTimeout
	}
	if s.RestartBackoff == 0 {
		s.RestartBackoff = DefaultRestartBackoff
	}
	if s.MaxRestartBackoff == 0 {
		s.MaxRestartBackoff = max(DefaultMaxRestartBackoff, s.RestartBackoff)
	}
	return s
}

// objectPattern is package.module:attr, with a dotted attr.
var objectPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// validate checks s after defaults, naming the offending field.
func (s Settings) validate() error {
	switch {
	case s.Object == "":
		return errors.New("object: required: what to run, as package.module:attr (e.g. myagents.graph:app)")
	case !objectPattern.MatchString(s.Object):
		return fmt.Errorf("object: %q is not package.module:attr (e.g. myagents.graph:app)", s.Object)
	case strings.TrimSpace(s.Python) == "":
		return errors.New("python: must not be blank")
	}
	found := false
	for _, f := range frameworks {
		found = found || s.Framework == f
	}
	if !found {
		return fmt.Errorf("framework: %q is not one of %s", s.Framework, strings.Join(frameworks, ", "))
	}
	if s.InputKey != nil && s.Framework == FrameworkCallable {
		return errors.New("input_key: not used with framework callable (a callable gets the whole input)")
	}
	for i, p := range s.Path {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("path[%d]: must not be blank", i)
		}
	}
	if err := procgroup.CheckSettings(s.Env, s.Dir); err != nil {
		return err
	}
	switch {
	case s.StartTimeout < 0:
		return fmt.Errorf("start_timeout: must not be negative (got %s)", s.StartTimeout)
	case s.RestartBackoff < 0:
		return fmt.Errorf("restart_backoff: must not be negative (got %s)", s.RestartBackoff)
	case s.MaxRestartBackoff < s.RestartBackoff:
		return fmt.Errorf("max_restart_backoff: must not be less than restart_backoff (%s < %s)", s.MaxRestartBackoff, s.RestartBackoff)
	}
	return nil
}

// resolve makes the interpreter's path (when it has a slash) and Path
// absolute against Dir.
func (s Settings) resolve() Settings {
	if strings.Contains(s.Python, "/") && !filepath.IsAbs(s.Python) && s.Dir != "" {
		s.Python = filepath.Join(s.Dir, s.Python)
	}
	if len(s.Path) > 0 {
		ps := make([]string, len(s.Path))
		for i, p := range s.Path {
			if !filepath.IsAbs(p) && s.Dir != "" {
				p = filepath.Join(s.Dir, p)
			}
			ps[i] = p
		}
		s.Path = ps
	}
	return s
}
