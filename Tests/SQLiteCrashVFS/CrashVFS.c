// The power-cut VFS: see include/CrashVFS.h for what it simulates and how to use it.
//
// Model. A write that returned is in the page cache, not on the disk; an xSync (fsync) of a file makes every write
// to that file durable, whichever connection made it. So for each watched path (not each open handle: readers,
// the writer and another program's connection share the file) the VFS keeps the list of writes and truncations
// since the path's last successful xSync, each with the bytes it replaced and the size the file had before it.
// Undoing that list newest first gives back the file as the disk holds it. All bookkeeping and the real operation
// happen under one mutex, so the cut never falls between recording a write and making it.

#include "CrashVFS.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CRASH_VFS_NAME "repairsync-crash"
#define SECTOR_SIZE 512

// One write or truncation not yet synced.
typedef struct PendingOp {
    int is_truncate;
    sqlite3_int64 offset;      // where the write starts, or the size truncated to
    int amount;                // bytes written, or bytes cut off
    sqlite3_int64 size_before; // the file's size before the operation
    unsigned char *before;     // the bytes replaced (a write), or cut off (a truncation)
    unsigned char *after;      // the bytes written (a write only)
    struct PendingOp *next;
} PendingOp;

// A watched path and its operations since its last sync.
typedef struct WatchedPath {
    char *path;
    PendingOp *first;
    PendingOp *last;
    int64_t pending;
    struct WatchedPath *next;
} WatchedPath;

typedef struct CrashFile {
    sqlite3_file base;
    WatchedPath *watched; // NULL when the file is not watched
    sqlite3_file *real;   // the wrapped unix file, in the memory right after this struct
} CrashFile;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *real_vfs;
static char *watched_prefix;
static size_t watched_prefix_length;
static WatchedPath *paths;
static int64_t events;
static int64_t armed_event;
static int armed_mode;
static uint64_t random_state;
static int armed_exit_code = 86;

// MARK: Random choices (SplitMix64, as the rest of the project)

static uint64_t next_random(void) {
    random_state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = random_state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// MARK: The cut

static void write_all(int fd, const unsigned char *bytes, int amount, sqlite3_int64 offset) {
    while (amount > 0) {
        ssize_t written = pwrite(fd, bytes, (size_t)amount, (off_t)offset);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;
        bytes += written;
        amount -= (int)written;
        offset += written;
    }
}

static void undo(int fd, PendingOp *op) {
    if (op->is_truncate) {
        if (ftruncate(fd, (off_t)op->size_before) != 0) return;
        write_all(fd, op->before, op->amount, op->offset);
    } else {
        write_all(fd, op->before, op->amount, op->offset);
        if (op->size_before < op->offset + op->amount) {
            if (ftruncate(fd, (off_t)op->size_before) != 0) return;
        }
    }
}

static void redo(int fd, PendingOp *op, int amount) {
    if (op->is_truncate) {
        if (ftruncate(fd, (off_t)op->offset) != 0) return;
    } else {
        write_all(fd, op->after, amount, op->offset);
    }
}

// The disk after the power went: each watched file back at its last sync, plus what the mode lets survive.
static void cut_power_locked(void) {
    int64_t unsynced = 0;
    for (WatchedPath *path = paths; path; path = path->next) unsynced += path->pending;
    dprintf(2, "power cut at event %lld (%s)\nunsynced %lld\n", (long long)events,
            armed_mode == CRASH_VFS_SUBSET ? "subset" : armed_mode == CRASH_VFS_TEAR ? "tear" : "drop",
            (long long)unsynced);
    for (WatchedPath *path = paths; path; path = path->next) {
        if (!path->first) continue;
        int fd = open(path->path, O_RDWR | O_CLOEXEC);
        if (fd < 0) continue;
        int64_t count = path->pending;
        PendingOp **ops = malloc(sizeof(PendingOp *) * (size_t)count);
        int64_t index = 0;
        for (PendingOp *op = path->first; op; op = op->next) ops[index++] = op;
        for (int64_t i = count - 1; i >= 0; i--) undo(fd, ops[i]);
        switch (armed_mode) {
        case CRASH_VFS_SUBSET:
            for (int64_t i = 0; i < count; i++) {
                if (next_random() & 1) redo(fd, ops[i], ops[i]->amount);
            }
            break;
        case CRASH_VFS_TEAR:
            for (int64_t i = 0; i + 1 < count; i++) redo(fd, ops[i], ops[i]->amount);
            if (!ops[count - 1]->is_truncate) {
                PendingOp *torn = ops[count - 1];
                // The last sector this write touched keeps a random prefix of its new bytes (possibly none).
                int last_sector_start = (int)(((torn->offset + torn->amount - 1) / SECTOR_SIZE) * SECTOR_SIZE - torn->offset);
                if (last_sector_start < 0) last_sector_start = 0;
                int in_last_sector = torn->amount - last_sector_start;
                int kept = last_sector_start + (int)(next_random() % (uint64_t)in_last_sector);
                redo(fd, torn, kept);
            }
            break;
        default:
            break;
        }
        free(ops);
        close(fd);
    }
    _exit(armed_exit_code);
}

// Counts an event on a watched file; cuts the power instead of the armed one. Called with the lock held.
static void count_event_locked(void) {
    events++;
    if (armed_event > 0 && events == armed_event) cut_power_locked();
}

// MARK: Bookkeeping

static WatchedPath *watched_path_locked(const char *name) {
    for (WatchedPath *path = paths; path; path = path->next) {
        if (strcmp(path->path, name) == 0) return path;
    }
    WatchedPath *path = calloc(1, sizeof(WatchedPath));
    path->path = strdup(name);
    path->next = paths;
    paths = path;
    return path;
}

static void append_locked(WatchedPath *path, PendingOp *op) {
    if (path->last) {
        path->last->next = op;
    } else {
        path->first = op;
    }
    path->last = op;
    path->pending++;
}

static void forget_locked(WatchedPath *path) {
    PendingOp *op = path->first;
    while (op) {
        PendingOp *next = op->next;
        free(op->before);
        free(op->after);
        free(op);
        op = next;
    }
    path->first = path->last = NULL;
    path->pending = 0;
}

// MARK: File methods

static int crash_close(sqlite3_file *file) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xClose(p->real);
}

