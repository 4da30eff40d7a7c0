// Package munge is a pure-Go client of munged, the MUNGE authentication
// daemon, speaking its unix-socket protocol directly (no cgo, no libmunge).
// It covers what Slurm's auth/munge plugin uses: encode a payload into a
// "MUNGE:...:" credential with munged's default cipher, MAC and compression,
// an optional TTL and uid/gid decode restriction, and no realm; and decode a
// credential back into its payload, the encoder's uid and gid, encode time,
// TTL and origin address.
//
// munged on Linux identifies clients with SO_PEERCRED, so the uid and gid it
// stamps into a credential (and checks a restriction against) are those of
// the process that opened the connection; nothing is sent to prove them.
//
// munged's verdicts come back as *Error values carrying the MUNGE status
// (Code); match them with errors.Is against the sentinels (ErrCredExpired,
// ErrCredReplayed, ErrCredUnauthorized, ErrBadCred, ...). For an expired,
// rewound or replayed credential munged still returns the decoded fields,
// and Decode passes them back beside the error (see Decoded).
//
// Behaviour of munged 0.5.15 (Debian 12) worth knowing, each checked by the
// interop tests against the real daemon:
//   - root gets no override: a credential restricted to another uid is
//     EMUNGE_CRED_UNAUTHORIZED for root too, with no data returned;
//   - the time check runs before the replay check, so an expired credential
//     reports EMUNGE_CRED_EXPIRED even if it was decoded before;
//   - expiry is checked in whole seconds: with TTL t a credential is still
//     valid at encode time + t and expired from encode time + t + 1;
//   - a retried decode (retry counter > 0 in the request header) is allowed
//     to replay a credential, so that a lost reply does not burn it.
package munge
