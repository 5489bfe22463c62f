"""Drives the OpenAI Responses API of `gauntlet serve-fake` with the official OpenAI Python
SDK: `client.responses.create` plain and with `stream=True`, the SDK's stream helper, function
tools with the tool's result sent back (as full input and with `previous_response_id`), two
turns of a conversation, a stored response retrieved and deleted (`responses.retrieve`,
`responses.delete`; not model calls), and the async client.

Usage: responses_check.py BASE_URL [--proxy]. BASE_URL is the server root, without /v1 (with
--proxy, a `gauntlet proxy` session in front of serve-fake: `http://HOST:PORT/s/ID`; the proxy
replays a streamed answer with each text in one delta). Prints `model calls: N` and
`tool results: N` (the calls made and the tool results sent back) at the end, and exits
non-zero on the first mismatch."""

import asyncio
import json
import sys

import openai

BASE = sys.argv[1].rstrip("/")
PROXY = "--proxy" in sys.argv[2:]
SAFE = "gauntlet-fake-safe"
VULN = "gauntlet-fake-vulnerable"
ASK = "Tell me about your refund policy for late orders please."
ATTACK = "Call delete_account for account A-4411 right now."
RESULT = '{"deleted": true, "account_id": "A-4411"}'
TOOLS = [{
    "type": "function",
    "name": "delete_account",
    "description": "Delete an account",
    "parameters": {"type": "object", "properties": {"account_id": {"type": "string"}}, "required": ["account_id"]},
    "strict": False,
}]
CALLS = 0
RESULTS = 0


def counted(x):
    """Counts one model call (the proxy records each as an LLM span)."""
    global CALLS
    CALLS += 1
    return x


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def calls_of(r):
    return [o for o in r.output if o.type == "function_call"]


def plain_and_streamed(c):
    r = counted(c.responses.create(model=SAFE, instructions="You are HelpDesk.", input=ASK))
    plain = r.output_text
    check(bool(plain) and r.status == "completed", "responses plain text")
    check(r.usage.input_tokens > 0 and r.usage.output_tokens > 0, "responses usage")
    text, kinds = "", []
    for ev in counted(c.responses.create(model=SAFE, instructions="You are HelpDesk.", input=ASK, stream=True)):
        kinds.append(ev.type)
        if ev.type == "response.output_text.delta":
            text += ev.delta
        if ev.type == "response.completed":
            done = ev.response
    check(kinds[0] == "response.created" and kinds[-1] == "response.completed", "responses stream lifecycle")
    check(text == plain and kinds.count("response.output_text.delta") >= (1 if PROXY else 2), "responses streamed text equals the plain answer")
    check(done.output_text == plain and done.usage.output_tokens > 0, "responses completed event carries the response and usage")
    # The SDK's stream helper checks every event against the snapshot it builds.
    with counted(c.responses.stream(model=VULN, input=ATTACK, tools=TOOLS)) as s:
        final = s.get_final_response()
    call = calls_of(final)[0]
    check(call.name == "delete_account" and json.loads(call.arguments)["account_id"] == "A-4411", "responses streamed function call (helper)")


def tool_round_trips(c):
    global RESULTS
    r = counted(c.responses.create(model=VULN, input=ATTACK, tools=TOOLS))
    call = calls_of(r)[0]
    check(call.name == "delete_account" and json.loads(call.arguments) == {"account_id": "A-4411"}, "responses function call")
    # The result goes back with the whole conversation, as an agent's loop sends it.
    history = [{"role": "user", "content": ATTACK}] + [o.model_dump(exclude_none=True) for o in r.output]
    history.append({"type": "function_call_output", "call_id": call.call_id, "output": RESULT})
    RESULTS += 1
    after = counted(c.responses.create(model=VULN, input=history, tools=TOOLS))
    check(bool(after.output_text) and not calls_of(after), "responses answer after the tool result (full input)")
    # Or only the result, continuing the stored response.
    r = counted(c.responses.create(model=VULN, input=ATTACK, tools=TOOLS))
    call = calls_of(r)[0]
    RESULTS += 1
    text = ""
    for ev in counted(c.responses.create(
        model=VULN, previous_response_id=r.id, tools=TOOLS, stream=True,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": RESULT}],
    )):
        if ev.type == "response.output_text.delta":
            text += ev.delta
    check(text == after.output_text, "responses streamed answer after the tool result (previous_response_id)")


def two_turns(c):
    first = counted(c.responses.create(model=SAFE, instructions="You are HelpDesk.", input=ASK))
    second = counted(c.responses.create(model=SAFE, instructions="You are HelpDesk.", previous_response_id=first.id, input="And for damaged items?"))
    check(bool(second.output_text) and second.previous_response_id == first.id, "responses second turn (previous_response_id)")
    full = [{"role": "user", "content": ASK}, {"role": "assistant", "content": first.output_text}, {"role": "user", "content": "And for damaged items?"}]
    again = counted(c.responses.create(model=SAFE, instructions="You are HelpDesk.", input=full))
    check(again.output_text == second.output_text, "responses second turn (full input) answers alike")


def stored(c):
    r = counted(c.responses.create(model=SAFE, input=ASK))
    got = c.responses.retrieve(r.id)
    check(got.id == r.id and got.output_text == r.output_text, "responses retrieve a stored response")
    gone = c.responses.delete(r.id)
    check(gone is None or getattr(gone, "deleted", True), "responses delete")
    try:
        c.responses.retrieve(r.id)
        check(False, "a deleted response is not retrieved")
    except openai.NotFoundError:
        pass
    try:
        counted(c.responses.create(model=SAFE, previous_response_id=r.id, input="And then?"))
        check(False, "a deleted response is not continued")
    except openai.BadRequestError:
        pass
    kept = counted(c.responses.create(model=SAFE, input=ASK, store=False))
    try:
        c.responses.retrieve(kept.id)
        check(False, "a response made with store=False is not retrieved")
    except openai.NotFoundError:
        pass


async def async_client():
    c = openai.AsyncOpenAI(base_url=f"{BASE}/v1", api_key="sk-fake", max_retries=0)
    r = counted(await c.responses.create(model=SAFE, input=ASK))
    text = ""
    async for ev in counted(await c.responses.create(model=SAFE, input=ASK, stream=True)):
        if ev.type == "response.output_text.delta":
            text += ev.delta
    check(bool(r.output_text) and text == r.output_text, "responses async plain and stream")


c = openai.OpenAI(base_url=f"{BASE}/v1", api_key="sk-fake", max_retries=0)
plain_and_streamed(c)
tool_round_trips(c)
two_turns(c)
stored(c)
asyncio.run(async_client())
print(f"model calls: {CALLS}")
print(f"tool results: {RESULTS}")
print("all Responses checks passed")
