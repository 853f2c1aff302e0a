/*
 * The floor of the simulated Adam's idle CPU (bench/idle.py): a bare C loop on the Adam's
 * wire, built from Debian's `idlc -l c` output for idl/pnd_adam (common + sdk12) and
 * -lddsc. It publishes rt/lowstate (LowState_, MOTORS motor states) and rt/handstate at the
 * given rates, as the simulated Adam does, and takes whatever arrives on rt/lowcmd and
 * rt/handcmd every period, with no model behind either: what publishing the same topics at
 * the same rates costs in C on this machine.
 *
 *   pub_adam DOMAIN MOTORS LOW_HZ HAND_HZ
 *
 * Prints "ready" once its entities exist, runs until SIGTERM or SIGINT.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dds/dds.h"
#include "pub_adam_idl.h"

#define T(name) pnd_adam_msg_dds__##name
#define DESC(name) (&pnd_adam_msg_dds__##name##_desc)
#define MAX_TAKE 16

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static dds_entity_t must(dds_entity_t e, const char *what) {
  if (e < 0) {
    fprintf(stderr, "%s: %s\n", what, dds_strretcode(e));
    exit(1);
  }
  return e;
}

static void drain(dds_entity_t reader) {
  void *samples[MAX_TAKE] = {0};
  dds_sample_info_t info[MAX_TAKE];
  while (dds_take(reader, samples, info, MAX_TAKE, MAX_TAKE) == MAX_TAKE)
    ;
  dds_return_loan(reader, samples, MAX_TAKE);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: pub_adam DOMAIN MOTORS LOW_HZ HAND_HZ\n");
    return 2;
  }
  dds_domainid_t domain = (dds_domainid_t)atoi(argv[1]);
  uint32_t motors = (uint32_t)atoi(argv[2]);
  double low_period = 1.0 / atof(argv[3]), hand_period = 1.0 / atof(argv[4]);
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);

  dds_entity_t p = must(dds_create_participant(domain, NULL, NULL), "participant");
  dds_qos_t *state = dds_create_qos();
  dds_qset_reliability(state, DDS_RELIABILITY_BEST_EFFORT, 0);
  dds_qset_history(state, DDS_HISTORY_KEEP_LAST, 1);
  dds_qos_t *cmd = dds_create_qos();
  dds_qset_reliability(cmd, DDS_RELIABILITY_RELIABLE, DDS_MSECS(10));
  dds_qset_history(cmd, DDS_HISTORY_KEEP_LAST, MAX_TAKE);
  dds_entity_t low_w = must(
      dds_create_writer(p, must(dds_create_topic(p, DESC(LowState_), "rt/lowstate", NULL, NULL), "topic"), state, NULL),
      "writer");
  dds_entity_t hand_w = must(
      dds_create_writer(p, must(dds_create_topic(p, DESC(HandState_), "rt/handstate", NULL, NULL), "topic"), state, NULL),
      "writer");
  dds_entity_t low_r = must(
      dds_create_reader(p, must(dds_create_topic(p, DESC(LowCmd_), "rt/lowcmd", NULL, NULL), "topic"), cmd, NULL),
      "reader");
  dds_entity_t hand_r = must(
      dds_create_reader(p, must(dds_create_topic(p, DESC(HandCmd_), "rt/handcmd", NULL, NULL), "topic"), cmd, NULL),
      "reader");

  T(LowState_) low;
  memset(&low, 0, sizeof low);
  low.motor_state._length = low.motor_state._maximum = motors;
  low.motor_state._buffer = calloc(motors, sizeof(T(MotorState_)));
  low.motor_state._release = false;
  T(HandState_) hand;
  memset(&hand, 0, sizeof hand);
  printf("ready\n");
  fflush(stdout);

  double next_low = now_s(), next_hand = next_low;
  while (!stop) {
    double t = now_s();
    if (t >= next_low) {
      low.tick++;
      dds_write(low_w, &low);
      next_low += low_period;
      if (next_low < t)
        next_low = t + low_period;
    }
    if (t >= next_hand) {
      dds_write(hand_w, &hand);
      next_hand += hand_period;
      if (next_hand < t)
        next_hand = t + hand_period;
    }
    drain(low_r);
    drain(hand_r);
    double wake = next_low < next_hand ? next_low : next_hand;
    double d = wake - now_s();
    if (d > 0) {
      struct timespec ts = {(time_t)d, (long)((d - (time_t)d) * 1e9)};
      nanosleep(&ts, NULL);
    }
  }
  free(low.motor_state._buffer);
  dds_delete(p);
  return 0;
}
