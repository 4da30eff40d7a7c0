package interop

import "os"

// Our controller, started through ctldharness, checks its index of the
// jobs holding nodes against the whole job table after every call, and
// stops on a miss (jobs.VerifyNodeUsage).
func init() { os.Setenv("GOSLURM_VERIFY_NODE_USAGE", "1") }
