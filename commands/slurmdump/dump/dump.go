// Package dump is slurmdump's engine: it reads a classic pcap file (Dump)
// or captures on an interface (Live, see live.go), reassembles the TCP
// connections, splits them into Slurm messages
// (protocol/pcap), and prints every message in capture order, as text or as
// JSON Lines. Bodies are decoded with protocol/msg's registry where a codec
// exists for the message type and hex-dumped otherwise; with a munged client
// each MUNGE credential is opened and its payload (the K12 hash of the body)
// checked against the body.
//
// Nothing here panics on hostile input: every unit that does not decode
// (a bad frame, a stream cut inside a frame, a body its codec rejects) gives
// one error record and the dump goes on.
package dump

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"time"

	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/pcap"
)

// Options select what is printed and how.
type Options struct {
	// Types keeps only RPCs of these message types (empty: all). IO keeps
	// the srun I/O streams when Types is not empty.
	Types []msgtype.Type
	IO    bool
	// Ports keeps only connections with one end on one of these ports
	// (empty: all).
	Ports []uint16
	// JSON writes one JSON object per message instead of text.
	JSON bool
	// Hex forces hex dumps of bodies (and I/O data) even where a codec
	// exists.
	Hex bool
	// Brief prints only the summary line of each message (text only).
	Brief bool
	// Munge, when set, opens every MUNGE credential.
	Munge *munge.Client
	// MungeTimeout bounds one credential decode; 0 means 5 s.
	MungeTimeout time.Duration
	// Registry decodes bodies; nil means msg.Registry().
	Registry *codec.Registry
}

// Stats count what a dump printed.
type Stats struct {
	Messages int // RPC frames, I/O init messages and I/O records printed
	Errors   int // error records printed (frames, bodies, streams)
	Filtered int // units skipped by the filters
}

// ErrRead wraps a failure to read the pcap file (not a pcap file, or cut
// short in the middle of a record). Whatever was read before is still
// dumped.
var ErrRead = errors.New("cannot read capture")

// Dump reads a pcap stream from r and writes the messages in it to w. The
// error is ErrRead-wrapped when the capture cannot be (fully) read, or a write
// error; per-message problems are records in the output, counted in
// Stats.Errors.
func Dump(ctx context.Context, r io.Reader, w io.Writer, opts Options) (Stats, error) {
	pr, err := pcap.NewReader(r)
	if err != nil {
		return Stats{}, fmt.Errorf("%w: %v", ErrRead, err)
	}
	conns, rerr := readConns(pr)
	d := newDumper(ctx, w, opts)
	for _, u := range d.units(conns) {
		d.emit(u)
		if d.werr != nil {
			return d.stats, d.werr
		}
	}
	if rerr != nil {
		d.fileError(rerr)
		if err := d.flush(); err != nil {
			return d.stats, err
		}
		return d.stats, fmt.Errorf("%w: %v", ErrRead, rerr)
	}
	return d.stats, d.flush()
}

// readConns reads every record and reassembles the TCP connections. On a
// broken record it returns the connections read so far and the error.
func readConns(pr *pcap.Reader) ([]*pcap.Conn, error) {
	as := pcap.NewAssembler()
	for n := 1; ; n++ {
		p, err := pr.Next()
		if err == io.EOF {
			return as.Conns(), nil
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return as.Conns(), fmt.Errorf("pcap file truncated in record %d", n)
		}
		if err != nil {
			return as.Conns(), fmt.Errorf("record %d: %w", n, err)
		}
		if s, ok := pcap.DecodeTCP(p); ok {
			as.Add(s)
		}
	}
}

type dumper struct {
	ctx   context.Context
	opts  Options
	cd    *codec.Codec
	reg   *codec.Registry
	out   *writer
	werr  error
	stats Stats
	creds map[string]credInfo
	types map[msgtype.Type]bool
	ports map[uint16]bool
}

func newDumper(ctx context.Context, w io.Writer, opts Options) *dumper {
	reg := opts.Registry
	if reg == nil {
		reg = msg.Registry()
	}
	d := &dumper{
		ctx:   ctx,
		opts:  opts,
		reg:   reg,
		cd:    &codec.Codec{Bodies: reg},
		out:   newWriter(w),
		creds: map[string]credInfo{},
	}
	if len(opts.Types) > 0 || opts.IO {
		d.types = map[msgtype.Type]bool{}
		for _, t := range opts.Types {
			d.types[t] = true
		}
	}
	if len(opts.Ports) > 0 {
		d.ports = map[uint16]bool{}
		for _, p := range opts.Ports {
			d.ports[p] = true
		}
	}
	return d
}

