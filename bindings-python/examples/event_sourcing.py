"""Event sourcing with the aggregate helper: a bank account whose balance is
the fold of its events (``Deposited``, ``Withdrawn``), saved as a JSON
snapshot every few events. A withdrawal decides on the loaded state and
retries on a version conflict (another writer appended first), so the
balance never goes below zero even with several writers.

    python examples/event_sourcing.py 127.0.0.1:9000 [topic] [account]
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass

import cursus


@dataclass(frozen=True)
class Account:
    balance: int = 0
    transactions: int = 0


def apply(account: Account, event: cursus.StoredEvent) -> Account:
    """Folds one event into the state (the only place that knows events)."""
    amount = json.loads(event.text)["amount"]
    if event.event_type == "Withdrawn":
        amount = -amount
    return Account(account.balance + amount, account.transactions + 1)


def serialize(account: Account) -> str:
    return json.dumps(asdict(account), separators=(",", ":"))


def deserialize(state: str) -> Account:
    return Account(**json.loads(state))


def withdraw(store: cursus.EventStore, topic: str, key: str, amount: int) -> bool:
    """Withdraws if the balance allows it; False when it does not."""
    account = store.load_aggregate(
        topic, key, Account(), apply, deserialize=deserialize, serialize=serialize, snapshot_every=5
    )
    while True:
        if account.state.balance < amount:
            return False
        try:
            account.append("Withdrawn", json.dumps({"amount": amount}), metadata='{"by": "example"}')
            return True
        except cursus.ConflictError as e:
            if e.code != "version_conflict":
                raise
            # Another writer appended (the stream is at e.fields["current"]):
            # catch up and decide again.
            account.reload()


def main(bootstrap: str, topic: str, key: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(topic, partitions=3, event_sourcing=True)

    with cursus.EventStore(bootstrap_servers=bootstrap) as store:
        account = store.load_aggregate(
            topic, key, Account(), apply, deserialize=deserialize, serialize=serialize, snapshot_every=5
        )
        print(f"loaded {key}: {account.state} at version {account.version}")
        for amount in (100, 25, 40):
            account.append("Deposited", json.dumps({"amount": amount}))
        for amount in (50, 500):
            print(f"withdraw {amount}: {'done' if withdraw(store, topic, key, amount) else 'refused'}")

        snapshot = store.read_snapshot(topic, key)
        print(f"snapshot: {snapshot}")
        print("history:")
        history = store.history(topic, key)
        for event in history:
            print(f"  v{event.version} {event.event_type:<9} {event.text} (offset {event.offset})")
        print(f"  ({history.completeness}, head version {history.head_version})")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    args = sys.argv[1:]
    main(args[0], args[1] if len(args) > 1 else "accounts", args[2] if len(args) > 2 else "acct-1")
