// Graphs for pactum's langgraph runtime tests, served by the pinned
// LangGraph JS Agent Server (langgraphjs dev). No model is called: a fake
// chat model streams its answer character by character.
import { StateGraph, MessagesAnnotation, START, END, interrupt } from "@langchain/langgraph";
import { AIMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";

function lastText(state) {
  const m = state.messages[state.messages.length - 1];
  return typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? "");
}

// echo streams "You said: <input>" through a chat model.
async function echoNode(state) {
  const model = new FakeListChatModel({ responses: [`You said: ${lastText(state)}`] });
  const reply = await model.invoke(state.messages);
  return { messages: [reply] };
}
export const echo = new StateGraph(MessagesAnnotation)
  .addNode("echo", echoNode)
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile();

// slow streams its answer over several seconds (200 ms a character).
async function slowNode(state) {
  const model = new FakeListChatModel({ responses: [`slowly: ${lastText(state)}`], sleep: 200 });
  const reply = await model.invoke(state.messages);
  return { messages: [reply] };
}
export const slow = new StateGraph(MessagesAnnotation)
  .addNode("slow", slowNode)
  .addEdge(START, "slow")
  .addEdge("slow", END)
  .compile();

// asker asks for a name (interrupt) and greets whoever answers.
async function askNode() {
  const name = interrupt("What is your name?");
  const who = typeof name === "string" ? name : JSON.stringify(name);
  return { messages: [new AIMessage(`Hello, ${who}!`)] };
}
export const asker = new StateGraph(MessagesAnnotation)
  .addNode("ask", askNode)
  .addEdge(START, "ask")
  .addEdge("ask", END)
  .compile();

// form asks with structured data instead of text.
async function formNode() {
  const v = interrupt({ question: "Approve?", options: ["yes", "no"] });
  return { messages: [new AIMessage(`Decision: ${JSON.stringify(v)}`)] };
}
export const form = new StateGraph(MessagesAnnotation)
  .addNode("form", formNode)
  .addEdge(START, "form")
  .addEdge("form", END)
  .compile();

// fail always throws.
async function failNode() {
  throw new Error("the graph failed on purpose");
}
export const fail = new StateGraph(MessagesAnnotation)
  .addNode("fail", failNode)
  .addEdge(START, "fail")
  .addEdge("fail", END)
  .compile();

// pair asks two questions at once, from two nodes that run in parallel,
// and answers with both replies.
import { Annotation } from "@langchain/langgraph";
const PairState = Annotation.Root({
  ...MessagesAnnotation.spec,
  replies: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});
const askFirst = async () => ({ replies: [`first=${interrupt("First question?")}`] });
const askSecond = async () => ({ replies: [`second=${interrupt("Second question?")}`] });
const joinReplies = async (state) => ({ messages: [new AIMessage([...state.replies].sort().join(", "))] });
export const pair = new StateGraph(PairState)
  .addNode("first", askFirst)
  .addNode("second", askSecond)
  .addNode("join", joinReplies)
  .addEdge(START, "first")
  .addEdge(START, "second")
  .addEdge("first", "join")
  .addEdge("second", "join")
  .addEdge("join", END)
  .compile();

// chain runs three nodes in a row, each adding a message; the last one
// takes a second and a half, so that a run stopped after the second is
// canceled while the third runs.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const chain = new StateGraph(MessagesAnnotation)
  .addNode("research", async (s) => ({ messages: [new AIMessage(`facts: ${s.messages[0].content}`)] }))
  .addNode("write", async (s) => ({ messages: [new AIMessage(`# Report\n\n${lastText(s)}`)], }))
  .addNode("review", async (s) => { await sleep(1500); return { messages: [new AIMessage(`${lastText(s)}\n\nReviewed`)] }; })
  .addEdge(START, "research")
  .addEdge("research", "write")
  .addEdge("write", "review")
  .addEdge("review", END)
  .compile();
