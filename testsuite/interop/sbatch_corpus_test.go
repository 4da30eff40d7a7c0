package interop

import (
	"fmt"
	"strings"
)

// sbCase is one sbatch invocation of the differential corpus. Args are
// split at blanks unless argv is given; files are written into the working
// directory first ("job.sh" holds sbScript unless the case replaces it).
type sbCase struct {
	name  string
	args  string
	argv  []string
	stdin string
	env   []string
	files map[string]string
	// verbose: stderr is not compared (real sbatch -v lists its options
	// and plugin loads; ours logs differently, see the report).
	verbose bool
}

func (c sbCase) argList() []string {
	if c.argv != nil {
		return c.argv
	}
	return strings.Fields(c.args)
}

const sbScript = "#!/bin/sh\ntrue\n"

// sbOptionLines are single command lines run against job.sh.
var sbOptionLines = []string{
	"", "-N1", "-N2", "-N 1-2", "--nodes=2", "--nod=1-2", "-n2", "-n 3", "--ntasks=4",
	"-c2", "--cpus-per-task=2", "-n2 -c2", "-N2 -n4", "-N1 -n1 -c1",
	"-t 10", "-t 1:00:00", "-t 2-0", "-t 0", "-t UNLIMITED", "--time=5:30", "-t 90", "--time-min=5 -t 10",
	"-J myjob", "--job-name=a.b", "-o out.txt", "-o %j.out", "-o /tmp/abs.out", "-e err.txt", "-i in.txt",
	"-o none", "-e none", "--open-mode=append", "--open-mode=truncate", "-p debug",
	"--mem=100", "--mem=1G", "--mem=512K", "--mem=0", "--mem-per-cpu=100", "--mem-per-cpu=1g", "--tmp=10",
	"--mincpus=2", "--exclusive", "--exclusive=user", "--exclusive=mcs", "-s", "--oversubscribe",
	"-H", "--hold", "--nice", "--nice=10", "--nice=-5", "--priority=100",
	"-d afterok:1", "--dependency=singleton", "-d afterany:1:2",
	"--begin=now+1hour", "--begin=now+60", "--begin=2030-01-01T10:00:00", "--begin=2030-06-15",
	"--begin=uts2000000000", "--deadline=2031-01-01",
	"-a 0-3", "--array=1,3,5%2", "-a 0-15:4", "--array=7",
	"--export=NONE", "--export=ALL", "--export=FOO,BAR=baz", "--export=ALL,X=1", "--export=HOME",
	"--mail-type=END", "--mail-type=BEGIN,END,FAIL", "--mail-type=ALL", "--mail-type=NONE",
	"--mail-user=a@b", "--requeue", "--no-requeue", "--signal=USR1", "--signal=B:USR1@30",
	"--signal=R:10@120", "--signal=SIGTERM", "-k", "--no-kill", "--no-kill=off", "--contiguous",
	"--spread-job", "--use-min-nodes", "-O", "--overcommit", "-O -N2", "-w n1", "-w n[1-2]", "-w n2,n1,n2",
	"-x n2", "--ntasks-per-node=2", "-N2 --ntasks-per-node=1", "--ntasks-per-core=1",
	"--ntasks-per-socket=1", "--threads-per-core=1", "--cores-per-socket=1", "--sockets-per-node=1",
	"-B 1:1:1", "-B 1", "-m cyclic", "-m block:block", "-m plane=2 -n4", "-m cyclic,pack", "-m block:*:*",
	"--gres=none", "-D /tmp", "-D sub", "--chdir=.", "--comment=hello", "--wckey=w",
	"--parsable", "-Q", "--quiet", "--wait-all-nodes=1", "--wait-all-nodes=0",
	"--kill-on-invalid-dep=yes", "--kill-on-invalid-dep=no", "--gres-flags=enforce-binding",
	"--hint=nomultithread", "--delay-boot=5", "--profile=task", "--profile=none", "--acctg-freq=30",
	"--prefer=x", "--batch=x", "--mem-bind=local", "--mem-bind=verbose,rank",
	"--switches=1", "--switches=2@10:00", "--time-min=1:00", "-v", "-vv", "--uid=0", "--gid=0",
	"--get-user-env", "--get-user-env=10L", "--mem=1T --mem-per-cpu=2",
	// Second batch: value syntax corners.
	"--propagate", "--propagate=NONE", "--propagate=STACK,CORE", "--export-file=envfile",
	"-F hosts.txt", "--nodefile=hosts.txt", "-m arbitrary -w n1,n1", "--cpu-freq=high",
	"--cpu-freq=1000-2000:performance", "--cpu-freq=ondemand", "--core-spec=1", "--thread-spec=1",
	"-d afterok:1?afterany:2", "-d after:1+5", "-d aftercorr:1", "--dependency=afternotok:1,afterok:2",
	"--begin=noon", "--begin=midnight", "--begin=teatime", "--begin=fika", "--begin=today",
	"--begin=tomorrow", "--begin=10/12", "--begin=1012", "--begin=12.24.30", "--begin=now-1hour",
	"--begin=now+2days", "--begin=now+1week", "--begin=2030-01-01T10:00", "--begin=11:30pm",
	"--deadline=now+1day", "-D sub -o rel.out -e rel.err", "--chdir=sub -i input",
	"--export=FOO=\"a,b\",BAR", "--export=NONE,FOO", "--mail-type=END,BEGIN --mail-type=FAIL",
	"--signal=B:10", "--signal=RB:USR2@5", "--signal=15@0", "-a 0-999", "--array=0-10:2%3",
	"--nice=0", "--priority=TOP", "--exclusive=oversubscribe", "--threads-per-core=1 --hint=compute_bound",
	"--mem=100MB", "--mem=1GB", "--mem=2048k", "-t 1-2:3:4", "-t 1:2", "-t 2-12", "-t infinite",
	"--time-min=0", "--ntasks-per-gpu=1", "--cpus-per-gpu=1", "--mem-per-gpu=10",
	"-n4 --ntasks-per-node=2", "-N2 -n1", "-N 2-3 -n 2", "-w n[1-2] -N1", "-w n1 -N2", "-n0",
	"-c 3 -n 2", "--ntasks-per-node=1 -N 1-2", "-B 2:1", "-B *:*:1", "--sockets-per-node=1 -N2",
	"--exclude=n1 -N1", "--contiguous -N2", "--open-mode=A", "-o out%%.txt", "-o %x-%j-%N.out",
	"--gres=NONE", "--licenses=", "--comment=with space", "--job-name=", "--wckey=",
	"--reboot", "--power=level", "--delay-boot=1:00", "--acctg-freq=task=30,energy=10",
	"--profile=energy,task", "--mem-bind=map_mem:0,1", "--mem-bind=mask_mem:0x1,0x2", "--mem-bind=sort,local",
}

