package crewai_test

import (
	"fmt"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/crewai"
)

// A CrewAI project in one document becomes a contract: a step per task,
// the placeholders a run input, output_file a file the step must create.
func ExampleParse() {
	p, err := crewai.Parse([]byte(`
agents:
  writer:
    role: Writer
    goal: Write about {topic}
    backstory: You write.
tasks:
  draft:
    description: Draft a post about {topic}.
    expected_output: A markdown post.
    agent: writer
    output_file: post.md
  title:
    description: Give the post a title.
    expected_output: One line.
    agent: writer
`))
	if err != nil {
		panic(err)
	}
	c, err := crewai.ToContract(p, contract.AdapterOptions{})
	if err != nil {
		panic(err)
	}
	for _, st := range c.Steps {
		fmt.Println(st.ID, st.Agent, st.DependsOn, st.Consumes, st.Creates, len(st.Assertions))
	}
	fmt.Println(c.Resources[0].ID, c.Resources[0].Schema["required"])
	// Output:
	// draft writer [] [inputs] [file_post_md] 2
	// title writer [draft] [inputs] [] 1
	// inputs [topic]
}
