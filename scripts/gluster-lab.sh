#!/usr/bin/env bash
# A GlusterFS file system on this one machine with every server daemon traced by pioscope
# (docs/SERVERS.md): bricks under DIR/bricks, the volume mounted at DIR/mnt over FUSE, the
# servers' raw files in DIR/servers. `up` installs GlusterFS when missing and starts it all;
# `down` undoes all of it, also after a failed `up`. Both are safe to run twice. `restart` stops
# and starts the volume of a lab that is up: its brick daemons start anew (loading their preload
# again, which is how bench/perf/servers_overhead.py switches tracing) and the mount is remade.
# Needs root.
#
#   scripts/gluster-lab.sh up --dir DIR [--bricks N] [--type distribute|disperse] [--null] [--tmpfs] [--untraced]
#   scripts/gluster-lab.sh down --dir DIR
#   scripts/gluster-lab.sh restart --dir DIR
set -Eeuo pipefail

here=$(cd "$(dirname "$0")" && pwd)
lib_dir=${PIOSCOPE_LIB_DIR:-$here/../build/lib}
runtime=$lib_dir/libpioscope-posix.so
pioscope=${PIOSCOPE_BIN:-$here/../build/bin/pioscope}

usage() {
    sed -n '10,12p' "$0" | sed 's/^#   /usage: /' >&2
    exit 2
}
die() {
    echo "gluster-lab: error: $*" >&2
    exit 2
}
say() { echo "gluster-lab: $*"; }

command=${1:-}
[ -n "$command" ] || usage
shift
dir= bricks=1 type=distribute null=0 tmpfs=0 traced=1
while [ $# -gt 0 ]; do
    case $1 in
    --dir) dir=${2:-}; shift 2 || usage ;;
    --bricks) bricks=${2:-}; shift 2 || usage ;;
    --type) type=${2:-}; shift 2 || usage ;;
    --null) null=1; shift ;;
    --untraced) traced=0; shift ;;
    --tmpfs) tmpfs=1; shift ;;
    *) die "unknown argument: $1" ;;
    esac
done
[ -n "$dir" ] || die "--dir DIR is required"
case $command in up | down | restart) ;; *) die "unknown command: $command (up, down or restart)" ;; esac
case $bricks in '' | *[!0-9]* | 0) die "--bricks must be a positive number, not '$bricks'" ;; esac
case $type in
distribute) ;;
disperse) [ "$bricks" -ge 3 ] || die "--type disperse needs at least 3 bricks (--bricks 3)" ;;
*) die "--type must be distribute or disperse, not '$type'" ;;
esac
[ "$null" -eq 0 ] || [ "$tmpfs" -eq 0 ] || die "--null and --tmpfs exclude each other"
[ "$null" -eq 0 ] || [ "$traced" -eq 1 ] || die "--null needs the traced servers (no --untraced)"
[ "$(id -u)" -eq 0 ] || die "GlusterFS needs root (bricks, glusterd, FUSE mount)"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
host=$(hostname)
# One volume per lab directory: its name is derived from the directory.
volume=pioscope-lab-$(printf '%s' "$dir" | cksum | cut -d' ' -f1)
state=$dir/lab.state
glusterd_pid=$dir/glusterd.pid
sampler_pid=$dir/sampler.pid

gluster_cli() { gluster --mode=script "$@"; }

