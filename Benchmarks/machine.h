/* machine.h — what the figures were measured on. */
#ifndef BENCH_MACHINE_H
#define BENCH_MACHINE_H

#include <stddef.h>

/* "AMD EPYC, 2 CPUs, 23.5 GiB RAM, Linux 6.1, Debian 12.11, ext4" for the
 * file system holding `dir`. */
void bench_describe_machine(const char *dir, char *out, size_t size);
/* The 1-minute load average, or -1 if unknown. */
double bench_load_average(void);
/* The current time as ISO 8601 UTC. */
void bench_utc_now(char *out, size_t size);

#endif
