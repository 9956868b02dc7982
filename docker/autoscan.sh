#!/bin/sh
# `autoscan` in the image (/usr/local/bin/autoscan). Started as root — by the entrypoint, the HEALTHCHECK or a plain
# `docker exec autoscan autoscan …` — it runs the command as PUID:PGID (default 1000:1000), so every file it writes
# belongs to that user; started as any other user (`docker run --user`, `docker exec -u`) it runs as that user.
set -eu
main=/app/dist/cli/main.js
# One Node option, the same in the systemd unit and `npm start`: a young generation of at most 4 MB per half (README,
# "Install without Docker": about 100 MB less after a burst of 100,000 requests). NODE_OPTIONS is left to the user.
set -- --max-semi-space-size=4 "$main" "$@"
if [ "$(id -u)" != 0 ] || [ "${PUID:-1000}" = 0 ]; then
  exec node "$@"
fi
# Supplementary groups are kept (docker-compose.scanner.yml adds the Docker socket's group with group_add), except
# root's own group 0. setpriv leaves no capability behind once the uid is not 0.
groups=$(id -G | tr ' ' '\n' | grep -vx 0 | paste -sd, -) || true
if [ -n "$groups" ]; then set -- --groups "$groups" -- node "$@"; else set -- --clear-groups -- node "$@"; fi
exec setpriv --reuid="${PUID:-1000}" --regid="${PGID:-1000}" "$@"
