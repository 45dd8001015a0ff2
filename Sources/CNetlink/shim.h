#ifndef REPAIRSYNCD_CNETLINK_SHIM_H
#define REPAIRSYNCD_CNETLINK_SHIM_H
// NETLINK_ROUTE, RTMGRP_*, sockaddr_nl and nlmsghdr, which Glibc's Swift overlay does not export.
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

/// The multicast groups the connectivity probe listens to: links, IPv4/IPv6 addresses and routes.
static inline unsigned int repairsyncd_netlink_groups(void) {
    return RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
}
#endif
