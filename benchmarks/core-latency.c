/* clinfer-core-latency — how long a cache line takes to go from one CPU to
 * another and back (two threads pinned to the first two usable CPUs take
 * turns writing one atomic counter). Multi-threaded inference hands every
 * layer's output from thread to thread, so this round trip sets much of
 * what a second thread gains: on virtual machines it can change while the
 * machine runs, as the host moves the virtual CPUs (seen: 65-80 ns and
 * 320-340 ns on the same 2-vCPU AMD EPYC guest). benchmarks/compare.py
 * prints it beside the 2-thread rows. Prints "core_roundtrip_ns=<median>"
 * of 5 runs of 100,000 round trips; exit status 2 with fewer than two
 * usable CPUs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRIPS 100000
#define RUNS 5

static _Alignas (64) atomic_int turn;
static int cpus[2];

static void
pin (int cpu)
{
  cpu_set_t set;

  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  pthread_setaffinity_np (pthread_self (), sizeof set, &set);
}

static void *
echo (void *arg)
{
  (void) arg;
  pin (cpus[1]);
  for (int i = 0; i < TRIPS; i++) {
    while (atomic_load_explicit (&turn, memory_order_acquire) != 2 * i + 1)
      ;
    atomic_store_explicit (&turn, 2 * i + 2, memory_order_release);
  }
  return NULL;
}

static double
one_run (void)
{
  struct timespec a, b;
  pthread_t t;

  atomic_store (&turn, 0);
  if (pthread_create (&t, NULL, echo, NULL) != 0)
    return -1;
  clock_gettime (CLOCK_MONOTONIC, &a);
  for (int i = 0; i < TRIPS; i++) {
    atomic_store_explicit (&turn, 2 * i + 1, memory_order_release);
    while (atomic_load_explicit (&turn, memory_order_acquire) != 2 * i + 2)
      ;
  }
  clock_gettime (CLOCK_MONOTONIC, &b);
  pthread_join (t, NULL);
  return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / TRIPS;
}

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

int
main (void)
{
  cpu_set_t set;
  double ns[RUNS];
  int n = 0;

  if (sched_getaffinity (0, sizeof set, &set) != 0)
    return 2;
  for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
    if (CPU_ISSET (c, &set))
      cpus[n++] = c;
  if (n < 2) {
    fprintf (stderr, "clinfer-core-latency: needs two usable CPUs\n");
    return 2;
  }
  pin (cpus[0]);
  for (int r = 0; r < RUNS; r++)
    if ((ns[r] = one_run ()) < 0)
      return 1;
  qsort (ns, RUNS, sizeof ns[0], cmp);
  printf ("core_roundtrip_ns=%.0f\n", ns[RUNS / 2]);
  return 0;
}
