package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/getopt"
	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
)

const (
	optArrayUnique = 0x100 + iota
	optFederation
	optHelp
	optHide
	optLocal
	optMe
	optNoconvert
	optSibling
	optStart
	optUsage
	optJSON
	optYAML
)

var longOptions = []getopt.Option{
	{Name: "accounts", HasArg: getopt.RequiredArgument, Val: 'A'},
	{Name: "all", HasArg: getopt.NoArgument, Val: 'a'},
	{Name: "array", HasArg: getopt.NoArgument, Val: 'r'},
	{Name: "array-unique", HasArg: getopt.NoArgument, Val: optArrayUnique},
	{Name: "Format", HasArg: getopt.RequiredArgument, Val: 'O'},
	{Name: "format", HasArg: getopt.RequiredArgument, Val: 'o'},
	{Name: "federation", HasArg: getopt.NoArgument, Val: optFederation},
	{Name: "help", HasArg: getopt.NoArgument, Val: optHelp},
	{Name: "hide", HasArg: getopt.NoArgument, Val: optHide},
	{Name: "iterate", HasArg: getopt.RequiredArgument, Val: 'i'},
	{Name: "jobs", HasArg: getopt.OptionalArgument, Val: 'j'},
	{Name: "local", HasArg: getopt.NoArgument, Val: optLocal},
	{Name: "long", HasArg: getopt.NoArgument, Val: 'l'},
	{Name: "licenses", HasArg: getopt.RequiredArgument, Val: 'L'},
	{Name: "cluster", HasArg: getopt.RequiredArgument, Val: 'M'},
	{Name: "clusters", HasArg: getopt.RequiredArgument, Val: 'M'},
	{Name: "me", HasArg: getopt.NoArgument, Val: optMe},
	{Name: "name", HasArg: getopt.RequiredArgument, Val: 'n'},
	{Name: "noconvert", HasArg: getopt.NoArgument, Val: optNoconvert},
	{Name: "node", HasArg: getopt.RequiredArgument, Val: 'w'},
	{Name: "nodes", HasArg: getopt.RequiredArgument, Val: 'w'},
	{Name: "nodelist", HasArg: getopt.RequiredArgument, Val: 'w'},
	{Name: "noheader", HasArg: getopt.NoArgument, Val: 'h'},
	{Name: "partitions", HasArg: getopt.RequiredArgument, Val: 'p'},
	{Name: "priority", HasArg: getopt.NoArgument, Val: 'P'},
	{Name: "qos", HasArg: getopt.RequiredArgument, Val: 'q'},
	{Name: "reservation", HasArg: getopt.RequiredArgument, Val: 'R'},
	{Name: "sib", HasArg: getopt.NoArgument, Val: optSibling},
	{Name: "sibling", HasArg: getopt.NoArgument, Val: optSibling},
	{Name: "sort", HasArg: getopt.RequiredArgument, Val: 'S'},
	{Name: "start", HasArg: getopt.NoArgument, Val: optStart},
	{Name: "steps", HasArg: getopt.OptionalArgument, Val: 's'},
	{Name: "states", HasArg: getopt.RequiredArgument, Val: 't'},
	{Name: "usage", HasArg: getopt.NoArgument, Val: optUsage},
	{Name: "user", HasArg: getopt.RequiredArgument, Val: 'u'},
	{Name: "users", HasArg: getopt.RequiredArgument, Val: 'u'},
	{Name: "verbose", HasArg: getopt.NoArgument, Val: 'v'},
	{Name: "version", HasArg: getopt.NoArgument, Val: 'V'},
	{Name: "json", HasArg: getopt.NoArgument, Val: optJSON},
	{Name: "yaml", HasArg: getopt.NoArgument, Val: optYAML},
}

// usageText is our own short synopsis for --usage, --help and a stray
// argument (the wording is goslurm's, not Slurm's).
const usageText = `Usage: squeue [-ahlrv] [-A accounts] [-i seconds] [-j job_ids] [-L licenses]
              [-n names] [-o format | -O fields] [-p partitions] [-q qos]
              [-R reservation] [-S sort_keys] [-t states] [-u users] [-w nodes]
              [--start] [--me] [--array-unique] [--noconvert] [-V]
`

func (q *squeue) exit(code int) {
	panic(exitCode(code))
}

