/* host_proc: what DLIO records of a host in summary.json and N_output.json
 * (host_processor_name, host_cpuinfo, host_meminfo), read from this host's
 * /proc, small enough to travel in a worker's HELLO
 *.
 *
 * DLIO turns /proc/cpuinfo into a dict of "key: value" lines in which a key
 * seen again takes the later value: of a host with many processors only the
 * last processor's fields are left. So only the last processor's block is
 * kept here; the dict DLIO would build from it is the same. /proc/meminfo is
 * kept whole. Each text is bounded by SB_HOST_PROC_MAX bytes: past it, the
 * text is cut after its last whole line within the bound (a warning is
 * logged), so no half line reaches the parse. Nothing else of the host is
 * read: neither file holds a secret. */
#ifndef SB_HOST_PROC_H
#define SB_HOST_PROC_H

#include <stddef.h>

#define SB_HOST_PROC_MAX (16 * 1024)    /* bytes of each text, its NUL not counted */

typedef struct {
    char  processor[64];    /* uname -m ("x86_64"), as Python's platform.processor() on Linux; "" unknown */
    char *cpuinfo;          /* the last processor's block of /proc/cpuinfo, owned; "" unreadable */
    char *meminfo;          /* /proc/meminfo, owned; "" unreadable */
} sb_host_proc_t;

/* Read this host's processor name, /proc/cpuinfo and /proc/meminfo. A file
 * that cannot be read gives "" (logged at debug: not every system has
 * /proc). Returns 0, or -1 when out of memory. Free with sb_host_proc_fini. */
int sb_host_proc_read (sb_host_proc_t *self);
void sb_host_proc_fini (sb_host_proc_t *self);

/* The last processor's block of cpuinfo text: from the start of its last
 * line whose key is "processor" (blocks are separated by blank lines; a text
 * without such a line is kept whole), bounded as above. Returns an owned
 * copy, or NULL when out of memory. */
char *sb_host_proc_last_cpu (const char *cpuinfo);

/* text cut after its last '\n' within max bytes when longer (a text with no
 * '\n' within them becomes ""), in place; returns 1 when it was cut. */
int sb_host_proc_bound (char *text, size_t max);

#endif
