// Package slurmcli is what goslurm's query commands (squeue, sinfo) share
// to behave like Slurm 22.05's: a getopt_long work-alike, slurm.conf
// discovery and the RPCs they send, and the C printf semantics of their
// output (NULL strings, field widths and truncation, time and unit
// formats, job and node state names).
package slurmcli