// sbDirectiveScripts are scripts whose #SBATCH lines carry the options.
var sbDirectiveScripts = []string{
	"#!/bin/sh\n#SBATCH -N 2\n#SBATCH -t 30\ntrue\n",
	"#!/bin/sh\n#SBATCH --job-name=\"quoted name\"\n#SBATCH -o 'out %j.txt'\ntrue\n",
	"#!/bin/sh\n#SBATCH -t 10 # trailing comment\n#SBATCH -n 2 -c 1\ntrue\n",
	"#!/bin/sh\n# a comment\n\n#SBATCH --mem=200\n  # indented comment\n#SBATCH -J after_blank\nhostname\n#SBATCH -J ignored\n",
	"#!/bin/sh\n  #SBATCH -J indented_is_not_a_directive\n#SBATCH -t 5\ntrue\n",
	"#!/bin/sh\necho first\n#SBATCH -J too_late\n",
	"#!/bin/bash\n#SBATCH --array=0-4%2\n#SBATCH -o slurm-%A_%a.out\ntrue\n",
	"#!/bin/sh\n#SBATCH --export=NONE\n#SBATCH --requeue\ntrue\n",
	"#!/bin/sh\n#SBATCH -J a\\ b\n#SBATCH --comment=x\\\"y\ntrue\n",
	"#!/bin/sh\n#SBATCH --begin=2030-01-01\n#SBATCH --hold\ntrue\n",
	"#!/bin/sh\n#SLURM -J legacy\ntrue\n",
	"#!/bin/sh\n#SBATCH -N1 -n1 --exclusive\n#SBATCH --mail-type=FAIL --mail-user=me\ntrue\n",
	"#!/bin/sh\n#SBATCH -vv\n#SBATCH -Q\ntrue\n",
	"#!/bin/sh\n#SBATCH\n#SBATCH   \n#SBATCH -t 7\ntrue\n",
	"#!/bin/sh\n#SBATCH -d singleton -J same\ntrue\n",
	"#!/bin/sh\n#SBATCH --mem-per-cpu=50\ntrue\n",
	"#!/bin/sh\n#SBATCH --wrap=ignored_in_script\ntrue\n",
	"#!/usr/bin/env python3\n#SBATCH -c 2\nprint(1)\n",
	"#!/bin/sh\n#SBATCH --ntasks-per-node=2 -N 2\ntrue\n",
	"#!/bin/sh\n#SBATCH -o out.txt -e err.txt -i /dev/zero\ntrue\n",
	// Foreign dialects: #PBS and #BSUB lines are translated (after #SBATCH).
	"#!/bin/sh\n#PBS -N pbsname\n#PBS -l walltime=01:00:00,mem=200mb\n#PBS -l nodes=2:ppn=1\ntrue\n",
	"#!/bin/sh\n#SBATCH -t 5\n#PBS -l walltime=10:00\n#PBS -m abe -M me@x\n#PBS -q debug\ntrue\n",
	"#!/bin/sh\n#PBS -l select=1:ncpus=2:mpiprocs=1\n#PBS -h\n#PBS -W depend=afterok:1\ntrue\n",
	"#!/bin/sh\ntrue\n#PBS -N after_command_still_read\n#PBS -j oe -V -r y\n",
	"#!/bin/sh\n#PBS -v A=1,B\n#PBS -t 0-3\n#PBS -a 2030-01-01\n#PBS -p 10\ntrue\n",
	"#!/bin/sh\n#PBS -l nodes=n1+n2,file=10kb,nice=3\n#PBS -o pbs.out -e pbs.err -A acct\ntrue\n",
	"#!/bin/sh\n#BSUB -J bsubname -W 30 -n 2 -o bsub.out -x\n#BSUB -cwd /tmp -M 2048\ntrue\n",
	"#!/bin/sh\n#BSUB -q debug -m \"n1 n2\" -e bsub.err\n#PBS -N ignored_second_dialect\ntrue\n",
	"#!/bin/sh\n#PBS -W umask=027\n#PBS -l accelerator=true\ntrue\n",
}

