/*
 * The e-stop figures' arrival stamps in C (bench/floor.py builds it; bench/estop.py's Peer
 * runs it when the floors are built): the protocol of bench/estop_peer.py's `holds` and
 * `amr` roles, without a Python listener between the sample and its stamp. The holds'
 * peer also receives the service's whole 500 Hz stream on the three topics; a Python
 * listener with that backlog under a CPU hog stamped the holds late, so the instrument,
 * not the executive, set the p99.
 *
 *   peer holds UPPER.tab LOWER.tab HANDS.tab   H <stream> <k> <t_ns>   first command on
 *                                              <stream> carrying marker k
 *   peer amr                                   A <command_type> <t_ns>  every AMR command
 *
 * (ATOM_DDS_DOMAIN, CYCLONEDDS_URI: environment.) Each .tab: bench/robot.py's
 * marker_table for that stream, one record per marker: the command's q array as it
 * holds at the marker (float32, this machine's order) then k (int32). Prints "ready" once
 * its entities exist; runs until its standard input closes.
 *
 * Each listener call stamps CLOCK_MONOTONIC first (system-wide: it compares with the
 * publisher's stamp; Python's time.monotonic_ns reads the same clock), on CycloneDDS's
 * receive thread, then takes every sample. A line is one write(2) of under PIPE_BUF bytes
 * to the pipe the bench reads continuously: atomic, and it only waits if 64 KiB of lines
 * were left unread.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dds/dds.h"
#include "dobot_atom/amr_cmd.h"
#include "dobot_atom/hands_cmd.h"
#include "dobot_atom/lower_cmd.h"
#include "dobot_atom/upper_cmd.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))
#define TAKE 64
#define MAX_WIDTH 32
#define MAX_MARKERS 65536

typedef struct {
  const char *name;       /* as the Python peer names the stream */
  const char *topic;
  const dds_topic_descriptor_t *desc;
  size_t width;           /* joints in the command */
  size_t motors_offset;   /* of the MotorCmd_ array in the sample */
  unsigned char *rows;    /* sorted records: width floats, then int32 k */
  size_t n;
  uint64_t seen[MAX_MARKERS / 64]; /* markers already reported (atomic bits) */
} stream;

static stream streams[] = {
    {"upper", "rt/upper/cmd", &dobot_atom_msg_dds__UpperCmd__desc,
     LEN(((dobot_atom_msg_dds__UpperCmd_ *)0)->motor_cmd),
     offsetof(dobot_atom_msg_dds__UpperCmd_, motor_cmd), NULL, 0, {0}},
    {"lower", "rt/lower/cmd", &dobot_atom_msg_dds__LowerCmd__desc,
     LEN(((dobot_atom_msg_dds__LowerCmd_ *)0)->motor_cmd),
     offsetof(dobot_atom_msg_dds__LowerCmd_, motor_cmd), NULL, 0, {0}},
    {"hands", "rt/hands/cmd", &dobot_atom_msg_dds__HandsCmd__desc,
     LEN(((dobot_atom_msg_dds__HandsCmd_ *)0)->hands),
     offsetof(dobot_atom_msg_dds__HandsCmd_, hands), NULL, 0, {0}},
};

static size_t key_bytes; /* for the comparator: the stream being sorted or searched */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void emit(const char *line, int len) {
  while (len > 0) { /* one write: a line is far under PIPE_BUF; EINTR aside */
    ssize_t w = write(STDOUT_FILENO, line, (size_t)len);
    if (w < 0 && errno == EINTR)
      continue;
    return;
  }
}

static int by_key(const void *a, const void *b) { return memcmp(a, b, key_bytes); }

