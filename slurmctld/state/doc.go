// Package state is the controller's crash-safe store in StateSaveLocation: a
// write-ahead journal of opaque records plus snapshots written by the caller.
//
// The store does not know what a job or a node is. A Record is a type tag, the
// caller's payload version and opaque bytes; a snapshot is a byte stream the
// caller writes and reads back. Every record gets a sequence number; a snapshot
// says which sequence it covers, and recovery is "newest valid snapshot, then the
// journal records after it, in order".
//
// Durability: Append (or Submit followed by Ticket.Wait) returns only after the
// record's bytes are on disk (fdatasync), so a reply sent after it survives a
// kill -9 or a power cut of the controller. One writer goroutine batches every
// record submitted while the previous batch was being synced (group commit), so
// concurrent appenders share one fdatasync.
//
// The intended caller pattern, which keeps memory, journal order and snapshots
// consistent without holding the caller's lock across a disk sync:
//
//	mu.Lock()
//	apply change to memory
//	t, err := store.Submit(rec)    // order fixed here, no I/O
//	mu.Unlock()
//	err = t.Wait(ctx)              // durable: now reply
//
//	mu.RLock()
//	seq := store.LastSeq()         // everything <= seq is in memory
//	encode memory
//	mu.RUnlock()
//	store.Snapshot(ctx, seq, write)
//
// # Files in StateSaveLocation
//
//	slurmctld.state.lock          flock(2) held while open (one controller only)
//	journal-<first seq>.wal       journal segments, 20-digit decimal first seq
//	snapshot-<seq>.snap           snapshots, 20-digit decimal covered seq
//	*.tmp                         snapshot being written; removed at open
//
// # Blobs
//
// Records of the types a BlobLoader names are blobs: besides being replayed,
// they stay readable by seq (Blob) for as long as the caller references them,
// so the caller need not keep their bytes in memory (batch scripts and
// environments). A blob is read from its journal segment until a snapshot
// covers it; the snapshot then copies it, if the caller's latest BlobRefs
// (declared for the snapshot's seq) lists it, and it is read from the
// snapshot from then on. A blob is durable with its group commit like any
// record, and readable (from memory) as soon as it is submitted.
//
// # Format version 1 (all integers little-endian; version 2 below)
//
// Segment header, 28 bytes: magic "GOSLJRNL", format version u32, flags u32 (0),
// first seq u64, CRC32C u32 of the preceding 24 bytes. Then records, each framed
// as: data length u32, CRC32C u32, seq u64, type u16, version u16, data. The CRC
// (Castagnoli) covers the length, seq, type, version and data, so a corrupted
// length is detected too. Seqs are consecutive inside a segment, starting at the
// header's first seq; the next segment starts where the previous one ended.
//
// Snapshot, 28-byte header: magic "GOSLSNAP", format version u32, flags u32 (0),
// covered seq u64, CRC32C u32 of the preceding 24 bytes; then the caller's
// payload; then a 20-byte trailer: payload length u64, CRC32C u32 of the payload,
// magic "SNAPEND\x00". A snapshot is written "new file, fsync, rename, fsync dir".
//
// # Format version 2
//
// Segments are as in version 1. A snapshot's content (what the trailer's
// length and CRC cover) is the caller's payload followed by the blob section:
// per blob, in ascending seq order, seq u64, length u32, data; then the
// section's length u64 (everything before it in the section).
//
// # Recovery and damage
//
// A torn tail (a partial frame, or a bad frame with no valid frame after it, in
// the last segment) is what a crash during a write leaves; it held no
// acknowledged record and is truncated with a warning. Damage anywhere else (a bad
// frame followed by valid ones, a bad non-last segment, a sequence gap, a bad
// newest snapshot) is an error, as slurmctld refuses to start on an unreadable
// state file unless started with -i. Options.IgnoreErrors is that -i: the damaged
// part is skipped with an error logged and the rest is recovered.
package state
