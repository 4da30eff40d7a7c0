package conf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestMatchPair(t *testing.T) {
	tests := []struct {
		in      string
		key     string
		op      Op
		val     string
		quoted  bool
		rest    string
		matched bool
	}{
		{"Key=v", "Key", OpSet, "v", false, "", true},
		{"  key = value rest", "key", OpSet, "value", false, " rest", true},
		{"Key=\"a b\" x=1", "Key", OpSet, "a b", true, " x=1", true},
		{"Key=\"\"", "Key", OpSet, "", true, "", true},
		{"Key=\"a\"b c", "Key", OpSet, "\"a\"b", false, " c", true}, // quote not followed by blank
		{"Key=\"unterminated x", "Key", OpSet, "\"unterminated", false, " x", true},
		{"Key+=5", "Key", OpAdd, "5", false, "", true},
		{"Key -=5", "Key", OpSub, "5", false, "", true},
		{"Key*=5", "Key", OpMul, "5", false, "", true},
		{"Key/=5", "Key", OpDiv, "5", false, "", true},
		{"Key= Other=x", "Key", OpSet, "Other=x", false, "", true}, // blanks after '=' are skipped
		{"a.b_c9=1", "a.b_c9", OpSet, "1", false, "", true},
		{"Key=", "", OpSet, "", false, "", false},
		{"Key + = 1", "", OpSet, "", false, "", false},
		{"=v", "", OpSet, "", false, "", false},
		{"Key-x=1", "", OpSet, "", false, "", false},
		{"   ", "", OpSet, "", false, "", false},
	}
	for _, tt := range tests {
		p, n, ok := matchPair(tt.in, 0)
		if ok != tt.matched {
			t.Errorf("%q: matched=%v want %v", tt.in, ok, tt.matched)
			continue
		}
		if !ok {
			continue
		}
		if p.Key != tt.key || p.Op != tt.op || p.Value != tt.val || p.Quoted != tt.quoted || tt.in[n:] != tt.rest {
			t.Errorf("%q: got key=%q op=%v val=%q quoted=%v rest=%q", tt.in, p.Key, p.Op, p.Value, p.Quoted, tt.in[n:])
		}
	}
}

