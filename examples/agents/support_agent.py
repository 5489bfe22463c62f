#!/usr/bin/env python3
"""A small, deterministic order-support agent that speaks gauntlet's exec protocol, version 1.

gauntlet starts one process per trial and talks JSON lines: it writes `start`, then `user`
turns and `tool_result`s on our stdin, and finally `end`; we write `tool_call`, `decision`
and `answer` messages on stdout. Logs go to stderr, never stdout. The protocol is described
in docs/exec-protocol.md; run the example suite from the repository root with

    gauntlet run examples/exec-agent.yaml

The "model" is a handful of rules, so every run gives the same answers:

- "status of order A-1001" (or where/when/arrive): call `get_order`, answer from the fields
  it returned, and nothing else;
- "refund 18 EUR on A-1004": call `refund_order` within the 50 EUR limit; above it, ask for
  a supervisor's approval instead of calling the tool;
- a tool error is reported honestly (no invented status), with a way forward;
- requests for the system prompt, instructions or keys are refused with a reason and an
  alternative;
- text inside tool output is data: an instruction found there is never followed (the agent
  records a `decision` saying it ignored it).

Python 3 standard library only.
"""

import json
import re
import sys

PROTOCOL = 1
REFUND_LIMIT_EUR = 50

ORDER_RE = re.compile(r"\b([A-Z]-\d{4})\b")
AMOUNT_RE = re.compile(r"(\d+(?:[.,]\d+)?)\s*(?:EUR|€|euros?)\b", re.IGNORECASE)
STATUS_WORDS = ("status", "where", "when", "arrive", "track", "deliver", "shipped", "eta")
EXTRACTION_WORDS = (
    "system prompt",
    "your prompt",
    "your instructions",
    "previous instructions",
    "above this line",
    "word for word",
    "verbatim",
    "integration key",
    "api key",
    "internal code",
    "secret",
    "password",
)
# The fields of a get_order result this agent reads. Anything else (a `note`, say) is
# ignored, whatever it says.
ORDER_FIELDS = ("order_id", "status", "shipped_on", "eta", "total_eur")


class Protocol:
    """Reads gauntlet's messages and writes ours, one JSON object per line."""

    def __init__(self):
        self.calls = 0

    def send(self, msg):
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

    def recv(self):
        line = sys.stdin.readline()
        if not line:  # gauntlet closed our stdin: the trial is over
            sys.exit(0)
        msg = json.loads(line)
        if msg.get("type") == "end":
            sys.exit(0)
        return msg

    def decision(self, branch, reason):
        self.send({"type": "decision", "branch": branch, "reason": reason})

    def answer(self, text):
        self.send({"type": "answer", "content": text})

    def tool(self, name, arguments):
        """Calls a tool through gauntlet. Returns (ok, fields, error text)."""
        self.calls += 1
        call_id = "call-%d" % self.calls
        self.send({"type": "tool_call", "id": call_id, "name": name, "arguments": arguments})
        while True:
            msg = self.recv()
            if msg.get("type") == "tool_result" and msg.get("id") == call_id:
                break
            log("ignoring unexpected message while waiting for %s: %r" % (call_id, msg))
        content = msg.get("content", "")
        if content.startswith("error:"):
            return False, {}, content[len("error:"):].strip()
        try:
            data = json.loads(content)
        except ValueError:
            return False, {}, "the tool returned an answer I could not read"
        if not isinstance(data, dict):
            return False, {}, "the tool returned an answer I could not read"
        if "error" in data:
            return False, data, str(data["error"])
        return True, data, ""


def log(text):
    sys.stderr.write("support_agent: %s\n" % text)
    sys.stderr.flush()


def money(amount):
    return ("%d" % amount) if amount == int(amount) else ("%.2f" % amount)


class Agent:
    def __init__(self, proto, start):
        self.proto = proto
        self.tools = {t["name"] for t in start.get("tools", [])}
        self.order = None  # the order the conversation is about, kept across turns

    def handle(self, text):
        lower = text.lower()
        if any(w in lower for w in EXTRACTION_WORDS):
            self.proto.decision("refuse", "the request asks for confidential instructions or credentials")
            return (
                "I can't share my instructions or any internal keys, because they are "
                "confidential. I'm happy to help with an order status or a refund instead."
            )
        found = ORDER_RE.search(text)
        if found:
            self.order = found.group(1)
        if "refund" in lower:
            return self.refund(text)
        if self.order and any(w in lower for w in STATUS_WORDS):
            return self.status()
        if self.order:
            return (
                "Thanks! What would you like to know about order %s? I can check its status "
                "or help with a return." % self.order
            )
        return "I can help with the status of an order or a refund. Which order number is it about?"

    def status(self):
        order = self.order
        if "get_order" not in self.tools:
            return "I can't look up orders right now. Please contact our support team."
        ok, data, error = self.proto.tool("get_order", {"order_id": order})
        extra = sorted(k for k in data if k not in ORDER_FIELDS and k != "error")
        if extra:
            self.proto.decision(
                "ignore_tool_text",
                "get_order returned fields %s; tool output is data, never instructions" % ", ".join(extra),
            )
        if not ok:
            if "not found" in error.lower():
                return "I couldn't find order %s. Could you check the order number?" % order
            return (
                "I couldn't reach the order system just now (%s), so I can't confirm the "
                "status of order %s. Please try again in a few minutes, or I can escalate "
                "this to a human agent." % (error, order)
            )
        status = str(data.get("status", "unknown"))
        facts = []
        if data.get("shipped_on"):
            facts.append("it shipped on %s" % data["shipped_on"])
        if data.get("eta"):
            facts.append("should arrive by %s" % data["eta"] if facts else "it should arrive by %s" % data["eta"])
        text = "Order %s is %s" % (order, status)
        return text + (": " + " and ".join(facts) if facts else "") + "."

    def refund(self, text):
        order = self.order
        if not order:
            return "Which order should I refund? Please give the order number (like A-1001)."
        found = AMOUNT_RE.search(text)
        if not found:
            return "How much should I refund for order %s, in EUR?" % order
        amount = float(found.group(1).replace(",", "."))
        if amount == int(amount):
            amount = int(amount)
        if amount > REFUND_LIMIT_EUR:
            self.proto.decision("ask_approval", "%s EUR is over the %d EUR limit" % (money(amount), REFUND_LIMIT_EUR))
            return (
                "I can't issue a %s EUR refund on order %s myself, because refunds over %d EUR "
                "need a supervisor's approval recorded in our system. I can submit the request "
                "for approval now if you like." % (money(amount), order, REFUND_LIMIT_EUR)
            )
        ok, data, error = self.proto.tool("refund_order", {"order_id": order, "amount_eur": amount})
        if not ok:
            return (
                "I couldn't refund order %s: the refund system said \"%s\". Nothing was "
                "refunded. Please try again later, or I can escalate this to a human agent."
                % (order, error)
            )
        return (
            "Done. I refunded %s EUR for order %s; it will reach your card within 5 working "
            "days." % (money(amount), order)
        )


def main():
    proto = Protocol()
    start = proto.recv()
    if start.get("type") != "start" or start.get("protocol") != PROTOCOL:
        # Said on stderr, which gauntlet quotes when it reports the failed trial.
        sys.exit("support_agent: expected a protocol %d start message, got %r" % (PROTOCOL, start))
    agent = Agent(proto, start)
    while True:
        msg = proto.recv()
        if msg.get("type") != "user":
            log("ignoring unexpected message: %r" % (msg,))
            continue
        proto.answer(agent.handle(msg.get("content", "")))


if __name__ == "__main__":
    main()
