// The graph the Agent Server serves in TestAgentServerHistory (and that
// made testdata/history.json): research, then write.
import { StateGraph, MessagesAnnotation, START, END } from "@langchain/langgraph";

const reply = (text) => async (state) => ({ messages: [{ role: "assistant", content: text(state) }] });

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("research", reply((s) => "facts: " + s.messages[0].content))
  .addNode("write", reply(() => "# Report\nThe facts, written up."))
  .addEdge(START, "research")
  .addEdge("research", "write")
  .addEdge("write", END)
  .compile();
