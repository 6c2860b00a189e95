// Builds graphs with the real @langchain/langgraph and prints each one's
// getGraph().toJSON(), keyed by name, as one JSON object. The test runs it
// with `node --input-type=module` from agent/langgraph/testdata/js, where
// the pinned packages are installed.
import { StateGraph, MessagesAnnotation, START, END } from "@langchain/langgraph";

const node = (name) => async () => ({ messages: [{ role: "assistant", content: name }] });

// A straight line: research → write → review.
const linear = new StateGraph(MessagesAnnotation)
  .addNode("research", node("research"))
  .addNode("write", node("write"))
  .addNode("review", node("review"))
  .addEdge(START, "research")
  .addEdge("research", "write")
  .addEdge("write", "review")
  .addEdge("review", END)
  .compile();

// A ReAct loop: agent decides between tools and the end; tools go back to
// the agent.
const react = new StateGraph(MessagesAnnotation)
  .addNode("agent", node("agent"))
  .addNode("tools", node("tools"))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", () => END, ["tools", END])
  .addEdge("tools", "agent")
  .compile();

// A fan-out and join with a routed branch: plan → (search, calc) → merge;
// merge routes to publish or redo (which goes back to plan).
const branching = new StateGraph(MessagesAnnotation)
  .addNode("plan", node("plan"))
  .addNode("search", node("search"))
  .addNode("calc", node("calc"))
  .addNode("merge", node("merge"))
  .addNode("publish", node("publish"))
  .addNode("redo", node("redo"))
  .addEdge(START, "plan")
  .addEdge("plan", "search")
  .addEdge("plan", "calc")
  .addEdge(["search", "calc"], "merge")
  .addConditionalEdges("merge", () => "publish", { ok: "publish", again: "redo" })
  .addEdge("redo", "plan")
  .addEdge("publish", END)
  .compile();

const out = {};
for (const [name, g] of Object.entries({ linear, react, branching })) {
  out[name] = (await g.getGraphAsync()).toJSON();
}
process.stdout.write(JSON.stringify(out, null, 2) + "\n");
