/* A stand-in for the PND Adam's side of the wire, in C, sharing no code with the executive.
 *
 * Built by tests/cadam/harness.py from Debian's `idlc -l c` output for idl/pnd_adam/ (the
 * `common/` folder plus one variant's folder) and linked with -lddsc; -DCADAM_SDK12 selects
 * the sdk-1.2 variant's fields (mode_pr, tick, ki, wireless_remote[19], battery_data),
 * without it the seed's. Every field is set and printed here by its C name, by hand.
 *
 *   cadam typeinfo
 *       print each type's XTypes TypeInformation/TypeMapping (hex), one JSON line per type
 *   cadam run <domain> <motors> <samples> <timeout-s> [xcdr1|xcdr2]
 *       write <samples> LowState_ (with <motors> motor states) on rt/lowstate and HandState_
 *       on rt/handstate, printing each as {"event":"sent",...}; print every LowCmd_ from
 *       rt/lowcmd and HandCmd_ from rt/handcmd as {"event":"received",...} until <samples>
 *       of each arrived or <timeout-s> passed; then {"event":"done",...}; then wait for EOF
 *       on stdin (the Python side closes it once it has our samples) and leave.
 *
 * Writers and readers are reliable, transient-local, keep-last <samples>, so the start order
 * of the two sides does not matter. The optional last argument sets the writers' data
 * representation (default: CycloneDDS's choice, XCDR1 for these @final types).
 *
 * Values: a function of (sample, field, index) so that no two fields or samples share one;
 * floats are multiples of 1/8 (exact in float32, printed with %.9g, which reads back
 * exactly); the battery status strings have lengths 0, 1, 2, 3, 5 and 7 (and multi-byte
 * UTF-8), so the fields after the string sit at every alignment.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dds/dds.h"
#include "cadam_idl.h"

#define MAX_TAKE 16
#define MAX_SAMPLES 64

#ifdef CADAM_SDK12
static const char *const STATUS[] = { "", "a", "ok", "low", "full!", "\xe7\x94\xb5\xe9\x87\x8f", "charging" };
#define NSTATUS (sizeof(STATUS) / sizeof(STATUS[0]))
#endif

/* --- values ------------------------------------------------------------------------------- */

static float fv(int k, int field, int i)
{
  return (float) (k * 4096 + field * 97 + i * 3 + 1) / 8.0f - 1000.0f;
}

static uint32_t uv(int k, int field, int i)
{
  return 0x01000000u * (uint32_t) (k + 1) + 4099u * (uint32_t) field + (uint32_t) i;
}

static uint8_t ov(int k, int field, int i)
{
  return (uint8_t) (1 + k * 61 + field * 7 + i * 3);
}

static int16_t sv(int k, int field, int i)
{
  return (int16_t) (-20000 + k * 9001 + field * 131 + i * 5);
}

/* --- fill --------------------------------------------------------------------------------- */

static void fill_imu(pnd_adam_msg_dds__IMUState_ *s, int k)
{
  for (int i = 0; i < 4; i++)
    s->quaternion[i] = fv(k, 1, i);
  for (int i = 0; i < 3; i++) {
    s->gyroscope[i] = fv(k, 2, i);
    s->accelerometer[i] = fv(k, 3, i);
    s->ypr[i] = fv(k, 4, i);
  }
  s->temperature = sv(k, 5, 0);
}

static void fill_motor_state(pnd_adam_msg_dds__MotorState_ *m, int k, int i)
{
  m->mode = ov(k, 10, i);
  m->q = fv(k, 11, i);
  m->dq = fv(k, 12, i);
  m->ddq = fv(k, 13, i);
  m->tau_est = fv(k, 14, i);
  m->state = uv(k, 15, i);
  m->reserve = uv(k, 16, i);
}

static void fill_low_state(pnd_adam_msg_dds__LowState_ *s, int k, uint32_t motors)
{
  memset(s, 0, sizeof(*s));
#ifdef CADAM_SDK12
  s->mode_pr = ov(k, 20, 0);
  s->tick = uv(k, 21, 0);
#endif
  fill_imu(&s->imu_state, k);
  s->motor_state._maximum = motors;
  s->motor_state._length = motors;
  s->motor_state._buffer = dds_sequence_pnd_adam_msg_dds__MotorState__allocbuf(motors);
  s->motor_state._release = true;
  for (uint32_t i = 0; i < motors; i++)
    fill_motor_state(&s->motor_state._buffer[i], k, (int) i);
#ifdef CADAM_SDK12
  for (int i = 0; i < 19; i++)
    s->wireless_remote[i] = fv(k, 22, i);
  s->battery_data.timestamp_ms = INT64_C(1767225600000) + (int64_t) k * INT64_C(1000003);
  s->battery_data.voltage = fv(k, 23, 0);
  s->battery_data.current = fv(k, 24, 0);
  s->battery_data.power = fv(k, 25, 0);
  s->battery_data.wh_accumulated = fv(k, 26, 0);
  s->battery_data.status = dds_string_dup(STATUS[(size_t) k % NSTATUS]);
#else
  for (int i = 0; i < 40; i++)
    s->wireless_remote[i] = sv(k, 22, i);
#endif
  s->reserve = uv(k, 27, 0);
}

