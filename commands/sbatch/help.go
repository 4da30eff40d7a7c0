package main

// Our own wording; scripts only rely on the first and last words of the
// usage text ("Usage: sbatch" ... "executable [args...]").
const usageText = `Usage: sbatch [-N nnodes] [-n ntasks] [-c ncpus] [-t minutes] [-p partition]
              [-A account] [-J jobname] [-o file] [-e file] [-i file]
              [--mem=MB] [--mem-per-cpu=MB] [-a array] [-d dependency]
              [--begin=time] [--export=vars] [--wrap=command] [--hold]
              [--parsable] [--test-only] [--wait] [options...]
              executable [args...]
`

const helpText = `Usage: sbatch [OPTIONS...] script [args...]
       sbatch [OPTIONS...] --wrap="command"

Submit a batch script to the scheduler. Options may also be given in the
script on "#SBATCH" lines before the first command, and many through
SBATCH_* environment variables; the command line wins over the environment,
which wins over the script.

Resources:
  -N, --nodes=MIN[-MAX]       nodes to allocate
  -n, --ntasks=N              tasks to run
  -c, --cpus-per-task=N       CPUs for each task
      --ntasks-per-node=N     tasks on each node
      --mem=SIZE              memory per node (K, M, G, T suffixes; MB default)
      --mem-per-cpu=SIZE      memory per allocated CPU
      --gres=LIST             generic resources per node
  -G, --gpus=[TYPE:]N         GPUs for the whole job
      --gpus-per-node=[TYPE:]N, --gpus-per-task=[TYPE:]N
  -C, --constraint=FEATURES   required node features
  -w, --nodelist=HOSTS        nodes to use
  -x, --exclude=HOSTS         nodes to avoid
      --exclusive[=user|mcs]  do not share nodes
  -t, --time=LIMIT            time limit (minutes, [D-]H:M:S, ...)

Scheduling:
  -p, --partition=NAME        partition
  -A, --account=NAME          account to charge
  -q, --qos=NAME              quality of service
  -a, --array=INDEXES         job array (e.g. 0-15:4%2)
  -d, --dependency=SPEC       run after other jobs (afterok:ID, ...)
  -b, --begin=TIME            do not start before TIME (now+1hour, 16:00, ...)
  -H, --hold                  submit held
      --nice[=N]              lower the priority
      --reservation=NAME      run in a reservation

Job:
  -J, --job-name=NAME         job name
  -D, --chdir=DIR             working directory
  -o, --output=FILE           standard output (%j job id, %A/%a array ids, ...)
  -e, --error=FILE            standard error
  -i, --input=FILE            standard input
      --export=ALL|NONE|VARS  environment passed to the job
      --wrap=COMMAND          run COMMAND in a generated sh script
      --mail-type=TYPES, --mail-user=USER
      --requeue, --no-requeue

Submission:
      --parsable              print only "ID[;cluster]"
      --test-only             estimate the start time, submit nothing
  -W, --wait                  wait for the job to end; exit with its status
  -Q, --quiet                 print no informational messages
  -v, --verbose               more messages (repeatable)

  -h, --help                  this text
      --usage                 short synopsis
  -V, --version               version
`