// sbCorpus returns the submission cases.
func sbCorpus() []sbCase {
	var cs []sbCase
	for _, l := range sbOptionLines {
		args := strings.TrimSpace(l + " job.sh")
		cs = append(cs, sbCase{name: "opt " + l, args: args, verbose: l == "-v" || l == "-vv"})
	}
	for i, s := range sbDirectiveScripts {
		cs = append(cs, sbCase{name: fmt.Sprintf("directives %d", i), args: "job.sh", files: map[string]string{"job.sh": s}})
	}
	// Command line over environment over directives.
	prec := "#!/bin/sh\n#SBATCH -t 10\n#SBATCH -J fromscript\n#SBATCH -p debug\ntrue\n"
	cs = append(cs,
		sbCase{name: "prec script", args: "job.sh", files: map[string]string{"job.sh": prec}},
		sbCase{name: "prec env", args: "job.sh", files: map[string]string{"job.sh": prec},
			env: []string{"SBATCH_TIMELIMIT=20", "SBATCH_JOB_NAME=fromenv"}},
		sbCase{name: "prec cli", args: "-t 30 -J fromcli job.sh", files: map[string]string{"job.sh": prec},
			env: []string{"SBATCH_TIMELIMIT=20", "SBATCH_JOB_NAME=fromenv"}},
		sbCase{name: "env partition", args: "job.sh", env: []string{"SBATCH_PARTITION=debug"}},
		sbCase{name: "env export none", args: "job.sh", env: []string{"SBATCH_EXPORT=NONE"}},
		sbCase{name: "env no requeue", args: "job.sh", env: []string{"SBATCH_NO_REQUEUE=1"}},
		sbCase{name: "env requeue reset", args: "--requeue job.sh", env: []string{"SBATCH_REQUEUE=no"}},
		sbCase{name: "env requeue empty", args: "job.sh", env: []string{"SBATCH_REQUEUE="}},
		sbCase{name: "env exclusive", args: "job.sh", env: []string{"SBATCH_EXCLUSIVE=user"}},
		sbCase{name: "env mem per node", args: "job.sh", env: []string{"SBATCH_MEM_PER_NODE=300"}},
		sbCase{name: "env mem cli wins", args: "--mem-per-cpu=10 job.sh", env: []string{"SBATCH_MEM_PER_NODE=300"}},
		sbCase{name: "env output", args: "job.sh", env: []string{"SBATCH_OUTPUT=o-%j", "SBATCH_ERROR=e-%j"}},
		sbCase{name: "env debug", args: "job.sh", env: []string{"SBATCH_DEBUG=1"}, verbose: true},
		sbCase{name: "env slurm vars", args: "--export=NONE job.sh", env: []string{"SLURM_FOO=bar", "OTHER=x"}},
		sbCase{name: "env signal", args: "job.sh", env: []string{"SBATCH_SIGNAL=USR2@60"}},
		sbCase{name: "env dist planesize", args: "-m plane -n 4 job.sh", env: []string{"SLURM_DIST_PLANESIZE=2"}},
		sbCase{name: "env slurm umask", args: "job.sh", env: []string{"SLURM_UMASK=0077"}},
		sbCase{name: "stdin script", args: "-J fromstdin", stdin: "#!/bin/sh\n#SBATCH -t 3\ntrue\n"},
		sbCase{name: "wrap", argv: []string{"--wrap", "echo hello world"}},
		sbCase{name: "wrap eq", argv: []string{"--wrap=sleep 1; echo done", "-J w"}},
		sbCase{name: "script args", args: "job.sh one two --three"},
		sbCase{name: "script args options after", args: "-t 5 job.sh -t 99 --bogus"},
		sbCase{name: "double dash", args: "-t 5 -- job.sh x"},
		sbCase{name: "dot slash script", args: "./job.sh"},
		sbCase{name: "abs script", argv: nil, args: "@ABS@/job.sh"},
		sbCase{name: "clustered shorts", args: "-HQN1 -n2 job.sh"},
		sbCase{name: "attached values", args: "-t5 -N2 -n4 -Jname job.sh"},
		sbCase{name: "long prefix", args: "--part=debug --ntasks-per-n=1 --cpus=2 job.sh"},
		sbCase{name: "test only", args: "--test-only job.sh"},
		// Heterogeneous jobs: components on the command line and in the
		// script.
		sbCase{name: "het cli", args: "-N1 : -N2 job.sh"},
		sbCase{name: "het cli options carry", args: "-J a -t 5 -N1 : -n2 job.sh"},
		sbCase{name: "het cli three", args: "-n1 : -n2 -c1 : --mem=10 job.sh"},
		sbCase{name: "het cli cpus", args: "-c2 : -c1 job.sh"},
		sbCase{name: "het empty first", args: ": -n2 job.sh"},
		sbCase{name: "het script", args: "het.sh", files: map[string]string{"het.sh": "#!/bin/sh\n#SBATCH -N1 -t 3\n#SBATCH hetjob\n#SBATCH -n2\ntrue\n"}},
		sbCase{name: "het script same line", args: "het.sh", files: map[string]string{"het.sh": "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob -n3 -c1\ntrue\n"}},
		sbCase{name: "het script and cli", args: "-J x het.sh", files: map[string]string{"het.sh": "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH -n2\ntrue\n"}},
		sbCase{name: "het env", args: "-n1 : -n2 job.sh", env: []string{"SBATCH_TIMELIMIT=9"}},
		sbCase{name: "bbf", args: "--bbf=bb.txt job.sh", files: map[string]string{"bb.txt": "#BB create_persistent name=x"}},
		sbCase{name: "ignore pbs cli", args: "--ignore-pbs pbs.sh", files: map[string]string{"pbs.sh": "#!/bin/sh\n#PBS -N no\ntrue\n"}},
		sbCase{name: "ignore pbs directive", args: "pbs.sh", files: map[string]string{"pbs.sh": "#!/bin/sh\n#SBATCH --ignore-pbs\n#PBS -N no\ntrue\n"}},
		sbCase{name: "ignore pbs env", args: "pbs.sh", env: []string{"SBATCH_IGNORE_PBS=1"}, files: map[string]string{"pbs.sh": "#!/bin/sh\n#PBS -N maybe\ntrue\n"}},
		sbCase{name: "pbs cli overrides", args: "-J cli pbs.sh", files: map[string]string{"pbs.sh": "#!/bin/sh\n#PBS -N no\n#PBS -l walltime=5:00\ntrue\n"}},
		sbCase{name: "test only N2", args: "--test-only -N2 job.sh"},
		sbCase{name: "env hostfile", args: "job.sh", env: []string{"SLURM_HOSTFILE=hosts.txt"}},
		sbCase{name: "env hint", args: "job.sh", env: []string{"SLURM_HINT=nomultithread"}},
		sbCase{name: "env hint and cli threads", args: "--threads-per-core=1 job.sh", env: []string{"SBATCH_HINT=multithread"}},
		sbCase{name: "env get user env", args: "job.sh", env: []string{"SBATCH_GET_USER_ENV=1"}},
		sbCase{name: "env wait4switch", args: "job.sh", env: []string{"SBATCH_REQ_SWITCH=1", "SBATCH_WAIT4SWITCH=60"}},
		sbCase{name: "env array", args: "job.sh", env: []string{"SBATCH_ARRAY_INX=1-3"}},
		sbCase{name: "env overcommit no", args: "-O job.sh", env: []string{"SBATCH_OVERCOMMIT=no"}},
		sbCase{name: "env open mode", args: "job.sh", env: []string{"SBATCH_OPEN_MODE=append"}},
		sbCase{name: "env no kill", args: "job.sh", env: []string{"SBATCH_NO_KILL=off"}},
		sbCase{name: "env gres", args: "job.sh", env: []string{"SBATCH_GRES=none"}},
		sbCase{name: "env clusters", args: "job.sh", env: []string{"SBATCH_WCKEY=k", "SBATCH_QOS=", "SBATCH_ACCOUNT=a"}},
		sbCase{name: "env slurm exit error", args: "-p nosuch job.sh", env: []string{"SLURM_EXIT_ERROR=7"}},
		sbCase{name: "env job name vs wrap", argv: []string{"--wrap=true"}, env: []string{"SBATCH_JOB_NAME=envname"}},
		sbCase{name: "script in path", args: "pathjob.sh", env: []string{"PATH=@ABS@/sub:/usr/bin:/bin"},
			files: map[string]string{"sub/pathjob.sh": "#!/bin/sh\n#SBATCH -J inpath\ntrue\n"}},
		sbCase{name: "chdir then script", args: "-D sub local.sh", files: map[string]string{"sub/local.sh": "#!/bin/sh\ntrue\n"}},
		sbCase{name: "stdin with args", args: "-t 5", stdin: "#!/bin/sh\n#SBATCH --comment=stdin\ntrue\n"},
	)
	return cs
}

