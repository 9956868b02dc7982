#!/usr/bin/env bash
# Adds --start-interval=1s to the Dockerfile's HEALTHCHECK, for the published image only: the release workflow builds
# with BuildKit, which knows the flag, and Docker Engine 25+ then probes every second during the start period (older
# engines ignore it). The Dockerfile itself goes without, because the builders of engines before 25 refuse it and
# the compose file's build fallback must work there.
# Usage: .github/healthcheck-start-interval.sh [DOCKERFILE]   (default: Dockerfile; edited in place)
set -euo pipefail
file=${1:-Dockerfile}
count=$(grep -c '^HEALTHCHECK ' "$file" || true)
[[ $count == 1 ]] || { echo "$file: expected one HEALTHCHECK line, found $count" >&2; exit 1; }
if grep -q '^HEALTHCHECK .*--start-interval' "$file"; then
  echo "$file: the HEALTHCHECK already has --start-interval" >&2
  exit 1
fi
sed -i 's/^HEALTHCHECK /HEALTHCHECK --start-interval=1s /' "$file"
grep '^HEALTHCHECK ' "$file"
