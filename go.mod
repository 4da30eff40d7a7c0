module github.com/goslurm/goslurm

go 1.26
