"""An agent whose model is down for one kind of question: `AgentError` ends that trial as a
transport failure (the case is ERROR, the run INCONCLUSIVE), and a bug of the function's own
(`KeyError`) ends another the same way, its traceback on stderr. The third case passes.
Its `print()` goes to stderr, not into the protocol."""

import gauntlet_llm


@gauntlet_llm.agent
def echo(messages, tools, session):
    text = messages[-1]["content"]
    print("echo agent: case %s got %r" % (session.case_id, text))
    if "outage" in text:
        raise gauntlet_llm.AgentError("the model API answered 503 three times")
    if "bug" in text:
        return {}["missing"]
    return "You said: " + text


if __name__ == "__main__":
    echo.main()
