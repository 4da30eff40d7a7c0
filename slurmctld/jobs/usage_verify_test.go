package jobs

// Every job manager test that takes node usage checks the holders index
// against the whole table (NodeUsage).
func init() { VerifyNodeUsage = true }
