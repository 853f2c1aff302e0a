/*
 * The floor of the e-stop figures (bench/floor.py): plain C against CycloneDDS, no
 * executive. An EmergencyState_ with any flag set in, one UpperCmd_ out, written from the
 * listener on CycloneDDS's receive thread; its positions are marker n for the n-th e-stop
 * (bench/robot.py), so the bench's subscriber knows which e-stop it answers.
 *
 *   relay MARKERS.f32          (ATOM_DDS_DOMAIN, CYCLONEDDS_URI from the environment)
 *
 * MARKERS.f32: the markers' positions, float32, one row of 17 per marker. Prints "ready"
 * once its entities exist; runs until its standard input closes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dds/dds.h"
#include "dobot_atom/emergency_state.h"
#include "dobot_atom/upper_cmd.h"

#define MOTORS (sizeof(((dobot_atom_msg_dds__UpperCmd_ *)0)->motor_cmd) / \
                sizeof(((dobot_atom_msg_dds__UpperCmd_ *)0)->motor_cmd[0]))
#define TAKE 16

static dds_entity_t writer;
static float *markers;
static size_t nmarkers;
static unsigned long count;
static dobot_atom_msg_dds__UpperCmd_ cmd;

static void on_estop(dds_entity_t reader, void *arg) {
  dobot_atom_msg_dds__EmergencyState_ s[TAKE];
  void *p[TAKE];
  dds_sample_info_t si[TAKE];
  (void)arg;
  for (int i = 0; i < TAKE; i++)
    p[i] = &s[i];
  int n = dds_take(reader, p, si, TAKE, TAKE);
  for (int i = 0; i < n; i++) {
    if (!si[i].valid_data ||
        !(s[i].soft_emergency_triggered || s[i].hard_emergency_triggered ||
          s[i].amr_emergency_triggered))
      continue;
    const float *q = markers + (count % nmarkers) * MOTORS;
    for (size_t j = 0; j < MOTORS; j++)
      cmd.motor_cmd[j].q = q[j];
    dds_write(writer, &cmd);
    count++;
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: relay MARKERS.f32\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (f == NULL) {
    perror(argv[1]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  long bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  nmarkers = (size_t)bytes / (MOTORS * sizeof(float));
  markers = malloc((size_t)bytes);
  if (markers == NULL || nmarkers == 0 || fread(markers, 1, (size_t)bytes, f) != (size_t)bytes) {
    fprintf(stderr, "%s: no markers\n", argv[1]);
    return 2;
  }
  fclose(f);
  for (size_t j = 0; j < MOTORS; j++)
    cmd.motor_cmd[j].kp = 1.0f;

  const char *env = getenv("ATOM_DDS_DOMAIN");
  dds_domainid_t domain = env ? (dds_domainid_t)atoi(env) : 0;
  dds_entity_t pp = dds_create_participant(domain, NULL, NULL);
  if (pp < 0) {
    fprintf(stderr, "participant: %s\n", dds_strretcode(pp));
    return 1;
  }
  dds_entity_t estop_topic = dds_create_topic(pp, &dobot_atom_msg_dds__EmergencyState__desc,
                                              "rt/emergency/state", NULL, NULL);
  dds_entity_t cmd_topic =
      dds_create_topic(pp, &dobot_atom_msg_dds__UpperCmd__desc, "rt/upper/cmd", NULL, NULL);
  /* the executive's QoS (executive/dds.py): a best-effort state reader, a reliable stream writer */
  dds_qos_t *rq = dds_create_qos();
  dds_qset_reliability(rq, DDS_RELIABILITY_BEST_EFFORT, 0);
  dds_qset_history(rq, DDS_HISTORY_KEEP_LAST, 8);
  dds_qos_t *wq = dds_create_qos();
  dds_qset_reliability(wq, DDS_RELIABILITY_RELIABLE, DDS_MSECS(10));
  dds_qset_history(wq, DDS_HISTORY_KEEP_LAST, 1);
  writer = dds_create_writer(pp, cmd_topic, wq, NULL);
  dds_listener_t *l = dds_create_listener(NULL);
  dds_lset_data_available(l, on_estop);
  dds_entity_t reader = dds_create_reader(pp, estop_topic, rq, l);
  dds_delete_listener(l);
  dds_delete_qos(rq);
  dds_delete_qos(wq);
  if (estop_topic < 0 || cmd_topic < 0 || writer < 0 || reader < 0) {
    fprintf(stderr, "entities: %d %d %d %d\n", estop_topic, cmd_topic, writer, reader);
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  char line[256];
  while (fgets(line, sizeof line, stdin) != NULL)
    ;
  dds_delete(pp);
  free(markers);
  return 0;
}
