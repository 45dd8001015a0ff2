#!/bin/sh
# A desktop notification whenever a new conflict waits for a decision (start it with the desktop session).
repairctl watch --json | while IFS= read -r status; do
    conflicts=$(printf '%s\n' "$status" | sed -n 's/.*"openConflicts":\([0-9]*\).*/\1/p')
    if [ "${conflicts:-0}" -gt "${previous:-0}" ]; then
        notify-send "Repair sync" "$conflicts conflict(s) need a decision: run repairctl conflicts"
    fi
    previous=${conflicts:-0}
done
