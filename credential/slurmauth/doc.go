// Package slurmauth is goslurm's munge-free authentication, modelled on the
// auth/slurm plugin of Slurm 23.11 and later (plugin id 103 on the wire).
//
// A frame's auth section is
//
//	u32 plugin_id (103)  packstr token
//
// where token is a compact JWT signed HS256 with the cluster's shared key
// (slurm.key). Its claims are iat, exp (iat + ttl, AuthInfo=ttl=, 60 s by
// default), ver (protocol version), ruid (the only uid that may accept it,
// or 0xFFFFFFFF for anyone), context ("auth" when a daemon holding the key
// signs for itself, "sack" when minted for a local user by the token
// service), cluster, uid, gid, host and payload (standard base64 of the
// credential/authhash blob over the message body).
//
// Daemons hold the key and mint and verify tokens in process (Slurm with
// Key set). Commands cannot read the key: they ask the local token service
// ("sack", SackServer, run inside our daemons) over a UNIX socket, which
// takes the caller's identity from SO_PEERCRED and mints a token for exactly
// that uid/gid (Slurm with Sack set).
//
// Real Slurm 22.05 binaries know nothing of plugin 103, so this is for
// goslurm-to-goslurm traffic only (the embedded default of `make demo`);
// talking to real 22.05 daemons still needs credential/auth's auth/munge.
//
// Security notes (ENGINEERING.md checklist items 1, 3, 6):
//   - only HS256 is accepted (no alg none, no RS/ES/PS with a confused key);
//   - the token binds message type and body through the authhash payload,
//     and the frame's body must be exactly body_length bytes;
//   - identity (uid, gid) is taken from the verified token only;
//   - the key file must be a regular file owned by the daemon's user (or
//     root), with no group or other permission bits, and at least
//     MinKeySize bytes;
//   - like Slurm 23.11, a token is not single-use: an identical frame can be
//     replayed until exp unless a ReplayCache is configured.
package slurmauth
