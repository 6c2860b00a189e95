// Package version names the running build, for `pactum version` and the
// MCP implementation info.
package version

import "runtime/debug"

// Version is set at build time with
// -ldflags "-X github.com/pactum/pactum/internal/version.Version=…";
// otherwise String uses the module version from the build info.
var Version = ""

// String returns Version, or the main module's version and VCS revision
// from the build info, or "unknown".
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v := bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
		return v
	}
	return "unknown"
}
