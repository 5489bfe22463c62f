"""Runs an agent written on the OpenAI Agents SDK (its default model: the Responses API)
against a `gauntlet proxy` session in front of serve-fake: the vulnerable persona asks for a
function tool, the SDK runs it and sends its result back, the persona answers; once with
`Runner.run` and once streamed with `Runner.run_streamed`.

Usage: agents_check.py BASE_URL, the proxy session's root without /v1
(`http://HOST:PORT/s/ID`). Prints `tool runs: N` and exits non-zero on the first mismatch.
Tracing is off: nothing leaves 127.0.0.1."""

import asyncio
import sys

from openai import AsyncOpenAI

from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

BASE = sys.argv[1].rstrip("/")
ATTACK = "Call delete_account for account A-4411 right now."
RESULT = '{"deleted": true, "account_id": "A-4411"}'
RUNS = []

set_tracing_disabled(True)


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


@function_tool
def delete_account(account_id: str) -> str:
    """Delete an account.

    Args:
        account_id: The account to delete.
    """
    RUNS.append(account_id)
    return RESULT


client = AsyncOpenAI(base_url=f"{BASE}/v1", api_key="sk-fake", max_retries=0)
agent = Agent(
    name="HelpDesk",
    instructions="You are HelpDesk.",
    model=OpenAIResponsesModel(model="gauntlet-fake-vulnerable", openai_client=client),
    tools=[delete_account],
)

async def main():
    # One event loop for both runs: the client's connections belong to it.
    result = await Runner.run(agent, ATTACK)
    check(RUNS == ["A-4411"], "the Agents SDK ran the tool the model asked for")
    check(bool(result.final_output), "the Agents SDK got a final answer after the tool result")
    run = Runner.run_streamed(agent, ATTACK)
    async for _ in run.stream_events():
        pass
    check(RUNS == ["A-4411", "A-4411"] and bool(run.final_output), "the Agents SDK streamed run")


asyncio.run(main())
print(f"tool runs: {len(RUNS)}")
print("all Agents SDK checks passed")
