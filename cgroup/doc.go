// Package cgroup confines and tracks job steps with Linux cgroups the way
// Slurm 22.05's proctrack/cgroup and task/cgroup plugins do, on cgroup v1
// and v2: Slurm's directory layout (Layout), its cgroup.conf limit
// formulas (Compute, a pure function), and a step handle (Step) that
// creates, adopts, fills, freezes, signals, kills, watches for OOM kills
// and removes a step's cgroups. See README.md for what is tested for real.
package cgroup
