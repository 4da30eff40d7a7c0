package dump

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/goslurm/goslurm/protocol/pcap"
)

// Text format. Every record starts with one summary line:
//
//	TIME cCONN SRC -> DST VERSION MSG_TYPE(NUM) body=LEN AUTH [uid= gid= cred= hash=] [flags= fwd= ret= orig=]
//	TIME cCONN SRC -> DST VERSION IO_INIT nodeid= stdout_objs= stderr_objs= io_key=LEN
//	TIME cCONN SRC -> DST IO stdout gtask= ltask= len= "data"
//	TIME cCONN SRC -> DST ERROR what went wrong
//
// followed, unless --brief, by the decoded body or a hex dump indented by
// four spaces. Every problem is a line of its own whose fourth field is
// "ERROR", so `grep ' ERROR '` finds them all.

const bodyIndent = "    "

// writer buffers output and remembers the first write error.
type writer struct {
	w   *bufio.Writer
	enc *json.Encoder
}

func newWriter(w io.Writer) *writer {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &writer{w: bw, enc: enc}
}

func (w *writer) json(rec *Record) error { return w.enc.Encode(rec) }

func (d *dumper) flush() error {
	if d.werr != nil {
		return d.werr
	}
	return d.out.w.Flush()
}

// fileError reports a broken pcap file.
func (d *dumper) fileError(err error) {
	d.stats.Errors++
	if d.opts.JSON {
		d.werr = d.out.json(&Record{Kind: "file", Error: err.Error()})
		return
	}
	_, d.werr = fmt.Fprintf(d.out.w, "ERROR reading capture: %v\n", err)
}

func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05.000000")
}

func (d *dumper) text(u *pcap.Unit, rec *Record, body bodyResult) error {
	w := d.out.w
	prefix := fmt.Sprintf("%s c%d %s -> %s", formatTime(u.Time), rec.Conn, rec.Src, rec.Dst)
	var b strings.Builder
	b.WriteString(prefix)
	switch u.Kind {
	case pcap.UnitRPC:
		h := rec.Header
		fmt.Fprintf(&b, " %s %s(%d) body=%d %s", h.Version, h.MsgType, h.MsgTypeNum, h.BodyLength, rec.Auth.Plugin)
		a := rec.Auth
		if a.UID != nil {
			fmt.Fprintf(&b, " uid=%d gid=%d", *a.UID, *a.GID)
		}
		if a.Hostname != "" {
			fmt.Fprintf(&b, " host=%s", strconv.Quote(a.Hostname))
		}
		if a.Username != "" {
			fmt.Fprintf(&b, " user=%s", strconv.Quote(a.Username))
		}
		if a.Cred != "" {
			fmt.Fprintf(&b, " cred=%s", a.Cred)
		}
		if a.Hash != "" {
			fmt.Fprintf(&b, " hash=%s", a.Hash)
		}
		if h.Flags != 0 {
			fmt.Fprintf(&b, " flags=0x%04x", h.Flags)
		}
		if f := h.Forward; f != nil {
			fmt.Fprintf(&b, " fwd=%d:%s timeout=%dms width=%d", f.Count, f.Nodes, f.TimeoutMS, f.TreeWidth)
		}
		if len(h.RetList) > 0 {
			fmt.Fprintf(&b, " ret=%d", len(h.RetList))
		}
		if h.OrigAddr != "" {
			fmt.Fprintf(&b, " orig=%s", h.OrigAddr)
		}
		b.WriteByte('\n')
		if a.CredError != "" {
			fmt.Fprintf(&b, "%scredential %s: %s\n", bodyIndent, a.Cred, a.CredError)
		}
		if body.err != "" {
			fmt.Fprintf(&b, "%s ERROR %s\n", prefix, body.err)
		}
		if d.opts.Brief {
			break
		}
		for i, it := range h.RetList {
			fmt.Fprintf(&b, "%sret[%d] node=%s err=%s %s %s\n", bodyIndent, i, strconv.Quote(it.NodeName), rcName(int64(it.Err)), it.MsgType, render(it.Body, bodyIndent))
		}
		if body.decoded && !d.opts.Hex {
			b.WriteString(bodyIndent + render(body.value, bodyIndent) + "\n")
		} else {
			hexDump(&b, u.Frame.Body)
		}
	case pcap.UnitIOInit:
		ini := rec.IOInit
		fmt.Fprintf(&b, " %s IO_INIT nodeid=%d stdout_objs=%d stderr_objs=%d io_key=%dB\n",
			ini.Version, ini.NodeID, ini.StdoutObjs, ini.StderrObjs, ini.IOKeyLen)
		if d.opts.Hex && !d.opts.Brief {
			hexDump(&b, u.IOInit.IOKey)
		}
	case pcap.UnitIO:
		io := rec.IO
		fmt.Fprintf(&b, " IO %s gtask=%d ltask=%d len=%d", io.Type, io.GTask, io.LTask, io.Length)
		switch {
		case io.Length == 0:
			b.WriteString(" eof\n")
		case io.Data != nil:
			b.WriteString(" " + strconv.Quote(*io.Data) + "\n")
		default:
			b.WriteByte('\n')
			if !d.opts.Brief {
				hexDump(&b, u.IO.Data)
			}
		}
	default:
		fmt.Fprintf(&b, " ERROR %s\n", rec.Error)
		if !d.opts.Brief && u.Kind != pcap.UnitDropped {
			hexDump(&b, u.Raw[:min(len(u.Raw), maxRawHex)])
		}
	}
	_, err := w.WriteString(b.String())
	return err
}

// hexDump writes b as offset, 16 hex bytes and their printable characters
// per line, indented like a body.
func hexDump(b *strings.Builder, data []byte) {
	if len(data) == 0 {
		b.WriteString(bodyIndent + "(empty body)\n")
		return
	}
	for off := 0; off < len(data); off += 16 {
		line := data[off:min(off+16, len(data))]
		fmt.Fprintf(b, "%s%04x  ", bodyIndent, off)
		for i := range 16 {
			if i == 8 {
				b.WriteByte(' ')
			}
			if i < len(line) {
				fmt.Fprintf(b, "%02x ", line[i])
			} else {
				b.WriteString("   ")
			}
		}
		b.WriteString(" |")
		for _, c := range line {
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				b.WriteByte('.')
			}
		}
		b.WriteString("|\n")
	}
}