func (q *squeue) parseCommandLine(args []string) {
	overrideFormatEnv := false
	env := func(k string) (string, bool) { return q.getenv(k) }
	if _, ok := env("SQUEUE_ALL"); ok {
		q.allFlag = true
	}
	if _, ok := env("SQUEUE_ARRAY"); ok {
		q.arrayFlag = true
	}
	if v, ok := env("SQUEUE_SORT"); ok {
		q.sortSpec, q.sortSet = v, true
	}
	if _, ok := env("SQUEUE_ARRAY_UNIQUE"); ok {
		q.arrayUniqueFlag = true
	}
	if v, ok := env("SLURM_CLUSTERS"); ok {
		sc.ClustersUnreachable(q.stderr, q.prog, v, true)
		q.exit(1)
	}
	if _, ok := env("SQUEUE_PRIORITY"); ok {
		q.priorityFlag = true
	}
	if v, ok := env("SLURM_BITSTR_LEN"); ok {
		q.bitstrLenSet = true
		q.bitstrLen, _ = strconv.Atoi(v)
	}
	argv := append([]string(nil), args...)
	_, posix := env("POSIXLY_CORRECT")
	g := getopt.New(argv, "A:ahi:j::lL:n:M:O:o:p:Pq:R:rs::S:t:u:U:vVw:", longOptions, !posix, q.stderr)
	for {
		c := g.Next()
		if c == -1 {
			break
		}
		arg := g.Arg
		switch c {
		case '?':
			q.out.Flush()
			fmt.Fprintf(q.stderr, "Try \"squeue --help\" for more information\n")
			q.exit(1)
		case 'A', 'U':
			q.accounts, q.hasAccounts = sc.SplitList(arg), true
		case 'a':
			q.allFlag = true
		case 'h':
			q.noHeader = true
		case 'i':
			q.iterate = sc.Atoi(arg)
			if q.iterate <= 0 {
				q.errorf("--iterate=%s\n", arg)
				q.exit(1)
			}
		case 'j':
			if g.HasValue {
				q.setRaw("jobs", arg)
				q.jobs = q.buildJobList(arg)
				q.hasJobs = true
			}
			q.jobFlag = true
		case 'l':
			q.longList = true
			overrideFormatEnv = true
		case 'L':
			q.licenses, q.hasLicenses = sc.SplitList(arg), true
			q.setRaw("licenses", arg)
		case 'M':
			q.out.Flush()
			sc.ClustersUnreachable(q.stderr, q.prog, arg, false)
			q.exit(1)
		case 'n':
			q.names, q.hasNames = sc.SplitList(arg), true
			q.setRaw("names", arg)
		case 'O':
			if q.formatSet {
				q.errorf("-O (--Format) is incompatible with -o (--format)")
				q.exit(1)
			}
			q.formatLong, q.formatLongSet = arg, true
			overrideFormatEnv = true
		case 'o':
			if q.formatLongSet {
				q.errorf("-o (--format) is incompatible with -O (--Format)")
				q.exit(1)
			}
			q.format, q.formatSet = arg, true
			overrideFormatEnv = true
		case 'p':
			q.partitions, q.hasParts = sc.SplitList(arg), true
			q.setRaw("partitions", arg)
			q.allFlag = true
		case 'P':
			q.priorityFlag = true
		case 'q':
			q.qoss, q.hasQOS = sc.SplitList(arg), true
		case 'R':
			q.reservation, q.hasReservation = arg, true
		case 'r':
			q.arrayFlag = true
			q.bitstrLenSet, q.bitstrLen = true, 0
		case 's':
			if g.HasValue {
				q.setRaw("steps", arg)
				q.steps = q.buildStepList(arg)
			}
			q.stepFlag = true
			overrideFormatEnv = true
		case 'S':
			q.sortSpec, q.sortSet = arg, true
		case 't':
			q.setRaw("states", arg)
			q.buildStateList(arg)
		case 'u':
			q.setRaw("users", arg)
			q.users_, q.hasUsers = q.buildUserList(arg), true
		case 'v':
			q.verbose++
		case 'V':
			fmt.Fprintf(q.out, "slurm-wlm 22.05.8\n")
			q.exit(0)
		case 'w':
			hl, err := hostlist.Parse(arg)
			if err != nil {
				q.errorf("'%s' invalid entry for --nodelist", arg)
				q.exit(1)
			}
			q.nodes = hl
		case optArrayUnique:
			q.arrayUniqueFlag = true
		case optHelp, optUsage:
			q.out.WriteString(usageText)
			q.exit(0)
		case optFederation:
			// A cluster that is not federated shows the same either way.
		case optLocal:
			q.localFlag = true
		case optSibling:
			q.siblingFlag = true
		case optHide:
			q.allFlag = false
		case optMe:
			q.setRaw("users", strconv.Itoa(os.Geteuid()))
			q.users_, q.hasUsers = []uint32{uint32(os.Geteuid())}, true
		case optStart:
			q.startFlag = true
			overrideFormatEnv = true
		case optNoconvert:
			q.convert |= sc.ConvertNo
		case optJSON:
			q.mimetype = mimeJSON
		case optYAML:
			q.mimetype = mimeYAML
		}
	}
	if q.longList && q.formatSet {
		q.fatalf("Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.")
	}
	if !overrideFormatEnv {
		if v, ok := env("SQUEUE_FORMAT"); ok {
			q.format, q.formatSet = v, true
		} else if v, ok := env("SQUEUE_FORMAT2"); ok {
			q.formatLong, q.formatLongSet = v, true
		}
	}
	rest := g.Args[g.Optind:]
	if len(rest) > 0 {
		if q.jobFlag {
			q.setRaw("jobs", rest[0])
			q.jobs, q.hasJobs = q.buildJobList(rest[0]), true
			rest = rest[1:]
		} else if q.stepFlag {
			q.setRaw("steps", rest[0])
			q.steps = q.buildStepList(rest[0])
			rest = rest[1:]
		}
		if len(rest) > 0 {
			q.errorf("Unrecognized option: %s", rest[0])
			q.out.WriteString(usageText)
			q.exit(1)
		}
	}
	if q.jobFlag && q.stepFlag {
		if q.hasJobs {
			// Slurm logs this at verbose level before -v takes effect,
			// so it never shows.
			q.jobFlag = false
		} else {
			q.errorf("Incompatible options --jobs and --steps")
			q.exit(1)
		}
	}
	if q.nodes != nil {
		q.filterNodes()
	}
	if v, ok := env("SQUEUE_ACCOUNT"); ok && !q.hasAccounts {
		q.accounts, q.hasAccounts = sc.SplitList(v), true
	}
	if v, ok := env("SQUEUE_NAMES"); ok && !q.hasNames {
		q.setRaw("names", v)
		q.names, q.hasNames = sc.SplitList(v), true
	}
	if v, ok := env("SQUEUE_LICENSES"); ok && !q.hasParts {
		q.setRaw("licenses", v)
		q.licenses, q.hasLicenses = sc.SplitList(v), true
	}
	if v, ok := env("SQUEUE_PARTITION"); ok && !q.hasParts {
		q.setRaw("partitions", v)
		q.partitions, q.hasParts = sc.SplitList(v), true
		q.allFlag = true
	}
	if v, ok := env("SQUEUE_QOS"); ok && !q.hasQOS {
		q.qoss, q.hasQOS = sc.SplitList(v), true
	}
	if v, ok := env("SQUEUE_STATES"); ok && q.raw["states"] == nil {
		q.setRaw("states", v)
		q.buildStateList(v)
	}
	if v, ok := env("SQUEUE_USERS"); ok && q.raw["users"] == nil {
		q.setRaw("users", v)
		q.users_, q.hasUsers = q.buildUserList(v), true
	}
	if q.startFlag && !q.stepFlag {
		if !q.formatSet {
			q.format, q.formatSet = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R", true
		}
		if !q.sortSet {
			q.sortSpec, q.sortSet = "S", true
		}
		if q.raw["states"] == nil {
			q.setRaw("states", "PD")
			q.buildStateList("PD")
		}
	}
	if q.hasJobs && len(q.jobs) == 1 {
		q.jobID = q.jobs[0].jobID
	}
	if q.hasUsers && len(q.users_) == 1 {
		q.userID = q.users_[0]
	}
	if q.verbose != 0 {
		q.printOptions()
	}
}