// units returns every unit of every connection in capture order: by the
// capture time of the unit's first byte; units that share a time keep
// connection order, then stream order.
func (d *dumper) units(conns []*pcap.Conn) []pcap.Unit {
	var all []pcap.Unit
	for _, c := range conns {
		if d.ports != nil && !d.ports[c.Client.Port()] && !d.ports[c.Server.Port()] {
			continue
		}
		all = append(all, pcap.SlurmUnits(c, d.cd)...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Time.Before(all[j].Time) })
	return all
}

// keep applies the message type filter.
func (d *dumper) keep(u *pcap.Unit) bool {
	if d.types == nil {
		return true
	}
	switch u.Kind {
	case pcap.UnitRPC:
		return d.types[u.Frame.Header.MsgType]
	case pcap.UnitIOInit, pcap.UnitIO:
		return d.opts.IO
	}
	// A frame that does not decode: filter by its type when the header
	// alone decodes, otherwise show the error.
	if len(u.Raw) > 4 {
		if h, _, err := d.cd.DecodeHeader(u.Raw[4:]); err == nil {
			return d.types[h.MsgType]
		}
	}
	return true
}

// Record is one output record; its JSON form is what --json prints, one per
// line. Field names are stable: add fields, never rename them.
type Record struct {
	Time   string `json:"time"` // capture time of the first byte, RFC 3339, UTC
	Conn   int    `json:"conn"` // connection number, 1-based, in order of first packet
	Src    string `json:"src"`  // sender address:port
	Dst    string `json:"dst"`  // receiver address:port
	Dir    string `json:"dir"`  // "to_server" (sent by the connecting side) or "to_client"
	Offset int    `json:"offset"`
	Length int    `json:"length"` // bytes on the wire, length prefix included
	// Kind is "rpc", "io_init", "io", "bad" (a frame that does not decode),
	// "truncated" (the stream ends inside a frame), "file" (the pcap file
	// itself is broken) or, in a live capture, "dropped" (a connection given
	// up on: idle too long, too many open, too many bytes waiting).
	Kind   string      `json:"kind"`
	Header *HeaderInfo `json:"header,omitempty"`
	Auth   *AuthInfo   `json:"auth,omitempty"`
	// Body is the decoded body (Go field names) when a codec exists and -x
	// was not given; BodyType names its Go type.
	Body     any    `json:"body,omitempty"`
	BodyType string `json:"body_type,omitempty"`
	// BodyText is the text rendering, used when Body cannot be written as
	// JSON.
	BodyText string `json:"body_text,omitempty"`
	// BodyHex is the packed body when it is not decoded.
	BodyHex *string     `json:"body_hex,omitempty"`
	IOInit  *IOInitInfo `json:"io_init,omitempty"`
	IO      *IOInfo     `json:"io,omitempty"`
	// Error says why (part of) the unit did not decode.
	Error string `json:"error,omitempty"`
	// RawHex is the start of the bytes of a unit that did not decode.
	RawHex string `json:"raw_hex,omitempty"`
}

// HeaderInfo is a decoded message header.
type HeaderInfo struct {
	Version    string       `json:"version"`     // "22.05"
	VersionNum uint16       `json:"version_num"` // 0x2600 = 9728
	Flags      uint16       `json:"flags"`
	MsgType    string       `json:"msg_type"` // Slurm's name, or the number when unknown
	MsgTypeNum uint16       `json:"msg_type_num"`
	BodyLength uint32       `json:"body_length"`
	Forward    *ForwardInfo `json:"forward,omitempty"`
	RetList    []RetInfo    `json:"ret_list,omitempty"`
	OrigAddr   string       `json:"orig_addr,omitempty"`
}

// ForwardInfo is a header's forward section.
type ForwardInfo struct {
	Count     uint16 `json:"count"`
	Nodes     string `json:"nodes"`
	TimeoutMS uint32 `json:"timeout_ms"`
	TreeWidth uint16 `json:"tree_width"`
}

// RetInfo is one ret_list entry.
type RetInfo struct {
	Err      int32  `json:"err"`
	MsgType  string `json:"msg_type"`
	NodeName string `json:"node_name"`
	Body     any    `json:"body,omitempty"`
}

// AuthInfo is the auth section and, with munged, what the credential says.
type AuthInfo struct {
	Plugin string `json:"plugin"` // "auth/munge"
	// UID and GID: from munged for auth/munge, as claimed for auth/none.
	UID      *uint32 `json:"uid,omitempty"`
	GID      *uint32 `json:"gid,omitempty"`
	Hostname string  `json:"hostname,omitempty"` // auth/none
	Username string  `json:"username,omitempty"` // auth/jwt
	// Cred is munged's verdict: "ok", "expired", "rewound", "replayed" (the
	// three still carry uid, gid and payload) or "invalid".
	Cred      string `json:"cred,omitempty"`
	CredError string `json:"cred_error,omitempty"`
	// Hash is the body-hash check of the credential payload: "ok" (K12
	// matches), "ok-none" (hash type none, msg_type matches), "absent" (no
	// payload), "mismatch" or "unsupported".
	Hash string `json:"hash,omitempty"`
}