// sbRejected are command lines rejected before or at submission.
var sbRejected = []sbCase{
	{name: "unknown long", args: "--foo job.sh"},
	{name: "unknown long value", args: "--foo=bar job.sh"},
	{name: "ambiguous", args: "--ti=5 job.sh"},
	{name: "ambiguous t", args: "--t 5 job.sh"},
	{name: "ambiguous re", args: "--re job.sh"},
	{name: "missing short arg", args: "-t"},
	{name: "missing long arg", args: "--time"},
	{name: "invalid short", args: "-Z job.sh"},
	{name: "no-arg with value", args: "--parsable=3 job.sh"},
	{name: "hold with value", args: "--hold=1 job.sh"},
	{name: "bad mem", args: "--mem=abc job.sh"},
	{name: "bad mem suffix", args: "--mem=10X job.sh"},
	{name: "bad time", args: "-t xx job.sh"},
	{name: "bad time min", args: "--time-min=1:2:3:4 job.sh"},
	{name: "bad begin", args: "--begin=garbage job.sh"},
	{name: "bad begin hour", args: "--begin=25:00 job.sh"},
	{name: "bad deadline", args: "--deadline=xyz job.sh"},
	{name: "bad nodes", args: "-N 1-x job.sh"},
	{name: "bad nodes order", args: "-N 3-2 job.sh"},
	{name: "bad ntasks", args: "-n abc job.sh"},
	{name: "zero ntasks", args: "-n 0 job.sh"},
	{name: "bad cpus", args: "-c -1 job.sh"},
	{name: "bad exclusive", args: "--exclusive=foo job.sh"},
	{name: "bad open mode", args: "--open-mode=x job.sh"},
	{name: "bad mail type", args: "--mail-type=SOMETIMES job.sh"},
	{name: "bad signal", args: "--signal=NOPE job.sh"},
	{name: "bad distribution", args: "-m diagonal job.sh"},
	{name: "bad gres flags", args: "--gres-flags=maybe job.sh"},
	{name: "bad kill inv dep", args: "--kill-on-invalid-dep=perhaps job.sh"},
	{name: "bad wait all nodes", args: "--wait-all-nodes=2 job.sh"},
	{name: "bad nice", args: "--nice=9999999999 job.sh"},
	{name: "missing arg cluster", args: "-vvvx"},
	{name: "value error before unknown", args: "-t xx --bogus job.sh"},
	{name: "unknown before value error", args: "--bogus -t xx job.sh"},
	{name: "wrap with args", argv: []string{"--wrap=true", "job.sh"}},
	{name: "empty stdin", args: "-J x"},
	{name: "no shebang", args: "plain.sh", files: map[string]string{"plain.sh": "echo hi\n"}},
	{name: "dos line breaks", args: "dos.sh", files: map[string]string{"dos.sh": "#!/bin/sh\r\ntrue\r\n"}},
	{name: "whitespace script", args: "ws.sh", files: map[string]string{"ws.sh": "  \n\t\n"}},
	{name: "missing script", args: "nothere.sh"},
	{name: "directive unknown", args: "bad.sh", files: map[string]string{"bad.sh": "#!/bin/sh\n#SBATCH --foo\ntrue\n"}},
	{name: "directive bad value", args: "bad.sh", files: map[string]string{"bad.sh": "#!/bin/sh\n#SBATCH -t xx\ntrue\n"}},
	{name: "directive non-option", args: "bad.sh", files: map[string]string{"bad.sh": "#!/bin/sh\n#SBATCH -t 5 extra\ntrue\n"}},
	{name: "directive cli unknown first", args: "--bogus bad.sh", files: map[string]string{"bad.sh": "#!/bin/sh\n#SBATCH -t xx\ntrue\n"}},
	{name: "ctld bad partition", args: "-p nosuch job.sh"},
	{name: "ctld too many nodes", args: "-N 5 job.sh"},
	{name: "ctld bad node", args: "-w nosuch job.sh"},
	{name: "ctld bad gres", args: "--gres=gpu:1 job.sh"},
	{name: "ctld bad constraint", args: "-C nofeature job.sh"},
	{name: "ctld bad array", args: "--array=a job.sh"},
	{name: "ctld bad dependency", args: "-d afterok:99999 job.sh"},
	{name: "ctld bad reservation", args: "--reservation=none job.sh"},
	{name: "ctld mem too big", args: "--mem=100000 job.sh"},
	{name: "ctld bad licenses", args: "-L nolic:1 job.sh"},
	{name: "mem conflict", args: "--mem=10 --mem-per-cpu=10 job.sh"},
	{name: "verbose and quiet", args: "-v -Q job.sh"},
	{name: "directive unmatched quote", stdin: "#!/bin/sh\n#SBATCH -t 5 -J \"x\n"},
	{name: "directive unmatched first word", args: "uq.sh", files: map[string]string{"uq.sh": "#!/bin/sh\n#SBATCH 'x\n"}},
	{name: "directive colon", stdin: "#!/bin/sh\n#SBATCH    : -n1\n"},
	{name: "null byte", args: "nul.sh", files: map[string]string{"nul.sh": "#!/bin/sh\n\x00\n"}},
	{name: "plane too few tasks", args: "-m plane=1 -N 3 -n 2 job.sh"},
	{name: "begin after deadline", args: "--begin=2031-01-02 --deadline=2031-01-01 job.sh"},
	{name: "bad hint", args: "--hint=fast job.sh"},
	{name: "bad mem bind", args: "--mem-bind=wild job.sh"},
	{name: "bad cpu freq", args: "--cpu-freq=warp job.sh"},
	{name: "bad propagate", args: "--propagate=BOGUS job.sh"},
	{name: "bad profile", args: "--profile=xyz job.sh"},
	{name: "gpus without gres type", args: "-G 1 job.sh"},
	{name: "ntasks per gpu alone", args: "--ntasks-per-gpu=1 job.sh"},
	{name: "clusters without slurmdbd", args: "-M foo job.sh"},
	{name: "het unknown in second component", args: "-N1 : --bogus job.sh"},
	{name: "het bad value in second component", args: "-N1 : -t xx job.sh"},
	{name: "het directive error in second component", args: "het.sh", files: map[string]string{"het.sh": "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH --mem=x\ntrue\n"}},
	{name: "bbf missing", args: "--bbf=nothere job.sh"},
	{name: "bb and bbf", args: "--bb=x --bbf=job.sh job.sh"},
	{name: "pbs unknown option", args: "pbs.sh", files: map[string]string{"pbs.sh": "#!/bin/sh\n#PBS -Z\ntrue\n"}},
	{name: "pbs extra argument", args: "pbs.sh", files: map[string]string{"pbs.sh": "#!/bin/sh\n#PBS -N a b\ntrue\n"}},
	{name: "pbs bad walltime", args: "pbs.sh", files: map[string]string{"pbs.sh": "#!/bin/sh\n#PBS -l walltime=xx\ntrue\n"}},
	{name: "bsub bad n", args: "b.sh", files: map[string]string{"b.sh": "#!/bin/sh\n#BSUB -n 2,\ntrue\n"}},
	{name: "clusters env without slurmdbd", args: "--parsable job.sh", env: []string{"SBATCH_CLUSTERS=a,b"}},
}
