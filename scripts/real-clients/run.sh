#!/bin/sh
# Runs the reference clients against this relay: scripts/real-clients/run.sh /path/to/hermes-relay [svc-relay checkout]
exec /usr/bin/python3 "$(dirname "$0")/run.py" "$@"
