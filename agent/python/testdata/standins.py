# Stand-ins for LangGraph, LangChain and CrewAI objects, which cannot be
# installed here (no PyPI). Each implements exactly the methods and
# attributes pactum's worker calls or looks for, with the signatures of
# the real libraries:
#
#   LangGraph CompiledStateGraph: get_graph(), get_state(config),
#     ainvoke(input, config=...),
#     astream(input, config=..., stream_mode="values"), .checkpointer;
#     the state's "messages" hold message objects with .content.
#   LangChain Runnable: ainvoke(input), invoke(input), astream(input)
#     yielding chunks with .content (AIMessageChunk), get_graph().
#   CrewAI Crew: kickoff_async(inputs=...), kickoff(inputs=...), returning
#     a CrewOutput with .raw.
#
# Their answers say what they were given, so that tests can check the
# shaping of inputs as well as of outputs.
import asyncio
import json


class AIMessage:
    type = "ai"

    def __init__(self, content):
        self.content = content


def _content(m):
    return m["content"] if isinstance(m, dict) else m.content


class Graph:
    """A compiled LangGraph graph whose one node answers with what it saw."""

    def __init__(self, checkpointer=None, words=("Hel", "lo", " world")):
        self.checkpointer = checkpointer
        self.words = words
        self.seen = []

    def get_graph(self, config=None):
        return {"nodes": ["__start__", "agent", "__end__"]}

    def get_state(self, config, *, subgraphs=False):
        raise AssertionError("the worker never reads the state itself")

    def _describe(self, state, config):
        msgs = state["messages"]
        return json.dumps({
            "n": len(msgs),
            "roles": [m["role"] for m in msgs],
            "last": _content(msgs[-1]),
            "thread": config["configurable"]["thread_id"],
        })

    async def ainvoke(self, input, config=None, **kwargs):
        await asyncio.sleep(0)
        msgs = list(input["messages"])
        return {"messages": msgs + [AIMessage(self._describe(input, config))], "steps": 1}

    async def astream(self, input, config=None, stream_mode=None, **kwargs):
        assert stream_mode == "values", stream_mode
        msgs = list(input["messages"])
        yield {"messages": msgs}  # the input state comes first
        text = ""
        for w in self.words:
            await asyncio.sleep(0)
            text += w
            yield {"messages": msgs + [AIMessage(text)]}


class Runnable:
    """A LangChain chain (prompt | model): answers with a message. Like
    every Runnable it has get_graph, which does not make it a LangGraph
    graph."""

    def get_graph(self, config=None):
        return {"nodes": ["prompt", "model"]}

    async def ainvoke(self, input, config=None, **kwargs):
        return AIMessage("answer to " + json.dumps(input, sort_keys=True))

    def invoke(self, input, config=None, **kwargs):
        raise AssertionError("the worker should prefer ainvoke")

    async def astream(self, input, config=None, **kwargs):
        for tok in ["to", "k", "ens"]:
            await asyncio.sleep(0)
            yield AIMessage(tok)


class DictRunnable:
    """A LangChain chain whose output is a dict (a RAG chain)."""

    async def ainvoke(self, input, config=None, **kwargs):
        return {"answer": "from " + input["question"], "context": ["doc1", "doc2"]}


class SyncRunnable:
    """A Runnable with invoke only (a custom one)."""

    def invoke(self, input, config=None, **kwargs):
        return "sync " + input["input"]


class CrewOutput:
    def __init__(self, raw):
        self.raw = raw
        self.json_dict = None

    def __str__(self):
        return "CrewOutput(...)"


class Crew:
    """A CrewAI crew with kickoff_async."""

    async def kickoff_async(self, inputs=None):
        await asyncio.sleep(0)
        return CrewOutput("crew got " + json.dumps(inputs, sort_keys=True))

    def kickoff(self, inputs=None):
        raise AssertionError("the worker should prefer kickoff_async")


class SyncCrew:
    """An older CrewAI crew: kickoff only."""

    def kickoff(self, inputs=None):
        return CrewOutput("sync crew got " + json.dumps(inputs, sort_keys=True))


graph = Graph()
remembering_graph = Graph(checkpointer=object())
chain = Runnable()
rag_chain = DictRunnable()
sync_chain = SyncRunnable()
crew = Crew()
sync_crew = SyncCrew()


class InterruptingGraph(Graph):
    """A graph with a checkpointer whose node calls interrupt(): its
    ainvoke/astream return (yield) a state with __interrupt__, and
    Command(resume=...) continues the thread."""

    def __init__(self):
        super().__init__(checkpointer=object())

    def _step(self, input, config):
        from langgraph.types import Command, Interrupt
        if isinstance(input, Command):
            return {"messages": [AIMessage("booked for %s in thread %s" % (input.resume, config["configurable"]["thread_id"]))]}
        return {"messages": list(input["messages"]), "__interrupt__": (Interrupt("Which city?", id="i1"),)}

    async def ainvoke(self, input, config=None, **kwargs):
        return self._step(input, config)

    async def astream(self, input, config=None, stream_mode=None, **kwargs):
        assert stream_mode == "values", stream_mode
        state = self._step(input, config)
        if "__interrupt__" in state:
            yield {"messages": state["messages"]}
            yield {"__interrupt__": state["__interrupt__"]}
            return
        yield state


class InputRequired(Exception):
    """Any exception class of this name asks the caller a question."""


def asking_agent(inputs):
    if not inputs["history"]:
        raise InputRequired({"question": "Which city?", "choices": ["Oslo", "Rome"]})
    return "going to " + inputs["message"] + " after " + inputs["history"][-1]["text"]


interrupting_graph = InterruptingGraph()