static void on_command(dds_entity_t reader, void *arg) {
  int64_t t = now_ns();
  stream *s = arg;
  size_t q_bytes = s->width * sizeof(float), rec = q_bytes + sizeof(int32_t);
  void *buf[TAKE];
  dds_sample_info_t si[TAKE];
  int n;
  do {
    memset(buf, 0, sizeof buf);
    n = dds_take(reader, buf, si, TAKE, TAKE);
    for (int i = 0; i < n; i++) {
      if (!si[i].valid_data)
        continue;
      const dobot_atom_msg_dds__MotorCmd_ *m =
          (const void *)((const char *)buf[i] + s->motors_offset);
      float q[MAX_WIDTH];
      for (size_t j = 0; j < s->width; j++)
        q[j] = m[j].q;
      /* a binary search in place: by_key's width is a global, for main's sorts only */
      size_t lo = 0, hi = s->n;
      const unsigned char *hit = NULL;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const unsigned char *r = s->rows + mid * rec;
        int c = memcmp(q, r, q_bytes);
        if (c == 0) {
          hit = r;
          break;
        }
        if (c < 0)
          hi = mid;
        else
          lo = mid + 1;
      }
      if (hit == NULL)
        continue;
      int32_t k;
      memcpy(&k, hit + q_bytes, sizeof k);
      if (k < 0 || k >= MAX_MARKERS)
        continue;
      uint64_t bit = (uint64_t)1 << (k % 64);
      if (__atomic_fetch_or(&s->seen[k / 64], bit, __ATOMIC_RELAXED) & bit)
        continue;
      char line[96];
      int len = snprintf(line, sizeof line, "H %s %d %lld\n", s->name, (int)k, (long long)t);
      emit(line, len);
    }
    if (n > 0)
      dds_return_loan(reader, buf, n);
  } while (n == TAKE);
}

static const char *command_name(dobot_atom_msg_dds__AMRCommandType c) {
  switch (c) { /* the enumerators' names, as cyclonedds-python's IdlEnum prints them */
  case dobot_atom_msg_dds__CANCEL_TASK: return "CANCEL_TASK";
  case dobot_atom_msg_dds__PAUSE_TASK: return "PAUSE_TASK";
  case dobot_atom_msg_dds__RESUME_TASK: return "RESUME_TASK";
  case dobot_atom_msg_dds__MOVE_TO_TAG: return "MOVE_TO_TAG";
  case dobot_atom_msg_dds__REMOTE_CONTROL: return "REMOTE_CONTROL";
  case dobot_atom_msg_dds__ROTATE: return "ROTATE";
  case dobot_atom_msg_dds__START_REMOTE: return "START_REMOTE";
  case dobot_atom_msg_dds__STOP_REMOTE: return "STOP_REMOTE";
  case dobot_atom_msg_dds__SUBSCRIBE_LASER: return "SUBSCRIBE_LASER";
  case dobot_atom_msg_dds__UNSUBSCRIBE_LASER: return "UNSUBSCRIBE_LASER";
  case dobot_atom_msg_dds__START_MAPPING: return "START_MAPPING";
  case dobot_atom_msg_dds__SAVE_MAP: return "SAVE_MAP";
  case dobot_atom_msg_dds__STOP_MAPPING: return "STOP_MAPPING";
  case dobot_atom_msg_dds__SET_VEL: return "SET_VEL";
  case dobot_atom_msg_dds__SET_ACCEL: return "SET_ACCEL";
  case dobot_atom_msg_dds__SET_DECEL: return "SET_DECEL";
  }
  return NULL;
}

static void on_amr(dds_entity_t reader, void *arg) {
  int64_t t = now_ns();
  void *buf[TAKE];
  dds_sample_info_t si[TAKE];
  int n;
  (void)arg;
  do {
    memset(buf, 0, sizeof buf);
    n = dds_take(reader, buf, si, TAKE, TAKE);
    for (int i = 0; i < n; i++) {
      if (!si[i].valid_data)
        continue;
      dobot_atom_msg_dds__AMRCommandType c =
          ((const dobot_atom_msg_dds__AMRCommand_ *)buf[i])->command_type;
      const char *name = command_name(c);
      char line[96];
      int len = name ? snprintf(line, sizeof line, "A %s %lld\n", name, (long long)t)
                     : snprintf(line, sizeof line, "A %d %lld\n", (int)c, (long long)t);
      emit(line, len);
    }
    if (n > 0)
      dds_return_loan(reader, buf, n);
  } while (n == TAKE);
}