# Every process of this lab: the daemons carry its raw directory in their environment
# (glusterd, the bricks and what glusterd starts), the FUSE client its mount point.
lab_pids() {
    local pid env
    for pid in $(pgrep gluster || true); do
        # (a process may end meanwhile: its /proc entry is then gone)
        env=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" || true)
        if grep -qxF "PIOSCOPE_RAW_DIR=$dir/servers" <<<"$env" ||
            { tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" || true; } | grep -qF " $dir/mnt"; then
            echo "$pid"
        fi
    done
}

# Waits up to $2 seconds for the processes $1 (space-separated) to end; kills what is left.
stop_pids() {
    local pids=$1 wait=$2 pid i
    [ -n "$pids" ] || return 0
    kill -TERM $pids 2>/dev/null || true
    for ((i = 0; i < wait * 10; i++)); do
        local alive=
        for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
        [ -n "$alive" ] || return 0
        sleep 0.1
    done
    kill -KILL $alive 2>/dev/null || true
}

is_mounted() { mountpoint -q "$1" 2>/dev/null; }

# The node and the brick daemons sampled (CPU, disks, network, memory) into the servers'
# directory beside their raw files, for `pioscope run --servers` (a traced lab only).
start_samplers() {
    [ "$traced" -eq 1 ] || return 0
    [ -x "$pioscope" ] || die "$pioscope not found: run make all (or set PIOSCOPE_BIN)"
    setsid "$pioscope" sample --out "$dir/servers" --match glusterfsd \
        </dev/null >>"$dir/sampler.log" 2>&1 &
    echo $! >"$sampler_pid"
}

down() {
    # The sampler first: it writes its last samples on SIGTERM. (Its pid is checked: after a
    # reboot the number may name another process.)
    local sampler
    sampler=$(cat "$sampler_pid" 2>/dev/null || true)
    if [ -n "$sampler" ] && [ "$(cat "/proc/$sampler/comm" 2>/dev/null)" = pioscope ]; then
        stop_pids "$sampler" 5
    fi
    rm -f "$sampler_pid"
    if is_mounted "$dir/mnt"; then
        umount "$dir/mnt" 2>/dev/null || umount -l "$dir/mnt"
    fi
    if [ -s "$glusterd_pid" ] && kill -0 "$(cat "$glusterd_pid")" 2>/dev/null; then
        if gluster_cli volume info "$volume" >/dev/null 2>&1; then
            gluster_cli volume stop "$volume" force >/dev/null 2>&1 || true
            gluster_cli volume delete "$volume" >/dev/null 2>&1 || true
        fi
    fi
    # What glusterd could not stop, and glusterd itself: every traced daemon writes its END
    # chunk on SIGTERM.
    stop_pids "$(lab_pids | grep -vxF "$(cat "$glusterd_pid" 2>/dev/null || echo none)" || true)" 10
    stop_pids "$(cat "$glusterd_pid" 2>/dev/null || true)" 10
    stop_pids "$(lab_pids)" 5
    # A volume glusterd could not delete (it was not running): its definition goes too.
    rm -rf "/var/lib/glusterd/vols/$volume" "/var/run/gluster/vols/$volume"
    if is_mounted "$dir/bricks"; then umount "$dir/bricks" 2>/dev/null || umount -l "$dir/bricks"; fi
    rm -rf "$dir/bricks" "$dir/mnt" "$glusterd_pid" "$state"
}

install_glusterfs() {
    command -v glusterd >/dev/null 2>&1 && command -v gluster >/dev/null 2>&1 && return 0
    say "installing GlusterFS (glusterfs-server)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq glusterfs-server
}

wait_for() {
    local what=$1 seconds=$2 i
    shift 2
    for ((i = 0; i < seconds * 10; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    echo "gluster-lab: error: $what did not happen within $seconds s" >&2
    return 1
}

glusterd_answers() { gluster_cli volume list >/dev/null 2>&1; }

bricks_online() {
    local online
    online=$(gluster_cli volume status "$volume" detail 2>/dev/null | grep -c '^Online.*: Y' || true)
    [ "$online" -eq "$bricks" ]
}

# Every brick daemon that has the tracer loaded has written its raw file (its first periodic
# flush): from then on its records reach the disk while a job runs, and a job started at once
# finds it. (A daemon whose preload is another library, bench/perf/servers_overhead.py's
# untraced variant, writes none.)
bricks_traced() {
    local pid
    for pid in $(pgrep -x glusterfsd || true); do
        lab_pids | grep -qxF "$pid" || continue
        grep -q libpioscope "/proc/$pid/maps" 2>/dev/null || continue
        compgen -G "$dir/servers/*-$pid-*.praw" >/dev/null || return 1
    done
}

# Bytes of the servers' raw files (a number that changes while they are still writing).
servers_written() {
    du -sb "$dir/servers" 2>/dev/null | cut -f1
}

# A probe written through the mount and removed, then a wait until the servers' raw files stop
# changing for 2 s (at most 30 s): right after the volume starts, the brick daemons are still
# settling and a job started at once can miss them in its trace.
settle() {
    local probe=$dir/mnt/.pioscope-lab-probe
    head -c 65536 /dev/zero >"$probe" && sync "$probe" 2>/dev/null; rm -f "$probe"
    local last now quiet=0 i
    last=$(servers_written)
    for ((i = 0; i < 300 && quiet < 20; i++)); do
        sleep 0.1
        now=$(servers_written)
        if [ "$now" = "$last" ]; then quiet=$((quiet + 1)); else quiet=0 last=$now; fi
    done
}

up() {
    local wanted="bricks=$bricks type=$type null=$null tmpfs=$tmpfs traced=$traced"
    if [ -f "$state" ] && [ "$(cat "$state")" = "$wanted" ] && is_mounted "$dir/mnt" &&
        [ -n "$(lab_pids)" ]; then
        say "already up: $volume ($wanted) mounted at $dir/mnt"
        return 0
    fi
    [ -f "$runtime" ] || die "$runtime not found: run 'make all' first (or set PIOSCOPE_LIB_DIR)"
    [ -e /dev/fuse ] || die "/dev/fuse is missing: the volume is mounted over FUSE"
    install_glusterfs
    down
    local other
    other=$(pgrep -x glusterd || true)
    [ -z "$other" ] || die "a glusterd not started by this lab runs (pid $other): stop it first (systemctl stop glusterd, or gluster-lab.sh down with its --dir)"

    # From here on a failed start is undone, whatever stops it.
    trap 'echo "gluster-lab: start failed; undoing it" >&2; down' EXIT
    mkdir -p "$dir/bricks" "$dir/mnt" "$dir/servers"
    [ "$tmpfs" -eq 0 ] || mount -t tmpfs -o size=50% pioscope-lab "$dir/bricks"
    # Brick daemons inherit glusterd's environment: started traced, they are traced too.
    # Untraced (the baseline of the overhead figure) they still carry the raw directory, which
    # is how `down` finds them.
    local env=(PIOSCOPE_RAW_DIR="$dir/servers")
    [ "$traced" -eq 0 ] || env+=(LD_PRELOAD="$runtime" PIOSCOPE_SERVER=1)
    # Null storage: the bricks' data is discarded by the runtime in the brick daemons.
    [ "$null" -eq 0 ] || env+=(PIOSCOPE_NULL_PREFIX="$dir/bricks/")
    env "${env[@]}" glusterd --pid-file="$glusterd_pid"
    wait_for "glusterd answering" 30 glusterd_answers

    local list=() i
    for ((i = 0; i < bricks; i++)); do
        mkdir -p "$dir/bricks/b$i"
        list+=("$host:$dir/bricks/b$i")
    done
    local layout=()
    [ "$type" = distribute ] || layout=(disperse "$bricks" redundancy 1)
    # `force`: the bricks may sit on the root file system.
    gluster_cli volume create "$volume" "${layout[@]}" "${list[@]}" force >/dev/null
    gluster_cli volume start "$volume" >/dev/null
    wait_for "all $bricks bricks online" 60 bricks_online
    mount -t glusterfs "$host:/$volume" "$dir/mnt"
    wait_for "the mount at $dir/mnt" 30 is_mounted "$dir/mnt"
    [ "$traced" -eq 0 ] || wait_for "the brick daemons' raw files" 30 bricks_traced
    [ "$traced" -eq 0 ] || settle
    start_samplers
    echo "$wanted" >"$state"
    trap - EXIT
    say "up: $volume ($wanted) mounted at $dir/mnt; servers' raw files in $dir/servers"
}

# The volume stopped and started again with the options it was brought up with (the state
# file): new brick daemons, the mount remade, the servers settled.
restart() {
    [ -f "$state" ] && is_mounted "$dir/mnt" || die "the lab at $dir is not up (gluster-lab.sh up first)"
    local option
    for option in $(cat "$state"); do
        case $option in bricks=*) bricks=${option#bricks=} ;; esac
    done
    umount "$dir/mnt" 2>/dev/null || umount -l "$dir/mnt"
    gluster_cli volume stop "$volume" force >/dev/null
    gluster_cli volume start "$volume" >/dev/null
    wait_for "all $bricks bricks online" 60 bricks_online
    mount -t glusterfs "$host:/$volume" "$dir/mnt"
    wait_for "the mount at $dir/mnt" 30 is_mounted "$dir/mnt"
    wait_for "the brick daemons' raw files" 30 bricks_traced
    settle
    say "restarted: $volume mounted at $dir/mnt"
}

case $command in
up) up ;;
restart) restart ;;
down)
    down
    say "down: nothing of $dir left running"
    ;;
esac
