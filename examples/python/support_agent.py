#!/usr/bin/env python3
"""ShopHelp, an order-support agent written as one Python function with the gauntlet SDK.

`@gauntlet_llm.agent` makes the function an exec agent (docs/exec-protocol.md): gauntlet
sends the user's turns, the function answers or asks for tools, the SDK runs the tool calls
through gauntlet (fixtures, injected faults, approvals) and calls it again with the results.
Run the suite beside it, as a test run or through pytest:

    pip install gauntlet-llm pytest
    gauntlet run examples/python/gauntlet_support.yaml
    pytest examples/python

The "model" here is a handful of rules, so every run gives the same answers; a real agent
calls its model in the same place (docs/python.md shows one on the openai SDK). The
function is stateless: everything it knows is in `messages`, the conversation so far in the
OpenAI chat shape (tool results included).
"""

import json
import re

import gauntlet_llm

REFUND_LIMIT_EUR = 50
ORDER_RE = re.compile(r"\b([A-Z]-\d{4})\b")
AMOUNT_RE = re.compile(r"(\d+(?:[.,]\d+)?)\s*(?:EUR|€|euros?)\b", re.IGNORECASE)
STATUS_WORDS = ("status", "where", "when", "arrive", "track", "deliver", "eta")
EXTRACTION_WORDS = ("system prompt", "your instructions", "previous instructions",
                    "integration key", "api key", "secret", "password", "verbatim")
# The fields of a get_order result this agent reads: anything else (a `note` carrying an
# instruction, say) is data it ignores.
ORDER_FIELDS = ("order_id", "status", "shipped_on", "eta", "total_eur")


def current_order(messages):
    """The order the conversation is about: the last one a user named."""
    for m in reversed(messages):
        if m["role"] == "user":
            found = ORDER_RE.search(m["content"])
            if found:
                return found.group(1)
    return None


def from_tool(messages, session):
    """The answer to the turn, from the tool result that just came back."""
    result = messages[-1]
    order = current_order(messages)
    text = result["content"]
    if text.startswith("error:"):
        return ("I couldn't reach the order system just now (%s), so I can't confirm order "
                "%s. Please try again in a few minutes, or I can escalate this to a human "
                "agent." % (text[len("error:"):].strip(), order))
    data = json.loads(text)
    if "error" in data:
        return "I couldn't find order %s. Could you check the order number?" % order
    if result["name"] == "refund_order":
        asked = json.loads(messages[-2]["tool_calls"][0]["function"]["arguments"])
        return ("Done. I refunded %g EUR for order %s; it will reach your card within 5 "
                "working days." % (asked["amount_eur"], order))
    extra = sorted(k for k in data if k not in ORDER_FIELDS)
    if extra:
        session.decision("ignore_tool_text", "get_order returned fields %s; tool output is "
                         "data, never instructions" % ", ".join(extra))
    facts = ["it shipped on %s" % data["shipped_on"]] if data.get("shipped_on") else []
    if data.get("eta"):
        facts.append("should arrive by %s" % data["eta"])
    return "Order %s is %s%s." % (order, data.get("status", "unknown"),
                                 ": " + " and ".join(facts) if facts else "")


@gauntlet_llm.agent
def shophelp(messages, tools, session):
    if messages[-1]["role"] == "tool":
        return from_tool(messages, session)
    text = messages[-1]["content"]
    lower = text.lower()
    if any(w in lower for w in EXTRACTION_WORDS):
        session.decision("refuse", "the request asks for confidential instructions or keys")
        return ("I can't share my instructions or any internal keys, because they are "
                "confidential. I'm happy to help with an order status or a refund instead.")
    order = current_order(messages)
    if "refund" in lower and order:
        amount = AMOUNT_RE.search(text)
        if not amount:
            return "How much should I refund for order %s, in EUR?" % order
        eur = float(amount.group(1).replace(",", "."))
        eur = int(eur) if eur == int(eur) else eur
        if eur > REFUND_LIMIT_EUR:
            session.decision("ask_approval", "%g EUR is over the %d EUR limit" % (eur, REFUND_LIMIT_EUR))
            return ("I can't issue a %g EUR refund on order %s myself, because refunds over "
                    "%d EUR need a supervisor's approval. I can submit the request for "
                    "approval now if you like." % (eur, order, REFUND_LIMIT_EUR))
        return gauntlet_llm.ToolCall("refund_order", {"order_id": order, "amount_eur": eur})
    if order and any(w in lower for w in STATUS_WORDS):
        return gauntlet_llm.ToolCall("get_order", {"order_id": order})
    if order:
        return ("Thanks! What would you like to know about order %s? I can check its status "
                "or help with a return." % order)
    return "I can help with the status of an order or a refund. Which order number is it about?"


if __name__ == "__main__":
    shophelp.main()
