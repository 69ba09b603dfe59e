#!/usr/bin/env bash
# Kept for those who set a machine up ahead of time: `npm start` and `npm test` do this
# themselves now (scripts/ensure-system.sh, their prestart and pretest steps).
#
#   bash scripts/setup-machine.sh            # what npm test needs (podman, base images too)
#   bash scripts/setup-machine.sh --native   # what npm start needs
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == --native ]]; then exec bash scripts/ensure-system.sh start; fi
exec bash scripts/ensure-system.sh test
