package codec

import (
	"encoding/binary"
	"fmt"

	"github.com/goslurm/goslurm/protocol/pack"
)

// AuthPlugin is the u32 id that starts the auth section.
type AuthPlugin uint32

// Auth plugin ids. auth/slurm exists from 23.11 only and is not accepted at
// 22.05.
const (
	AuthNone  AuthPlugin = 100
	AuthMunge AuthPlugin = 101
	AuthJWT   AuthPlugin = 102
	AuthSlurm AuthPlugin = 103
)

func (p AuthPlugin) String() string {
	switch p {
	case AuthNone:
		return "auth/none"
	case AuthMunge:
		return "auth/munge"
	case AuthJWT:
		return "auth/jwt"
	case AuthSlurm:
		return "auth/slurm"
	}
	return fmt.Sprintf("auth(%d)", uint32(p))
}

// AuthBlob is a message's auth section. Raw is authoritative: it holds the
// section exactly as on the wire (u32 plugin id, then the plugin's data) and
// is what gets encoded, so a forwarded message keeps its sender's credential
// byte for byte. The parsed fields are filled by decoding and by the
// constructors, according to PluginID.
type AuthBlob struct {
	PluginID AuthPlugin
	Raw      []byte

	// auth/munge: the MUNGE credential text ("MUNGE:...:").
	MungeCred string
	// auth/none: the sender's claimed identity and host name.
	UID, GID uint32
	Hostname string
	// auth/jwt: the token and the user name; auth/slurm: the token.
	Token, Username string
}

// Data returns the plugin data: Raw without the plugin id.
func (a *AuthBlob) Data() []byte {
	if len(a.Raw) < 4 {
		return nil
	}
	return a.Raw[4:]
}

// MungeAuth returns an auth/munge section carrying cred.
func MungeAuth(cred string) AuthBlob {
	w := pack.NewWriter(make([]byte, 0, 8+len(cred)+1))
	w.U32(uint32(AuthMunge))
	w.Str(cred)
	return AuthBlob{PluginID: AuthMunge, Raw: w.Bytes(), MungeCred: cred}
}

// NoneAuth returns an auth/none section (uid, gid, hostname of the sender).
func NoneAuth(uid, gid uint32, hostname string) AuthBlob {
	w := pack.NewWriter(nil)
	w.U32(uint32(AuthNone))
	w.U32(uid)
	w.U32(gid)
	w.Str(hostname)
	return AuthBlob{PluginID: AuthNone, Raw: w.Bytes(), UID: uid, GID: gid, Hostname: hostname}
}

// JWTAuth returns an auth/jwt section.
func JWTAuth(token, username string) AuthBlob {
	w := pack.NewWriter(nil)
	w.U32(uint32(AuthJWT))
	w.Str(token)
	w.Str(username)
	return AuthBlob{PluginID: AuthJWT, Raw: w.Bytes(), Token: token, Username: username}
}

// readAuth parses the auth section starting at r's position; raw is the
// reader's whole input, from which Raw is sliced (not copied). auth/slurm is
// accepted only when the receiver opted in (acceptSlurm).
func readAuth(r *pack.Reader, raw []byte, acceptSlurm bool) (AuthBlob, error) {
	start := r.Offset()
	var a AuthBlob
	a.PluginID = AuthPlugin(r.U32())
	if r.Err() != nil {
		return AuthBlob{}, r.Err()
	}
	switch a.PluginID {
	case AuthMunge:
		a.MungeCred = r.Str()
	case AuthNone:
		a.UID = r.U32()
		a.GID = r.U32()
		a.Hostname = r.Str()
	case AuthJWT:
		a.Token = r.Str()
		a.Username = r.Str()
	case AuthSlurm:
		if !acceptSlurm {
			return AuthBlob{}, fmt.Errorf("authentication plugin %v not found", a.PluginID)
		}
		a.Token = r.Str()
	default:
		return AuthBlob{}, fmt.Errorf("authentication plugin %v not found", a.PluginID)
	}
	if r.Err() != nil {
		return AuthBlob{}, r.Err()
	}
	a.Raw = raw[start:r.Offset():r.Offset()]
	return a, nil
}

// checkAuth verifies that Raw is a well-formed section of PluginID.
func checkAuth(a *AuthBlob) error {
	if len(a.Raw) < 4 {
		return encErr("auth section of %d bytes", len(a.Raw))
	}
	if AuthPlugin(binary.BigEndian.Uint32(a.Raw)) != a.PluginID {
		return encErr("auth section starts with plugin %d, PluginID is %d",
			binary.BigEndian.Uint32(a.Raw), uint32(a.PluginID))
	}
	return nil
}
