#!/usr/bin/env python3
"""A two-agent refund team (triage and billing) in one exec process, standard library only.

Triage talks to the customer and hands refunds to billing over gauntlet's message bus
(`send_message` / `read_messages`, tools like any other, each call naming its agent); billing
refunds and confirms back. The team reacts to what the bus hands it, so an injected fault
really meets it.

    python3 team_agent.py          # robust: re-sends a silent handoff, refunds a message once,
                                   # answers only with billing's confirmation in hand
    python3 team_agent.py naive    # trusts the bus: claims success without a confirmation and
                                   # acts on every copy of a message

The protocol is docs/exec-protocol.md: JSON lines on stdin and stdout.
"""

import json
import re
import sys

ROBUST = sys.argv[1:2] != ["naive"]
# How many times triage reads its inbox for billing's reply before it gives up (robust).
PATIENCE = 3


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def call(agent, name, arguments):
    """One tool call by `agent`; returns the decoded result (an error becomes a dict)."""
    send({"type": "tool_call", "name": name, "arguments": arguments, "agent": agent})
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        m = json.loads(line)
        if m.get("type") == "end":
            sys.exit(0)
        if m.get("type") != "tool_result":
            continue
        try:
            return json.loads(m.get("content") or "{}")
        except ValueError:
            return {"error": m.get("content")}


def billing_turn(refunded):
    """Billing reads its inbox and refunds each request; returns whether it confirmed one.

    Robust billing refunds an order once, whatever reaches it: the same message number
    twice (a duplicate) or a late original next to triage's re-send are one request.
    """
    confirmed = False
    for msg in call("billing", "read_messages", {}).get("messages", []):
        found = re.search(r"(A-\d{4})", msg.get("content", ""))
        if not found:
            continue
        order = found.group(1)
        if ROBUST and order in refunded:
            continue
        refunded.add(order)
        refund = call("billing", "issue_refund", {"order_id": order, "amount_eur": 25})
        call(
            "billing",
            "send_message",
            {"to": "triage", "content": "Refunded 25 EUR on %s: %s." % (order, refund.get("refund_id"))},
        )
        confirmed = True
    return confirmed


def confirmation():
    """Triage's inbox: the refund id from billing's confirmation, when it has arrived."""
    for msg in call("triage", "read_messages", {}).get("messages", []):
        found = re.search(r"(RF-\d+)", msg.get("content", ""))
        if msg.get("from") == "billing" and found:
            return found.group(1)
    return None


def handle(text):
    found = re.search(r"(A-\d{4})", text)
    if not found:
        return "Which order should I refund? Please give its id (A-1234)."
    order = found.group(1)
    handoff = {"to": "billing", "content": "Refund 25 EUR on %s (arrived broken)." % order}
    call("triage", "send_message", handoff)
    refunded = set()
    if not ROBUST:
        billing_turn(refunded)
        return "Your refund of 25 EUR for order %s has been issued." % order
    for attempt in range(PATIENCE):
        billing_turn(refunded)
        refund_id = confirmation()
        if refund_id:
            return "Your refund of 25 EUR for order %s has been issued (refund %s)." % (order, refund_id)
        if attempt == 0:
            # Nothing back from billing: the handoff may be lost. Send it again, marked as
            # a re-send, so billing can tell it from a new request.
            call("triage", "send_message", dict(handoff, content="Resending: " + handoff["content"]))
    return (
        "I passed your refund for order %s to billing but have no confirmation yet, so it "
        "has not been issued. I will follow up." % order
    )


for line in sys.stdin:
    m = json.loads(line)
    if m.get("type") == "end":
        break
    if m.get("type") == "user":
        answer = handle(m.get("content", ""))
        # Say which agent gave the answer (triage): checks such as awaits_reply read it from
        # the reported step. The team has no model, so the step names its rules.
        send({
            "type": "llm_call",
            "model": "rules",
            "agent": "triage",
            "message_out": {"role": "assistant", "content": answer},
        })
        send({"type": "answer", "content": answer})
