package jobs

import (
	"strings"
	"sync"
)

// Most strings of a job record repeat across the table (user, account,
// partition, working directory, output pattern, submit host), yet every
// request decodes its own copies. intern keeps one copy of each, which
// for 10,000 pending jobs is about a tenth of their memory. The table is
// bounded; when it fills up it starts over (strings already shared stay
// shared). It is global, not per Manager, so several managers (tests)
// share it: hence the lock.
var internTab = struct {
	sync.Mutex
	strs  map[string]string
	lists map[string][]string
}{strs: map[string]string{}, lists: map[string][]string{}}

const (
	internMax    = 8192 // entries per table
	internMaxLen = 512  // longer strings are rarely shared
)

func intern(s string) string {
	if s == "" || len(s) > internMaxLen {
		return s
	}
	internTab.Lock()
	defer internTab.Unlock()
	if v, ok := internTab.strs[s]; ok {
		return v
	}
	if len(internTab.strs) >= internMax {
		internTab.strs = map[string]string{}
	}
	s = strings.Clone(s) // not a substring pinning a bigger buffer
	internTab.strs[s] = s
	return s
}

// internList shares read-only lists of names (a job's partitions).
func internList(l []string) []string {
	if len(l) == 0 {
		return l
	}
	key := strings.Join(l, ",")
	if len(key) > internMaxLen {
		return l
	}
	internTab.Lock()
	defer internTab.Unlock()
	if v, ok := internTab.lists[key]; ok && len(v) == len(l) {
		return v
	}
	if len(internTab.lists) >= internMax {
		internTab.lists = map[string][]string{}
	}
	v := make([]string, len(l))
	for i, s := range l {
		v[i] = strings.Clone(s)
	}
	internTab.lists[key] = v
	return v
}

// internJob shares the strings of j that usually repeat. Names, comments,
// submit lines and commands are left alone: they are mostly unique and
// would only churn the table.
func internJob(j *Job) {
	for _, p := range []*string{&j.UserName, &j.Account, &j.QOS, &j.AllocNode, &j.PartitionReq,
		&j.Partition, &j.StateDesc, &j.Features, &j.CPUBind, &j.AcctgFreq, &j.Container, &j.Network,
		&j.Reservation, &j.Licenses, &j.MailUser, &j.TresBind, &j.TresFreq, &j.TresPerNode,
		&j.WorkDir, &j.StdIn, &j.StdOut, &j.StdErr, &j.RespHost, &j.BatchHost} {
		*p = intern(*p)
	}
	j.Partitions = internList(j.Partitions)
}
