#!/usr/bin/env bash
# The `make demo` cluster: our slurmctld, four of our slurmd (n1..n4, one
# host, loopback) and sackd, run as the current user with goslurm's built-in
# auth and a fresh key, everything under one temporary directory.
#
#   demo.sh start BIN ENVFILE   start the cluster, run the showcase, leave it up
#   demo.sh stop ENVFILE        stop it, kill what is left of its jobs, remove it
#
# BIN holds the built binaries; ENVFILE is where the "source me" file goes
# (make uses bin/demo.env). A failing step prints the real error and makes
# `start` exit non-zero; the cluster stays up for a look until `stop`.
set -u

here=$(cd "$(dirname "$0")" && pwd)

say() { printf '%s\n' "$*"; }
err() { printf 'demo: %s\n' "$*" >&2; }

# --- stop ------------------------------------------------------------------

# pids_of_dir prints our processes that belong to the cluster in dir: the
# daemons (-f dir/etc/slurm.conf on their command line), slurmstepd (its
# working directory is dir/spool/NODE) and job tasks (GOSLURM_DEMO_DIR=dir in
# their environment, or a working directory under dir).
pids_of_dir() {
	local dir=$1 p cwd
	for p in /proc/[0-9]*; do
		[ -O "$p" ] || continue
		p=${p#/proc/}
		[ "$p" = "$$" ] && continue
		cwd=$(readlink "/proc/$p/cwd" 2>/dev/null)
		case $cwd in "$dir"/*)
			echo "$p"
			continue
			;;
		esac
		if grep -qsaF -- "$dir/" "/proc/$p/cmdline" ||
			grep -qszxF -- "GOSLURM_DEMO_DIR=$dir" "/proc/$p/environ"; then
			echo "$p"
		fi
	done
}

# wait_gone waits up to $2 tenths of a second for pids $1 to exit.
wait_gone() {
	local pids=$1 n=$2 p alive
	while [ "$n" -gt 0 ]; do
		alive=
		for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ -z "$alive" ] && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

stop_cluster() {
	local envfile=$1 dir pids p f
	if [ ! -f "$envfile" ]; then
		say "No demo cluster is running (no $envfile)."
		return 0
	fi
	dir=$(sed -n 's/^export GOSLURM_DEMO_DIR=//p' "$envfile" | tr -d "'")
	case $dir in
	/*/goslurm-demo.*) ;;
	*)
		err "$envfile does not name a demo directory"
		return 1
		;;
	esac
	# Daemons first (SIGTERM, as an admin would), then whatever their
	# jobs left behind, then the directory.
	pids=
	for f in "$dir"/run/*.pid; do
		[ -f "$f" ] || continue
		p=$(cat "$f" 2>/dev/null)
		case $p in '' | *[!0-9]*) continue ;; esac
		kill -TERM "$p" 2>/dev/null && pids="$pids $p"
	done
	wait_gone "$pids" 100 || for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	for sig in TERM KILL; do
		pids=$(pids_of_dir "$dir")
		[ -z "$pids" ] && break
		for p in $pids; do kill -"$sig" "$p" 2>/dev/null; done
		wait_gone "$pids" 50
	done
	pids=$(pids_of_dir "$dir")
	if [ -n "$pids" ]; then
		err "processes still running:" $pids
		return 1
	fi
	rm -rf "$dir"
	rm -f "$envfile"
	say "Demo cluster stopped; $dir removed."
}

# --- start -----------------------------------------------------------------

# free_port sets port to a TCP port on 127.0.0.1 nobody listens on, not
# one handed out before (bash's /dev/tcp: a refused connect means free).
# Not in a subshell, so taken is remembered.
taken=" "
free_port() {
	local i
	for i in $(seq 1 200); do
		port=$((20000 + RANDOM % 10000))
		case $taken in *" $port "*) continue ;; esac
		if ! port_open "$port"; then
			taken="$taken$port "
			return 0
		fi
	done
	return 1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_for runs "$@" every 0.2 s until it succeeds, at most $tries times.
wait_for() {
	local tries=$1 i
	shift
	for i in $(seq 1 "$tries"); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

show_logs() {
	local f
	for f in "$dir"/log/*.log; do
		[ -f "$f" ] || continue
		say "--- last lines of $f"
		tail -n 15 "$f"
	done
}

# run prints a command as a user would type it, then runs it; its output and
# errors are the real ones. The exit status is kept in $rc.
rc=0
run() {
	say ""
	say "\$ $*"
	"$@"
	rc=$?
	[ $rc -ne 0 ] && say "(exit status $rc)"
	return $rc
}

# run_to is run with the output (both streams) also kept in file $1.
run_to() {
	local file=$1
	shift
	say ""
	say "\$ $*"
	"$@" 2>&1 | tee "$file"
	rc=${PIPESTATUS[0]}
	[ $rc -ne 0 ] && say "(exit status $rc)"
	return $rc
}

failed=""
fail() {
	failed="$failed
  - $*"
}

all_idle() {
	local out
	out=$(sinfo -h -N -o '%N %t' 2>/dev/null) || return 1
	[ "$(printf '%s\n' "$out" | grep -c ' idle$')" = 4 ]
}

start_cluster() {
	local bin=$1 envfile=$2 me n port
	for n in slurmctld slurmd slurmstepd sackd sinfo squeue sbatch srun scontrol; do
		if [ ! -x "$bin/$n" ]; then
			err "$bin/$n is missing: run make build"
			return 1
		fi
	done

	dir=$(mktemp -d "${TMPDIR:-/tmp}/goslurm-demo.XXXXXX") || return 1
	chmod 755 "$dir"
	mkdir -p "$dir"/etc "$dir"/run "$dir"/log "$dir"/state "$dir"/spool "$dir"/jobs
	me=$(id -un 2>/dev/null) || me=$(id -u)
	local -a ports
	for n in 0 1 2 3 4; do
		free_port || { err "no free TCP port"; return 1; }
		ports[n]=$port
	done
	sed -e "s|@DIR@|$dir|g" -e "s|@USER@|$me|g" -e "s|@CTLD_PORT@|${ports[0]}|" \
		-e "s|@PORT_1@|${ports[1]}|" -e "s|@PORT_2@|${ports[2]}|" \
		-e "s|@PORT_3@|${ports[3]}|" -e "s|@PORT_4@|${ports[4]}|" \
		"$here/slurm.conf.in" >"$dir/etc/slurm.conf"
	# The shared secret: 1024 random bytes, readable by the owner only.
	(umask 077 && head -c 1024 /dev/urandom >"$dir/etc/slurm.key") || return 1

	# The env file exists as soon as there is anything to stop.
	{
		echo "# source this file to use the goslurm demo cluster"
		echo "export GOSLURM_DEMO_DIR='$dir'"
		echo "export SLURM_CONF='$dir/etc/slurm.conf'"
		echo "export PATH='$bin':\"\$PATH\""
	} >"$envfile"
	export GOSLURM_DEMO_DIR="$dir" SLURM_CONF="$dir/etc/slurm.conf" PATH="$bin:$PATH"

	say "Demo cluster in $dir (user $me, slurmctld on 127.0.0.1:${ports[0]}, slurmd n1-n4 on ports ${ports[*]:1})"
	nohup "$bin/sackd" -D -f "$SLURM_CONF" --pid-file "$dir/run/sackd.pid" \
		</dev/null >>"$dir/log/sackd.log" 2>&1 &
	if ! wait_for 50 test -S "$dir/run/sack/sack.socket"; then
		err "sackd did not start"
		show_logs
		return 1
	fi
	if ! "$bin/slurmctld" -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.log" 2>&1 ||
		! wait_for 100 port_open "${ports[0]}"; then
		err "slurmctld did not start"
		show_logs
		return 1
	fi
	for n in 1 2 3 4; do
		if ! "$bin/slurmd" -f "$SLURM_CONF" -N "n$n" </dev/null >>"$dir/log/slurmd-n$n.log" 2>&1; then
			err "slurmd -N n$n did not start"
			show_logs
			return 1
		fi
	done
	if ! wait_for 150 all_idle; then
		err "the four nodes did not come up idle within 30 s; sinfo says:"
		sinfo -N
		show_logs
		return 1
	fi
	return 0
}

showcase() {
	local jobid f
	cd "$dir/jobs" || return 1

	run sinfo || fail "sinfo"
	run srun -N4 -l hostname || fail "srun -N4 hostname"
	# Let the nodes finish the previous job (COMPLETING) so the next one
	# does not queue.
	wait_for 50 all_idle
	run srun -N4 -l printenv SLURMD_NODENAME || fail "srun -N4 printenv SLURMD_NODENAME"
	wait_for 50 all_idle

	cat >array.sh <<'EOF'
#!/bin/bash
#SBATCH --job-name=demo
#SBATCH --array=1-6
#SBATCH --output=array-%A_%a.out
echo "array task $SLURM_ARRAY_TASK_ID of job $SLURM_ARRAY_JOB_ID ran on $SLURMD_NODENAME"
sleep 4
EOF
	say ""
	say "\$ cat array.sh"
	cat array.sh
	if run_to sbatch.out sbatch array.sh; then
		jobid=$(sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p' sbatch.out)
		rm -f sbatch.out
	else
		fail "sbatch --array"
	fi
	if [ -n "${jobid:-}" ]; then
		# Show the queue once something runs (four run, two wait for a node).
		wait_for 50 sh -c "squeue -h -t R -j $jobid | grep -q ."
		run squeue || fail "squeue"
		if ! wait_for 600 sh -c "[ -z \"\$(squeue -h -j $jobid 2>/dev/null)\" ]"; then
			fail "array job $jobid did not finish within 120 s"
			squeue
		fi
		run squeue || fail "squeue"
		say ""
		say "\$ ls; cat array-*.out"
		ls
		for f in array-"$jobid"_*.out; do
			[ -f "$f" ] || { fail "no output files array-${jobid}_*.out"; break; }
			cat "$f"
		done
		[ "$(ls array-"$jobid"_*.out 2>/dev/null | wc -l)" = 6 ] || fail "expected 6 output files"
	else
		fail "no job id from sbatch: squeue and the output files not shown"
	fi
	run sinfo || fail "sinfo"
}

case ${1:-} in
start)
	[ $# -eq 3 ] || { err "usage: demo.sh start BIN ENVFILE"; exit 2; }
	if [ -f "$3" ]; then
		err "a demo cluster is already up ($3): make demo-stop first"
		exit 1
	fi
	start_cluster "$2" "$3" || {
		[ -n "${dir:-}" ] && err "the cluster did not start; logs are in $dir/log; stop it with: make demo-stop"
		exit 1
	}
	showcase
	say ""
	say "The cluster is up. Use it with:  . $3"
	say "Stop it with:                     make demo-stop"
	if [ -n "$failed" ]; then
		say ""
		say "These steps FAILED (the real errors are above; logs in $dir/log):$failed"
		exit 1
	fi
	;;
stop)
	[ $# -eq 2 ] || { err "usage: demo.sh stop ENVFILE"; exit 2; }
	stop_cluster "$2"
	;;
*)
	err "usage: demo.sh start BIN ENVFILE | demo.sh stop ENVFILE"
	exit 2
	;;
esac