static void fill_hand_state(pnd_adam_msg_dds__HandState_ *s, int k)
{
  for (int i = 0; i < 12; i++)
    s->position[i] = (uint32_t) ((k * 173 + i * 71) % 1001);
  s->reserve = uv(k, 30, 0);
}

/* --- dump (JSON, by C field name) ----------------------------------------------------------- */

#ifdef CADAM_SDK12
static void dump_string(const char *s)
{
  putchar('"');
  for (; s != NULL && *s; s++) {
    unsigned char c = (unsigned char) *s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}
#endif

static void dump_floats(const char *name, const float *v, int n)
{
  printf("\"%s\":[", name);
  for (int i = 0; i < n; i++)
    printf("%s%.9g", i ? "," : "", (double) v[i]);
  printf("]");
}

static void dump_imu(const pnd_adam_msg_dds__IMUState_ *s)
{
  printf("{");
  dump_floats("quaternion", s->quaternion, 4);
  printf(",");
  dump_floats("gyroscope", s->gyroscope, 3);
  printf(",");
  dump_floats("accelerometer", s->accelerometer, 3);
  printf(",");
  dump_floats("ypr", s->ypr, 3);
  printf(",\"temperature\":%d}", (int) s->temperature);
}

static void dump_low_state(const pnd_adam_msg_dds__LowState_ *s)
{
  printf("{");
#ifdef CADAM_SDK12
  printf("\"mode_pr\":%u,\"tick\":%" PRIu32 ",", (unsigned) s->mode_pr, s->tick);
#endif
  printf("\"imu_state\":");
  dump_imu(&s->imu_state);
  printf(",\"motor_state\":[");
  for (uint32_t i = 0; i < s->motor_state._length; i++) {
    const pnd_adam_msg_dds__MotorState_ *m = &s->motor_state._buffer[i];
    printf("%s{\"mode\":%u,\"q\":%.9g,\"dq\":%.9g,\"ddq\":%.9g,\"tau_est\":%.9g,"
           "\"state\":%" PRIu32 ",\"reserve\":%" PRIu32 "}",
           i ? "," : "", (unsigned) m->mode, (double) m->q, (double) m->dq, (double) m->ddq,
           (double) m->tau_est, m->state, m->reserve);
  }
  printf("],");
#ifdef CADAM_SDK12
  dump_floats("wireless_remote", s->wireless_remote, 19);
  printf(",\"battery_data\":{\"timestamp_ms\":%" PRId64 ",\"voltage\":%.9g,\"current\":%.9g,"
         "\"power\":%.9g,\"wh_accumulated\":%.9g,\"status\":",
         s->battery_data.timestamp_ms, (double) s->battery_data.voltage,
         (double) s->battery_data.current, (double) s->battery_data.power,
         (double) s->battery_data.wh_accumulated);
  dump_string(s->battery_data.status);
  printf("},");
#else
  printf("\"wireless_remote\":[");
  for (int i = 0; i < 40; i++)
    printf("%s%d", i ? "," : "", (int) s->wireless_remote[i]);
  printf("],");
#endif
  printf("\"reserve\":%" PRIu32 "}", s->reserve);
}

static void dump_low_cmd(const pnd_adam_msg_dds__LowCmd_ *s)
{
  printf("{");
#ifdef CADAM_SDK12
  printf("\"mode_pr\":%u,", (unsigned) s->mode_pr);
#endif
  printf("\"motor_cmd\":[");
  for (uint32_t i = 0; i < s->motor_cmd._length; i++) {
    const pnd_adam_msg_dds__MotorCmd_ *m = &s->motor_cmd._buffer[i];
    printf("%s{\"mode\":%u,\"q\":%.9g,\"dq\":%.9g,\"tau\":%.9g,\"kp\":%.9g,\"kd\":%.9g,",
           i ? "," : "", (unsigned) m->mode, (double) m->q, (double) m->dq, (double) m->tau,
           (double) m->kp, (double) m->kd);
#ifdef CADAM_SDK12
    printf("\"ki\":%.9g,", (double) m->ki);
#endif
    printf("\"reserve\":%" PRIu32 "}", m->reserve);
  }
  printf("],\"reserve\":%" PRIu32 "}", s->reserve);
}

static void dump_hand(const uint32_t *position, uint32_t reserve)
{
  printf("{\"position\":[");
  for (int i = 0; i < 12; i++)
    printf("%s%" PRIu32, i ? "," : "", position[i]);
  printf("],\"reserve\":%" PRIu32 "}", reserve);
}

static void dump_hand_cmd(const pnd_adam_msg_dds__HandCmd_ *s)
{
  dump_hand(s->position, s->reserve);
}

static void dump_hand_state(const pnd_adam_msg_dds__HandState_ *s)
{
  dump_hand(s->position, s->reserve);
}

/* --- typeinfo ------------------------------------------------------------------------------ */

static void print_typeinfo(const char *name, const dds_topic_descriptor_t *d)
{
  printf("{\"event\":\"typeinfo\",\"type\":\"%s\",\"typename\":\"%s\",\"typeinfo\":\"", name,
         d->m_typename);
  for (uint32_t i = 0; i < d->type_information.sz; i++)
    printf("%02x", d->type_information.data[i]);
  printf("\",\"typemap\":\"");
  for (uint32_t i = 0; i < d->type_mapping.sz; i++)
    printf("%02x", d->type_mapping.data[i]);
  printf("\"}\n");
}

static int typeinfo(void)
{
  print_typeinfo("IMUState_", &pnd_adam_msg_dds__IMUState__desc);
  print_typeinfo("MotorCmd_", &pnd_adam_msg_dds__MotorCmd__desc);
  print_typeinfo("MotorState_", &pnd_adam_msg_dds__MotorState__desc);
  print_typeinfo("LowCmd_", &pnd_adam_msg_dds__LowCmd__desc);
  print_typeinfo("LowState_", &pnd_adam_msg_dds__LowState__desc);
  print_typeinfo("HandCmd_", &pnd_adam_msg_dds__HandCmd__desc);
  print_typeinfo("HandState_", &pnd_adam_msg_dds__HandState__desc);
#ifdef CADAM_SDK12
  print_typeinfo("BatteryData_", &pnd_adam_msg_dds__BatteryData__desc);
#endif
  return 0;
}

/* --- run ----------------------------------------------------------------------------------- */

static dds_entity_t check(dds_entity_t e, const char *what)
{
  if (e < 0) {
    fprintf(stderr, "cadam: %s failed: %s\n", what, dds_strretcode(e));
    exit(2);
  }
  return e;
}

static int run(dds_domainid_t domain, uint32_t motors, int samples, double timeout_s,
               const char *representation)
{
  dds_entity_t pp = check(dds_create_participant(domain, NULL, NULL), "create participant");
  dds_entity_t ws = check(dds_create_waitset(pp), "create waitset");
  dds_qos_t *qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_durability(qos, DDS_DURABILITY_TRANSIENT_LOCAL);
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, samples);
  dds_qset_durability_service(qos, 0, DDS_HISTORY_KEEP_LAST, samples, DDS_LENGTH_UNLIMITED,
                              DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
  dds_qos_t *wqos = dds_create_qos();
  dds_copy_qos(wqos, qos);
  if (representation != NULL) {
    dds_data_representation_id_t id = strcmp(representation, "xcdr2") == 0
                                         ? DDS_DATA_REPRESENTATION_XCDR2
                                         : DDS_DATA_REPRESENTATION_XCDR1;
    dds_qset_data_representation(wqos, 1, &id);
  }
  dds_entity_t t_lowstate = check(
    dds_create_topic(pp, &pnd_adam_msg_dds__LowState__desc, "rt/lowstate", NULL, NULL), "topic");
  dds_entity_t t_handstate = check(
    dds_create_topic(pp, &pnd_adam_msg_dds__HandState__desc, "rt/handstate", NULL, NULL), "topic");
  dds_entity_t t_lowcmd = check(
    dds_create_topic(pp, &pnd_adam_msg_dds__LowCmd__desc, "rt/lowcmd", NULL, NULL), "topic");
  dds_entity_t t_handcmd = check(
    dds_create_topic(pp, &pnd_adam_msg_dds__HandCmd__desc, "rt/handcmd", NULL, NULL), "topic");
  dds_entity_t w_lowstate = check(dds_create_writer(pp, t_lowstate, wqos, NULL), "writer");
  dds_entity_t w_handstate = check(dds_create_writer(pp, t_handstate, wqos, NULL), "writer");
  /* CADAM_VOLATILE_READERS: request volatile durability, so that a volatile writer (the
   * executive's own streams) matches; the default transient-local reader matches only a
   * transient-local writer. */
  dds_qos_t *rqos = dds_create_qos();
  dds_copy_qos(rqos, qos);
  if (getenv("CADAM_VOLATILE_READERS") != NULL)
    dds_qset_durability(rqos, DDS_DURABILITY_VOLATILE);
  dds_entity_t readers[2] = {
    check(dds_create_reader(pp, t_lowcmd, rqos, NULL), "reader"),
    check(dds_create_reader(pp, t_handcmd, rqos, NULL), "reader"),
  };
  dds_delete_qos(rqos);
  for (int r = 0; r < 2; r++)
    check(dds_waitset_attach(ws, check(dds_create_readcondition(readers[r], DDS_ANY_STATE), "rc"),
                             (dds_attach_t) r),
          "attach");
  dds_delete_qos(qos);
  dds_delete_qos(wqos);

  /* CADAM_WAIT_FOR_READERS: publish once each state writer has matched a reader (up to
   * <timeout-s>), so a volatile reader (the executive's own) gets the burst without a QoS
   * change on its side. */
  if (getenv("CADAM_WAIT_FOR_READERS") != NULL) {
    const dds_time_t until = dds_time() + (dds_duration_t) (timeout_s * 1e9);
    dds_publication_matched_status_t m1, m2;
    do {
      check(dds_get_publication_matched_status(w_lowstate, &m1), "matched");
      check(dds_get_publication_matched_status(w_handstate, &m2), "matched");
      if (m1.current_count > 0 && m2.current_count > 0)
        break;
      dds_sleepfor(DDS_MSECS(10));
    } while (dds_time() < until);
    dds_sleepfor(DDS_MSECS(200)); /* the reader's side of discovery settles too */
  }
  for (int k = 0; k < samples; k++) {
    pnd_adam_msg_dds__LowState_ low;
    fill_low_state(&low, k, motors);
    check(dds_write(w_lowstate, &low), "write LowState_");
    printf("{\"event\":\"sent\",\"topic\":\"rt/lowstate\",\"sample\":");
    dump_low_state(&low);
    printf("}\n");
    pnd_adam_msg_dds__LowState__free(&low, DDS_FREE_CONTENTS);
    pnd_adam_msg_dds__HandState_ hand;
    fill_hand_state(&hand, k);
    check(dds_write(w_handstate, &hand), "write HandState_");
    printf("{\"event\":\"sent\",\"topic\":\"rt/handstate\",\"sample\":");
    dump_hand_state(&hand);
    printf("}\n");
  }
  fflush(stdout);

  int received[2] = { 0, 0 };
  const char *names[2] = { "rt/lowcmd", "rt/handcmd" };
  const dds_time_t deadline = dds_time() + (dds_duration_t) (timeout_s * 1e9);
  while ((received[0] < samples || received[1] < samples) && dds_time() < deadline) {
    (void) dds_waitset_wait_until(ws, NULL, 0, deadline);
    for (int r = 0; r < 2; r++) {
      void *got[MAX_TAKE] = { NULL };
      dds_sample_info_t infos[MAX_TAKE];
      dds_return_t n = dds_take(readers[r], got, infos, MAX_TAKE, MAX_TAKE);
      for (dds_return_t j = 0; j < n; j++) {
        if (!infos[j].valid_data)
          continue;
        received[r]++;
        printf("{\"event\":\"received\",\"topic\":\"%s\",\"sample\":", names[r]);
        if (r == 0)
          dump_low_cmd(got[j]);
        else
          dump_hand_cmd(got[j]);
        printf("}\n");
      }
      if (n > 0)
        (void) dds_return_loan(readers[r], got, n);
    }
    fflush(stdout);
  }
  printf("{\"event\":\"done\",\"lowcmd\":%d,\"handcmd\":%d}\n", received[0], received[1]);
  fflush(stdout);
  while (getchar() != EOF)
    ; /* the Python side closes our stdin once it has read our samples */
  dds_delete(pp);
  return received[0] >= samples && received[1] >= samples ? 0 : 1;
}

int main(int argc, char **argv)
{
  if (argc == 2 && strcmp(argv[1], "typeinfo") == 0)
    return typeinfo();
  if ((argc == 6 || argc == 7) && strcmp(argv[1], "run") == 0) {
    int samples = atoi(argv[4]);
    if (samples < 1 || samples > MAX_SAMPLES) {
      fprintf(stderr, "cadam: samples must be 1..%d\n", MAX_SAMPLES);
      return 2;
    }
    return run((dds_domainid_t) strtoul(argv[2], NULL, 10), (uint32_t) strtoul(argv[3], NULL, 10),
               samples, strtod(argv[5], NULL), argc == 7 ? argv[6] : NULL);
  }
  fprintf(stderr, "usage: %s typeinfo | run <domain> <motors> <samples> <timeout-s> [xcdr1|xcdr2]\n",
          argv[0]);
  return 2;
}