static int crash_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xRead(p->real, buffer, amount, offset);
}

static int crash_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    CrashFile *p = (CrashFile *)file;
    if (!p->watched) return p->real->pMethods->xWrite(p->real, buffer, amount, offset);
    pthread_mutex_lock(&lock);
    count_event_locked();
    PendingOp *op = calloc(1, sizeof(PendingOp));
    op->offset = offset;
    op->amount = amount;
    p->real->pMethods->xFileSize(p->real, &op->size_before);
    op->before = calloc(1, (size_t)amount);
    // A short read (past the end) leaves zeros, which is what the undo writes before truncating anyway.
    p->real->pMethods->xRead(p->real, op->before, amount, offset);
    op->after = malloc((size_t)amount);
    memcpy(op->after, buffer, (size_t)amount);
    int rc = p->real->pMethods->xWrite(p->real, buffer, amount, offset);
    append_locked(p->watched, op);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int crash_truncate(sqlite3_file *file, sqlite3_int64 size) {
    CrashFile *p = (CrashFile *)file;
    if (!p->watched) return p->real->pMethods->xTruncate(p->real, size);
    pthread_mutex_lock(&lock);
    count_event_locked();
    sqlite3_int64 before = 0;
    p->real->pMethods->xFileSize(p->real, &before);
    if (before > size) {
        PendingOp *op = calloc(1, sizeof(PendingOp));
        op->is_truncate = 1;
        op->offset = size;
        op->size_before = before;
        op->amount = (int)(before - size);
        op->before = calloc(1, (size_t)op->amount);
        p->real->pMethods->xRead(p->real, op->before, op->amount, size);
        append_locked(p->watched, op);
    }
    int rc = p->real->pMethods->xTruncate(p->real, size);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int crash_sync(sqlite3_file *file, int flags) {
    CrashFile *p = (CrashFile *)file;
    if (!p->watched) return p->real->pMethods->xSync(p->real, flags);
    pthread_mutex_lock(&lock);
    count_event_locked();
    int rc = p->real->pMethods->xSync(p->real, flags);
    if (rc == SQLITE_OK) forget_locked(p->watched);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int crash_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xFileSize(p->real, size);
}

static int crash_lock(sqlite3_file *file, int level) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xLock(p->real, level);
}

static int crash_unlock(sqlite3_file *file, int level) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xUnlock(p->real, level);
}

static int crash_check_reserved_lock(sqlite3_file *file, int *out) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int crash_file_control(sqlite3_file *file, int op, void *arg) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int crash_sector_size(sqlite3_file *file) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xSectorSize(p->real);
}

static int crash_device_characteristics(sqlite3_file *file) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int crash_shm_map(sqlite3_file *file, int page, int size, int extend, void volatile **out) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xShmMap(p->real, page, size, extend, out);
}

static int crash_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static void crash_shm_barrier(sqlite3_file *file) {
    CrashFile *p = (CrashFile *)file;
    p->real->pMethods->xShmBarrier(p->real);
}

static int crash_shm_unmap(sqlite3_file *file, int delete_flag) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xShmUnmap(p->real, delete_flag);
}

static int crash_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xFetch(p->real, offset, amount, out);
}

static int crash_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xUnfetch(p->real, offset, pointer);
}

