package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/server"
)

// VerifyLive is `pactum toolspec verify --live`: it connects to the
// server of every `mcp` agent of cfg (stdio or HTTP), lists its tools and
// reports, one line per finding on w, the tools that disappeared and the
// input schemas that changed in a breaking way (a required property
// added, a property removed, a type changed). The reference is each
// agent's ToolSpec (adapter_id: mcp) and its recorded input_schema; an
// MCP agent without a ToolSpec is checked for its tool's presence only.
// It returns how many findings it reported (a server that cannot be
// reached counts as one); the command exits 1 when that is not 0.
// baseDir is as for server.Check.
func VerifyLive(ctx context.Context, w io.Writer, cfg *config.Config, baseDir string) (int, error) {
	fs, err := server.CheckLive(ctx, cfg, baseDir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range fs {
		head := fmt.Sprintf("agent %s (%s), toolspec %s, tool %s", f.Agent, f.Server, f.ToolSpec.ToolID, f.ToolSpec.AdapterOperation)
		switch {
		case f.Err != nil:
			n++
			fmt.Fprintf(w, "%s: UNREACHABLE: %v\n", head, f.Err)
		case len(f.Violations) == 0:
			fmt.Fprintf(w, "%s: ok\n", head)
		default:
			for _, v := range f.Violations {
				n++
				fmt.Fprintf(w, "%s: BREAKING: %s\n", head, v.Error())
			}
		}
	}
	if len(fs) == 0 {
		fmt.Fprintln(w, "no mcp agents to check")
	}
	return n, nil
}

// VerifyLiveFile is VerifyLive on the configuration file at path, whose
// directory relative paths resolve against: what `pactum toolspec verify
// --live --config FILE` calls.
func VerifyLiveFile(ctx context.Context, w io.Writer, path string) (int, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return 0, err
	}
	return VerifyLive(ctx, w, cfg, filepath.Dir(path))
}
