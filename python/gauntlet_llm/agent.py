"""`Agent`: a Python function made into an exec agent (docs/exec-protocol.md, version 1).

    import gauntlet_llm

    @gauntlet_llm.agent
    def support(messages, tools):
        ...                       # call your model, or answer by rule
        return "Order A-1001 is shipped."      # or gauntlet_llm.ToolCall(...), a list of
                                               # them, a Reply, or an OpenAI / Anthropic
                                               # response object
    if __name__ == "__main__":
        support.main()

`messages` is the conversation so far in the OpenAI chat shape (system, user, assistant
messages with `tool_calls`, `tool` messages with the results); `tools` the tools gauntlet
offers, in the OpenAI `tools=` shape (`anthropic_tools(session.tools)` gives Anthropic's).
The function is called again after each round of tool calls, until it returns an answer.
A third parameter (or one named `session`) receives the `Session`: the case's id, vars,
documents, seed and frozen time, and `decision()`, `llm_call()` and `log()`.

What this module owns: the wire (one JSON object per line on stdout, which is reserved for
it: `print()` inside the agent goes to stderr while it serves), the tool-call round trips,
the `llm_call` report of every model response it is handed (model, tokens, latency) and the
`error` message when the function raises (`AgentError` picks its kind).
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

PROTOCOL = 1


@dataclass
class ToolCall:
    """A call the agent asks gauntlet to run. `arguments` is an object, or a string holding
    JSON (a model's raw arguments); `id` is made up (`call-N`) when left out."""

    name: str
    arguments: Any = field(default_factory=dict)
    id: Optional[str] = None


@dataclass
class Reply:
    """One model response: text, tool calls, or both. With `model` or `usage` set it is
    reported to gauntlet as an `llm_call` (usage: `input_tokens`, `output_tokens`)."""

    content: str = ""
    tool_calls: List[ToolCall] = field(default_factory=list)
    model: Optional[str] = None
    usage: Optional[Dict[str, int]] = None
    latency_ms: Optional[int] = None
    finish_reason: Optional[str] = None
    truncated: bool = False


class AgentError(Exception):
    """The agent cannot answer this turn. `kind`: `transport` (the model API is down, a bad
    key), `blocked` (an upstream content filter) or `timeout` (the agent's own deadline)."""

    def __init__(self, message: str, kind: str = "transport"):
        super().__init__(message)
        if kind not in ("transport", "blocked", "timeout"):
            raise ValueError("AgentError kind must be transport, blocked or timeout, not %r" % kind)
        self.kind = kind


class _Wire:
    """The protocol's two streams: JSON lines out, JSON lines in."""

    def __init__(self, inp, out):
        self.inp = inp
        self.out = out

    def send(self, msg: Dict[str, Any]) -> None:
        # ASCII JSON (non-ASCII as \\u escapes): valid whatever encoding stdout has.
        self.out.write(json.dumps(msg) + "\n")
        self.out.flush()

    def read(self) -> Optional[Dict[str, Any]]:
        """The next message; None at the end of input."""
        while True:
            line = self.inp.readline()
            if not line:
                return None
            line = line.strip()
            if line:
                return json.loads(line)


class Session:
    """One trial, as gauntlet's `start` message describes it, and the reports an agent may
    send while a turn is open."""

    def __init__(self, start: Dict[str, Any], wire: _Wire):
        self.start = start
        self.session_id = start.get("session_id")
        self.case_id = start.get("case_id")
        self.trial = start.get("trial", 0)
        self.seed = start.get("seed", 0)
        self.system_prompt = start.get("system_prompt")
        self.tools = start.get("tools") or []
        self.vars = start.get("vars") or {}
        self.documents = start.get("documents") or []
        self.frozen_time = start.get("frozen_time") or os.environ.get("GAUNTLET_FROZEN_TIME")
        self._wire = wire
        self._llm_calls = 0
        self._next_call = 0

    def decision(self, branch: str, reason: Optional[str] = None, agent: Optional[str] = None) -> None:
        """Records a decision point (which branch, and why) in the trace."""
        msg = {"type": "decision", "branch": branch}
        if reason is not None:
            msg["reason"] = reason
        if agent is not None:
            msg["agent"] = agent
        self._wire.send(msg)

    def llm_call(self, message_out: Any, messages_in: Optional[List[Dict[str, Any]]] = None,
                 model: Optional[str] = None, usage: Optional[Dict[str, int]] = None,
                 latency_ms: Optional[int] = None, finish_reason: Optional[str] = None,
                 agent: Optional[str] = None) -> None:
        """Reports a model call of the agent's own (sent before the tool calls it asked
        for). Messages may be in the OpenAI chat shape; they are sent in the protocol's."""
        if isinstance(message_out, str):
            message_out = {"role": "assistant", "content": message_out}
        msg: Dict[str, Any] = {"type": "llm_call", "message_out": wire_message(message_out)}
        if messages_in is not None:
            msg["messages_in"] = [wire_message(m) for m in messages_in]
        for key, value in (("model", model), ("finish_reason", finish_reason), ("agent", agent)):
            if value is not None:
                msg[key] = value
        if usage:
            msg["usage"] = {"input_tokens": int(usage.get("input_tokens") or 0),
                            "output_tokens": int(usage.get("output_tokens") or 0)}
        if latency_ms is not None:
            msg["latency_ms"] = max(0, int(latency_ms))
        self._llm_calls += 1
        self._wire.send(msg)

    def log(self, *parts: Any) -> None:
        """A line on stderr (gauntlet quotes the last lines in its error messages)."""
        print(*parts, file=sys.stderr, flush=True)

    def _call_id(self) -> str:
        self._next_call += 1
        return "call-%d" % self._next_call


def openai_tools(tools: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The protocol's tools (`name`, `description`, `parameters`) in OpenAI's `tools=` shape."""
    return [{"type": "function", "function": {
        "name": t["name"], "description": t.get("description") or "",
        "parameters": t.get("parameters") or {"type": "object", "properties": {}}}}
        for t in tools]


def anthropic_tools(tools: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The protocol's tools in Anthropic's `tools=` shape."""
    return [{"name": t["name"], "description": t.get("description") or "",
             "input_schema": t.get("parameters") or {"type": "object", "properties": {}}}
            for t in tools]


def _arguments_object(arguments: Any) -> Any:
    """A call's arguments as the protocol records them: an object when the text is JSON."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return arguments
    return arguments if arguments is not None else {}


def wire_message(m: Any) -> Dict[str, Any]:
    """A chat message (OpenAI's shape, or the protocol's) in the protocol's shape."""
    if hasattr(m, "model_dump"):
        m = m.model_dump()
    out: Dict[str, Any] = {"role": m.get("role") or "assistant", "content": _text(m.get("content"))}
    calls = []
    for c in m.get("tool_calls") or []:
        fn = c.get("function") or {}
        calls.append({"id": c.get("id") or "", "name": c.get("name") or fn.get("name") or "",
                      "arguments": _arguments_object(c.get("arguments", fn.get("arguments")))})
    if calls:
        out["tool_calls"] = calls
    if m.get("tool_call_id"):
        out["tool_call_id"] = m["tool_call_id"]
    if m.get("name") and out["role"] == "tool":
        out["name"] = m["name"]
    return out


def _text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a list of blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _from_mapping(d: Dict[str, Any]) -> Reply:
    """A reply from a response the function returned as data: an OpenAI chat completion,
    an Anthropic message, or a bare assistant message."""
    if "choices" in d:
        choice = (d.get("choices") or [{}])[0]
        msg = choice.get("message") or {}
        calls = [ToolCall(name=(c.get("function") or {}).get("name", ""),
                          arguments=(c.get("function") or {}).get("arguments") or "{}",
                          id=c.get("id")) for c in msg.get("tool_calls") or []]
        usage = d.get("usage") or {}
        return Reply(content=_text(msg.get("content")), tool_calls=calls, model=d.get("model"),
                     usage={"input_tokens": usage.get("prompt_tokens") or 0,
                            "output_tokens": usage.get("completion_tokens") or 0} if usage else None,
                     finish_reason=choice.get("finish_reason"),
                     truncated=choice.get("finish_reason") == "length")
    if "stop_reason" in d and isinstance(d.get("content"), list):
        blocks = d["content"]
        calls = [ToolCall(name=b.get("name", ""), arguments=b.get("input") or {}, id=b.get("id"))
                 for b in blocks if b.get("type") == "tool_use"]
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        usage = d.get("usage") or {}
        return Reply(content=text, tool_calls=calls, model=d.get("model"),
                     usage={"input_tokens": usage.get("input_tokens") or 0,
                            "output_tokens": usage.get("output_tokens") or 0} if usage else None,
                     finish_reason=d.get("stop_reason"),
                     truncated=d.get("stop_reason") == "max_tokens")
    if "content" in d or "tool_calls" in d:
        calls = [ToolCall(name=c.get("name") or (c.get("function") or {}).get("name", ""),
                          arguments=c.get("arguments", (c.get("function") or {}).get("arguments")),
                          id=c.get("id")) for c in d.get("tool_calls") or []]
        return Reply(content=_text(d.get("content")), tool_calls=calls)
    if "name" in d:
        return Reply(tool_calls=[ToolCall(name=d["name"], arguments=d.get("arguments") or {},
                                          id=d.get("id"))])
    raise TypeError("the agent returned a dict gauntlet cannot read: %s" % sorted(d)[:8])


def to_reply(result: Any) -> Reply:
    """What the agent function returned, as a `Reply`."""
    if isinstance(result, Reply):
        return result
    if isinstance(result, str):
        return Reply(content=result)
    if isinstance(result, ToolCall):
        return Reply(tool_calls=[result])
    if isinstance(result, (list, tuple)) and result:
        calls = []
        for item in result:
            reply = to_reply(item)
            if reply.content or not reply.tool_calls:
                raise TypeError("a list the agent returns holds tool calls only")
            calls.extend(reply.tool_calls)
        return Reply(tool_calls=calls)
    if hasattr(result, "model_dump"):
        return _from_mapping(result.model_dump())
    if isinstance(result, dict):
        return _from_mapping(result)
    raise TypeError("the agent returned %s: return the answer text, a ToolCall or a list of "
                    "them, a Reply, or a model response" % type(result).__name__)


def _wants_session(fn: Callable) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.name == "session" for p in params):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 3 or any(p.kind == p.VAR_POSITIONAL for p in params)


class Agent:
    """A function served as an exec agent. Calling it calls the function; `serve()` speaks
    the protocol on stdin and stdout; `main()` serves and exits with its status."""

    def __init__(self, fn: Callable, name: Optional[str] = None, max_steps: int = 32):
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "agent")
        self.max_steps = max_steps
        self._with_session = _wants_session(fn)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    @property
    def file(self) -> Optional[str]:
        """The file the function is written in (what `run(agent=...)` starts)."""
        try:
            return os.path.abspath(inspect.getsourcefile(self.fn) or "")
        except TypeError:
            return None

    def main(self) -> None:
        sys.exit(self.serve())

    def serve(self, stdin: Any = None, stdout: Any = None) -> int:
        """Speaks the protocol until `end` or the end of input; returns the exit status."""
        out = stdout if stdout is not None else sys.stdout
        inp = stdin if stdin is not None else sys.stdin
        if stdin is None and hasattr(inp, "reconfigure"):
            # gauntlet writes UTF-8 whatever locale the agent's environment names.
            inp.reconfigure(encoding="utf-8", errors="replace")
        saved = sys.stdout
        # stdout carries protocol lines only: a stray print() would end the trial.
        sys.stdout = sys.stderr
        try:
            return self._session(_Wire(inp, out))
        finally:
            sys.stdout = saved

    def _session(self, wire: _Wire) -> int:
        start = wire.read()
        if start is None:
            return 0
        if start.get("type") != "start" or start.get("protocol") != PROTOCOL:
            print("gauntlet_llm speaks exec protocol %d; got %r" % (
                PROTOCOL, {k: start.get(k) for k in ("type", "protocol")}), file=sys.stderr)
            return 1
        session = Session(start, wire)
        messages: List[Dict[str, Any]] = []
        if session.system_prompt:
            messages.append({"role": "system", "content": session.system_prompt})
        tools = openai_tools(session.tools)
        while True:
            msg = wire.read()
            if msg is None or msg.get("type") == "end":
                return 0
            if msg.get("type") != "user":
                continue  # a message type of a later protocol minor: ignored
            messages.append({"role": "user", "content": msg.get("content", "")})
            try:
                reply = self._turn(messages, tools, session, wire)
            except AgentError as e:
                wire.send({"type": "error", "message": str(e), "kind": e.kind})
                return 1
            except Exception as e:  # the agent's own bug: its traceback on stderr
                traceback.print_exception(type(e), e, _user_frames(e.__traceback__),
                                          file=sys.stderr)
                wire.send({"type": "error", "kind": "transport",
                           "message": "%s: %s" % (type(e).__name__, e)})
                return 1
            answer = {"type": "answer", "content": reply.content}
            if reply.truncated:
                answer["truncated"] = True
            wire.send(answer)

    def _turn(self, messages: List[Dict[str, Any]], tools: List[Dict[str, Any]],
              session: Session, wire: _Wire) -> Reply:
        for _ in range(self.max_steps):
            reported = session._llm_calls
            began = time.monotonic()
            args = (list(messages), tools, session) if self._with_session else (list(messages), tools)
            reply = to_reply(self.fn(*args))
            elapsed = int((time.monotonic() - began) * 1000)
            for call in reply.tool_calls:
                call.id = call.id or session._call_id()
            assistant: Dict[str, Any] = {"role": "assistant", "content": reply.content or None}
            if reply.tool_calls:
                assistant["tool_calls"] = [{
                    "id": c.id, "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments if isinstance(
                        c.arguments, str) else json.dumps(c.arguments)}} for c in reply.tool_calls]
            if (reply.model or reply.usage) and session._llm_calls == reported:
                session.llm_call(assistant, messages_in=messages, model=reply.model,
                                 usage=reply.usage, finish_reason=reply.finish_reason,
                                 latency_ms=reply.latency_ms if reply.latency_ms is not None else elapsed)
            messages.append(assistant if reply.tool_calls else {"role": "assistant", "content": reply.content})
            if not reply.tool_calls:
                return reply
            for call in reply.tool_calls:
                wire.send({"type": "tool_call", "id": call.id, "name": call.name,
                           "arguments": call.arguments})
                messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name,
                                 "content": self._result(wire, call)})
        raise AgentError("the agent asked for tools %d times in one turn without answering "
                         "(max_steps=%d)" % (self.max_steps, self.max_steps))

    @staticmethod
    def _result(wire: _Wire, call: ToolCall) -> str:
        while True:
            msg = wire.read()
            if msg is None:
                raise AgentError("gauntlet closed the input while the agent waited for %s's "
                                 "result" % call.name)
            if msg.get("type") == "tool_result" and msg.get("id") in (None, call.id):
                return msg.get("content", "")
            if msg.get("type") == "end":
                raise AgentError("the trial ended while the agent waited for %s's result" % call.name)


def _user_frames(tb):
    """A traceback without this module's own frames at its top (the agent's are the news)."""
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


def agent(fn: Optional[Callable] = None, *, name: Optional[str] = None, max_steps: int = 32):
    """Decorator: `@agent` or `@agent(max_steps=8)`. Returns an `Agent`."""
    if fn is None:
        return lambda f: Agent(f, name=name, max_steps=max_steps)
    return Agent(fn, name=name, max_steps=max_steps)
