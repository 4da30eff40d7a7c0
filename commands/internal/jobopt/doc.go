// Package jobopt is the option layer Slurm 22.05's sbatch, srun and salloc
// share (src/common/slurm_opt.c): one option table with the commands each
// option belongs to, the setters that turn option text into option state
// with Slurm's messages and exit codes, the input environment tables,
// #SBATCH (and #PBS / #BSUB) directive parsing, and the construction of
// the job descriptor (job_desc_msg_t) the commands send.
//
// A command uses it in Slurm's order:
//
//	o := jobopt.NewOpts(jobopt.Srun, &jobopt.Log{Prog: "srun", W: os.Stderr})
//	o.Custom = mySrunOptions             // --label, --multi-prog, ...
//	o.ApplyEnv(jobopt.SrunEnv)           // input environment first
//	n, err := o.ParseArgs(os.Args, jobopt.FromCLI, false, os.Stderr) // then the command line
//	err = o.ValidateCommon()             // validate_options_salloc_sbatch_srun
//	desc, err := o.CreateJobDesc(submitLine) // slurm_opt_create_job_desc(opt, true)
//
// sbatch adds its two passes, directives, Verify (its _opt_verify) and
// BatchJobDesc. Errors that end the command are *ExitError values whose
// messages are already written; ErrHelp, ErrUsage and ErrVersion ask the
// command to print its texts and exit 0.
//
// Numeric option fields keep Slurm's "unset" markers (NoVal, -1, 0) as
// slurm_opt.c resets them, because descriptor building tests them the same
// way. Only sbatch's first-pass ("early") options are modelled; srun's
// srun_early_pass set is the srun command's business.
package jobopt
