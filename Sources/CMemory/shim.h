#ifndef REPAIRSYNCD_CMEMORY_SHIM_H
#define REPAIRSYNCD_CMEMORY_SHIM_H
// malloc_trim (glibc's <malloc.h>), which Glibc's Swift overlay does not export, and madvise's advice values.
#include <malloc.h>
#include <sys/mman.h>
#endif
