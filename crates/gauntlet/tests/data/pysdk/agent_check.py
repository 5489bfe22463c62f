"""The decorator's side of the exec protocol, message by message, with gauntlet's messages
written in advance (each read happens in order, as on the pipe). Argument: the folder that
holds the gauntlet_llm package. Prints "agent checks passed"; a failed assertion exits
non-zero with its message."""

import contextlib
import io
import json
import sys

sys.path.insert(0, sys.argv[1])
import gauntlet_llm as g  # noqa: E402

START = {"type": "start", "protocol": 1, "session_id": "s-0", "case_id": "c", "trial": 0,
         "seed": 7, "system_prompt": "You are ShopHelp.", "vars": {"tier": "gold"},
         "tools": [{"name": "get_order", "description": "Look up an order.",
                    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}],
         "frozen_time": "2025-01-01T00:00:00Z"}


def talk(agent, *messages, start=START):
    """Serves `agent` on these messages; returns (exit status, what it wrote, its stderr)."""
    inp = io.StringIO("".join(json.dumps(m) + "\n" for m in (start,) + messages))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = agent.serve(stdin=inp, stdout=out)
    assert out.getvalue().isascii(), out.getvalue()
    return code, [json.loads(l) for l in out.getvalue().splitlines()], err.getvalue()


USER = {"type": "user", "content": "Where is A-1001?"}
RESULT = {"type": "tool_result", "id": "call-1", "name": "get_order", "content": '{"status": "shipped"}'}
END = {"type": "end"}

# A plain function: a tool call, then an answer from its result; print() goes to stderr.
seen = []


@g.agent
def rules(messages, tools):
    seen.append(messages)
    print("thinking")
    if messages[-1]["role"] == "tool":
        return "It is " + json.loads(messages[-1]["content"])["status"] + "."
    return g.ToolCall("get_order", {"order_id": "A-1001"})


code, sent, err = talk(rules, USER, RESULT, END)
assert code == 0 and [m["type"] for m in sent] == ["tool_call", "answer"], sent
assert sent[0] == {"type": "tool_call", "id": "call-1", "name": "get_order",
                   "arguments": {"order_id": "A-1001"}}, sent[0]
assert sent[1]["content"] == "It is shipped.", sent[1]
assert "thinking" in err, "print() inside the agent goes to stderr"
assert [m["role"] for m in seen[1]] == ["system", "user", "assistant", "tool"], seen[1]
assert seen[1][2]["tool_calls"][0]["function"] == {"name": "get_order",
                                                   "arguments": '{"order_id": "A-1001"}'}
assert seen[1][3]["tool_call_id"] == "call-1"
assert not any("llm_call" == m["type"] for m in sent), "no model call, no llm_call report"

# An OpenAI chat completion (as data): reported as llm_call with model and tokens, before
# the tool call it asked for.
replies = [
    {"model": "gpt-x", "usage": {"prompt_tokens": 12, "completion_tokens": 3},
     "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
                  "tool_calls": [{"id": "tc-9", "type": "function",
                                  "function": {"name": "get_order", "arguments": '{"order_id":"A-1001"}'}}]}}]},
    {"model": "gpt-x", "usage": {"prompt_tokens": 20, "completion_tokens": 5},
     "choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": "Shipped."}}]},
]
openai_like = g.agent(lambda messages, tools: replies[sum(m["role"] == "tool" for m in messages)])
code, sent, _ = talk(openai_like, USER, dict(RESULT, id="tc-9"), END)
assert [m["type"] for m in sent] == ["llm_call", "tool_call", "llm_call", "answer"], sent
first = sent[0]
assert first["model"] == "gpt-x" and first["usage"] == {"input_tokens": 12, "output_tokens": 3}
assert first["message_out"]["content"] == "" and first["finish_reason"] == "tool_calls"
assert first["message_out"]["tool_calls"] == [{"id": "tc-9", "name": "get_order",
                                               "arguments": {"order_id": "A-1001"}}], first
assert [m["role"] for m in first["messages_in"]] == ["system", "user"], first
assert sent[1]["id"] == "tc-9"
assert [m["role"] for m in sent[2]["messages_in"]] == ["system", "user", "assistant", "tool"]
assert sent[2]["messages_in"][3]["tool_call_id"] == "tc-9"
assert sent[3]["content"] == "Shipped."

# An Anthropic message (as data).
anthropic_like = g.agent(lambda messages, tools: {
    "model": "claude-x", "stop_reason": "end_turn", "usage": {"input_tokens": 9, "output_tokens": 2},
    "content": [{"type": "text", "text": "Hello"}]})
code, sent, _ = talk(anthropic_like, USER, END)
assert [m["type"] for m in sent] == ["llm_call", "answer"] and sent[0]["usage"]["input_tokens"] == 9


# The session: start's facts, decisions, and a model call reported by hand (no second one).
@g.agent
def manual(messages, tools, session):
    assert session.case_id == "c" and session.vars == {"tier": "gold"} and session.seed == 7
    assert tools == g.openai_tools(START["tools"]) and tools[0]["type"] == "function"
    session.decision("answer", "nothing to look up")
    session.llm_call("Hi", messages_in=messages, model="m", usage={"input_tokens": 1, "output_tokens": 1})
    return g.Reply(content="Hi", model="m", usage={"input_tokens": 1, "output_tokens": 1})


code, sent, _ = talk(manual, USER, {"type": "later_protocol_message"}, USER, END)
assert [m["type"] for m in sent] == ["decision", "llm_call", "answer"] * 2, sent

# Non-ASCII both ways: read as sent, written as ASCII JSON whatever stdout's encoding.
code, sent, _ = talk(g.agent(lambda m, t: m[-1]["content"].upper()), {"type": "user", "content": "rembourser 18 €, merci"}, END)
assert sent == [{"type": "answer", "content": "REMBOURSER 18 €, MERCI"}], sent

# Errors: AgentError picks the kind; a bug is a transport error with its traceback on
# stderr; an agent that never answers stops at max_steps; another protocol is refused.
code, sent, _ = talk(g.agent(lambda m, t: (_ for _ in ()).throw(g.AgentError("too slow", "timeout"))), USER)
assert code == 1 and sent == [{"type": "error", "message": "too slow", "kind": "timeout"}], sent
code, sent, err = talk(g.agent(lambda m, t: None), USER)
assert code == 1 and sent[0]["kind"] == "transport" and sent[0]["message"].startswith("TypeError: the agent returned NoneType"), sent
assert "TypeError" in err, err
loop = g.agent(lambda m, t: g.ToolCall("get_order"), max_steps=2)
code, sent, _ = talk(loop, USER, RESULT, dict(RESULT, id="call-2"))
assert [m["type"] for m in sent] == ["tool_call", "tool_call", "error"] and "max_steps=2" in sent[2]["message"], sent
code, sent, err = talk(rules, USER, start=dict(START, protocol=2))
assert code == 1 and sent == [] and "speaks exec protocol 1" in err, (sent, err)
print("agent checks passed")
