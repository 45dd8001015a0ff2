#!/usr/bin/env python3
"""A shop tool working beside repairsyncd (docs/integration.md): it reads the local replica with sqlite3 and makes
changes both ways — through the control socket (recommended), and by writing the row itself, then queueing it —
edits, a ticket message, and booking a customer's order in.

    shop_tool.py ORDER_NUMBER TICKET_ID

The store and the socket come from REPAIRSYNCD_STORE and REPAIRSYNCD_SOCKET (defaults: the installed paths). The
user must be in the socket's group (control.group), and the daemon must run with store.group_writable: true for
the second way. The tests run this file as such a user against a live daemon while it syncs.
"""
import datetime
import json
import os
import socket
import sqlite3
import sys
import uuid

STORE = os.environ.get("REPAIRSYNCD_STORE", "/var/lib/repairsyncd/replica.sqlite")
SOCKET = os.environ.get("REPAIRSYNCD_SOCKET", "/run/repairsyncd/control.sock")


class Daemon:
    """One connection to the control socket: JSON-RPC 2.0, one request and one reply per line (docs/rpc.md)."""

    def __init__(self, path=SOCKET):
        self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.connection.connect(path)
        self.lines = self.connection.makefile("rb")
        self.last_id = 0

    def call(self, method, **params):
        self.last_id += 1
        request = {"jsonrpc": "2.0", "method": method, "id": self.last_id}
        if params:
            request["params"] = params
        self.connection.sendall(json.dumps(request).encode() + b"\n")
        while True:
            reply = json.loads(self.lines.readline())
            if reply.get("id") != self.last_id:
                continue  # a notification
            if "error" in reply:
                error = reply["error"]
                raise RuntimeError(f"{method}: {error['message']} ({error['code']})")
            return reply["result"]


def open_replica(path=STORE):
    """The replica, for reading and for short write transactions beside the daemon."""
    db = sqlite3.connect(path, isolation_level=None)  # autocommit: transactions are explicit and short
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA busy_timeout = 5000")  # wait for the daemon's writer instead of failing at once
    db.execute("PRAGMA synchronous = FULL")  # a committed row survives a power cut, like the daemon's own
    journal = db.execute("PRAGMA journal_mode").fetchone()[0]
    if journal != "wal":
        sys.exit(f"{path} is not in WAL mode ({journal}): is this the daemon's replica?")
    return db


def now():
    """An RFC 3339 time in UTC with milliseconds, as every time column holds."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def main(order_number, ticket_id):
    db = open_replica()
    daemon = Daemon()

    # Reading needs no daemon and works offline.
    order = db.execute(
        "SELECT id, status, notes, client_id, client_name FROM orders WHERE order_number = ?", (order_number,)).fetchone()
    if order is None:
        sys.exit(f"no order #{order_number} in the replica")
    device = db.execute("SELECT id FROM devices WHERE order_id = ? ORDER BY created_at, id", (order["id"],)).fetchone()
    print(f"order #{order_number} ({order['id']}) for {order['client_name']}: {order['status']}")

    # The first way (recommended): the socket writes the row and queues the change in one transaction.
    change = daemon.call("updateOrder", id=order["id"], notes="Screen replaced; ready Friday")
    print(f"updateOrder queued change {change['seq']} ({', '.join(sorted(change['fields']))})")
    message_id = str(uuid.uuid4())
    for _ in range(2):  # a reply lost on the way is safe to send again: the id makes it one message
        message = daemon.call("replyToTicket", ticketId=ticket_id, content="Your repair is ready.", id=message_id)
    print(f"replyToTicket wrote message {message['id']}")

    # The second way: write the row in one short transaction (editable columns only), then tell the daemon.
    db.execute("BEGIN IMMEDIATE")
    db.execute("UPDATE orders SET status = 'ready' WHERE id = ?", (order["id"],))
    if device is not None:
        db.execute("UPDATE devices SET diagnosis = 'Battery swollen, replaced' WHERE id = ?", (device["id"],))
    db.execute("COMMIT")
    queued = daemon.call("queueChange", kind="order-updated", id=order["id"])
    print(f"queueChange order-updated: {'queued ' + ', '.join(queued['fields']) if queued['queued'] else queued['reason']}")
    if device is not None:
        queued = daemon.call("queueChange", kind="device-updated", id=device["id"])
        print(f"queueChange device-updated: {'queued ' + ', '.join(queued['fields']) if queued['queued'] else queued['reason']}")

    # A new message written directly: a new UUID, sender_type staff, synced_at NULL; then queued.
    note_id = str(uuid.uuid4())
    stamp = now()
    db.execute("BEGIN IMMEDIATE")
    db.execute(
        "INSERT INTO ticket_messages (id, ticket_id, content, sender_type, is_internal, created_at, updated_at, version)"
        " VALUES (?, ?, ?, 'staff', 1, ?, ?, 0)", (note_id, ticket_id, "Called the customer (shop_tool.py).", stamp, stamp))
    db.execute("COMMIT")
    queued = daemon.call("queueChange", kind="ticket-message-created", id=note_id)
    print(f"queueChange ticket-message-created: {'queued' if queued['queued'] else queued['reason']}")

    # Booking in through the socket: the order and its device written and queued in one transaction. The id is ours,
    # so a call repeated after a lost reply answers the order already written and books nothing twice.
    booking_id = str(uuid.uuid4())
    for _ in range(2):
        booked = daemon.call(
            "createOrder", id=booking_id, clientId=order["client_id"], notes="Booked in by shop_tool.py", deposit="20.00",
            devices=[{"type": "phone", "brand": "Apple", "model": "iPhone 13", "issue": "Cracked screen"}])
    print(f"createOrder booked in order {booked['order']['id']} with {len(booked['devices'])} device(s)")

    # Booking in by writing the rows: a new client and an order for it in one short transaction (UUIDs of our own,
    # synced_at NULL, the order's number NULL: the server gives it), then both queued, the parent first.
    client_id, walk_in_id = str(uuid.uuid4()), str(uuid.uuid4())
    stamp = now()
    db.execute("BEGIN IMMEDIATE")
    db.execute(
        "INSERT INTO clients (id, email, first_name, last_name, order_count, total_spent, created_at, updated_at, version)"
        " VALUES (?, 'walk-in.python@example.com', 'Walk', 'In', 0, '0', ?, ?, 0)", (client_id, stamp, stamp))
    db.execute(
        "INSERT INTO orders (id, order_number, status, notes, client_id, device_count, created_at, updated_at, version)"
        " VALUES (?, NULL, 'booked_in', 'Walk-in, booked in by shop_tool.py', ?, 0, ?, ?, 0)",
        (walk_in_id, client_id, stamp, stamp))
    db.execute("COMMIT")
    for kind, record_id in [("client-created", client_id), ("order-created", walk_in_id)]:
        queued = daemon.call("queueChange", kind=kind, id=record_id)
        print(f"queueChange {kind}: {'queued' if queued['queued'] else queued['reason']}")
    print(f"{queued['pending']} change(s) waiting for the server")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(int(sys.argv[1]), sys.argv[2])