// printOptions is squeue -v's dump of its parameters.
func (q *squeue) printOptions() {
	tf := func(b bool) string {
		if b {
			return "true"
		}
		return "false"
	}
	opt := func(set bool, v string) string {
		if !set {
			return "(null)"
		}
		return v
	}
	nodes := ""
	if q.nodes != nil {
		nodes = q.nodes.Ranged()
	}
	b01 := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	o := q.out
	fmt.Fprintf(o, "-----------------------------\n")
	fmt.Fprintf(o, "all         = %s\n", tf(q.allFlag))
	fmt.Fprintf(o, "array       = %s\n", tf(q.arrayFlag))
	fmt.Fprintf(o, "federation  = %s\n", tf(false))
	fmt.Fprintf(o, "format      = %s\n", opt(q.formatSet, q.format))
	fmt.Fprintf(o, "iterate     = %d\n", q.iterate)
	fmt.Fprintf(o, "job_flag    = %d\n", b01(q.jobFlag))
	fmt.Fprintf(o, "jobs        = %s\n", opt(q.raw["jobs"] != nil, deref(q.raw["jobs"])))
	fmt.Fprintf(o, "licenses    = %s\n", opt(q.raw["licenses"] != nil, deref(q.raw["licenses"])))
	fmt.Fprintf(o, "local       = %s\n", tf(q.localFlag))
	fmt.Fprintf(o, "names       = %s\n", opt(q.raw["names"] != nil, deref(q.raw["names"])))
	fmt.Fprintf(o, "nodes       = %s\n", nodes)
	fmt.Fprintf(o, "partitions  = %s\n", opt(q.raw["partitions"] != nil, deref(q.raw["partitions"])))
	fmt.Fprintf(o, "priority    = %s\n", tf(q.priorityFlag))
	fmt.Fprintf(o, "reservation = %s\n", opt(q.hasReservation, q.reservation))
	fmt.Fprintf(o, "sibling      = %s\n", tf(q.siblingFlag))
	fmt.Fprintf(o, "sort        = %s\n", opt(q.sortSet, q.sortSpec))
	fmt.Fprintf(o, "start_flag  = %d\n", b01(q.startFlag))
	fmt.Fprintf(o, "states      = %s\n", opt(q.raw["states"] != nil, deref(q.raw["states"])))
	fmt.Fprintf(o, "step_flag   = %d\n", b01(q.stepFlag))
	fmt.Fprintf(o, "steps       = %s\n", opt(q.raw["steps"] != nil, deref(q.raw["steps"])))
	fmt.Fprintf(o, "users       = %s\n", opt(q.raw["users"] != nil, deref(q.raw["users"])))
	fmt.Fprintf(o, "verbose     = %d\n", q.verbose)
	if q.verbose > 1 {
		for i, j := range q.jobs {
			if j.arrayID == sc.NoVal {
				fmt.Fprintf(o, "job_list[%d] = %d\n", i, j.jobID)
			} else {
				fmt.Fprintf(o, "job_list[%d] = %d_%d\n", i, j.jobID, j.arrayID)
			}
		}
		for i, n := range q.names {
			// Slurm prints the first byte of each name as a number.
			fmt.Fprintf(o, "name_list[%d] = %d\n", i, n[0])
		}
		for i, l := range q.licenses {
			fmt.Fprintf(o, "licenses_list[%d] = %s\n", i, l)
		}
		for i, p := range q.partitions {
			fmt.Fprintf(o, "part_list[%d] = %s\n", i, p)
		}
		if q.allStates {
			fmt.Fprintf(o, "state_list = all\n")
		} else {
			for i, st := range q.states {
				fmt.Fprintf(o, "state_list[%d] = %s\n", i, sc.JobStateString(st))
			}
		}
		for i, st := range q.steps {
			id := stepIDString(&msg.StepInfo{StepID: msg.StepID{JobID: st.jobID, StepID: st.stepID}})
			if st.arrayID == sc.NoVal {
				fmt.Fprintf(o, "step_list[%d] = %s\n", i, id)
			} else {
				_, sid, _ := strings.Cut(id, ".")
				fmt.Fprintf(o, "step_list[%d] = %d_%d.%s\n", i, st.jobID, st.arrayID, sid)
			}
		}
		for i, u := range q.users_ {
			fmt.Fprintf(o, "user_list[%d] = %d\n", i, u)
		}
	}
	fmt.Fprintf(o, "-----------------------------\n\n\n")
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// setRaw keeps an option's text for printOptions.
func (q *squeue) setRaw(k, v string) {
	if q.raw == nil {
		q.raw = map[string]*string{}
	}
	q.raw[k] = &v
}

func (q *squeue) buildJobList(s string) []jobSel {
	var out []jobSel
	for _, job := range sc.SplitList(s) {
		id, rest := sc.Strtol(job)
		arr := uint32(sc.NoVal)
		if strings.HasPrefix(rest, "_") {
			a, _ := sc.Strtol(rest[1:])
			arr = uint32(int32(a))
		}
		if int32(id) <= 0 {
			q.errorf("Invalid job id: %s", job)
			q.exit(1)
		}
		out = append(out, jobSel{jobID: uint32(int32(id)), arrayID: arr})
	}
	return out
}

func (q *squeue) buildStateList(s string) {
	if strings.EqualFold(s, "all") {
		q.allStates, q.hasStates, q.states = true, false, nil
		return
	}
	q.allStates = false
	q.states, q.hasStates = nil, true
	for _, st := range sc.SplitList(s) {
		v, ok := sc.JobStateNum(st)
		if !ok {
			q.errorf("Invalid job state specified: %s", st)
			q.errorf("Valid job states include: %s\n", sc.JobStateNamesList())
			q.exit(1)
		}
		q.states = append(q.states, v)
	}
}

func (q *squeue) buildUserList(s string) []uint32 {
	var out []uint32
	for _, u := range sc.SplitList(s) {
		uid, ok := sc.UIDFromString(u)
		if !ok {
			q.errorf("Invalid user: %s\n", u)
			continue
		}
		out = append(out, uid)
	}
	return out
}

// filterNodes maps -w names (node names or host names) to node names.
func (q *squeue) filterNodes() {
	nodes, err := q.conn.LoadNodes(q.ctx, 0, sc.ShowAll)
	if err != nil {
		q.out.Flush()
		fmt.Fprintf(q.stderr, "slurm_load_node error: %s\n", sc.Strerror(err))
		q.exit(1)
	}
	hl := q.nodes.Copy()
	hl.Uniq() // a hostset: sorted, no duplicates
	mapped := hostlist.New()
	for _, name := range hl.Hosts() {
		want := name
		if strings.EqualFold(name, "localhost") {
			h, _ := os.Hostname()
			if i := strings.IndexByte(h, '.'); i >= 0 {
				h = h[:i]
			}
			want = h
		}
		found := ""
		for _, n := range nodes.Nodes {
			if !n.Name.Valid {
				continue
			}
			if n.Name.Value == want || (n.NodeHostname.Valid && n.NodeHostname.Value == want) {
				found = n.Name.Value
				break
			}
		}
		if found == "" {
			q.errorf("Invalid node name %s", name)
			q.exit(1)
		}
		mapped.PushHost(found)
	}
	mapped.Uniq()
	q.nodes = mapped
}

// parseFormat builds the fields of a -o format.
func (q *squeue) parseFormat(format string) {
	q.fields = nil
	letters := q.jobFields()
	prefix, hasPrefix, items, all := sc.ParseFormat(format, "")
	if hasPrefix {
		q.fields = append(q.fields, field{prefix: true, suffix: prefix})
	}
	for _, it := range items {
		def, ok := letters[it.Letter]
		if !ok {
			if all {
				continue
			}
			q.fields = append(q.fields, field{width: it.Width, right: it.Right, suffix: "%" + it.Text})
			q.errorf("Invalid job format specification: %c", it.Letter)
			continue
		}
		q.fields = append(q.fields, field{width: it.Width, right: it.Right, suffix: it.Suffix,
			header: def.header, headerNoCut: def.headerNoCut, print: def.print})
	}
}

// parseLongFormat builds the fields of a -O format.
func (q *squeue) parseLongFormat(format string) {
	q.fields = nil
	longs := q.longFields()
	for _, it := range sc.ParseLongFormat(format) {
		name := it.Name
		def, ok := longs[strings.ToLower(name)]
		if !ok && len(name) >= 7 && strings.EqualFold(name[:7], "numtask") {
			def, ok = longs["numtasks"]
		}
		if !ok {
			q.fields = append(q.fields, field{width: it.Width, right: it.Right, suffix: it.Suffix})
			q.errorf("Invalid job format specification: %s", name)
			continue
		}
		q.fields = append(q.fields, field{width: it.Width, right: it.Right, suffix: it.Suffix,
			header: def.header, headerNoCut: def.headerNoCut, print: def.print})
	}
}
