"""An agent on the official openai SDK, made an exec agent by `@gauntlet_llm.agent`: the
function hands gauntlet's conversation and tools to `chat.completions.create` and returns
the response; the SDK reports the call (model, tokens), runs the tool calls through gauntlet
and calls the function again with their results. The endpoint is `OPENAI_BASE_URL` (the
tests point it at `gauntlet serve-fake`), the model `MODEL`."""

import os

import openai

import gauntlet_llm

client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"],
                       api_key=os.environ.get("OPENAI_API_KEY", "not-needed"), max_retries=0)


@gauntlet_llm.agent
def assistant(messages, tools):
    extra = {"tools": tools} if tools else {}
    return client.chat.completions.create(model=os.environ["MODEL"], messages=messages, **extra)


if __name__ == "__main__":
    assistant.main()
