# pactum's Python worker: it runs one user object (a LangGraph graph, a
# LangChain Runnable, a CrewAI Crew, or a callable) for the "python" agent
# runtime, in the user's own interpreter. pactum embeds this file and
# starts it with `python -u -c <this file> <config JSON>`.
#
# The protocol is JSON lines: requests on standard input ("invoke" with an
# id and the input, "cancel" with an id), replies on standard output
# ("ready" or "fatal" once at the start, then "chunk", "result", "error"
# and "canceled", each with the id of its invocation). Invocations run
# concurrently on one asyncio loop, sync callables in a thread pool. What
# user code prints goes to standard error, which pactum logs: standard
# output is the protocol's alone.
#
# Standard library only; Python 3.9 or later.
import asyncio
import inspect
import json
import os
import sys
import threading
import traceback

# --- the protocol's own file descriptors ---------------------------------
# User code must not write into the protocol or read from it: file
# descriptor 1 becomes a copy of standard error (so that prints, C
# extensions and child processes write there), descriptor 0 becomes
# /dev/null, and the protocol keeps private copies of both.
_PROTO_OUT = os.dup(1)
_PROTO_IN = os.dup(0)
os.dup2(2, 1)
_devnull = os.open(os.devnull, os.O_RDONLY)
os.dup2(_devnull, 0)
os.close(_devnull)
sys.stdout = sys.stderr
sys.stdin = open(os.devnull, "r")
_out_lock = threading.Lock()


