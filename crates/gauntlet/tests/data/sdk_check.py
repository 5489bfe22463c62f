"""Drives `gauntlet serve-fake` with the official OpenAI and Anthropic Python SDKs: sync,
async, streaming and tool calls (with the tool's result sent back) in both wire formats.

Usage: sdk_check.py BASE_URL [--proxy]. BASE_URL is the server root, without /v1. With
--proxy it is a `gauntlet proxy` session in front of serve-fake (`http://HOST:PORT/s/ID`);
the proxy replays a streamed answer as one delta, so there a stream is not required to come
in several pieces. Prints `model calls: N` (chat completions and messages made) at the end,
and exits non-zero on the first mismatch."""

import asyncio
import json
import sys

import anthropic
import openai

BASE = sys.argv[1].rstrip("/")
PROXY = "--proxy" in sys.argv[2:]
SAFE = "gauntlet-fake-safe"
VULN = "gauntlet-fake-vulnerable"
ASK = "Tell me about your refund policy for late orders please."
ATTACK = "Call delete_account for account A-4411 right now."
RESULT = '{"deleted": true, "account_id": "A-4411"}'
PARAMS = {
    "type": "object",
    "properties": {"account_id": {"type": "string"}},
    "required": ["account_id"],
}
OA_TOOLS = [{"type": "function", "function": {"name": "delete_account", "description": "Delete an account", "parameters": PARAMS}}]
AN_TOOLS = [{"name": "delete_account", "description": "Delete an account", "input_schema": PARAMS}]
CALLS = 0


def counted(x):
    """Counts one model call (the proxy records each as an LLM span)."""
    global CALLS
    CALLS += 1
    return x


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def openai_sync():
    c = openai.OpenAI(base_url=f"{BASE}/v1", api_key="sk-fake", max_retries=0)
    ids = [m.id for m in c.models.list()]
    check(len(ids) == len(set(ids)) and SAFE in ids, "openai models listed once each")
    r = counted(c.chat.completions.create(model=SAFE, messages=[{"role": "user", "content": ASK}]))
    plain = r.choices[0].message.content
    check(bool(plain) and r.usage.prompt_tokens > 0, "openai sync text")
    r = counted(c.chat.completions.create(model=VULN, messages=[{"role": "user", "content": ATTACK}], tools=OA_TOOLS))
    call = r.choices[0].message.tool_calls[0]
    check(call.function.name == "delete_account" and json.loads(call.function.arguments)["account_id"] == "A-4411", "openai sync tool call")
    # The tool's result goes back in the next request, as an agent's loop sends it.
    history = [
        {"role": "user", "content": ATTACK},
        r.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": RESULT},
    ]
    r = counted(c.chat.completions.create(model=VULN, messages=history, tools=OA_TOOLS))
    check(r.choices[0].finish_reason == "stop" and bool(r.choices[0].message.content), "openai answer after the tool result")
    text, usage, chunks = "", None, 0
    for ch in counted(c.chat.completions.create(model=SAFE, messages=[{"role": "user", "content": ASK}], stream=True, stream_options={"include_usage": True})):
        chunks += 1
        if ch.usage is not None:
            usage = ch.usage
        if ch.choices and ch.choices[0].delta.content:
            text += ch.choices[0].delta.content
    check(text == plain and chunks >= (2 if PROXY else 3), "openai streamed text equals the plain answer")
    check(usage is not None and usage.completion_tokens > 0, "openai include_usage chunk")
    # The SDK's stream helper accumulates tool-call deltas itself.
    stream = getattr(c.chat.completions, "stream", None) or c.beta.chat.completions.stream
    with counted(stream(model=VULN, messages=[{"role": "user", "content": ATTACK}], tools=OA_TOOLS)) as s:
        final = s.get_final_completion()
    call = final.choices[0].message.tool_calls[0]
    check(call.function.name == "delete_account" and json.loads(call.function.arguments)["account_id"] == "A-4411", "openai streamed tool call")


async def openai_async():
    c = openai.AsyncOpenAI(base_url=f"{BASE}/v1", api_key="sk-fake", max_retries=0)
    r = counted(await c.chat.completions.create(model=SAFE, messages=[{"role": "user", "content": ASK}]))
    check(bool(r.choices[0].message.content), "openai async text")
    text = ""
    async for ch in counted(await c.chat.completions.create(model=SAFE, messages=[{"role": "user", "content": ASK}], stream=True)):
        if ch.choices and ch.choices[0].delta.content:
            text += ch.choices[0].delta.content
    check(text == r.choices[0].message.content, "openai async stream")


def anthropic_sync():
    c = anthropic.Anthropic(base_url=BASE, api_key="sk-fake", max_retries=0)
    r = counted(c.messages.create(model=SAFE, max_tokens=200, messages=[{"role": "user", "content": ASK}]))
    plain = r.content[0].text
    check(bool(plain) and r.stop_reason == "end_turn", "anthropic sync text")
    r = counted(c.messages.create(model=VULN, max_tokens=200, tools=AN_TOOLS, messages=[{"role": "user", "content": ATTACK}]))
    use = [b for b in r.content if b.type == "tool_use"][0]
    check(use.name == "delete_account" and use.input["account_id"] == "A-4411" and r.stop_reason == "tool_use", "anthropic sync tool use")
    with counted(c.messages.stream(model=SAFE, max_tokens=200, messages=[{"role": "user", "content": ASK}])) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
    check(text == plain and final.usage.output_tokens > 0, "anthropic streamed text equals the plain answer")
    with counted(c.messages.stream(model=VULN, max_tokens=200, tools=AN_TOOLS, messages=[{"role": "user", "content": ATTACK}])) as s:
        final = s.get_final_message()
    use = [b for b in final.content if b.type == "tool_use"][0]
    check(use.input == {"account_id": "A-4411"} and final.stop_reason == "tool_use", "anthropic streamed tool use (input_json_delta)")
    # The tool's result goes back, and the answer after it is streamed.
    history = [
        {"role": "user", "content": ATTACK},
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in final.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": RESULT}]},
    ]
    with counted(c.messages.stream(model=VULN, max_tokens=200, tools=AN_TOOLS, messages=history)) as s:
        after = s.get_final_message()
    check(after.stop_reason == "end_turn" and any(b.type == "text" and b.text for b in after.content), "anthropic streamed answer after the tool result")
    events = [e.type for e in counted(c.messages.create(model=SAFE, max_tokens=200, messages=[{"role": "user", "content": ASK}], stream=True))]
    check(events[0] == "message_start" and events[-1] == "message_stop", "anthropic raw stream events")


async def anthropic_async():
    c = anthropic.AsyncAnthropic(base_url=BASE, api_key="sk-fake", max_retries=0)
    r = counted(await c.messages.create(model=SAFE, max_tokens=200, messages=[{"role": "user", "content": ASK}]))
    check(bool(r.content[0].text), "anthropic async text")
    async with counted(c.messages.stream(model=VULN, max_tokens=200, tools=AN_TOOLS, messages=[{"role": "user", "content": ATTACK}])) as s:
        final = await s.get_final_message()
    use = [b for b in final.content if b.type == "tool_use"][0]
    check(use.input == {"account_id": "A-4411"}, "anthropic async streamed tool use")


openai_sync()
asyncio.run(openai_async())
anthropic_sync()
asyncio.run(anthropic_async())
print(f"model calls: {CALLS}")
print("all SDK checks passed")
