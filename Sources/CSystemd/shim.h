#ifndef REPAIRSYNCD_CSYSTEMD_SHIM_H
#define REPAIRSYNCD_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#endif
