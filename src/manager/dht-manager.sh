#!/bin/sh
# `dht-manager` as the package installs it (package.json's bin): runs the compiled
# CLI next to this file (cli.js) *in place of* this shell — `exec`, so one process
# and no launcher left resident — with glibc's malloc limited to 2 arenas unless the
# caller chose a value.
#
# Why: glibc gives each thread that allocates an arena of its own (up to 8 per core),
# and each arena keeps what was freed in it: LevelDB's and libuv's threads and the WARC
# worker threads left 88–122 MB there at the manager's peaks, 22–45 MB with 2 arenas
# (peak RSS 0.83–0.95× in nine pairs; docs/manager.md, "Lowering the peak (session 6)"). glibc reads
# the setting only when a process starts, so it cannot be set from inside node; a
# service that starts `node …/cli.js` itself sets it in its unit
# (systemd: Environment=MALLOC_ARENA_MAX=2). C libraries other than glibc ignore it.
: "${MALLOC_ARENA_MAX:=2}"
export MALLOC_ARENA_MAX
# npm links this file from its bin directory: follow the links to find cli.js.
self=$0
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in
    /*) self=$link ;;
    *) self=$(dirname "$self")/$link ;;
  esac
done
exec node "$(dirname "$self")/cli.js" "$@"
