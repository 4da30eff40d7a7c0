package jobopt

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/goslurm/goslurm/commands/internal/getopt"
	"github.com/goslurm/goslurm/hostlist"
)

// ApplyForeignDirectives translates #BSUB or #PBS lines the way sbatch
// does unless --ignore-pbs (xlate_batch_script): the first dialect found
// is used, lines are looked for until 100 non-comment lines have gone by,
// and the translated options override the #SBATCH ones.
func (o *Opts) ApplyForeignDirectives(file string, body []byte, stderr io.Writer) error {
	if o.IgnorePBS {
		return nil
	}
	for _, d := range []struct {
		magic string
		apply func([]string, io.Writer) error
	}{{"#BSUB", o.applyBSUB}, {"#PBS", o.applyPBS}} {
		words, found, err := foreignWords(file, body, d.magic)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		return d.apply(append([]string{o.Cmd.Name()}, words...), stderr)
	}
	return nil
}

func foreignWords(file string, body []byte, magic string) ([]string, bool, error) {
	lines := strings.Split(string(body), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var words []string
	found, nonComments := false, 0
	for n, line := range lines {
		if !strings.HasPrefix(line, magic) {
			if !strings.HasPrefix(line, "#") {
				nonComments++
			}
			if nonComments > 100 {
				break
			}
			continue
		}
		found = true
		w, err := splitDirective(file, n+1, line[len(magic):])
		if err != nil {
			return nil, false, err
		}
		words = append(words, w...)
	}
	return words, found, nil
}

// apply applies a translated option as if from the script.
func (o *Opts) applyXlate(val int, arg string) error {
	return o.Apply(val, arg, true, FromScript, true)
}

func (o *Opts) xlateFail(format string, a ...any) error {
	o.Log.Errorf(format, a...)
	return exitErr(1)
}

func (o *Opts) applyBSUB(args []string, stderr io.Writer) error {
	// BSUB's "-cwd" is a single-dash long option: Slurm rewrites it.
	for i := 2; i < len(args); i += 2 {
		if args[i-1] == "-cwd" {
			args[i-1] = "-c"
		}
	}
	long := []getopt.Option{
		{Name: "cwd", HasArg: getopt.RequiredArgument, Val: 'c'},
		{Name: "error_file", HasArg: getopt.RequiredArgument, Val: 'e'},
		{Name: "job_name", HasArg: getopt.RequiredArgument, Val: 'J'},
		{Name: "hostname", HasArg: getopt.RequiredArgument, Val: 'm'},
		{Name: "memory_limit", HasArg: getopt.RequiredArgument, Val: 'M'},
		{Name: "output_file", HasArg: getopt.RequiredArgument, Val: 'o'},
		{Name: "queue_name", HasArg: getopt.RequiredArgument, Val: 'q'},
		{Name: "time", HasArg: getopt.RequiredArgument, Val: 'W'},
		{Name: "exclusive", HasArg: getopt.NoArgument, Val: 'x'},
	}
	p := getopt.New(args, "c:e:J:m:M:n:o:q:W:x", long, false, stderr)
	for {
		c := p.Next()
		if c == getopt.Done {
			break
		}
		a := p.Arg
		var err error
		switch c {
		case 'c':
			err = o.applyXlate('D', a)
		case 'e', 'J', 'o':
			err = o.applyXlate(c, a)
		case 'm':
			err = o.applyXlate('w', strings.ReplaceAll(a, " ", ","))
		case 'M':
			if a != "" && isDigit(a[len(a)-1]) {
				a += "K"
			}
			err = o.applyXlate(optMemPerCpu, a)
		case 'n':
			if _, after, ok := strings.Cut(a, ","); ok {
				if after == "" {
					return o.xlateFail("#BSUB -n format not correct given: '%s'", a)
				}
				a = after
			}
			err = o.applyXlate('n', a)
		case 'q':
			err = o.applyXlate('p', a)
		case 'W':
			err = o.applyXlate('t', a)
		case 'x':
			err = o.Apply(optExclusive, "", false, FromScript, true)
		default:
			return o.xlateFail("Unrecognized command line parameter %c", c)
		}
		if err != nil {
			return err
		}
	}
	if p.Optind < len(args) {
		return o.xlateFail("Invalid argument: %s", args[p.Optind])
	}
	return nil
}

func (o *Opts) applyPBS(args []string, stderr io.Writer) error {
	req, opt, no := getopt.RequiredArgument, getopt.OptionalArgument, getopt.NoArgument
	long := []getopt.Option{
		{Name: "start_time", HasArg: req, Val: 'a'}, {Name: "account", HasArg: req, Val: 'A'},
		{Name: "checkpoint", HasArg: req, Val: 'c'}, {Name: "working_dir", HasArg: req, Val: 'C'},
		{Name: "error", HasArg: req, Val: 'e'}, {Name: "hold", HasArg: no, Val: 'h'},
		{Name: "interactive", HasArg: no, Val: 'I'}, {Name: "join", HasArg: opt, Val: 'j'},
		{Name: "job_array", HasArg: req, Val: 'J'}, {Name: "keep", HasArg: req, Val: 'k'},
		{Name: "resource_list", HasArg: req, Val: 'l'}, {Name: "mail_options", HasArg: req, Val: 'm'},
		{Name: "mail_user_list", HasArg: req, Val: 'M'}, {Name: "job_name", HasArg: req, Val: 'N'},
		{Name: "out", HasArg: req, Val: 'o'}, {Name: "priority", HasArg: req, Val: 'p'},
		{Name: "destination", HasArg: req, Val: 'q'}, {Name: "rerunable", HasArg: req, Val: 'r'},
		{Name: "script_path", HasArg: req, Val: 'S'}, {Name: "array", HasArg: req, Val: 't'},
		{Name: "running_user", HasArg: req, Val: 'u'}, {Name: "variable_list", HasArg: req, Val: 'v'},
		{Name: "all_env", HasArg: no, Val: 'V'}, {Name: "attributes", HasArg: req, Val: 'W'},
		{Name: "no_std", HasArg: no, Val: 'z'},
	}
	p := getopt.New(args, "a:A:c:C:e:hIj:J:k:l:m:M:N:o:p:q:r:S:t:u:v:VW:z", long, false, stderr)
	for {
		c := p.Next()
		if c == getopt.Done {
			break
		}
		a := p.Arg
		var err error
		switch c {
		case 'a':
			err = o.applyXlate('b', a)
		case 'A', 'e', 'o':
			err = o.applyXlate(c, a)
		case 'c', 'C', 'I', 'j', 'k', 'r', 'S', 'u', 'V', 'z':
		case 'h':
			err = o.Apply('H', "", false, FromScript, true)
		case 'J', 't':
			err = o.applyXlate('a', a)
		case 'l':
			err = o.pbsResources(a)
		case 'm':
			if t := pbsMailType(a); t != "" {
				err = o.applyXlate(optMailType, t)
			} else {
				err = o.badSpec("--mail-type")
			}
		case 'M':
			err = o.applyXlate(optMailUser, a)
		case 'N':
			err = o.applyXlate('J', a)
		case 'p':
			err = o.applyXlate(optNice, a)
		case 'q':
			err = o.applyXlate('p', a)
		case 'v':
			v := a
			if o.Export != nil {
				v = *o.Export + "," + a
			}
			err = o.applyXlate(optExport, v)
		case 'W':
			switch {
			case hasPrefixFold(a, "umask="):
				n, perr := strconv.ParseInt(a[6:], 0, 32)
				if perr != nil || n < 0 || n > 0o777 {
					o.Log.Errorf("Invalid -W umask= specification")
					return exitErr(ExitOption)
				}
				o.Umask = int(n)
			case hasPrefixFold(a, "depend="):
				err = o.applyXlate('d', a[7:])
			default:
				o.Log.Verbosef("Ignored PBS attributes: %s", a)
			}
		default:
			return o.xlateFail("Unrecognized command line parameter %c", c)
		}
		if err != nil {
			return err
		}
	}
	if p.Optind < len(args) {
		return o.xlateFail("Invalid argument: %s", args[p.Optind])
	}
	return nil
}

func pbsMailType(a string) string {
	var parts []string
	if strings.ContainsAny(a, "bB") {
		parts = append(parts, "BEGIN")
	}
	if strings.ContainsAny(a, "eE") {
		parts = append(parts, "END")
	}
	if strings.ContainsAny(a, "aA") {
		parts = append(parts, "FAIL")
	}
	if strings.ContainsAny(a, "nN") {
		return "NONE"
	}
	return strings.Join(parts, ",")
}

// pbsValue returns rl[i:] up to sep and the index after the separator.
func pbsValue(rl string, i int, sep byte) (string, int) {
	j := i
	for j < len(rl) && rl[j] != sep {
		j++
	}
	v := rl[i:j]
	if j < len(rl) {
		j++
	}
	return v, j
}

func pbsSkip(rl string, i int) int {
	_, j := pbsValue(rl, i, ',')
	return j
}

// pbsResources is _parse_pbs_resource_list for "-l a=b,c=d".
func (o *Opts) pbsResources(rl string) error {
	gpus := 0
	proFlags := 0 // select 1, ncpus 2, mpiprocs 4
	var v string
	var err error
	for i := 0; i < len(rl) && err == nil; {
		has := func(p string) bool { return strings.HasPrefix(rl[i:], p) }
		hasFold := func(p string) bool { return hasPrefixFold(rl[i:], p) }
		trimB := func(s string) string {
			if s != "" && (s[len(s)-1] == 'b' || s[len(s)-1] == 'B') {
				return s[:len(s)-1]
			}
			return s
		}
		switch {
		case hasFold("accelerator="):
			i += 12
			if hasPrefixFold(rl[i:], "true") && gpus < 1 {
				gpus = 1
			}
		case has("arch="), has("host="), has("pmem="), has("vmem="):
			i = pbsSkip(rl, i+5)
		case has("opsys="), has("other="), has("pvmem="):
			i = pbsSkip(rl, i+6)
		case has("software="):
			i = pbsSkip(rl, i+9)
		case has("cput="), has("pcput="), has("walltime="):
			i += strings.IndexByte(rl[i:], '=') + 1
			v, i = pbsValue(rl, i, ',')
			err = o.applyXlate('t', v)
		case has("file="):
			v, i = pbsValue(rl, i+5, ',')
			err = o.applyXlate(optTmp, trimB(v))
		case has("mem="):
			v, i = pbsValue(rl, i+4, ',')
			err = o.applyXlate(optMem, trimB(v))
		case hasFold("mpiprocs="):
			v, i = pbsValue(rl, i+9, ':')
			proFlags |= 4
			err = o.applyXlate(optNtaskspernode, v)
		case hasFold("naccelerators="):
			v, i = pbsValue(rl, i+14, ',')
			gpus, err = o.parseInt("naccelerators", v, true)
		case hasFold("ncpus="):
			v, i = pbsValue(rl, i+6, ':')
			proFlags |= 2
			err = o.applyXlate(optMincpus, v)
		case has("nice="):
			v, i = pbsValue(rl, i+5, ',')
			err = o.applyXlate(optNice, v)
		case has("nodes="):
			v, i = pbsValue(rl, i+6, ',')
			err = o.pbsNodes(v)
		case has("proc="):
			v, i = pbsValue(rl, i+5, ',')
			if o.Constraint != "" {
				v += "," + o.Constraint
			}
			err = o.applyXlate('C', v)
			i = pbsSkip(rl, i)
		case hasFold("select="):
			v, i = pbsValue(rl, i+7, ':')
			proFlags |= 1
			err = o.applyXlate('N', v)
		default:
			i++
		}
	}
	if err != nil {
		return err
	}
	if proFlags == 7 && o.NtasksPerNode != NoVal && o.PnMinCPUs > o.NtasksPerNode {
		if err := o.applyXlate('c', strconv.Itoa(o.PnMinCPUs/o.NtasksPerNode)); err != nil {
			return err
		}
	}
	if gpus > 0 {
		g := fmt.Sprintf("gpu:%d", gpus)
		if o.Gres != "" {
			g = o.Gres + "," + g
		}
		return o.applyXlate(optGres, g)
	}
	return nil
}

// pbsNodes is _parse_pbs_nodes_opts for "nodes=N[:ppn=P][:gpus=G]" or
// host names joined by "+".
func (o *Opts) pbsNodes(s string) error {
	ppn, count := 0, 0
	hl := hostlist.New()
	next := func(i int) int {
		for i < len(s) && s[i] != '+' && s[i] != ':' {
			i++
		}
		if i < len(s) {
			i++
		}
		return i
	}
	name := func(i int) (string, int) {
		j := i
		for j < len(s) && s[j] != '+' && s[j] != ':' {
			j++
		}
		v := s[i:j]
		if j < len(s) {
			j++
		}
		return v, j
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "gpus="):
			var v string
			v, i = name(i + 5)
			if err := o.applyXlate(optGpusPerNode, v); err != nil {
				return err
			}
		case strings.HasPrefix(s[i:], "ppn="):
			ppn += int(strtoll(s[i+4:]))
			i = next(i + 4)
		case isDigit(s[i]):
			count += int(strtoll(s[i:]))
			i = next(i)
		case unicode.IsLetter(rune(s[i])):
			var v string
			v, i = name(i)
			hl.PushHost(v)
		default:
			i++
		}
	}
	if count == 0 {
		count = 1
	} else if err := o.applyXlate('N', strconv.Itoa(count)); err != nil {
		return err
	}
	if ppn != 0 {
		if err := o.applyXlate('n', strconv.Itoa(ppn*count)); err != nil {
			return err
		}
	}
	if hl.Count() > 0 {
		return o.applyXlate('w', hl.Ranged())
	}
	return nil
}
