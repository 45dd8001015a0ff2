#ifndef REPAIRSYNC_CRASH_VFS_H
#define REPAIRSYNC_CRASH_VFS_H

// A test-only SQLite VFS that simulates a power cut, in the manner of SQLite's own crash test VFS (src/test6.c).
//
// It wraps the default (unix) VFS and becomes the process's default, so every connection the process opens —
// GRDB's included, which always opens with the default VFS — goes through it. Files whose path begins with the
// watched prefix (a store and its -wal and -journal files) are watched: every write and truncation since the file's
// last xSync is recorded (with the bytes it replaced), because a power cut may lose any of them. At the armed
// event, or when crash_vfs_cut_now() is called, the power is cut:
//
//   CRASH_VFS_DROP    every write since each file's last xSync is undone (the disk kept nothing of them);
//   CRASH_VFS_SUBSET  every such write is undone, then a random subset of them is written again (the disk kept
//                     some, in any order);
//   CRASH_VFS_TEAR    every such write is kept but the last one of each file, whose last sector is torn: it keeps a
//                     random prefix of that sector's new bytes, the rest is old.
//
// Then the process ends at once with _exit(exit_code): its locks and shared memory go, as they do when the power
// goes; the page cache (which a real power cut would lose) holds only what the simulation decided survived. The
// file bytes that survive are written with plain pwrite()/ftruncate() before the exit, so the next process that
// opens the store — through the normal code path, with the default unix VFS — sees the disk as it would be after
// the cut.
//
// An event is one xWrite, xTruncate or xSync on a watched file; the cut happens instead of the armed event.
//
//     crash_vfs_install("/tmp/t/replica.sqlite");
//     crash_vfs_arm(1234, CRASH_VFS_TEAR, 7, 86);   // the 1234th event never happens
//     ... open the store and work ...

#include <stdint.h>

enum {
    CRASH_VFS_DROP = 0,
    CRASH_VFS_SUBSET = 1,
    CRASH_VFS_TEAR = 2,
};

/// Registers the VFS ("repairsync-crash") as the default, watching files whose path begins with `prefix`.
/// Returns an SQLite result code (SQLITE_OK is 0). Call once, before any connection is opened.
int crash_vfs_install(const char *prefix);

/// Cuts the power at the `event`-th event (1-based) from the start of the process, in `mode`, with random choices
/// from `seed`, ending the process with `exit_code`. An event of 0 disarms.
void crash_vfs_arm(int64_t event, int mode, uint64_t seed, int exit_code);

/// Events so far (writes, truncations and syncs of watched files).
int64_t crash_vfs_events(void);

/// Writes and truncations not yet made durable by an xSync, over every watched file.
int64_t crash_vfs_unsynced_writes(void);

/// Cuts the power now (with the armed mode, seed and exit code); does not return.
void crash_vfs_cut_now(void);

#endif
