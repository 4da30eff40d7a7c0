#!/bin/sh
# Runs a real Slurm 22.05 daemon on CONF in throw-away pid/mount/uts
# namespaces (needs root, Debian's slurmctld/slurmd/munge installed).
# usage: oracle.sh ctld|slurmd|gres CONF OUTDIR [NODE]
# Environment: ORACLE_TIMEOUT (s, default 60), ORACLE_FAKE_DEV (comma list of
# device paths to fake), ORACLE_MUNGE_KEY (default /work/shared/captures/munge.key).
# OUTDIR must not be under /tmp, /run, /var/spool or /var/log: inner.py mounts
# private tmpfs file systems there before it writes its output.
here=$(cd "$(dirname "$0")" && pwd)
exec unshare --pid --fork --mount-proc --mount --uts python3 "$here/inner.py" "$@"
