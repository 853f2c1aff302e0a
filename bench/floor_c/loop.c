/*
 * The floor of the stream's lateness (bench/floor.py): a C thread under SCHED_FIFO waking
 * to 2 ms deadlines, timed as the motion streamer times its own (executive/motion/streamer.py:
 * lateness = woke - deadline; a period that ends past the next deadline skips the ones
 * missed and counts them), with the same 1 us timer slack, and no work in the period.
 *
 *   loop SECONDS PERIOD_US PRIORITY     (PRIORITY 0: normal scheduling)
 *
 * Prints "policy SCHED_FIFO 80" (or "policy SCHED_OTHER" and why), "periods N missed M",
 * then each period's lateness in ns, one a line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static int64_t now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: loop SECONDS PERIOD_US PRIORITY\n");
    return 2;
  }
  double seconds = atof(argv[1]);
  int64_t period = (int64_t)atol(argv[2]) * 1000;
  int priority = atoi(argv[3]);
  if (seconds <= 0 || period <= 0) {
    fprintf(stderr, "loop: SECONDS and PERIOD_US must be > 0\n");
    return 2;
  }
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  if (priority > 0) {
    struct sched_param p = {.sched_priority = priority};
    if (sched_setscheduler(0, SCHED_FIFO, &p) != 0)
      printf("policy SCHED_OTHER refused SCHED_FIFO %d: %s\n", priority, strerror(errno));
    else
      printf("policy SCHED_FIFO %d\n", priority);
  } else
    printf("policy SCHED_OTHER\n");
  size_t cap = (size_t)(seconds * 1e9 / (double)period) + 16, n = 0;
  int64_t *late = malloc(cap * sizeof *late);
  if (late == NULL)
    return 1;
  long missed = 0;
  int64_t end = now() + (int64_t)(seconds * 1e9);
  int64_t deadline = now() + period;
  while (now() < end && n < cap) {
    struct timespec ts = {deadline / 1000000000, deadline % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
      ;
    int64_t woke = now();
    late[n++] = woke - deadline;
    int64_t done = now();
    deadline += period;
    if (done > deadline) {
      long skip = (long)((done - deadline) / period) + 1;
      missed += skip;
      deadline += skip * period;
    }
  }
  printf("periods %zu missed %ld\n", n, missed);
  for (size_t i = 0; i < n; i++)
    printf("%lld\n", (long long)late[i]);
  free(late);
  return 0;
}
