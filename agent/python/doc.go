// Package python is the "python" agent runtime: it runs a Python object
// of the user's (a LangGraph compiled graph, a LangChain Runnable, a
// CrewAI Crew, or any sync or async callable or async generator) in the
// user's own interpreter, through a small worker program that pactum
// embeds (worker.py, standard library only, Python 3.9 or later).
//
// # The worker
//
// Each agent has at most one worker, started on its first attempt with
// `python -u -c <worker> <settings>` in its own process group (package
// procgroup: nothing it starts outlives pactum, not even after a kill -9,
// and a restarted pactum kills what a crashed one left). The worker
// imports the object and answers "ready", or "fatal" with the exception
// when it cannot (a permanent error of every attempt until that is
// fixed). It then serves every attempt of the agent concurrently on one
// asyncio loop: coroutines on the loop, sync callables in a thread pool.
//
// The protocol is JSON lines (protocol.go). pactum writes
// {"op":"invoke","id":…,"stream":bool,"input":{"text","data","history",
// "context_id","task_id","resume"}} and {"op":"cancel","id":…}; the
// worker writes {"op":"chunk","id","text"}, {"op":"result","id","output",
// "input_required"} (output is any JSON value, a question when
// input_required is true), {"op":"error","id","error","type",
// "traceback"} and {"op":"canceled","id"}; and {"op":"ping","id"} is
// answered by {"op":"pong","id"} from the event loop. The worker moves file descriptors 0 and 1
// aside for the protocol and points them at /dev/null and standard error,
// so what user code prints (or reads) cannot break it; standard error is
// logged.
//
// A canceled attempt cancels its coroutine (a sync callable's thread runs
// on; its answer is dropped). A cancel the worker does not confirm in
// time is followed by a ping: a worker whose event loop does not answer
// it is blocked for good and is killed. A worker that dies fails the attempts in
// flight with a retryable error; the next attempt starts a new one, at
// once after the first failure and then after a doubling backoff.
//
// # Shapes
//
// How the object is called follows seed 003's framework adapters,
// detected by duck typing unless Settings.Framework says:
//
//   - LangGraph (get_graph, get_state and ainvoke/astream; get_graph
//     alone would take in every LangChain Runnable): the state's
//     "messages" get the conversation as {"role","content"} dicts (only
//     the new message when the graph has a checkpointer, with the context
//     as the thread_id), and the answer is the last message's content;
//     streaming uses astream(stream_mode="values") and sends what each
//     state adds.
//   - LangChain Runnable (ainvoke/invoke, astream): {input_key: text}
//     (default "input"), the answer picked by output_key; astream's
//     chunks are streamed.
//   - CrewAI Crew (kickoff_async/kickoff): inputs are the message's JSON
//     object, or {input_key: text} (default "topic"); the answer is the
//     output's .raw.
//   - anything callable: called with one dict {"message", "data",
//     "history", "context_id", "task_id"}; an async generator or a
//     generator streams its items.
//
// A LangGraph interrupt() (a result with __interrupt__) and an exception
// whose class is named InputRequired pause the task for input with the
// value as the question; the reply resumes a graph with a checkpointer
// through langgraph.types.Command(resume=…) (input.Resume).
//
// A data part holding a JSON object is passed as the inputs themselves
// (the state, the chain's input dict, the crew's inputs). The answer is
// text when it is a string, data when it is a dict or list.
package python
