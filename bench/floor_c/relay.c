/*
 * The floor of the e-stop figures (bench/floor.py): plain C against CycloneDDS, no
 * executive. An EmergencyState_ with any flag set in; out, from the listener on
 * CycloneDDS's receive thread, what the executive sends: an UpperCmd_, a LowerCmd_ and a
 * HandsCmd_ whose positions are marker n for the n-th e-stop (bench/robot.py: the bench's
 * subscriber knows which e-stop they answer), then an AMRCommand_ CANCEL_TASK.
 *
 *   relay UPPER.f32 LOWER.f32 HANDS.f32     (ATOM_DDS_DOMAIN, CYCLONEDDS_URI: environment)
 *
 * Each .f32: the markers' positions for that stream, float32, one row per marker. Prints
 * "ready" once its entities exist; runs until its standard input closes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dds/dds.h"
#include "dobot_atom/amr_cmd.h"
#include "dobot_atom/emergency_state.h"
#include "dobot_atom/hands_cmd.h"
#include "dobot_atom/lower_cmd.h"
#include "dobot_atom/upper_cmd.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))
#define TAKE 16

typedef struct {
  float *rows;
  size_t n, width;
} markers;

static dds_entity_t upper_w, lower_w, hands_w, amr_w;
static markers upper_m, lower_m, hands_m;
static unsigned long count;
static dobot_atom_msg_dds__UpperCmd_ upper;
static dobot_atom_msg_dds__LowerCmd_ lower;
static dobot_atom_msg_dds__HandsCmd_ hands;
static dobot_atom_msg_dds__AMRCommand_ cancel;

static void fill(dobot_atom_msg_dds__MotorCmd_ *motors, const markers *m) {
  const float *q = m->rows + (count % m->n) * m->width;
  for (size_t j = 0; j < m->width; j++)
    motors[j].q = q[j];
}

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
    fill(upper.motor_cmd, &upper_m);
    fill(lower.motor_cmd, &lower_m);
    fill(hands.hands, &hands_m);
    dds_write(upper_w, &upper); /* the holds, then the cancel: the executive's order */
    dds_write(lower_w, &lower);
    dds_write(hands_w, &hands);
    cancel.command_id = (uint32_t)count;
    dds_write(amr_w, &cancel);
    count++;
  }
}

static int load(const char *path, size_t width, markers *m) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return -1;
  }
  fseek(f, 0, SEEK_END);
  long bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  m->width = width;
  m->n = (size_t)bytes / (width * sizeof(float));
  m->rows = malloc((size_t)bytes);
  size_t got = m->rows ? fread(m->rows, 1, (size_t)bytes, f) : 0;
  fclose(f);
  if (m->n == 0 || got != (size_t)bytes) {
    fprintf(stderr, "%s: no markers\n", path);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: relay UPPER.f32 LOWER.f32 HANDS.f32\n");
    return 2;
  }
  if (load(argv[1], LEN(upper.motor_cmd), &upper_m) || load(argv[2], LEN(lower.motor_cmd), &lower_m) ||
      load(argv[3], LEN(hands.hands), &hands_m))
    return 2;
  for (size_t j = 0; j < LEN(upper.motor_cmd); j++)
    upper.motor_cmd[j].kp = 1.0f;
  for (size_t j = 0; j < LEN(lower.motor_cmd); j++)
    lower.motor_cmd[j].kp = 1.0f;
  for (size_t j = 0; j < LEN(hands.hands); j++)
    hands.hands[j].kp = 1.0f;
  cancel.command_type = dobot_atom_msg_dds__CANCEL_TASK;

  const char *env = getenv("ATOM_DDS_DOMAIN");
  dds_domainid_t domain = env ? (dds_domainid_t)atoi(env) : 0;
  dds_entity_t pp = dds_create_participant(domain, NULL, NULL);
  if (pp < 0) {
    fprintf(stderr, "participant: %s\n", dds_strretcode(pp));
    return 1;
  }
  dds_entity_t estop_topic = dds_create_topic(pp, &dobot_atom_msg_dds__EmergencyState__desc,
                                              "rt/emergency/state", NULL, NULL);
  dds_entity_t upper_t =
      dds_create_topic(pp, &dobot_atom_msg_dds__UpperCmd__desc, "rt/upper/cmd", NULL, NULL);
  dds_entity_t lower_t =
      dds_create_topic(pp, &dobot_atom_msg_dds__LowerCmd__desc, "rt/lower/cmd", NULL, NULL);
  dds_entity_t hands_t =
      dds_create_topic(pp, &dobot_atom_msg_dds__HandsCmd__desc, "rt/hands/cmd", NULL, NULL);
  dds_entity_t amr_t =
      dds_create_topic(pp, &dobot_atom_msg_dds__AMRCommand__desc, "rt/amr/cmd", NULL, NULL);
  /* the executive's QoS (executive/dds.py): a best-effort state reader, a reliable stream writer */
  dds_qos_t *rq = dds_create_qos();
  dds_qset_reliability(rq, DDS_RELIABILITY_BEST_EFFORT, 0);
  dds_qset_history(rq, DDS_HISTORY_KEEP_LAST, 8);
  dds_qos_t *wq = dds_create_qos(); /* streams: reliable, keep last 1 */
  dds_qset_reliability(wq, DDS_RELIABILITY_RELIABLE, DDS_MSECS(10));
  dds_qset_history(wq, DDS_HISTORY_KEEP_LAST, 1);
  dds_qos_t *eq = dds_create_qos(); /* one-shot commands: reliable, keep last 16 */
  dds_qset_reliability(eq, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  dds_qset_history(eq, DDS_HISTORY_KEEP_LAST, 16);
  upper_w = dds_create_writer(pp, upper_t, wq, NULL);
  lower_w = dds_create_writer(pp, lower_t, wq, NULL);
  hands_w = dds_create_writer(pp, hands_t, wq, NULL);
  amr_w = dds_create_writer(pp, amr_t, eq, NULL);
  dds_listener_t *l = dds_create_listener(NULL);
  dds_lset_data_available(l, on_estop);
  dds_entity_t reader = dds_create_reader(pp, estop_topic, rq, l);
  dds_delete_listener(l);
  dds_delete_qos(rq);
  dds_delete_qos(wq);
  dds_delete_qos(eq);
  if (estop_topic < 0 || upper_w < 0 || lower_w < 0 || hands_w < 0 || amr_w < 0 || reader < 0) {
    fprintf(stderr, "entities: %d %d %d %d %d %d\n", estop_topic, upper_w, lower_w, hands_w,
            amr_w, reader);
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  char line[256];
  while (fgets(line, sizeof line, stdin) != NULL)
    ;
  dds_delete(pp);
  free(upper_m.rows);
  free(lower_m.rows);
  free(hands_m.rows);
  return 0;
}
