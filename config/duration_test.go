package config_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/config"
)

func TestDuration(t *testing.T) {
	t.Parallel()
	var v struct {
		D config.Duration `yaml:"d" json:"d"`
	}
	if err := yaml.Unmarshal([]byte("d: 1m30s\n"), &v); err != nil || v.D.Duration != 90*time.Second {
		t.Fatalf("yaml: %v, %s", err, v.D)
	}
	out, err := yaml.Marshal(v)
	if err != nil || string(out) != "d: 1m30s\n" {
		t.Errorf("yaml.Marshal = %q, %v", out, err)
	}
	j, err := json.Marshal(v)
	if err != nil || string(j) != `{"d":"1m30s"}` {
		t.Errorf("json.Marshal = %s, %v", j, err)
	}
	v.D = config.D(0)
	if err := json.Unmarshal(j, &v); err != nil || v.D.Duration != 90*time.Second {
		t.Errorf("json.Unmarshal: %v, %s", err, v.D)
	}
	for _, bad := range []string{"d: 30\n", "d: [1s]\n", "d: soon\n"} {
		err := yaml.Unmarshal([]byte(bad), &v)
		if err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("yaml.Unmarshal(%q) = %v, want an error naming line 1", bad, err)
		}
	}
	if err := json.Unmarshal([]byte(`{"d":"x"}`), &v); err == nil {
		t.Error("json.Unmarshal of a bad duration succeeded")
	}
}