static const sqlite3_io_methods crash_io_methods = {
    3,
    crash_close,
    crash_read,
    crash_write,
    crash_truncate,
    crash_sync,
    crash_file_size,
    crash_lock,
    crash_unlock,
    crash_check_reserved_lock,
    crash_file_control,
    crash_sector_size,
    crash_device_characteristics,
    crash_shm_map,
    crash_shm_lock,
    crash_shm_barrier,
    crash_shm_unmap,
    crash_fetch,
    crash_unfetch,
};

// MARK: VFS methods (everything but xOpen and xDelete goes straight to the unix VFS)

static int crash_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    CrashFile *p = (CrashFile *)file;
    memset(p, 0, sizeof(CrashFile));
    p->real = (sqlite3_file *)&p[1];
    int rc = real_vfs->xOpen(real_vfs, name, p->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        p->base.pMethods = NULL;
        return rc;
    }
    if (name && watched_prefix && strncmp(name, watched_prefix, watched_prefix_length) == 0) {
        pthread_mutex_lock(&lock);
        p->watched = watched_path_locked(name);
        pthread_mutex_unlock(&lock);
    }
    p->base.pMethods = &crash_io_methods;
    return SQLITE_OK;
}

static int crash_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    int rc = real_vfs->xDelete(real_vfs, name, sync_dir);
    if (rc == SQLITE_OK && name && watched_prefix && strncmp(name, watched_prefix, watched_prefix_length) == 0) {
        pthread_mutex_lock(&lock);
        // A deleted file has nothing left to lose (the deletion itself is taken as durable).
        forget_locked(watched_path_locked(name));
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

static int crash_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int crash_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return real_vfs->xFullPathname(real_vfs, name, size, out);
}

static void *crash_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return real_vfs->xDlOpen(real_vfs, name);
}

static void crash_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    real_vfs->xDlError(real_vfs, size, out);
}

static void (*crash_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return real_vfs->xDlSym(real_vfs, handle, symbol);
}

static void crash_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    real_vfs->xDlClose(real_vfs, handle);
}

static int crash_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return real_vfs->xRandomness(real_vfs, size, out);
}

static int crash_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return real_vfs->xSleep(real_vfs, microseconds);
}

static int crash_current_time(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return real_vfs->xCurrentTime(real_vfs, out);
}

static int crash_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return real_vfs->xGetLastError(real_vfs, size, out);
}

static int crash_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

static int crash_set_system_call(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr call) {
    (void)vfs;
    return real_vfs->xSetSystemCall(real_vfs, name, call);
}

static sqlite3_syscall_ptr crash_get_system_call(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return real_vfs->xGetSystemCall(real_vfs, name);
}

static const char *crash_next_system_call(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return real_vfs->xNextSystemCall(real_vfs, name);
}

static sqlite3_vfs crash_vfs = {
    3,
    0, // szOsFile, set at install
    0, // mxPathname, set at install
    NULL,
    CRASH_VFS_NAME,
    NULL,
    crash_open,
    crash_delete,
    crash_access,
    crash_full_pathname,
    crash_dl_open,
    crash_dl_error,
    crash_dl_sym,
    crash_dl_close,
    crash_randomness,
    crash_sleep,
    crash_current_time,
    crash_get_last_error,
    crash_current_time_int64,
    crash_set_system_call,
    crash_get_system_call,
    crash_next_system_call,
};

// MARK: Public functions

int crash_vfs_install(const char *prefix) {
    pthread_mutex_lock(&lock);
    if (real_vfs) {
        pthread_mutex_unlock(&lock);
        return SQLITE_MISUSE;
    }
    real_vfs = sqlite3_vfs_find(NULL);
    if (!real_vfs) {
        pthread_mutex_unlock(&lock);
        return SQLITE_ERROR;
    }
    watched_prefix = strdup(prefix);
    watched_prefix_length = strlen(prefix);
    crash_vfs.szOsFile = (int)sizeof(CrashFile) + real_vfs->szOsFile;
    crash_vfs.mxPathname = real_vfs->mxPathname;
    pthread_mutex_unlock(&lock);
    return sqlite3_vfs_register(&crash_vfs, 1);
}

void crash_vfs_arm(int64_t event, int mode, uint64_t seed, int exit_code) {
    pthread_mutex_lock(&lock);
    armed_event = event;
    armed_mode = mode;
    random_state = seed;
    armed_exit_code = exit_code;
    pthread_mutex_unlock(&lock);
}

int64_t crash_vfs_events(void) {
    pthread_mutex_lock(&lock);
    int64_t count = events;
    pthread_mutex_unlock(&lock);
    return count;
}

int64_t crash_vfs_unsynced_writes(void) {
    pthread_mutex_lock(&lock);
    int64_t count = 0;
    for (WatchedPath *path = paths; path; path = path->next) count += path->pending;
    pthread_mutex_unlock(&lock);
    return count;
}

void crash_vfs_cut_now(void) {
    pthread_mutex_lock(&lock);
    cut_power_locked();
}