static int load(const char *path, stream *s) {
  size_t rec = s->width * sizeof(float) + sizeof(int32_t);
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return -1;
  }
  fseek(f, 0, SEEK_END);
  long bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (bytes <= 0 || (size_t)bytes % rec != 0) {
    fprintf(stderr, "%s: %ld bytes, not records of %zu %s joints and a marker\n", path, bytes,
            s->width, s->name);
    fclose(f);
    return -1;
  }
  s->n = (size_t)bytes / rec;
  s->rows = malloc((size_t)bytes);
  size_t got = s->rows ? fread(s->rows, 1, (size_t)bytes, f) : 0;
  fclose(f);
  if (got != (size_t)bytes) {
    fprintf(stderr, "%s: short read\n", path);
    return -1;
  }
  key_bytes = s->width * sizeof(float); /* before any listener exists */
  qsort(s->rows, s->n, rec, by_key);
  return 0;
}

int main(int argc, char **argv) {
  int holds = argc == 5 && strcmp(argv[1], "holds") == 0;
  int amr = argc == 2 && strcmp(argv[1], "amr") == 0;
  if (!holds && !amr) {
    fprintf(stderr, "usage: peer holds UPPER.tab LOWER.tab HANDS.tab | peer amr\n");
    return 2;
  }
  for (size_t i = 0; holds && i < LEN(streams); i++) {
    if (streams[i].width > MAX_WIDTH || load(argv[2 + i], &streams[i]))
      return 2;
  }
  const char *env = getenv("ATOM_DDS_DOMAIN");
  dds_domainid_t domain = env ? (dds_domainid_t)atoi(env) : 0;
  dds_entity_t pp = dds_create_participant(domain, NULL, NULL);
  if (pp < 0) {
    fprintf(stderr, "participant: %s\n", dds_strretcode(pp));
    return 1;
  }
  /* bench/estop_peer.py's readers: executive/wire/dds.py EVENT_READER_QOS */
  dds_qos_t *q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 64);
  dds_qset_durability(q, DDS_DURABILITY_VOLATILE);
  dds_data_representation_id_t reps[] = {DDS_DATA_REPRESENTATION_XCDR1,
                                         DDS_DATA_REPRESENTATION_XCDR2};
  dds_qset_data_representation(q, 2, reps);
  int failed = 0;
  if (holds) {
    for (size_t i = 0; i < LEN(streams); i++) {
      dds_entity_t t = dds_create_topic(pp, streams[i].desc, streams[i].topic, NULL, NULL);
      dds_listener_t *l = dds_create_listener(&streams[i]);
      dds_lset_data_available(l, on_command);
      dds_entity_t r = t < 0 ? t : dds_create_reader(pp, t, q, l);
      dds_delete_listener(l);
      if (r < 0) {
        fprintf(stderr, "%s: %s\n", streams[i].topic, dds_strretcode(r));
        failed = 1;
      }
    }
  } else {
    dds_entity_t t =
        dds_create_topic(pp, &dobot_atom_msg_dds__AMRCommand__desc, "rt/amr/cmd", NULL, NULL);
    dds_listener_t *l = dds_create_listener(NULL);
    dds_lset_data_available(l, on_amr);
    dds_entity_t r = t < 0 ? t : dds_create_reader(pp, t, q, l);
    dds_delete_listener(l);
    if (r < 0) {
      fprintf(stderr, "rt/amr/cmd: %s\n", dds_strretcode(r));
      failed = 1;
    }
  }
  dds_delete_qos(q);
  if (failed) {
    dds_delete(pp);
    return 1;
  }
  emit("ready\n", 6);
  char line[256];
  while (fgets(line, sizeof line, stdin) != NULL)
    ;
  dds_delete(pp);
  for (size_t i = 0; i < LEN(streams); i++)
    free(streams[i].rows);
  return 0;
}
