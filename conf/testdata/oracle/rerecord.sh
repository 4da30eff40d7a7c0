#!/bin/sh
# Re-records the oracle files of one corpus case against real Slurm 22.05.
# usage (as root, from anywhere):
#   rerecord.sh config NAME [OUTROOT]   -> configs/NAME/oracle.txt + oracle-scontrol-*.txt, oracle-sinfo.txt
#   rerecord.sh broken NAME [OUTROOT]   -> broken/NAME.slurm-error (NAME.conf or NAME/slurm.conf)
#   rerecord.sh accepted NAME [OUTROOT] -> broken/accepted-by-real-slurm/NAME.oracle.txt
# With OUTROOT the records are written there instead of into testdata (to
# compare before overwriting). Raw daemon output goes to /var/tmp/oracle-out/NAME
# (ORACLE_RAW overrides; it must not be under /tmp, /run, /var/spool or
# /var/log, which inner.py hides behind private tmpfs mounts).
# slurmd / slurmd -G records (oracle-slurmd-*.txt) are made by hand with
# oracle.sh slurmd|gres CONF OUT NODE and record.py config NAME OUT DEST.
set -eu
kind=$1 name=$2 outroot=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
td=$(dirname "$here")
raw=${ORACLE_RAW:-/var/tmp/oracle-out}/$name
rm -rf "$raw"
case $kind in
config)
	conf=$td/configs/$name/slurm.conf
	dest=${outroot:-$td/configs/$name}
	;;
broken)
	conf=$td/broken/$name.conf
	[ -f "$conf" ] || conf=$td/broken/$name/slurm.conf
	dest=${outroot:-$td/broken}
	;;
accepted)
	conf=$td/broken/accepted-by-real-slurm/$name.conf
	dest=${outroot:-$td/broken/accepted-by-real-slurm}
	;;
*)
	echo "usage: $0 config|broken|accepted NAME [OUTROOT]" >&2
	exit 2
	;;
esac
mkdir -p "$dest"
"$here/oracle.sh" ctld "$conf" "$raw"
case $kind in
config)
	python3 "$here/record.py" config "$name" "$raw" "$dest/oracle.txt"
	for f in scontrol-show-config scontrol-show-partition scontrol-show-node; do
		[ -f "$raw/$f.txt" ] && cp "$raw/$f.txt" "$dest/oracle-$f.txt"
	done
	[ -f "$raw/sinfo-summary.txt" ] && cp "$raw/sinfo-summary.txt" "$dest/oracle-sinfo.txt"
	;;
broken) python3 "$here/record.py" broken "$name" "$raw" "$dest/$name.slurm-error" ;;
accepted) python3 "$here/record.py" accepted "$name" "$raw" "$dest/$name.oracle.txt" ;;
esac
echo "raw output: $raw; records in: $dest"