// IOInitInfo is an srun I/O stream's init message.
type IOInitInfo struct {
	Version    string `json:"version"`
	NodeID     uint32 `json:"node_id"`
	StdoutObjs uint32 `json:"stdout_objs"`
	StderrObjs uint32 `json:"stderr_objs"`
	IOKeyLen   int    `json:"io_key_len"`
	IOKeyHex   string `json:"io_key_hex,omitempty"` // with -x
}

// IOInfo is one io_hdr record of an srun I/O stream.
type IOInfo struct {
	Type   string `json:"type"` // stdin, stdout, stderr, allstdin, conntest, or the number
	GTask  uint16 `json:"gtask"`
	LTask  uint16 `json:"ltask"`
	Length int    `json:"length"` // 0 is end of file for that stream
	// Data is the payload when it is valid UTF-8 and -x was not given;
	// DataHex otherwise.
	Data    *string `json:"data,omitempty"`
	DataHex *string `json:"data_hex,omitempty"`
}

func ioTypeName(t uint16) string {
	switch t {
	case pcap.IOStdin:
		return "stdin"
	case pcap.IOStdout:
		return "stdout"
	case pcap.IOStderr:
		return "stderr"
	case pcap.IOAllStdin:
		return "allstdin"
	case pcap.IOConnectionTest:
		return "conntest"
	}
	return fmt.Sprintf("%d", t)
}

func (d *dumper) emit(u pcap.Unit) {
	if !d.keep(&u) {
		d.stats.Filtered++
		return
	}
	rec := Record{
		Time:   u.Time.UTC().Format(time.RFC3339Nano),
		Conn:   u.Conn.ID,
		Src:    addrString(u.Half.Src),
		Dst:    addrString(u.Half.Dst),
		Dir:    "to_server",
		Offset: u.Offset,
		Length: len(u.Raw),
	}
	if u.Half == u.Conn.ToClient {
		rec.Dir = "to_client"
	}
	var body bodyResult
	switch u.Kind {
	case pcap.UnitRPC:
		rec.Kind = "rpc"
		rec.Header = headerInfo(&u.Frame.Header)
		rec.Auth = d.authInfo(&u.Frame)
		body = d.body(&u.Frame)
		if body.err != "" {
			rec.Error = body.err
		}
		if body.decoded && !d.opts.Hex {
			rec.Body, rec.BodyType = body.value, fmt.Sprintf("%T", body.value)
		} else {
			h := hexString(u.Frame.Body)
			rec.BodyHex = &h
		}
		d.stats.Messages++
	case pcap.UnitIOInit:
		rec.Kind = "io_init"
		ini := u.IOInit
		rec.IOInit = &IOInitInfo{
			Version:    ini.Version.String(),
			NodeID:     ini.NodeID,
			StdoutObjs: ini.StdoutObjs,
			StderrObjs: ini.StderrObjs,
			IOKeyLen:   len(ini.IOKey),
		}
		if d.opts.Hex {
			rec.IOInit.IOKeyHex = hexString(ini.IOKey)
		}
		d.stats.Messages++
	case pcap.UnitIO:
		rec.Kind = "io"
		io := &IOInfo{Type: ioTypeName(u.IO.Type), GTask: u.IO.GTaskID, LTask: u.IO.LTaskID, Length: len(u.IO.Data)}
		if s := string(u.IO.Data); !d.opts.Hex && validUTF8(s) {
			io.Data = &s
		} else {
			h := hexString(u.IO.Data)
			io.DataHex = &h
		}
		rec.IO = io
		d.stats.Messages++
	case pcap.UnitBad:
		rec.Kind = "bad"
		rec.Error = fmt.Sprintf("frame does not decode: %v", u.Err)
		rec.RawHex = hexString(u.Raw[:min(len(u.Raw), maxRawHex)])
	case pcap.UnitTruncated:
		rec.Kind = "truncated"
		what := "the stream ends inside a frame"
		if u.Half.Gap() {
			what = "the capture lost a segment inside a frame"
		}
		rec.Error = fmt.Sprintf("%s: %d bytes left over", what, len(u.Raw))
		rec.RawHex = hexString(u.Raw[:min(len(u.Raw), maxRawHex)])
	case pcap.UnitDropped:
		rec.Kind = "dropped"
		rec.Error = u.Err.Error()
	default:
		rec.Kind = u.Kind.String()
		rec.Error = "unknown unit"
	}
	if rec.Error != "" {
		d.stats.Errors++
	}
	if d.opts.JSON {
		if rec.Body != nil {
			if !jsonable(rec.Body) {
				rec.BodyText = render(rec.Body, "")
				rec.Body = nil
			}
		}
		d.werr = d.out.json(&rec)
		return
	}
	d.werr = d.text(&u, &rec, body)
}

