package dataout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// pyEmit replays events through libyaml's own emitter (PyYAML's CDumper),
// with the events serializer/yaml sends: explicit tags everywhere,
// %YAML 1.1, explicit document end.
const pyEmit = `
import sys, json, yaml
T = 'tag:yaml.org,2002:'
def start():
    return [yaml.StreamStartEvent(), yaml.DocumentStartEvent(explicit=True, version=(1, 1))]
def end(ev):
    ev += [yaml.DocumentEndEvent(explicit=True), yaml.StreamEndEvent()]
    sys.stdout.write(yaml.emit(ev, Dumper=yaml.CDumper) + '\0')
ev = start()
for line in sys.stdin:
    k, _, rest = line.rstrip('\n').partition(' ')
    if k == 'DOC':
        end(ev)
        ev = start()
    elif k == 'MS': ev.append(yaml.MappingStartEvent(None, T + 'map', False))
    elif k == 'ME': ev.append(yaml.MappingEndEvent())
    elif k == 'SS': ev.append(yaml.SequenceStartEvent(None, T + 'seq', False))
    elif k == 'SE': ev.append(yaml.SequenceEndEvent())
    else:
        tag, _, val = rest.partition(' ')
        ev.append(yaml.ScalarEvent(None, T + tag, (False, False), json.loads(val)))
`

func libyamlAvailable(t *testing.T) {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import yaml; print(yaml.__with_libyaml__)").Output()
	if err != nil || strings.TrimSpace(string(out)) != "True" {
		t.Skip("python3 with PyYAML built on libyaml is not installed")
	}
}

// events writes v as the event lines pyEmit reads.
func events(b *bytes.Buffer, v *Value) {
	sc := func(tag, s string) {
		j, _ := json.Marshal(s)
		fmt.Fprintf(b, "SC %s %s\n", tag, j)
	}
	switch v.kind {
	case KindNull:
		sc("null", "null")
	case KindBool:
		sc("bool", fmt.Sprint(v.b))
	case KindInt:
		sc("int", fmt.Sprint(v.i))
	case KindFloat:
		sc("float", fmt.Sprintf("%f", v.f))
	case KindString:
		if v.sNull {
			sc("null", "null")
		} else {
			sc("str", v.s)
		}
	case KindList:
		b.WriteString("SS\n")
		for _, it := range v.items {
			events(b, it)
		}
		b.WriteString("SE\n")
	case KindDict:
		b.WriteString("MS\n")
		for i, k := range v.keys {
			sc("str", k)
			events(b, v.items[i])
		}
		b.WriteString("ME\n")
	}
}

var pieces = []string{
	"a", "b c", " ", "  ", "#", " #x", ":", ": ", "- ", "-", "?", "'", "\"", "\\", "\n", "\n\n",
	"\t", "é", "ü ", "\x01", "\x7f", ",", "[", "]", "{", "}", "&", "*", "!", "|", ">", "%", "@",
	"`", "---", "...", "null", "true", "0", "1.5", "word", "another-word",
	"/usr/bin/true", "x=y,z", "Linux 6.1 #1 SMP PREEMPT_DYNAMIC", "N/A",
}

func randString(r *rand.Rand) string {
	n := r.IntN(12)
	if r.IntN(4) == 0 {
		n += 30 // long enough to fold at 80 columns
	}
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteString(pieces[r.IntN(len(pieces))])
		if r.IntN(3) == 0 {
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}

func randValue(r *rand.Rand, depth int) *Value {
	k := r.IntN(9)
	if depth > 3 && k >= 7 {
		k = 4
	}
	switch k {
	case 0:
		return Null()
	case 1:
		return Bool(r.IntN(2) == 0)
	case 2:
		return Int(r.Int64N(1<<40) - 1<<39)
	case 3:
		return Float(float64(r.IntN(100000)) / 7)
	case 4, 5:
		if r.IntN(5) == 0 {
			return NullStr()
		}
		if r.IntN(6) == 0 {
			return Str("")
		}
		return Str(randString(r))
	case 6:
		l := NewList()
		for n := r.IntN(4); n > 0; n-- {
			l.Append(randValue(r, depth+1))
		}
		return l
	default:
		d := NewDict()
		for n := r.IntN(5); n > 0; n-- {
			key := fmt.Sprintf("k%d", r.IntN(100))
			if r.IntN(4) == 0 {
				key = randString(r)
				if len(key) > 60 || strings.ContainsAny(key, "\n") {
					key = "long"
				}
			}
			d.Set(key, randValue(r, depth+1))
		}
		return d
	}
}

// TestYAMLMatchesLibyaml compares the emitter with libyaml's on random
// documents full of strings that need quoting, escaping or folding.
func TestYAMLMatchesLibyaml(t *testing.T) {
	libyamlAvailable(t)
	r := rand.New(rand.NewPCG(7, 22))
	var docs []*Value
	var ev bytes.Buffer
	for i := 0; i < 2000; i++ {
		root := NewDict()
		for n := r.IntN(6) + 1; n > 0; n-- {
			root.Set(fmt.Sprintf("key%d", n), randValue(r, 0))
		}
		docs = append(docs, root)
		events(&ev, root)
		ev.WriteString("DOC\n")
	}
	cmd := exec.Command("python3", "-c", pyEmit)
	cmd.Stdin = &ev
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	want := bytes.Split(out, []byte{0})
	if len(want) != len(docs)+1 {
		t.Fatalf("python emitted %d documents, want %d", len(want)-1, len(docs))
	}
	folded := 0
	for i, root := range docs {
		if got := YAML(root); !bytes.Equal(got, want[i]) {
			t.Fatalf("document %d differs\n--- libyaml\n%s--- ours\n%s", i, want[i], got)
		}
		for _, l := range strings.Split(string(want[i]), "\n") {
			if len(l) > 80 {
				folded++
				break
			}
		}
	}
	t.Logf("%d documents equal, %d with lines past 80 columns", len(docs), folded)
}
