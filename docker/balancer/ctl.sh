#!/bin/bash
# HAProxy's runtime API inside the balancer container: each argument is one command, its answer
# goes to stdout. `balancer-ctl "show stat"`, `balancer-ctl "set server pairs/pair-1 state drain"`.
set -euo pipefail
for command in "$@"; do
  printf '%s\n' "$command" | socat -t 5 stdio unix-connect:/run/haproxy/admin.sock
done
