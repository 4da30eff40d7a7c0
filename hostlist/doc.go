// Package hostlist implements Slurm's hostlist expressions: parsing
// ("rack[1-2]-n[01-04],login1"), expansion, sorting, de-duplication and
// compression back into Slurm's ranged form.
//
// The behaviour follows Slurm 22.05 (src/common/hostlist.c) for clusters
// with one dimension, including its quirks, because scripts and
// configuration files depend on them:
//
//   - hosts are stored as ranges (prefix, lo, hi, zero-pad width), so
//     "n[1-65536]" costs one range, not 65536 strings;
//   - a bracket group may hold at most MaxRange hosts, a prefix group at
//     most MaxPrefixCount, and one bracket at most MaxRanges entries;
//   - with several bracket groups the last one varies fastest, then the
//     others from left to right, so the group just before the last varies
//     slowest: "r[1-2]c[1-2]n[1-2]" is r1c1n1, r1c1n2, r2c1n1, r2c1n2,
//     r1c2n1, ...;
//   - Sort does not remove duplicates ("n[1-3],n2" sorts to "n[1-2,2-3]");
//     Uniq does;
//   - Sort and Uniq never lose a host, even where Slurm's do (its
//     hostlist_coalesce reads freed memory on some mixed zero-padded
//     input); SortAsScontrol reproduces real scontrol's output there too,
//     for "scontrol show hostlistsorted" only;
//   - numbers are parsed as C's strtoul does (leading blanks and a sign are
//     accepted, overflow saturates), and widths come from the text length.
//
// The package is pure: it does no I/O and keeps no global state.
package hostlist