// maxRawHex bounds the hex shown for a unit that does not decode.
const maxRawHex = 64

func addrString(a netip.AddrPort) string {
	if a.Addr().Is4In6() {
		return netip.AddrPortFrom(a.Addr().Unmap(), a.Port()).String()
	}
	return a.String()
}

func headerInfo(h *codec.Header) *HeaderInfo {
	hi := &HeaderInfo{
		Version:    h.Version.String(),
		VersionNum: uint16(h.Version),
		Flags:      uint16(h.Flags),
		MsgType:    h.MsgType.String(),
		MsgTypeNum: uint16(h.MsgType),
		BodyLength: h.BodyLength,
	}
	if h.Forward.Count > 0 {
		hi.Forward = &ForwardInfo{Count: h.Forward.Count, Nodes: h.Forward.Nodes, TimeoutMS: h.Forward.Timeout, TreeWidth: h.Forward.TreeWidth}
	}
	for _, it := range h.RetList {
		hi.RetList = append(hi.RetList, RetInfo{Err: it.Err, MsgType: it.MsgType.String(), NodeName: it.NodeName, Body: it.Body})
	}
	if !h.OrigAddr.IsZero() {
		hi.OrigAddr = h.OrigAddr.String()
	}
	return hi
}

// credInfo is the cached result of opening one credential.
type credInfo struct {
	uid, gid uint32
	ok       bool // uid, gid and payload are valid
	status   string
	err      string
	payload  []byte
}

func (d *dumper) authInfo(f *codec.Frame) *AuthInfo {
	a := &AuthInfo{Plugin: f.Auth.PluginID.String()}
	switch f.Auth.PluginID {
	case codec.AuthNone:
		uid, gid := f.Auth.UID, f.Auth.GID
		a.UID, a.GID, a.Hostname = &uid, &gid, f.Auth.Hostname
	case codec.AuthJWT:
		a.Username = f.Auth.Username
	case codec.AuthMunge:
		if d.opts.Munge == nil {
			break
		}
		ci := d.openCred(f.Auth.MungeCred)
		a.Cred, a.CredError = ci.status, ci.err
		if ci.ok {
			uid, gid := ci.uid, ci.gid
			a.UID, a.GID = &uid, &gid
			a.Hash = hashVerdict(ci.payload, f)
		}
	}
	return a
}

func (d *dumper) openCred(cred string) credInfo {
	if ci, ok := d.creds[cred]; ok {
		return ci
	}
	timeout := d.opts.MungeTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(d.ctx, timeout)
	defer cancel()
	c, err := d.opts.Munge.Decode(ctx, cred)
	var ci credInfo
	switch {
	case err == nil && c != nil:
		ci = credInfo{ok: true, status: "ok"}
	case c != nil && munge.Decoded(err):
		ci = credInfo{ok: true}
		switch munge.CodeOf(err) {
		case munge.CodeCredExpired:
			ci.status = "expired"
		case munge.CodeCredRewound:
			ci.status = "rewound"
		default:
			ci.status = "replayed"
		}
	default:
		ci = credInfo{status: "invalid", err: errString(err)}
	}
	if c != nil {
		ci.uid, ci.gid, ci.payload = c.UID, c.GID, c.Payload
	}
	d.creds[cred] = ci
	return ci
}

func errString(err error) string {
	if err == nil {
		return "munged returned no credential"
	}
	return err.Error()
}

func hashVerdict(payload []byte, f *codec.Frame) string {
	if len(payload) == 0 {
		return "absent"
	}
	t, err := authhash.Verify(payload, uint16(f.Header.MsgType), f.Body, authhash.Policy{})
	switch {
	case err == nil && t == authhash.None:
		return "ok-none"
	case err == nil:
		return "ok"
	case errors.Is(err, authhash.ErrUnsupported):
		return "unsupported"
	}
	return "mismatch"
}

// bodyResult is the outcome of decoding a body.
type bodyResult struct {
	decoded bool
	value   any
	err     string // codec error (the hex dump is shown instead)
}

func (d *dumper) body(f *codec.Frame) (res bodyResult) {
	bc, ok := d.reg.Lookup(f.Header.MsgType)
	if !ok {
		return bodyResult{}
	}
	defer func() {
		if p := recover(); p != nil {
			res = bodyResult{err: fmt.Sprintf("body codec for %v panicked: %v", f.Header.MsgType, p)}
		}
	}()
	r := pack.NewReader(f.Body)
	v, err := bc.Decode(r, f.Header.Version)
	if err == nil {
		err = r.Done()
	}
	if err != nil {
		return bodyResult{err: fmt.Sprintf("body of %v does not decode: %v", f.Header.MsgType, err)}
	}
	return bodyResult{decoded: true, value: v}
}