func TestStripComment(t *testing.T) {
	tests := map[string]string{
		"a=b # c":     "a=b ",
		"a=b\\#c":     "a=b\\#c",
		"a=b\\\\#c":   "a=b\\\\",
		"a=b\\\\\\#c": "a=b\\\\\\#c",
		"#all":        "",
		"no comment":  "no comment",
		"x\\ y#z":     "x\\ y",
	}
	for in, want := range tests {
		if got := stripComment(in); got != want {
			t.Errorf("stripComment(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestContinuation(t *testing.T) {
	tests := []struct {
		in   string
		out  string
		cont bool
	}{
		{"a=b \\", "a=b ", true},
		{"a=b \\   ", "a=b ", true},
		{"a=b \\\\", "a=b \\\\", false},
		{"a=b \\\\\\", "a=b \\\\", true},
		{"a=b", "a=b", false},
		{"", "", false},
		{"\\ \\", "\\ ", true},
	}
	for _, tt := range tests {
		out, cont := continuation(tt.in)
		if out != tt.out || cont != tt.cont {
			t.Errorf("continuation(%q) = %q,%v want %q,%v", tt.in, out, cont, tt.out, tt.cont)
		}
	}
}

func TestStripEscapes(t *testing.T) {
	tests := map[string]string{
		`a\#b`: "a#b", `a\\b`: `a\b`, `a\"b`: `a"b`, `end\`: "end", `plain`: "plain",
	}
	for in, want := range tests {
		if got := stripEscapes(in); got != want {
			t.Errorf("stripEscapes(%q) = %q want %q", in, got, want)
		}
	}
}

func collect(t *testing.T, text string) []Line {
	t.Helper()
	var out []Line
	logicalLines("f", []byte(text), func(l Line) { out = append(out, l) })
	return out
}

func TestLogicalLines(t *testing.T) {
	text := "# header\n" +
		"A=1\n" +
		"\n" +
		"NodeName=n1 \\\n" +
		"  CPUs=2 \\  # comment after continuation\n" +
		"  Sockets=1\n" +
		"B=x\\#y # real comment\n" +
		"C=\"quoted value\"\r\n" +
		"D=a\\\\\n"
	ls := collect(t, text)
	var got []string
	for _, l := range ls {
		var ps []string
		for _, p := range l.Pairs {
			ps = append(ps, p.Key+"="+p.Value)
		}
		got = append(got, l.Pos.String()+" "+strings.Join(ps, "|"))
	}
	want := []string{
		"f:2 A=1",
		"f:4 NodeName=n1|CPUs=2|Sockets=1",
		"f:7 B=x#y",
		"f:8 C=quoted value",
		`f:9 D=a\`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestIncludes(t *testing.T) {
	fsys := MapFS{
		"/etc/slurm/slurm.conf":       "ClusterName=Alpha\nInclude nodes.conf\nINCLUDE /abs/parts.conf\ninclude sub/%c.conf\ninclude glob.d/*.conf\n",
		"/etc/slurm/nodes.conf":       "N=1\ninclude deeper/more.conf\n",
		"/etc/slurm/deeper/more.conf": "M=1\n", // relative to nodes.conf's dir
		"/abs/parts.conf":             "P=1\n",
		"/etc/slurm/sub/alpha.conf":   "S=1\n",
		"/etc/slurm/glob.d/b.conf":    "G2=1\n",
		"/etc/slurm/glob.d/a.conf":    "G1=1\n",
	}
	lines, files, err := ReadLines(fsys, "/etc/slurm/slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, l := range lines {
		keys = append(keys, l.Pairs[0].Key+"@"+l.Pos.String())
	}
	want := []string{"ClusterName@/etc/slurm/slurm.conf:1", "N@/etc/slurm/nodes.conf:1",
		"M@/etc/slurm/deeper/more.conf:1", "P@/abs/parts.conf:1", "S@/etc/slurm/sub/alpha.conf:1",
		"G1@/etc/slurm/glob.d/a.conf:1", "G2@/etc/slurm/glob.d/b.conf:1"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("got %v\nwant %v", keys, want)
	}
	if len(files) != 7 {
		t.Errorf("files = %v", files)
	}
}

func TestIncludeErrors(t *testing.T) {
	tests := []struct {
		name string
		fsys MapFS
		want string
	}{
		{"cycle", MapFS{"/a.conf": "include b.conf\n", "/b.conf": "include a.conf\n"}, "include cycle: /a.conf -> /b.conf -> /a.conf"},
		{"self", MapFS{"/a.conf": "include /a.conf\n"}, "include cycle"},
		{"missing", MapFS{"/a.conf": "X=1\ninclude nope.conf\n"}, "\"Include\" failed in file /a.conf line 2: cannot stat file /nope.conf: No such file or directory"},
		{"cluster unknown", MapFS{"/a.conf": "include %c.conf\n"}, "Did not get ClusterName for include path"},
		{"trailing junk", MapFS{"/a.conf": "include b.conf junk\n", "/b.conf": ""}, "Parse error in file /a.conf line 1: \" junk\""},
		{"no glob match", MapFS{"/a.conf": "include d/*.conf\n"}, "no file matches /d/*.conf"},
	}
	for _, tt := range tests {
		_, _, err := ReadLines(tt.fsys, "/a.conf")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error does not match ErrInvalid", tt.name)
		}
	}
}

func TestIncludeNotAtLineStart(t *testing.T) {
	// Slurm only recognises "include" at the very start of the line, and
	// "includeX=1" is a key.
	ls := collect(t, " include x\nincludefoo=1\n")
	if len(ls) != 2 || len(ls[0].Pairs) != 0 || ls[1].Pairs[0].Key != "includefoo" {
		t.Errorf("unexpected %+v", ls)
	}
}
