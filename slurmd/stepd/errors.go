package stepd

import (
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

func slurmErr(code int) error { return slurmerr.Error{Code: code} }
