#!/bin/sh
# The image's entrypoint. As linuxserver/hotio images do, it starts as root only to give autoscan's folder to
# PUID:PGID (default 1000:1000), then runs autoscan as that user (/usr/local/bin/autoscan drops the privileges).
# Only the folder itself and the files autoscan writes there change owner, never anything below or beside them.
# Started with `--user`, it has nothing to prepare and no right to: it runs autoscan at once.
set -eu

if [ "$(id -u)" != 0 ]; then exec autoscan "$@"; fi

PUID=${PUID:-1000}
PGID=${PGID:-1000}
for setting in "PUID=$PUID" "PGID=$PGID"; do
  case ${setting#*=} in
    '' | *[!0-9]*)
      echo "autoscan: ${setting%%=*} must be a number (your user's: id -u, its group: id -g), found '${setting#*=}'." >&2
      exit 2
      ;;
  esac
done
export PUID PGID
if [ "$PUID" = 0 ]; then exec autoscan "$@"; fi

groups=$(id -G | tr ' ' '\n' | grep -vx 0 | paste -sd, -) || true
as_user() {
  if [ -n "$groups" ]; then
    setpriv --reuid="$PUID" --regid="$PGID" --groups "$groups" -- "$@"
  else
    setpriv --reuid="$PUID" --regid="$PGID" --clear-groups -- "$@"
  fi
}

# Why that user cannot create a file in the folder (empty when it can). A real write answers for the owner, the mode,
# ACLs and read-only mounts at once.
write_problem() {
  # shellcheck disable=SC2016 # expanded by the inner shell
  as_user sh -c 'probe="$1/.autoscan-write-test.$$"; : >"$probe" && rm -f "$probe"' sh "$1" 2>&1 >/dev/null |
    tail -n 1 | sed 's/^.*: //' | tr '[:upper:]' '[:lower:]'
}

# The first of the files that user cannot both read and write (empty when none). The config file itself need only
# be readable: the server never writes it (a `:ro` mount of config.json, a Docker config or a ConfigMap is fine).
unusable_file() {
  # shellcheck disable=SC2016 # expanded by the inner shell
  as_user sh -c 'config=$1; shift; for f do
      if ! [ -r "$f" ]; then echo "$f"; break; fi
      if [ "$f" != "$config" ] && ! [ -w "$f" ]; then echo "$f"; break; fi
    done' sh "$config" "$@"
}

explain() { # path, reason, what changing its owner said
  owner=$(stat -c '%u' "$1" 2>/dev/null) || owner="?"
  group=$(stat -c '%g' "$1" 2>/dev/null) || group="?"
  mode=$(stat -c '%a' "$1" 2>/dev/null) || mode="?"
  {
    echo "autoscan: cannot write $1: $2."
    echo "  autoscan runs as uid $PUID, gid $PGID (PUID/PGID); $1 belongs to uid $owner, gid $group (mode $mode)."
    [ -z "$3" ] || echo "  Giving it to uid $PUID failed: $3."
    case "$2 $3" in
      *read-only*) echo "  Fix: mount it writable (no :ro on the volume)." ;;
      *)
        as_owner=""
        case $owner in 0 | "?") ;; *) as_owner=", or set PUID=$owner and PGID=$group" ;; esac
        if [ ! -f "$1" ]; then where="<the folder mounted at $1> (./config with docker-compose.yml)"; else
          where="<that file on the host> (./config/$(basename "$1") with docker-compose.yml)"; fi
        echo "  Fix: on the host, sudo chown $PUID:$PGID $where$as_owner."
        ;;
    esac
  } >&2
  exit 1
}

config=${AUTOSCAN_CONFIG:-/config/config.json}
config_dir=$(dirname "$config")
config_name=$(basename "$config")

prepare() { # the data directory (autoscan writes its queue, tokens and logs there)
  dir=$1
  changed=""
  if [ ! -d "$dir" ]; then
    changed=$({ mkdir -p "$dir" && chown "$PUID:$PGID" "$dir"; } 2>&1 | sed 's/^.*: //' | tr '[:upper:]' '[:lower:]') || true
  elif [ -n "$(write_problem "$dir")" ]; then
    changed=$(chown "$PUID:$PGID" "$dir" 2>&1 | sed 's/^.*: //' | tr '[:upper:]' '[:lower:]') || true
  fi
  # Files autoscan writes there, e.g. left by an earlier PUID or created by `docker exec` as root.
  set --
  for file in "$dir/$config_name" "$dir/$config_name".* "$dir"/queue.db* "$dir"/cache.db* "$dir"/google-token.json* "$dir"/autoscan.lock \
    "$dir"/autoscan.log*; do
    if [ -f "$file" ] && [ ! -L "$file" ]; then
      [ "$(stat -c '%u' "$file")" = "$PUID" ] || chown "$PUID:$PGID" "$file" 2>/dev/null || true
      set -- "$@" "$file"
    fi
  done
  problem=$(write_problem "$dir")
  if [ -n "$problem" ]; then explain "$dir" "$problem" "$changed"; fi
  if [ $# -gt 0 ]; then
    file=$(unusable_file "$@")
    if [ -n "$file" ]; then explain "$file" "permission denied" ""; fi
  fi
}

# The config's folder is the data directory unless AUTOSCAN_DATA_DIR says otherwise. A config folder of its own needs
# only to be readable, or writable when there is no config yet (the first start writes the short first config there).
data_dir=${AUTOSCAN_DATA_DIR:-$config_dir}
prepare "$data_dir"
if [ "$data_dir" != "$config_dir" ]; then
  if [ -e "$config" ]; then
    # shellcheck disable=SC2016 # expanded by the inner shell
    if [ -n "$(as_user sh -c '[ -r "$1" ] || echo no' sh "$config")" ]; then explain "$config" "permission denied" ""; fi
  else
    problem=$(write_problem "$config_dir")
    if [ -n "$problem" ]; then explain "$config_dir" "$problem" ""; fi
  fi
fi
exec autoscan "$@"
