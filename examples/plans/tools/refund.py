"""The refund tool of the agent (stands in for the app's real tool code)."""


def issue_refund(order_id: str) -> dict:
    return {"order_id": order_id, "status": "refunded"}
