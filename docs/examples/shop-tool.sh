#!/bin/sh
# A shop tool in shell beside repairsyncd (docs/integration.md): reads the replica with the sqlite3 command-line
# tool and changes it both ways — with repairctl (recommended), and by writing the row, then `repairctl queue` —
# edits, a ticket message, and booking an order and a device in.
#
#   shop-tool.sh ORDER_NUMBER TICKET_ID
#
# The store comes from REPAIRSYNCD_STORE (default /var/lib/repairsyncd/replica.sqlite); repairctl finds the socket
# in REPAIRSYNCD_SOCKET. The user must be in the socket's group, and the daemon must run with
# store.group_writable: true for the second way. The tests run this file as such a user against a live daemon.
set -eu

store=${REPAIRSYNCD_STORE:-/var/lib/repairsyncd/replica.sqlite}
number=$1
ticket=$2

# Values go into SQL text below: accept only what ids and numbers look like.
case $number in '' | *[!0-9]*) echo "not an order number: $number" >&2; exit 64 ;; esac
case $ticket in '' | *[!A-Za-z0-9_-]*) echo "not a ticket id: $ticket" >&2; exit 64 ;; esac

# -bail: stop at the first error; .timeout: wait up to 5 s for the daemon's writer instead of failing at once.
sql() { sqlite3 -bail -cmd ".timeout 5000" "$store" "$@"; }

# Reading needs no daemon and works offline.
order=$(sql "SELECT id FROM orders WHERE order_number = $number;")
[ -n "$order" ] || { echo "no order #$number in the replica" >&2; exit 1; }
device=$(sql "SELECT id FROM devices WHERE order_id = '$order' ORDER BY created_at, id LIMIT 1;")
echo "order #$number is $order: $(sql "SELECT status FROM orders WHERE id = '$order';")"

# The first way (recommended): repairctl writes the row and queues the change in one transaction.
repairctl order note "$order" "Parts ordered (shop-tool.sh)"
repairctl ticket reply "$ticket" "We have ordered the part." --id "$(cat /proc/sys/kernel/random/uuid)"

# The second way: one short transaction on editable columns, then queue it.
if [ -n "$device" ]; then
    sql "PRAGMA synchronous = FULL; BEGIN IMMEDIATE; UPDATE devices SET resolution = 'Part ordered' WHERE id = '$device'; COMMIT;"
    repairctl queue device-updated "$device"
fi
message=$(cat /proc/sys/kernel/random/uuid)
stamp=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
sql "PRAGMA synchronous = FULL; BEGIN IMMEDIATE;
     INSERT INTO ticket_messages (id, ticket_id, content, sender_type, is_internal, created_at, updated_at, version)
     VALUES ('$message', '$ticket', 'Part ordered (shop-tool.sh).', 'staff', 1, '$stamp', '$stamp', 0);
     COMMIT;"
repairctl queue ticket-message-created "$message"

# Booking in with repairctl: an order for the same client, with its device, written and queued in one transaction.
# The id is ours, so the command run again after a lost answer books nothing twice.
client=$(sql "SELECT client_id FROM orders WHERE id = '$order';")
booking=$(cat /proc/sys/kernel/random/uuid)
repairctl order new --client "$client" --id "$booking" --notes "Booked in by shop-tool.sh" \
    --device "type=laptop,brand=Lenovo,issue=Fan noise"

# Booking in by writing the row: a device added to order #$number (a UUID of our own, synced_at NULL), then queued.
added=$(cat /proc/sys/kernel/random/uuid)
sql "PRAGMA synchronous = FULL; BEGIN IMMEDIATE;
     INSERT INTO devices (id, order_id, type, brand, status, issue, created_at, updated_at, version)
     VALUES ('$added', '$order', 'charger', 'Anker', 'booked_in', 'Added by shop-tool.sh', '$stamp', '$stamp', 0);
     COMMIT;"
repairctl queue device-created "$added"
repairctl status --badge
