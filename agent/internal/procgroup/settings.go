package procgroup

import (
	"fmt"
	"os"
	"strings"
)

// CheckSettings checks what an agent's configuration gives a program it
// starts (the exec and mcp runtimes): env names a variable each, and dir,
// when set, is an existing directory. Errors name the setting.
func CheckSettings(env map[string]string, dir string) error {
	for k := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("env: invalid variable name %q", k)
		}
	}
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("dir: %s is not a directory", dir)
	}
	return nil
}