def send(msg):
    line = json.dumps(msg, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
    data = line.encode("utf-8", "replace")
    with _out_lock:
        while data:
            n = os.write(_PROTO_OUT, data)
            data = data[n:]


def last_line(tb):
    lines = [l for l in tb.strip().splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


# --- values ---------------------------------------------------------------
def jsonable(v, depth=0):
    """Returns v as something json.dumps takes: messages become their
    content, pydantic models their dump, other objects their str."""
    if depth > 50:
        return str(v)
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    if isinstance(v, dict):
        return {str(k): jsonable(x, depth + 1) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x, depth + 1) for x in v]
    content = getattr(v, "content", None)
    if content is not None and not callable(content):
        return jsonable(content, depth + 1)
    for name in ("model_dump", "dict"):
        f = getattr(v, name, None)
        if callable(f):
            try:
                return jsonable(f(), depth + 1)
            except Exception:
                pass
    return str(v)


def content_text(c):
    """The text of a message's content: a string, or a list of content
    blocks (strings or {"type": "text", "text": ...})."""
    if c is None:
        return ""
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        out = []
        for b in c:
            if isinstance(b, str):
                out.append(b)
            elif isinstance(b, dict) and isinstance(b.get("text"), str):
                out.append(b["text"])
        return "".join(out)
    return str(c)


def message_text(m):
    """The text of one chat message: a LangChain message (.content), a
    dict with "content", a (role, content) pair, or a string."""
    if isinstance(m, str):
        return m
    if isinstance(m, dict):
        return content_text(m.get("content"))
    if isinstance(m, (list, tuple)) and len(m) == 2 and isinstance(m[0], str):
        return content_text(m[1])
    c = getattr(m, "content", None)
    if c is not None:
        return content_text(c)
    return str(m)


def chunk_text(c, output_key):
    """The text of one streamed chunk of a LangChain Runnable."""
    if c is None:
        return ""
    if isinstance(c, str):
        return c
    if isinstance(c, dict):
        if output_key and output_key in c:
            return chunk_text(c[output_key], None)
        for k in ("output", "answer", "text", "content"):
            if isinstance(c.get(k), str):
                return c[k]
        return ""
    content = getattr(c, "content", None)
    if content is not None:
        return content_text(content)
    return ""


class Ask:
    """An answer that is a question: the task waits for the caller's
    reply (input_required)."""

    def __init__(self, value):
        self.value = value


def interrupt_of(state):
    """The question of a LangGraph state that stopped at interrupt():
    the value of its first __interrupt__ entry; None when it did not."""
    if not isinstance(state, dict):
        return None
    intr = state.get("__interrupt__")
    if not intr:
        return None
    first = intr[0] if isinstance(intr, (list, tuple)) else intr
    return Ask(getattr(first, "value", first))


def asks(e):
    """Whether exception e asks the caller a question: its class (or a
    base) is named InputRequired."""
    return any(c.__name__ == "InputRequired" for c in type(e).__mro__)


# --- shapes ---------------------------------------------------------------
class Shape:
    """How one kind of object is called and its answer read."""

    streaming = False

    def __init__(self, obj, cfg):
        self.obj = obj
        self.input_key = cfg.get("input_key")
        self.output_key = cfg.get("output_key") or None

    def key(self, default):
        return default if self.input_key is None else self.input_key


class LangGraph(Shape):
    # Duck typing: a compiled graph has get_graph, get_state and
    # astream/ainvoke. Its state's "messages" go in and its last message
    # comes out.
    name = "langgraph"

    def __init__(self, obj, cfg):
        super().__init__(obj, cfg)
        self.streaming = hasattr(obj, "astream")
        self.messages_key = self.key("messages") or "messages"

    def inputs(self, inp):
        data = inp.get("data")
        if inp.get("resume") and getattr(self.obj, "checkpointer", None) is not None:
            # The caller answers the graph's interrupt(): resume the
            # thread with the answer.
            try:
                from langgraph.types import Command
            except ImportError:
                pass
            else:
                return Command(resume=data if data is not None else inp.get("text", ""))
        if isinstance(data, dict):
            return data
        msgs = []
        # A graph with a checkpointer remembers the conversation of its
        # thread: it gets the new message only.
        if getattr(self.obj, "checkpointer", None) is None:
            for t in inp.get("history") or []:
                msgs.append({"role": t["role"], "content": t["text"]})
        msgs.append({"role": "user", "content": inp.get("text", "")})
        return {self.messages_key: msgs}

    def config(self, inp):
        thread = inp.get("context_id") or inp.get("task_id") or ""
        return {"configurable": {"thread_id": thread}}

    def output(self, state):
        if isinstance(state, dict):
            if self.output_key:
                return jsonable(state.get(self.output_key))
            msgs = state.get(self.messages_key)
            if isinstance(msgs, (list, tuple)) and msgs:
                return message_text(msgs[-1])
            return jsonable(state)
        return jsonable(state)

    async def run(self, inp, chunk):
        inputs, config = self.inputs(inp), self.config(inp)
        if chunk is None or not self.streaming:
            if hasattr(self.obj, "ainvoke"):
                state = await self.obj.ainvoke(inputs, config=config)
            else:
                state = await asyncio.get_running_loop().run_in_executor(
                    None, lambda: self.obj.invoke(inputs, config=config))
            return interrupt_of(state) or self.output(state)
        # Full states ("values"); each new text of the answer is sent as
        # the part that extends what was sent before.
        last, state = "", None
        async for state in self.obj.astream(inputs, config=config, stream_mode="values"):
            ask = interrupt_of(state)
            if ask is not None:
                return ask
            if not self.output_key and not answered(state, self.messages_key):
                continue  # the input state, a tool's result: no answer yet
            out = self.output(state)
            if isinstance(out, str) and out and out != last:
                chunk(out[len(last):] if out.startswith(last) else out)
                last = out
        return self.output(state) if state is not None else ""


def role(m):
    """The role of a chat message: a dict's "role", a pair's first
    item, a LangChain message's .type ("human", "ai", "tool")."""
    if isinstance(m, dict):
        return m.get("role") or m.get("type")
    if isinstance(m, (list, tuple)) and len(m) == 2:
        return m[0]
    return getattr(m, "type", None)


def answered(state, key):
    """Whether a LangGraph state's last message is an answer: not the
    user's (the input state comes first) nor a tool's."""
    if not isinstance(state, dict):
        return True
    msgs = state.get(key)
    if not isinstance(msgs, (list, tuple)) or not msgs:
        return False
    return role(msgs[-1]) not in ("user", "human", "tool")


class LangChain(Shape):
    # Duck typing: a Runnable has ainvoke (or invoke) and maybe astream.
    name = "langchain"

    def __init__(self, obj, cfg):
        super().__init__(obj, cfg)
        self.streaming = hasattr(obj, "astream")

    def inputs(self, inp):
        data = inp.get("data")
        if isinstance(data, dict):
            return data
        key = self.key("input")
        if not key:
            return inp.get("text", "")
        return {key: inp.get("text", "")}

    def output(self, v):
        if isinstance(v, dict) and self.output_key:
            return jsonable(v.get(self.output_key))
        if isinstance(v, str):
            return v
        if isinstance(v, dict):
            if len(v) == 1:
                return self.output(next(iter(v.values())))
            for k in ("output", "answer", "result", "text"):
                if k in v:
                    return jsonable(v[k])
            return jsonable(v)
        if getattr(v, "content", None) is not None:
            return message_text(v)
        return jsonable(v)

    async def run(self, inp, chunk):
        inputs = self.inputs(inp)
        if chunk is None or not self.streaming:
            if hasattr(self.obj, "ainvoke"):
                v = await self.obj.ainvoke(inputs)
            else:
                v = await asyncio.get_running_loop().run_in_executor(None, self.obj.invoke, inputs)
            return self.output(v)
        parts = []
        async for c in self.obj.astream(inputs):
            t = chunk_text(c, self.output_key)
            if t:
                parts.append(t)
                chunk(t)
        return "".join(parts)


class CrewAI(Shape):
    # Duck typing: a Crew has kickoff_async or kickoff(inputs=...); its
    # output's .raw is the answer.
    name = "crewai"

    def inputs(self, inp):
        data = inp.get("data")
        if isinstance(data, dict):
            return data
        text = inp.get("text", "")
        try:
            v = json.loads(text)
            if isinstance(v, dict):
                return v
        except ValueError:
            pass
        return {self.key("topic") or "topic": text}

    def output(self, v):
        for attr in ("raw", "result"):
            x = getattr(v, attr, None)
            if x is not None and not callable(x):
                return jsonable(x)
        if isinstance(v, dict) and self.output_key:
            return jsonable(v.get(self.output_key))
        return jsonable(v)

    async def run(self, inp, chunk):
        inputs = self.inputs(inp)
        if hasattr(self.obj, "kickoff_async"):
            v = await self.obj.kickoff_async(inputs=inputs)
        else:
            v = await asyncio.get_running_loop().run_in_executor(
                None, lambda: self.obj.kickoff(inputs=inputs))
        return self.output(v)


class Callable(Shape):
    # Any callable, called with one dict: the message, its data, the
    # conversation so far and the ids. A coroutine function is awaited, a
    # sync function runs in a thread, an (async) generator streams.
    name = "callable"

    def __init__(self, obj, cfg):
        super().__init__(obj, cfg)
        f = obj if inspect.isroutine(obj) else getattr(obj, "__call__", obj)
        self.asyncgen = inspect.isasyncgenfunction(f)
        self.coro = inspect.iscoroutinefunction(f)
        self.streaming = self.asyncgen or inspect.isgeneratorfunction(f)

    def arg(self, inp):
        return {
            "message": inp.get("text", ""),
            "data": inp.get("data"),
            "history": inp.get("history") or [],
            "context_id": inp.get("context_id"),
            "task_id": inp.get("task_id"),
        }

    async def run(self, inp, chunk):
        arg = self.arg(inp)
        loop = asyncio.get_running_loop()
        emit = chunk or (lambda t: None)
        if self.asyncgen:
            return await collect(self.obj(arg), emit)
        if self.coro:
            v = await self.obj(arg)
        else:
            v = await loop.run_in_executor(None, self.obj, arg)
        # A decorated function may hide what it returns until it is called.
        if inspect.isawaitable(v):
            v = await v
        if inspect.isasyncgen(v):
            return await collect(v, emit)
        if inspect.isgenerator(v):
            parts, end = [], object()
            while True:
                x = await loop.run_in_executor(None, next, v, end)
                if x is end:
                    return "".join(parts)
                t = x if isinstance(x, str) else json.dumps(jsonable(x))
                parts.append(t)
                emit(t)
        return jsonable(v)


async def collect(agen, emit):
    parts = []
    async for v in agen:
        t = v if isinstance(v, str) else json.dumps(jsonable(v))
        parts.append(t)
        emit(t)
    return "".join(parts)


SHAPES = {s.name: s for s in (LangGraph, LangChain, CrewAI, Callable)}


def detect(obj):
    # get_graph alone does not tell: every LangChain Runnable has it. A
    # LangGraph graph (Pregel) also keeps state: get_state/aget_state.
    if (hasattr(obj, "get_graph") and (hasattr(obj, "get_state") or hasattr(obj, "aget_state"))
            and (hasattr(obj, "astream") or hasattr(obj, "ainvoke"))):
        return LangGraph
    if hasattr(obj, "kickoff_async") or hasattr(obj, "kickoff"):
        return CrewAI
    if hasattr(obj, "ainvoke") or (hasattr(obj, "invoke") and callable(getattr(obj, "invoke"))):
        return LangChain
    if callable(obj):
        return Callable
    return None


NEEDS = {
    "langgraph": ("ainvoke", "invoke"),
    "langchain": ("ainvoke", "invoke"),
    "crewai": ("kickoff_async", "kickoff"),
}


def load(cfg):
    spec = cfg["object"]
    for p in reversed(cfg.get("path") or []):
        sys.path.insert(0, p)
    mod_name, _, attr = spec.partition(":")
    import importlib
    obj = importlib.import_module(mod_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    fw = cfg.get("framework") or "auto"
    if fw == "auto":
        shape = detect(obj)
        if shape is None:
            raise TypeError("%s is a %s: not a LangGraph graph, a LangChain Runnable, a CrewAI Crew "
                            "or a callable" % (spec, type(obj).__name__))
    else:
        shape = SHAPES[fw]
        need = NEEDS.get(fw)
        if need and not any(hasattr(obj, m) for m in need):
            raise TypeError("%s is a %s, which has no %s method: not a %s object"
                            % (spec, type(obj).__name__, " or ".join(need), fw))
        if fw == "callable" and not callable(obj):
            raise TypeError("%s is a %s, which is not callable" % (spec, type(obj).__name__))
    return shape(obj, cfg)


# --- the loop ---------------------------------------------------------------
class Worker:
    def __init__(self, shape):
        self.shape = shape
        self.tasks = {}

    async def invoke(self, rid, inp, stream):
        chunk = (lambda t: send({"op": "chunk", "id": rid, "text": t})) if stream else None
        try:
            out = await self.shape.run(inp, chunk)
        except asyncio.CancelledError:
            send({"op": "canceled", "id": rid})
            return
        except Exception as e:
            if not asks(e):
                self.failed(rid, e)
                return
            out = Ask(e.args[0] if e.args else str(e))
        except BaseException as e:  # user code may raise anything
            self.failed(rid, e)
            return
        finally:
            self.tasks.pop(rid, None)
        if isinstance(out, Ask):
            send({"op": "result", "id": rid, "output": jsonable(out.value), "input_required": True})
            return
        send({"op": "result", "id": rid, "output": jsonable(out)})

    def failed(self, rid, e):
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            send({"op": "error", "id": rid, "type": type(e).__name__,
                  "error": "%s: %s" % (type(e).__name__, e)})
            return
        tb = traceback.format_exc()
        sys.stderr.write(tb)
        send({"op": "error", "id": rid, "type": type(e).__name__,
              "error": "%s: %s" % (type(e).__name__, e), "traceback": tb})

    def handle(self, line):
        try:
            req = json.loads(line)
        except ValueError:
            sys.stderr.write("pactum worker: ignoring a request that is not JSON\n")
            return
        op, rid = req.get("op"), req.get("id")
        if op == "invoke" and isinstance(rid, str):
            t = asyncio.ensure_future(self.invoke(rid, req.get("input") or {}, bool(req.get("stream"))))
            self.tasks[rid] = t
        elif op == "ping" and isinstance(rid, str):
            # Handled on the loop: an answer says the loop is not blocked.
            send({"op": "pong", "id": rid})
        elif op == "cancel" and isinstance(rid, str):
            t = self.tasks.get(rid)
            if t is not None:
                t.cancel()
        else:
            sys.stderr.write("pactum worker: ignoring request %r\n" % (op,))

    async def serve(self):
        loop = asyncio.get_running_loop()
        lines = asyncio.Queue()

        def read():
            buf = b""
            while True:
                try:
                    b = os.read(_PROTO_IN, 65536)
                except OSError:
                    b = b""
                if not b:
                    loop.call_soon_threadsafe(lines.put_nowait, None)
                    return
                buf += b
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    loop.call_soon_threadsafe(lines.put_nowait, line)

        threading.Thread(target=read, name="pactum-stdin", daemon=True).start()
        while True:
            line = await lines.get()
            if line is None:
                break
            if line.strip():
                self.handle(line)
        # pactum closed standard input: stop.
        for t in list(self.tasks.values()):
            t.cancel()
        if self.tasks:
            await asyncio.wait(list(self.tasks.values()), timeout=2)


def description(obj):
    """The first paragraph of a function's docstring, for the agent's
    card. Objects (graphs, chains, crews) are left out: their docstring
    is their class's, the framework's own."""
    if not inspect.isroutine(obj):
        return ""
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.strip().split("\n\n")[0].split())[:500]


def main():
    cfg = json.loads(sys.argv[1])
    try:
        if sys.version_info < (3, 9):
            raise RuntimeError("pactum's worker needs Python 3.9 or later; %s is %d.%d"
                               % (sys.executable, sys.version_info[0], sys.version_info[1]))
        shape = load(cfg)
    except BaseException as e:
        tb = traceback.format_exc()
        sys.stderr.write(tb)
        send({"op": "fatal", "error": "%s: %s" % (type(e).__name__, e), "type": type(e).__name__,
              "traceback": tb})
        sys.stderr.flush()
        os._exit(3)
    send({"op": "ready", "framework": shape.name, "streaming": bool(shape.streaming),
          "python": "%d.%d.%d" % sys.version_info[:3], "pid": os.getpid(),
          "description": description(shape.obj)})
    # Not asyncio.run: it would wait for the threads of sync callables
    # still running, which cannot be canceled; exiting ends them.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    # Sync callables (and invoke/kickoff without an async twin) wait on
    # models and APIs, not on the CPU: the default pool (CPUs + 4
    # threads) would queue them on a small machine.
    from concurrent.futures import ThreadPoolExecutor
    loop.set_default_executor(ThreadPoolExecutor(max_workers=64, thread_name_prefix="pactum-sync"))
    loop.run_until_complete(Worker(shape).serve())
    sys.stderr.flush()
    os._exit(0)


main()
