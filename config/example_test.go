package config_test

import (
	"fmt"
	"time"

	"github.com/pactum/pactum/config"
)

func ExampleParse() {
	c, err := config.Parse([]byte(`
agents:
  - name: greeter
    type: echo
    timeout: 30s
`), "pactum.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	a := c.Agents[0]
	fmt.Println(c.Listen, c.BaseURL, c.Store)
	fmt.Println(a.Name, a.Action, a.Timeout, a.Retry.MaxAttempts, c.DefaultAgent)
	// Output:
	// 127.0.0.1:9000 http://127.0.0.1:9000 sqlite://pactum.db
	// greeter greeter 30s 3 greeter
}

func ExampleParse_errors() {
	_, err := config.Parse([]byte(`
workers: 0
agents:
  - name: greeter
    type: echo
    timout: 30s
actors:
  - name: bob
    actions: [greet]
`), "pactum.yaml")
	fmt.Println(err)
	// Output:
	// pactum.yaml:2:10: workers: 0 out of range [1, 1024]
	// pactum.yaml:6:5: agents[0].timout: unknown field "timout" (did you mean "timeout"?)
	// pactum.yaml:9:15: actors[0].actions[0]: unknown action "greet" (actions: "greeter")
}

func ExampleConfig_AgentSpec() {
	c, err := config.Parse([]byte(`
agents:
  - name: slow
    type: echo
    echo:
      delay: 2s
      prefx: "slow: "
`), "pactum.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	// A runtime decodes its own settings through the spec.
	var settings struct {
		Prefix string        `yaml:"prefix"`
		Delay  time.Duration `yaml:"delay"`
	}
	spec := c.AgentSpec(c.Agents[0], "")
	fmt.Println(spec.Name, spec.Type)
	fmt.Println(spec.Decode(&settings))
	// Output:
	// slow echo
	// pactum.yaml:7:7: agents[0].echo.prefx: unknown field "prefx" (did you mean "prefix"?)
}
