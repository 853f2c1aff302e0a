/* crobot: a small C program that plays the Dobot Atom's firmware on the wire.
 *
 * Why it exists: the executive's Python simulator shares the executive's codec, so a test
 * against it cannot catch a decoder that rejects what a real CycloneDDS C writer sends.
 * This program is built at test time from idl/ by Debian's `idlc -l c` and linked with
 * -lddsc (CycloneDDS 0.10), and writes plain C structs with dds_write: the bytes on the
 * wire are exactly what a C firmware sends (XCDR1 padding bits in the header included).
 * See tests/crobot/__init__.py for the whole picture and tests/crobot/harness.py for how
 * it is built and driven.
 *
 *   crobot <domain> [--record FILE] [--rate rt/upper/state=500 ...] [--fsm ID]
 *          [--joint-fsm 2,3,...] [--init-upper q,q,...] [--init-lower ...] [--init-hands ...]
 *          [--limits-upper lo:hi,...] [--limits-lower ...] [--limits-hands ...]
 *          [--vmax RAD_PER_S] [--amr-trip-s S] [--battery PERCENT] [--motor-mode N]
 *          [--probe]
 *
 * One source serves every interface variant; the harness compiles it with
 *   -DCROBOT_UPPER_IMU          UpperState_ has imu_state (upper_state=with_imu)
 *   -DCROBOT_FSM_ACTION         SetFsmId_ has current_action (set_fsm_id=with_action)
 *   -DCROBOT_ESTOP_DI           EmergencyState_ has di_emergency_triggered (four_flags)
 *   -DCROBOT_AMR_MOVE_TO_CHARGE AMRCommandType has MOVE_TO_CHARGE (move_to_charge)
 *   -DCROBOT_VARIANT='"seed"'   the variant's name, for the record's header
 * The types themselves always come from the headers idlc made for the variant, so the bytes
 * on the wire are the variant's whatever the flags say; the flags only choose which fields
 * this program fills and records. A flag naming a field the headers lack fails to compile,
 * and so does a missing or extra MOVE_TO_CHARGE (-Wswitch, -Werror: every enumerator of
 * AMRCommandType must be named). AMR enumerators are used by name, so their numbers come
 * from idlc's headers.
 *
 * Single-threaded on purpose: one loop takes every command, steps the models, publishes
 * the state topics that are due and handles stdin, then sleeps in ppoll() until the next
 * due time or a line on stdin. SIGTERM and SIGINT are blocked except inside ppoll(), so a
 * signal can never slip in between checking the stop flag and going to sleep.
 *
 * One exception, for the e-stop benchmark (bench/parts/estop_c.py), only with --probe: a second
 * set of command readers whose listeners run on CycloneDDS's receive thread and stamp the
 * arrival of the first hold (and the first CANCEL_TASK) after an e-stop. The main loop
 * takes commands every 2 ms, which is too coarse a clock for a sub-millisecond figure; the
 * probe readers have their own histories, so the main loop and its record are unchanged.
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dds/dds.h"

#include "crobot_idl.h" /* written by the harness: #includes of the variant's idlc headers */

#ifndef CROBOT_VARIANT
#define CROBOT_VARIANT "unknown"
#endif

/* idlc's C names: T(UpperState_) is the struct, E(MOVE_TO_TAG) an enumerator. */
#define T(name) dobot_atom_msg_dds__##name
#define E(name) dobot_atom_msg_dds__##name
#define DESC(name) (&dobot_atom_msg_dds__##name##_desc)
#define LEN(array) ((int) (sizeof(array) / sizeof((array)[0])))

#define MAX_JOINTS 32
#define COMMAND_POLL_S 0.002   /* commands are taken at least this often (500 Hz streams) */
#define RECORD_FLUSH_S 0.1     /* the record is flushed at least this often */
#define MAX_STEP_S 0.1         /* a late loop never integrates more than this at once */
#define READER_DEPTH 64        /* 128 ms of a 500 Hz stream between two takes */
#define TAKE_BATCH 16
#define LIMIT_TOLERANCE 1e-5   /* q is float32 on the wire: a clamped limit may round out */
#define NSEC 1e9

/* --- the 14 topics of DESIGN.md 3, hard-coded here on purpose (independent of Python) --- */

enum state_topic { ST_UPPER, ST_LOWER, ST_HANDS, ST_AMR, ST_EMERGENCY, ST_NODES, N_STATE };
static const struct {
  const char *name;  /* DDS topic name */
  const char *key;   /* short name, as the profile's rates and the record call it */
  double default_hz; /* executive/robots/profiles/atom-sdk.yaml; the harness passes the real ones */
} STATE[N_STATE] = {
  [ST_UPPER] = { "rt/upper/state", "upper_state", 500 },
  [ST_LOWER] = { "rt/lower/state", "lower_state", 500 },
  [ST_HANDS] = { "rt/hands/state", "hands_state", 100 },
  [ST_AMR] = { "rt/amr/state", "amr_state", 20 },
  [ST_EMERGENCY] = { "rt/emergency/state", "emergency_state", 50 },
  [ST_NODES] = { "rt/main/nodes/state", "main_nodes_state", 10 },
};

enum command_topic { CT_UPPER, CT_LOWER, CT_HANDS, CT_FSM, CT_CONTROL, CT_CLEAR, CT_AMR,
                     CT_REMOTE, N_COMMAND };
static const struct {
  const char *name; /* DDS topic name */
  const char *key;  /* the record's "topic" (executive/sim/record.py's names) */
} COMMAND[N_COMMAND] = {
  [CT_UPPER] = { "rt/upper/cmd", "upper_cmd" },
  [CT_LOWER] = { "rt/lower/cmd", "lower_cmd" },
  [CT_HANDS] = { "rt/hands/cmd", "hands_cmd" },
  [CT_FSM] = { "rt/set/fsm/id", "set_fsm_id" },
  [CT_CONTROL] = { "rt/switch/upper/control", "switch_upper_control" },
  [CT_CLEAR] = { "rt/clear/errors", "clear_errors" },
  [CT_AMR] = { "rt/amr/cmd", "amr_cmd" },
  [CT_REMOTE] = { "rt/remote/control", "remote_control" },
};

/* --- the robot's state ----------------------------------------------------------------- */

enum group_id { G_UPPER, G_LOWER, G_HANDS, N_GROUPS };
enum result { R_APPLIED, R_IGNORED, R_NON_FINITE, R_OUT_OF_RANGE, R_BAD_GAINS, N_RESULTS };
static const char *const RESULT[N_RESULTS] = { "applied", "ignored", "non_finite",
                                               "out_of_range", "bad_gains" };

typedef struct joint_group {
  const char *name; /* "upper": the record's counters key */
  const char *key;  /* "upper_cmd": the record's topic */
  int n;
  double q[MAX_JOINTS], dq[MAX_JOINTS];
  double target[MAX_JOINTS];
  bool has_target; /* false: hold where it is */
  bool has_limits;
  double lo[MAX_JOINTS], hi[MAX_JOINTS];
  float prev[MAX_JOINTS][5]; /* last command's q dq tau kp kd, for "change" and "same" */
  bool has_prev;
  unsigned long counts[N_RESULTS];
} joint_group;

enum estop { ES_SOFT, ES_HARD, ES_AMR, ES_DI, N_ESTOP };
static const char *const ESTOP_NAME[N_ESTOP] = { "soft", "hard", "amr", "di" };

typedef struct amr_model {
  T(DeviceStatus_) device;
  T(NavigationStatus_) nav;
  uint32_t task_id, target_id;
  float theta; /* the task's absolute heading */
  float yaw;   /* reported heading: theta once a task completes (no travel is modelled) */
  double remaining; /* seconds of driving left in the task */
  bool active, paused, remote;
  uint32_t work_mode; /* 0 task, 3 remote control */
} amr_model;

/* --probe: when did the first hold of each joint stream, and the first CANCEL_TASK, arrive
 * after the last e-stop? A hold is a command whose every q is within PROBE_HOLD_TOL of the
 * position the robot published when the e-stop was set (the snapshot): the executive's
 * hold freezes the measured position. The bench keeps the joints still (a tiny --vmax) and
 * moves the commanded ones well away first, so no trajectory command can match. */
#define PROBE_HOLD_TOL 1e-5
typedef struct probe {
  bool enabled;
  pthread_mutex_t lock; /* between the main loop (arming, replies) and the listeners */
  bool armed;
  float snapshot[3][MAX_JOINTS]; /* by joint group: upper, lower, hands */
  int n[3];
  double written;  /* CLOCK_MONOTONIC s when the e-stop sample was handed to dds_write */
  double hold[3];  /* arrival of each stream's first hold after arming (0: none yet) */
  double cancel;   /* arrival of the first CANCEL_TASK after arming (0: none yet) */
  unsigned long commands[3]; /* commands the probe saw per stream, since start */
  dds_entity_t readers[4];   /* upper, lower, hands, amr */
} probe;

typedef struct robot {
  /* configuration */
  double hz[N_STATE];
  uint16_t joint_fsm[32];
  int n_joint_fsm;
  double vmax, amr_trip_s;
  uint8_t motor_mode;
  /* what the firmware knows */
  uint16_t fsm_id;
  bool upper_control;
  joint_group groups[N_GROUPS];
  amr_model amr;
  double battery; /* percent */
  /* injected faults */
  bool estop[N_ESTOP];
  uint32_t bms_alarms[2]; /* upper, lower */
  bool amr_estop, refuse_control;
  bool silenced[N_STATE];
  /* the samples published; persistent so heartbeats and servo errors live in them */
  T(UpperState_) upper;
  T(LowerState_) lower;
  T(HandsState_) hands;
  T(AMRState_) amr_state;
  T(EmergencyState_) emergency;
  T(MainNodesState_) nodes;
  /* DDS */
  dds_entity_t participant;
  dds_entity_t writers[N_STATE], readers[N_COMMAND];
  double next_due[N_STATE];
  unsigned long published[N_STATE];
  double last_written[N_STATE]; /* CLOCK_MONOTONIC s of each topic's last dds_write */
  /* record */
  FILE *record;
  double last_flush, last_step;
  probe probe;
} robot;

static volatile sig_atomic_t stop_signal = 0;

static void on_signal(int sig) { stop_signal = sig; }

/* --- small helpers ---------------------------------------------------------------------- */

static double now_s(clockid_t clock)
{
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / NSEC;
}

static double mono(void) { return now_s(CLOCK_MONOTONIC); }

static void die(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("crobot: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

static dds_entity_t check(dds_entity_t e, const char *what)
{
  if (e < 0)
    die("%s failed: %s", what, dds_strretcode(e));
  return e;
}

/* A number as Python's json writes it (NaN and Infinity included), so Recording reads it. */
static void json_num(FILE *f, double x)
{
  if (isnan(x))
    fputs("NaN", f);
  else if (isinf(x))
    fputs(x > 0 ? "Infinity" : "-Infinity", f);
  else
    fprintf(f, "%.9g", x);
}

static void json_str(FILE *f, const char *s)
{
  fputc('"', f);
  for (; s != NULL && *s; s++) {
    unsigned char c = (unsigned char) *s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20 || c >= 0x7f) /* bytes from the wire: keep the line valid ASCII JSON */
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static const char *nav_name(T(NavigationStatus_) s)
{
  switch (s) {
  case E(UNKNOWN): return "UNKNOWN";
  case E(QUEUING): return "QUEUING";
  case E(RUNNING): return "RUNNING";
  case E(COMPLETED): return "COMPLETED";
  case E(FAILED): return "FAILED";
  case E(PAUSED): return "PAUSED";
  case E(CANCELED): return "CANCELED";
  case E(WAITING_CONFIRM): return "WAITING_CONFIRM";
  case E(IDLE): return "IDLE";
  case E(STOPPED): return "STOPPED";
  }
  return "?";
}

static const char *device_name(T(DeviceStatus_) s)
{
  switch (s) {
  case E(DEVUNKNOWN): return "DEVUNKNOWN";
  case E(DEVIDLE): return "DEVIDLE";
  case E(TASKING): return "TASKING";
  case E(ERROR): return "ERROR";
  case E(OFFLINE): return "OFFLINE";
  case E(INIT): return "INIT";
  case E(CHARGING): return "CHARGING";
  case E(UPGRADE): return "UPGRADE";
  }
  return "?";
}

/* By enumerator name: whatever number idlc gave it in this variant's header. */
static const char *amr_command_name(T(AMRCommandType) c)
{
  switch (c) {
  case E(CANCEL_TASK): return "CANCEL_TASK";
  case E(PAUSE_TASK): return "PAUSE_TASK";
  case E(RESUME_TASK): return "RESUME_TASK";
  case E(MOVE_TO_TAG): return "MOVE_TO_TAG";
#ifdef CROBOT_AMR_MOVE_TO_CHARGE
  case E(MOVE_TO_CHARGE): return "MOVE_TO_CHARGE";
#endif
  case E(REMOTE_CONTROL): return "REMOTE_CONTROL";
  case E(ROTATE): return "ROTATE";
  case E(START_REMOTE): return "START_REMOTE";
  case E(STOP_REMOTE): return "STOP_REMOTE";
  case E(SUBSCRIBE_LASER): return "SUBSCRIBE_LASER";
  case E(UNSUBSCRIBE_LASER): return "UNSUBSCRIBE_LASER";
  case E(START_MAPPING): return "START_MAPPING";
  case E(SAVE_MAP): return "SAVE_MAP";
  case E(STOP_MAPPING): return "STOP_MAPPING";
  case E(SET_VEL): return "SET_VEL";
  case E(SET_ACCEL): return "SET_ACCEL";
  case E(SET_DECEL): return "SET_DECEL";
  }
  return "?";
}

/* --- the record (format: executive/sim/record.py) -------------------------------------- */

static void record_flush(robot *r, double now)
{
  if (r->record != NULL)
    fflush(r->record);
  r->last_flush = now;
}

static void record_header(robot *r, double now)
{
  FILE *f = r->record;
  fprintf(f, "{\"t\":%.9f,\"sim\":{\"impl\":\"c\",\"pid\":%ld,\"variant\":", now, (long) getpid());
  json_str(f, CROBOT_VARIANT);
  fputs(",\"rates\":{", f);
  for (int i = 0; i < N_STATE; i++)
    fprintf(f, "%s\"%s\":%g", i ? "," : "", STATE[i].key, r->hz[i]);
  fputs("},\"joint_fsm\":[", f);
  for (int i = 0; i < r->n_joint_fsm; i++)
    fprintf(f, "%s%u", i ? "," : "", (unsigned) r->joint_fsm[i]);
  fprintf(f, "],\"vmax\":%g,\"amr_trip_s\":%g}}\n", r->vmax, r->amr_trip_s);
  record_flush(r, now);
}

/* One joint command: q and kp always (change null for the first), or the short "same"
 * form when q dq tau kp kd all equal the previous command on the topic. */
static void record_stream(robot *r, joint_group *g, double t, double sent, const float cmd[][5],
                          enum result res, double dev)
{
  FILE *f = r->record;
  bool same = g->has_prev && memcmp(g->prev, cmd, sizeof(float[5]) * (size_t) g->n) == 0;
  double change = 0.0;
  if (g->has_prev && !same) {
    for (int i = 0; i < g->n && !isnan(change); i++) {
      double d = fabs((double) cmd[i][0] - (double) g->prev[i][0]);
      change = isnan(d) ? d : fmax(change, d);
    }
  }
  if (f != NULL) {
    fprintf(f, "{\"t\":%.9f,\"sent\":%.9f,\"topic\":\"%s\",\"result\":\"%s\",\"dev\":", t, sent,
            g->key, RESULT[res]);
    json_num(f, dev);
    if (same) {
      fputs(",\"same\":true}\n", f);
    } else {
      fputs(",\"change\":", f);
      if (g->has_prev)
        json_num(f, change);
      else
        fputs("null", f);
      static const int COLS[] = {0, 2, 3}; /* q, tau (the feed-forward), kp */
      static const char *const NAMES[] = {",\"q\":[", "],\"tau\":[", "],\"kp\":["};
      for (int c = 0; c < 3; c++) {
        fputs(NAMES[c], f);
        for (int i = 0; i < g->n; i++) {
          if (i)
            fputc(',', f);
          json_num(f, (double) cmd[i][COLS[c]]);
        }
      }
      fputs("]}\n", f);
    }
  }
  memcpy(g->prev, cmd, sizeof(float[5]) * (size_t) g->n);
  g->has_prev = true;
}

/* Opens a one-shot command's line; the caller writes the fields, then record_event_end. */
static FILE *record_event_begin(robot *r, double t, enum command_topic topic)
{
  if (r->record != NULL)
    fprintf(r->record, "{\"t\":%.9f,\"topic\":\"%s\",\"fields\":{", t, COMMAND[topic].key);
  return r->record;
}

static void record_event_end(robot *r, const char *result)
{
  if (r->record == NULL)
    return;
  fputs("},\"result\":", r->record);
  json_str(r->record, result);
  fputs("}\n", r->record);
}

static void record_fault(robot *r, double t, const char *action, const char *kind,
                         const char *target, double value, const char *source)
{
  FILE *f = r->record;
  if (f == NULL)
    return;
  fprintf(f, "{\"t\":%.9f,\"fault\":{\"action\":\"%s\",\"kind\":\"%s\",\"target\":", t, action,
          kind);
  json_str(f, target);
  fputs(",\"value\":", f);
  json_num(f, value);
  fputs(",\"duration\":0,\"source\":", f);
  json_str(f, source);
  fputs("}}\n", f);
}

static void record_counters(robot *r, double t)
{
  FILE *f = r->record;
  if (f == NULL)
    return;
  fprintf(f, "{\"t\":%.9f,\"counters\":{", t);
  for (int g = 0; g < N_GROUPS; g++) {
    const joint_group *jg = &r->groups[g];
    unsigned long received = 0;
    for (int k = 0; k < N_RESULTS; k++)
      received += jg->counts[k];
    fprintf(f, "%s\"%s\":{\"received\":%lu", g ? "," : "", jg->name, received);
    for (int k = 0; k < N_RESULTS; k++)
      fprintf(f, ",\"%s\":%lu", RESULT[k], jg->counts[k]);
    fputc('}', f);
  }
  fputs("}}\n", f);
}

/* --- the firmware's rules (DESIGN.md 3.3) ---------------------------------------------- */

static bool any_estop(const robot *r)
{
  for (int i = 0; i < N_ESTOP; i++)
    if (r->estop[i])
      return true;
  return false;
}

static bool fsm_allows_joints(const robot *r)
{
  for (int i = 0; i < r->n_joint_fsm; i++)
    if (r->joint_fsm[i] == r->fsm_id)
      return true;
  return false;
}

/* Upper joints: upper control and a joint-control FSM state; lower: that FSM state; hands:
 * always; nothing while any e-stop flag is set. */
static bool obeys(const robot *r, enum group_id g)
{
  if (any_estop(r))
    return false;
  if (g == G_HANDS)
    return true;
  return fsm_allows_joints(r) && (g == G_LOWER || r->upper_control);
}

/* A group that may no longer be commanded drops its target and stays where it is. */
static void refresh_permissions(robot *r)
{
  for (int g = 0; g < N_GROUPS; g++)
    if (!obeys(r, (enum group_id) g))
      r->groups[g].has_target = false;
}

static enum result check_command(const joint_group *g, const float cmd[][5])
{
  for (int i = 0; i < g->n; i++)
    for (int k = 0; k < 5; k++)
      if (!isfinite(cmd[i][k]))
        return R_NON_FINITE;
  for (int i = 0; i < g->n && g->has_limits; i++)
    if (cmd[i][0] < g->lo[i] - LIMIT_TOLERANCE || cmd[i][0] > g->hi[i] + LIMIT_TOLERANCE)
      return R_OUT_OF_RANGE;
  for (int i = 0; i < g->n; i++)
    if (!(cmd[i][3] > 0.0f) || !(cmd[i][4] >= 0.0f))
      return R_BAD_GAINS;
  return R_APPLIED;
}

/* max |q - measured|; NaN if any q is NaN (fmax would hide it). */
static double deviation(const joint_group *g, const float cmd[][5])
{
  double dev = 0.0;
  for (int i = 0; i < g->n; i++) {
    double d = fabs((double) cmd[i][0] - g->q[i]);
    if (isnan(d))
      return d;
    dev = fmax(dev, d);
  }
  return dev;
}

static void joint_command(robot *r, enum group_id gid, double t, double sent,
                          const T(MotorCmd_) *motors)
{
  joint_group *g = &r->groups[gid];
  float cmd[MAX_JOINTS][5];
  for (int i = 0; i < g->n; i++) {
    cmd[i][0] = motors[i].q;
    cmd[i][1] = motors[i].dq;
    cmd[i][2] = motors[i].tau;
    cmd[i][3] = motors[i].kp;
    cmd[i][4] = motors[i].kd;
  }
  enum result res = check_command(g, (const float (*)[5]) cmd);
  if (res == R_APPLIED && !obeys(r, gid))
    res = R_IGNORED;
  double dev = deviation(g, (const float (*)[5]) cmd);
  if (res == R_APPLIED) {
    for (int i = 0; i < g->n; i++) {
      double q = cmd[i][0];
      g->target[i] = g->has_limits ? fmin(fmax(q, g->lo[i]), g->hi[i]) : q;
    }
    g->has_target = true;
  }
  g->counts[res]++;
  record_stream(r, g, t, sent, (const float (*)[5]) cmd, res, dev);
}

/* Joints move toward their target at most vmax * dt per step: simple, and never a jump. */
static void step_joints(robot *r, double dt)
{
  double max_move = r->vmax * dt;
  for (int gid = 0; gid < N_GROUPS; gid++) {
    joint_group *g = &r->groups[gid];
    for (int i = 0; i < g->n; i++) {
      if (!g->has_target) {
        g->dq[i] = 0.0;
        continue;
      }
      double d = g->target[i] - g->q[i];
      if (fabs(d) <= max_move) {
        g->q[i] = g->target[i];
        g->dq[i] = dt > 0 ? d / dt : 0.0;
      } else {
        g->q[i] += copysign(max_move, d);
        g->dq[i] = copysign(r->vmax, d);
      }
    }
  }
}

/* The base's task runs for amr_trip_s of un-halted time, then COMPLETED. An e-stop (the
 * base's own or any EmergencyState_ flag) halts it: the clock stops, statuses stay. */
static void step_amr(robot *r, double dt)
{
  amr_model *a = &r->amr;
  bool halted = r->amr_estop || any_estop(r);
  if (!a->active || a->paused || halted)
    return;
  a->remaining -= dt;
  if (a->remaining <= 0) {
    a->active = false;
    a->nav = E(COMPLETED);
    a->device = E(DEVIDLE);
    a->yaw = a->theta;
  }
}

/* As seeds document: a new task does not cancel the running one (here: it is refused;
 * send CANCEL_TASK first); task_id is the command_id of the task shown. */
static void amr_command(robot *r, const T(AMRCommand_) *c, char *result, size_t size)
{
  amr_model *a = &r->amr;
  switch (c->command_type) {
  case E(MOVE_TO_TAG):
    if (a->active) {
      snprintf(result, size, "refused: task %" PRIu32 " is active (CANCEL_TASK first)",
               a->task_id);
    } else if (a->remote) {
      snprintf(result, size, "refused: remote driving (STOP_REMOTE first)");
    } else {
      a->active = true;
      a->paused = false;
      a->task_id = c->command_id;
      a->target_id = c->target_id;
      a->theta = c->theta;
      a->remaining = r->amr_trip_s;
      a->device = E(TASKING);
      a->nav = E(RUNNING);
      snprintf(result, size, "task %" PRIu32 " to tag %" PRIu32 " running", a->task_id,
               a->target_id);
    }
    break;
  case E(CANCEL_TASK):
    if (a->active) {
      a->active = false;
      a->nav = E(CANCELED);
      a->device = E(DEVIDLE);
      snprintf(result, size, "task %" PRIu32 " canceled", a->task_id);
    } else {
      snprintf(result, size, "no task to cancel");
    }
    break;
  case E(PAUSE_TASK):
    if (a->active && !a->paused) {
      a->paused = true;
      a->nav = E(PAUSED);
    }
    snprintf(result, size, "%s", a->paused ? "paused" : "no task to pause");
    break;
  case E(RESUME_TASK):
    if (a->active && a->paused) {
      a->paused = false;
      a->nav = E(RUNNING);
      snprintf(result, size, "resumed");
    } else {
      snprintf(result, size, "no paused task");
    }
    break;
  case E(START_REMOTE):
    if (a->active) {
      snprintf(result, size, "refused: a task is active (CANCEL_TASK first)");
    } else {
      a->remote = true;
      a->work_mode = 3;
      snprintf(result, size, "remote driving on");
    }
    break;
  case E(STOP_REMOTE):
    a->remote = false;
    a->work_mode = 0;
    snprintf(result, size, "remote driving off");
    break;
  case E(REMOTE_CONTROL):
    snprintf(result, size, "%s",
             a->remote ? "velocities taken (driving is not simulated)"
                       : "refused: START_REMOTE first");
    break;
  default:
    snprintf(result, size, "recorded (not simulated)");
    break;
  }
}

/* --- servo errors live in the MainNodesState_ sample itself ----------------------------- */

/* The error_code field of node ``group[index]`` (waist: index 0), or NULL if there is none. */
static uint16_t *servo_error_field(T(MainNodesState_) *s, const char *group, unsigned index)
{
  struct {
    const char *name;
    T(AxisStateInfo_) *axes;
    int n;
  } arrays[] = {
    { "left_leg", s->left_leg, LEN(s->left_leg) },
    { "right_leg", s->right_leg, LEN(s->right_leg) },
    { "waist", &s->waist, 1 },
    { "left_arm", s->left_arm, LEN(s->left_arm) },
    { "right_arm", s->right_arm, LEN(s->right_arm) },
    { "head", s->head, LEN(s->head) },
  };
  for (int i = 0; i < LEN(arrays); i++)
    if (strcmp(group, arrays[i].name) == 0)
      return index < (unsigned) arrays[i].n ? &arrays[i].axes[index].error_code : NULL;
  if (strcmp(group, "ecat2can") == 0 && index < (unsigned) LEN(s->ecat2can))
    return &s->ecat2can[index].error_code;
  return NULL;
}

/* Every error code back to 0; how many were set. */
static int clear_servo_errors(T(MainNodesState_) *s)
{
  static const char *const groups[] = { "left_leg", "right_leg", "waist", "left_arm",
                                        "right_arm", "head", "ecat2can" };
  int cleared = 0;
  for (int g = 0; g < LEN(groups); g++) {
    uint16_t *code;
    for (unsigned i = 0; (code = servo_error_field(s, groups[g], i)) != NULL; i++) {
      cleared += *code != 0;
      *code = 0;
    }
  }
  return cleared;
}

/* --- commands in -------------------------------------------------------------------------- */

static void on_set_fsm(robot *r, double t, const T(SetFsmId_) *s)
{
  char result[96];
  r->fsm_id = s->id;
  snprintf(result, sizeof(result), "fsm %u (%s)", (unsigned) s->id,
           fsm_allows_joints(r) ? "joint control" : "no joint control");
  FILE *f = record_event_begin(r, t, CT_FSM);
  if (f != NULL) {
    fprintf(f, "\"id\":%u", (unsigned) s->id);
#ifdef CROBOT_FSM_ACTION
    fputs(",\"current_action\":", f);
    json_str(f, s->current_action);
#endif
  }
  record_event_end(r, result);
}

static void on_switch_control(robot *r, double t, const T(SwitchUpperControl_) *s)
{
  const char *result;
  if (!s->flag) {
    r->upper_control = false;
    result = "upper control off";
  } else if (r->refuse_control) {
    result = "refused (fault)";
  } else {
    r->upper_control = true;
    result = "upper control on";
  }
  FILE *f = record_event_begin(r, t, CT_CONTROL);
  if (f != NULL)
    fprintf(f, "\"flag\":%s", s->flag ? "true" : "false");
  record_event_end(r, result);
}

static void on_clear_errors(robot *r, double t, const T(ClearErrors_) *s)
{
  char result[64];
  int n = clear_servo_errors(&r->nodes);
  snprintf(result, sizeof(result), "cleared %d servo error(s)", n);
  if (n > 0)
    record_fault(r, t, "clear", "servo-error", "", 0, "rt/clear/errors");
  FILE *f = record_event_begin(r, t, CT_CLEAR);
  if (f != NULL)
    fprintf(f, "\"msg_id\":%" PRId32, s->msg_id);
  record_event_end(r, result);
}

static void on_amr(robot *r, double t, const T(AMRCommand_) *c)
{
  char result[128];
  amr_command(r, c, result, sizeof(result));
  FILE *f = record_event_begin(r, t, CT_AMR);
  if (f != NULL) {
    fputs("\"command_type\":", f);
    json_str(f, amr_command_name(c->command_type));
    fprintf(f, ",\"target_id\":%" PRIu32 ",\"linear_vel\":", c->target_id);
    json_num(f, c->linear_vel);
    fputs(",\"angular_vel\":", f);
    json_num(f, c->angular_vel);
    fprintf(f, ",\"command_id\":%" PRIu32 ",\"timestamp\":%" PRIu64 ",\"theta\":", c->command_id,
            c->timestamp);
    json_num(f, c->theta);
  }
  record_event_end(r, result);
}

static void on_remote(robot *r, double t, const T(RemoteControl_) *c)
{
  FILE *f = record_event_begin(r, t, CT_REMOTE);
  if (f != NULL) {
    fputs("\"btn_move\":{\"x\":", f);
    json_num(f, c->btn_move.x);
    fputs(",\"y\":", f);
    json_num(f, c->btn_move.y);
    fputs("},\"btn_turn\":{\"x\":", f);
    json_num(f, c->btn_turn.x);
    fputs(",\"y\":", f);
    json_num(f, c->btn_turn.y);
    fputc('}', f);
  }
  record_event_end(r, "recorded (walking is not simulated)");
}

/* Take everything waiting on one reader and act on each valid sample, oldest first. */
static void take_all(robot *r, enum command_topic topic, double t, double wall_minus_mono)
{
  void *samples[TAKE_BATCH];
  dds_sample_info_t infos[TAKE_BATCH];
  dds_return_t n;
  do {
    memset(samples, 0, sizeof(samples)); /* NULL pointers: CycloneDDS lends its own buffers */
    n = dds_take(r->readers[topic], samples, infos, TAKE_BATCH, TAKE_BATCH);
    if (n < 0)
      die("take on %s: %s", COMMAND[topic].name, dds_strretcode(n));
    for (dds_return_t i = 0; i < n; i++) {
      if (!infos[i].valid_data) /* a writer went away: no command */
        continue;
      /* source timestamps are wall-clock ns: put them on CLOCK_MONOTONIC like "t" */
      double sent = (double) infos[i].source_timestamp / NSEC - wall_minus_mono;
      const void *s = samples[i];
      switch (topic) {
      case CT_UPPER:
        joint_command(r, G_UPPER, t, sent, ((const T(UpperCmd_) *) s)->motor_cmd);
        break;
      case CT_LOWER:
        joint_command(r, G_LOWER, t, sent, ((const T(LowerCmd_) *) s)->motor_cmd);
        break;
      case CT_HANDS:
        joint_command(r, G_HANDS, t, sent, ((const T(HandsCmd_) *) s)->hands);
        break;
      case CT_FSM: on_set_fsm(r, t, s); break;
      case CT_CONTROL: on_switch_control(r, t, s); break;
      case CT_CLEAR: on_clear_errors(r, t, s); break;
      case CT_AMR: on_amr(r, t, s); break;
      case CT_REMOTE: on_remote(r, t, s); break;
      case N_COMMAND: break;
      }
      refresh_permissions(r); /* an FSM or control change is in effect for the next sample */
    }
    if (n > 0)
      (void) dds_return_loan(r->readers[topic], samples, n);
  } while (n == TAKE_BATCH);
}

/* One-shot commands first, so an FSM switch that arrived with joint commands applies to
 * them (as on the Python sim), then the three joint streams. */
static void take_commands(robot *r, double t)
{
  double wall_minus_mono = now_s(CLOCK_REALTIME) - mono();
  static const enum command_topic order[] = { CT_FSM, CT_CONTROL, CT_CLEAR, CT_AMR,
                                              CT_REMOTE, CT_UPPER, CT_LOWER, CT_HANDS };
  for (int i = 0; i < LEN(order); i++)
    take_all(r, order[i], t, wall_minus_mono);
}

/* --- state out -------------------------------------------------------------------------- */

static void fill_motors(const robot *r, const joint_group *g, T(MotorState_) *m)
{
  for (int i = 0; i < g->n; i++) {
    m[i].mode = r->motor_mode;
    m[i].q = m[i].q_raw = (float) g->q[i];
    m[i].dq = m[i].dq_raw = (float) g->dq[i];
    m[i].ddq = m[i].ddq_raw = 0.0f;
    m[i].tau_est = 0.0f;
    m[i].mcu_temp = 42;
    m[i].mos_temp = 40;
    m[i].motor_temp = 38;
    m[i].bus_voltage = 48;
  }
}

static void fill_bms(const robot *r, T(BmsState_) *b, uint32_t alarms)
{
  b->bms_state = 1;
  b->afe_state = 1;
  b->bms_alarms = alarms;
  b->battery_level = (uint16_t) lround(fmin(fmax(r->battery, 0.0), 100.0));
  b->battery_health = 98;
  b->pcb_board_temp = 32;
  b->afe_chip_temp = 34;
  b->battery_now_current = 350; /* 10 mA units */
  for (int i = 0; i < LEN(b->cells_voltage); i++)
    b->cells_voltage[i] = (uint16_t) (3400 + 8 * r->battery); /* mV */
  b->battery_pack_current_voltage = b->battery_pack_io_voltage =
      (uint16_t) (16 * (3400 + 8 * r->battery) / 10); /* 10 mV units */
  b->bms_hardware_version = 0x0100;
  b->bms_software_version = 0x0105;
  b->heartbeat++; /* wraps at 16 bits, as a uint16 counter does */
}

static void fill_imu(T(IMUState_) *imu)
{
  imu->quaternion[0] = 1.0f; /* upright, at rest */
  imu->accelerometer[2] = 9.81f;
  imu->temperature = 36;
}

static void fill_state(robot *r, enum state_topic st)
{
  switch (st) {
  case ST_UPPER:
    memset(r->upper.robot_type, 0, sizeof(r->upper.robot_type));
    memcpy(r->upper.robot_type, "Atom", 4);
    r->upper.is_upper_control = r->upper_control;
    r->upper.fsm_id = r->fsm_id;
#ifdef CROBOT_UPPER_IMU
    fill_imu(&r->upper.imu_state);
#endif
    fill_motors(r, &r->groups[G_UPPER], r->upper.motor_state);
    fill_bms(r, &r->upper.bms_state, r->bms_alarms[0]);
    break;
  case ST_LOWER:
    r->lower.fsm_id = r->fsm_id;
    fill_imu(&r->lower.imu_state);
    fill_motors(r, &r->groups[G_LOWER], r->lower.motor_state);
    fill_bms(r, &r->lower.bms_state, r->bms_alarms[1]);
    break;
  case ST_HANDS:
    fill_motors(r, &r->groups[G_HANDS], r->hands.hands);
    break;
  case ST_AMR: {
    T(AMRState_) *s = &r->amr_state;
    s->device_status = r->amr.device;
    s->navigation_status = r->amr.nav;
    s->basic_status.battery_level = (float) r->battery;
    s->basic_status.battery_voltage = (float) (16 * (3400 + 8 * r->battery) / 1000.0);
    s->basic_status.battery_current = 3.5f;
    s->basic_status.heartbeat++;
    s->position[2] = r->amr.yaw;
    s->amr_event.emergency_stop_pressed = r->amr_estop;
    s->amr_event.low_battery = r->battery < 15.0;
    s->task_id = r->amr.task_id;
    s->work_mode = r->amr.work_mode;
    break;
  }
  case ST_EMERGENCY:
    r->emergency.soft_emergency_triggered = r->estop[ES_SOFT];
    r->emergency.hard_emergency_triggered = r->estop[ES_HARD];
    r->emergency.amr_emergency_triggered = r->estop[ES_AMR];
#ifdef CROBOT_ESTOP_DI
    r->emergency.di_emergency_triggered = r->estop[ES_DI];
#endif
    break;
  case ST_NODES: /* error codes are written into the sample when injected */
  case N_STATE:
    break;
  }
}

static const void *state_sample(const robot *r, enum state_topic st)
{
  const void *samples[N_STATE] = { &r->upper,     &r->lower,     &r->hands,
                                   &r->amr_state, &r->emergency, &r->nodes };
  return samples[st];
}

/* Fill and write one state sample; the CLOCK_MONOTONIC time just before dds_write. */
static double write_state(robot *r, enum state_topic st)
{
  fill_state(r, st);
  double t = mono();
  dds_return_t rc = dds_write(r->writers[st], state_sample(r, st));
  if (rc < 0)
    die("write on %s: %s", STATE[st].name, dds_strretcode(rc));
  r->published[st]++;
  r->last_written[st] = t;
  return t;
}

/* Publish every state topic that is due; a late loop publishes once and skips ahead
 * rather than bursting to catch up (the firmware's periodic tasks behave alike). */
static void publish_due(robot *r, double now)
{
  for (int st = 0; st < N_STATE; st++) {
    if (now < r->next_due[st])
      continue;
    double period = 1.0 / r->hz[st];
    r->next_due[st] += period;
    if (r->next_due[st] < now)
      r->next_due[st] = now + period;
    if (r->silenced[st])
      continue; /* the model runs on; only the topic is quiet */
    (void) write_state(r, (enum state_topic) st);
  }
}

/* Write the state topics in the bit set ``topics`` now, out of turn (silenced ones
 * excepted), so an injected fault is on the wire at once and a test knows when: the time
 * just before the first write, or 0 if nothing was written. The periodic schedule is
 * unchanged: this is one sample more, as a firmware publishing on change would send. */
static double publish_now(robot *r, unsigned topics)
{
  double first = 0.0;
  for (int st = 0; st < N_STATE; st++) {
    if (!(topics & (1u << st)) || r->silenced[st])
      continue;
    double t = write_state(r, (enum state_topic) st);
    if (first == 0.0)
      first = t;
  }
  return first;
}

static double next_wakeup(const robot *r, double now)
{
  double next = fmin(now + COMMAND_POLL_S, r->last_flush + RECORD_FLUSH_S);
  for (int st = 0; st < N_STATE; st++)
    next = fmin(next, r->next_due[st]);
  return next;
}

/* --- the benchmark's probe (--probe) ------------------------------------------------------ */

typedef struct probe_ctx {
  robot *r;
  int stream; /* a joint group (G_UPPER, G_LOWER, G_HANDS), or N_GROUPS for rt/amr/cmd */
} probe_ctx;

static probe_ctx probe_ctxs[N_GROUPS + 1];

/* A probe reader's listener, on CycloneDDS's receive thread: the arrival time first, then
 * the samples (the probe readers' own: the main loop never sees these). */
static void probe_on_data(dds_entity_t reader, void *arg)
{
  double t = mono();
  const probe_ctx *c = arg;
  probe *p = &c->r->probe;
  void *samples[TAKE_BATCH];
  dds_sample_info_t infos[TAKE_BATCH];
  dds_return_t n;
  do {
    memset(samples, 0, sizeof(samples));
    n = dds_take(reader, samples, infos, TAKE_BATCH, TAKE_BATCH);
    if (n <= 0)
      return;
    pthread_mutex_lock(&p->lock);
    for (dds_return_t i = 0; i < n; i++) {
      if (!infos[i].valid_data)
        continue;
      if (c->stream == N_GROUPS) {
        const T(AMRCommand_) *a = samples[i];
        if (p->armed && p->cancel == 0.0 && a->command_type == E(CANCEL_TASK))
          p->cancel = t;
        continue;
      }
      int g = c->stream;
      p->commands[g]++;
      if (!p->armed || p->hold[g] != 0.0)
        continue;
      const T(MotorCmd_) *m = g == G_UPPER   ? ((const T(UpperCmd_) *) samples[i])->motor_cmd
                              : g == G_LOWER ? ((const T(LowerCmd_) *) samples[i])->motor_cmd
                                             : ((const T(HandsCmd_) *) samples[i])->hands;
      bool hold = true;
      for (int j = 0; j < p->n[g] && hold; j++)
        hold = fabsf(m[j].q - p->snapshot[g][j]) <= PROBE_HOLD_TOL; /* NaN: not a hold */
      if (hold)
        p->hold[g] = t;
    }
    pthread_mutex_unlock(&p->lock);
    (void) dds_return_loan(reader, samples, n);
  } while (n == TAKE_BATCH);
}

/* Before an e-stop is written: the positions a hold must carry, and the stamps cleared. */
static void probe_arm(robot *r)
{
  probe *p = &r->probe;
  pthread_mutex_lock(&p->lock);
  for (int g = 0; g < N_GROUPS; g++) {
    p->n[g] = r->groups[g].n;
    for (int i = 0; i < r->groups[g].n; i++)
      p->snapshot[g][i] = (float) r->groups[g].q[i]; /* as fill_motors publishes it */
    p->hold[g] = 0.0;
  }
  p->cancel = p->written = 0.0;
  p->armed = true;
  pthread_mutex_unlock(&p->lock);
}

static void json_time(double t) /* a stamp, or null for none */
{
  if (t > 0.0)
    printf("%.9f", t);
  else
    fputs("null", stdout);
}

static void probe_reply(robot *r)
{
  probe *p = &r->probe;
  pthread_mutex_lock(&p->lock);
  printf("{\"event\":\"ok\",\"command\":\"probe\",\"armed\":%s,\"written\":",
         p->armed ? "true" : "false");
  json_time(p->written);
  fputs(",\"hold\":{", stdout);
  for (int g = 0; g < N_GROUPS; g++) {
    printf("%s\"%s\":", g ? "," : "", r->groups[g].name);
    json_time(p->hold[g]);
  }
  fputs("},\"cancel\":", stdout);
  json_time(p->cancel);
  fputs(",\"commands\":{", stdout);
  for (int g = 0; g < N_GROUPS; g++)
    printf("%s\"%s\":%lu", g ? "," : "", r->groups[g].name, p->commands[g]);
  fputs("}}\n", stdout);
  pthread_mutex_unlock(&p->lock);
}

/* --- faults on stdin --------------------------------------------------------------------- */

/* ``t``: when the line was handled; ``written``: when the first state sample carrying its
 * change was handed to dds_write (0: none); ``last``: for ``silence TOPIC``, when that
 * topic's last sample was (0: never), from which a reader's silence is counted. All
 * CLOCK_MONOTONIC s (Python's time.monotonic()). */
static void reply_ok(const char *line, double t, double written, double last)
{
  fputs("{\"event\":\"ok\",\"command\":", stdout);
  json_str(stdout, line);
  printf(",\"t\":%.9f", t);
  if (written > 0.0)
    printf(",\"written\":%.9f", written);
  if (last > 0.0)
    printf(",\"last\":%.9f", last);
  fputs("}\n", stdout);
}

static void reply_error(const char *fmt, ...)
{
  char message[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof(message), fmt, ap);
  va_end(ap);
  fputs("{\"event\":\"error\",\"message\":", stdout);
  json_str(stdout, message);
  fputs("}\n", stdout);
}

static int parse_on_off(const char *word)
{
  if (word != NULL && strcmp(word, "on") == 0)
    return 1;
  if (word != NULL && strcmp(word, "off") == 0)
    return 0;
  return -1;
}

static bool parse_u32(const char *word, uint32_t *out)
{
  char *end;
  if (word == NULL || *word == '-')
    return false;
  errno = 0;
  unsigned long long v = strtoull(word, &end, 0); /* 0x21 and 33 both work */
  if (errno != 0 || *end != '\0' || end == word || v > UINT32_MAX)
    return false;
  *out = (uint32_t) v;
  return true;
}

static bool parse_double(const char *word, double *out)
{
  char *end;
  if (word == NULL)
    return false;
  *out = strtod(word, &end);
  return end != word && *end == '\0' && isfinite(*out);
}

static int state_topic_index(const char *word)
{
  for (int i = 0; i < N_STATE; i++)
    if (strcmp(word, STATE[i].name) == 0 || strcmp(word, STATE[i].key) == 0)
      return i;
  return -1;
}

static void status_reply(const robot *r)
{
  printf("{\"event\":\"ok\",\"command\":\"status\",\"fsm_id\":%u,\"upper_control\":%s,"
         "\"estop\":[%s,%s,%s,%s],\"battery\":%g,\"amr\":{\"device_status\":\"%s\","
         "\"navigation_status\":\"%s\",\"task_id\":%" PRIu32 "},\"published\":{",
         (unsigned) r->fsm_id, r->upper_control ? "true" : "false",
         r->estop[0] ? "true" : "false", r->estop[1] ? "true" : "false",
         r->estop[2] ? "true" : "false", r->estop[3] ? "true" : "false", r->battery,
         device_name(r->amr.device), nav_name(r->amr.nav), r->amr.task_id);
  for (int st = 0; st < N_STATE; st++)
    printf("%s\"%s\":%lu", st ? "," : "", STATE[st].key, r->published[st]);
  fputs("}}\n", stdout);
}

/* One fault line; exactly one JSON reply on stdout. Syntax: see tests/crobot/__init__.py. */
static void handle_line(robot *r, char *line, double now)
{
  char original[256];
  snprintf(original, sizeof(original), "%.255s", line); /* long lines are errors anyway */
  char *save = NULL;
  char *words[5] = { NULL };
  int n = 0;
  for (char *w = strtok_r(line, " \t\r", &save); w != NULL && n < LEN(words);
       w = strtok_r(NULL, " \t\r", &save))
    words[n++] = w;
  if (n == 0) {
    reply_error("empty command");
    return;
  }
  const char *verb = words[0];
  int on;
  uint32_t u;
  double x;
  unsigned touched = 0; /* the state topics whose samples the line changed: written at once */
  bool arm = false;     /* an e-stop set: the probe's clock starts at its write */
  double last = 0.0;    /* silence TOPIC: when its last sample went out */
#define TOPIC(st) (1u << (st))

  if (strcmp(verb, "estop") == 0 && n == 3 && (on = parse_on_off(words[2])) >= 0) {
    int which = -1;
    for (int i = 0; i < N_ESTOP; i++)
      if (strcmp(words[1], ESTOP_NAME[i]) == 0)
        which = i;
#ifndef CROBOT_ESTOP_DI
    if (which == ES_DI) {
      reply_error("estop di: this interface variant's EmergencyState_ has no di flag");
      return;
    }
#endif
    if (which < 0) {
      reply_error("estop %s: unknown flag (soft, hard, amr, di)", words[1]);
      return;
    }
    char kind[16];
    snprintf(kind, sizeof(kind), "estop-%s", ESTOP_NAME[which]);
    r->estop[which] = on;
    record_fault(r, now, on ? "set" : "clear", kind, "", on, "stdin");
    touched = TOPIC(ST_EMERGENCY);
    arm = on && r->probe.enabled;
  } else if (strcmp(verb, "bms") == 0 && n == 3 && parse_u32(words[2], &u)) {
    int block = strcmp(words[1], "upper") == 0 ? 0 : strcmp(words[1], "lower") == 0 ? 1 : -1;
    if (block < 0) {
      reply_error("bms %s: the battery is upper or lower", words[1]);
      return;
    }
    r->bms_alarms[block] = u;
    record_fault(r, now, u ? "set" : "clear", "bms-alarm", words[1], u, "stdin");
    touched = TOPIC(block == 0 ? ST_UPPER : ST_LOWER);
  } else if (strcmp(verb, "servo") == 0 && n == 4 && parse_u32(words[2], &u)) {
    uint16_t *code = servo_error_field(&r->nodes, words[1], u);
    uint32_t value;
    if (code == NULL) {
      reply_error("servo %s %s: no such node (left_leg 0-5, right_leg 0-5, waist 0, "
                  "left_arm 0-6, right_arm 0-6, head 0-1, ecat2can 0-1)", words[1], words[2]);
      return;
    }
    if (!parse_u32(words[3], &value) || value > UINT16_MAX) {
      reply_error("servo: error code %s is not a uint16", words[3]);
      return;
    }
    *code = (uint16_t) value;
    char target[32];
    snprintf(target, sizeof(target), "%s[%" PRIu32 "]", words[1], u);
    record_fault(r, now, value ? "set" : "clear", "servo-error", target, value, "stdin");
    touched = TOPIC(ST_NODES);
  } else if (strcmp(verb, "amr-estop") == 0 && n == 2 && (on = parse_on_off(words[1])) >= 0) {
    r->amr_estop = on;
    record_fault(r, now, on ? "set" : "clear", "amr-estop", "", on, "stdin");
    touched = TOPIC(ST_AMR);
  } else if (strcmp(verb, "battery") == 0 && n == 2 && parse_double(words[1], &x)) {
    if (x < 0 || x > 100) {
      reply_error("battery %s: a percentage is 0-100", words[1]);
      return;
    }
    r->battery = x;
    record_fault(r, now, "set", "battery-level", "", x, "stdin");
    touched = TOPIC(ST_UPPER) | TOPIC(ST_LOWER) | TOPIC(ST_AMR);
  } else if (strcmp(verb, "revoke") == 0 && n == 1) {
    r->upper_control = false; /* someone else took the upper body; a request may retake it */
    record_fault(r, now, "set", "revoke-upper-control", "", 1, "stdin");
    touched = TOPIC(ST_UPPER);
  } else if (strcmp(verb, "refuse-control") == 0 && n == 2 &&
             (on = parse_on_off(words[1])) >= 0) {
    r->refuse_control = on;
    record_fault(r, now, on ? "set" : "clear", "refuse-upper-control", "", on, "stdin");
  } else if ((strcmp(verb, "silence") == 0 || strcmp(verb, "resume") == 0) && n == 2) {
    bool quiet = verb[0] == 's';
    int st = state_topic_index(words[1]);
    if (st < 0 && strcmp(words[1], "all") != 0) {
      reply_error("%s %s: unknown state topic (rt/upper/state or upper_state ..., or all)",
                  verb, words[1]);
      return;
    }
    for (int i = 0; i < N_STATE; i++)
      if (st < 0 || i == st)
        r->silenced[i] = quiet;
    if (quiet && st >= 0)
      last = r->last_written[st];
    record_fault(r, now, quiet ? "set" : "clear", "state-dropout", st < 0 ? "" : STATE[st].key,
                 0, "stdin");
  } else if (strcmp(verb, "clear") == 0 && n == 1) {
    memset(r->estop, 0, sizeof(r->estop));
    memset(r->bms_alarms, 0, sizeof(r->bms_alarms));
    memset(r->silenced, 0, sizeof(r->silenced));
    r->amr_estop = r->refuse_control = false;
    (void) clear_servo_errors(&r->nodes);
    record_fault(r, now, "clear_all", "", "", 0, "stdin");
    touched = TOPIC(ST_EMERGENCY) | TOPIC(ST_UPPER) | TOPIC(ST_LOWER) | TOPIC(ST_AMR) |
              TOPIC(ST_NODES);
  } else if (strcmp(verb, "flush") == 0 && n == 1) {
    record_flush(r, now);
  } else if (strcmp(verb, "status") == 0 && n == 1) {
    status_reply(r);
    return;
  } else if (strcmp(verb, "probe") == 0 && n == 1) {
    if (!r->probe.enabled) {
      reply_error("probe: the robot was started without --probe");
      return;
    }
    probe_reply(r);
    return;
  } else {
    reply_error("cannot parse %s (estop soft|hard|amr|di on|off; bms upper|lower N; "
                "servo GROUP INDEX CODE; amr-estop on|off; battery PCT; revoke; "
                "refuse-control on|off; silence|resume TOPIC|all; clear; flush; status; "
                "probe)",
                original);
    return;
  }
#undef TOPIC
  refresh_permissions(r); /* an e-stop or a revoked control stops the joints at once */
  if (arm)
    probe_arm(r); /* before the write: no hold can arrive before the probe looks for it */
  double written = publish_now(r, touched);
  if (arm) {
    pthread_mutex_lock(&r->probe.lock);
    r->probe.written = written;
    pthread_mutex_unlock(&r->probe.lock);
  }
  reply_ok(original, now, written, last);
}

/* Read what stdin has; handle each complete line. False on EOF (time to leave). */
static bool read_stdin(robot *r, double now)
{
  static char buf[4096];
  static size_t len = 0;
  ssize_t got = read(STDIN_FILENO, buf + len, sizeof(buf) - 1 - len);
  if (got < 0)
    return errno == EAGAIN || errno == EINTR;
  if (got == 0)
    return false;
  len += (size_t) got;
  buf[len] = '\0';
  char *start = buf, *nl;
  while ((nl = strchr(start, '\n')) != NULL) {
    *nl = '\0';
    handle_line(r, start, now);
    start = nl + 1;
  }
  len -= (size_t) (start - buf);
  memmove(buf, start, len);
  if (len == sizeof(buf) - 1) { /* a line longer than any command: drop it */
    reply_error("line too long");
    len = 0;
  }
  fflush(stdout);
  return true;
}

/* --- set-up --------------------------------------------------------------------------- */

static int parse_list(const char *text, double *out, int max)
{
  int n = 0;
  const char *p = text;
  while (*p && n < max) {
    char *end;
    out[n++] = strtod(p, &end);
    if (end == p)
      return -1;
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',')
      return -1;
  }
  return *p ? -1 : n;
}

static void set_list(joint_group *g, const char *opt, const char *text, double *dst)
{
  double v[MAX_JOINTS];
  if (parse_list(text, v, MAX_JOINTS) != g->n)
    die("%s: expected %d comma-separated numbers", opt, g->n);
  memcpy(dst, v, sizeof(double) * (size_t) g->n);
}

static void set_limits(joint_group *g, const char *opt, const char *text)
{
  const char *p = text;
  for (int i = 0; i < g->n; i++) {
    char *end;
    g->lo[i] = strtod(p, &end);
    if (end == p || *end != ':')
      die("%s: expected %d lo:hi pairs, comma-separated", opt, g->n);
    p = end + 1;
    g->hi[i] = strtod(p, &end);
    if (end == p || (i + 1 < g->n ? *end != ',' : *end != '\0') || g->lo[i] > g->hi[i])
      die("%s: expected %d lo:hi pairs, comma-separated", opt, g->n);
    p = end + 1;
  }
  g->has_limits = true;
}

static void init_groups(robot *r)
{
  static const char *const names[N_GROUPS] = { "upper", "lower", "hands" };
  static const char *const keys[N_GROUPS] = { "upper_cmd", "lower_cmd", "hands_cmd" };
  /* sizes from idlc's structs, not from a constant of ours */
  const int sizes[N_GROUPS] = { LEN(r->upper.motor_state), LEN(r->lower.motor_state),
                                LEN(r->hands.hands) };
  _Static_assert(sizeof(((T(UpperCmd_) *) 0)->motor_cmd) / sizeof(T(MotorCmd_)) ==
                     sizeof(((T(UpperState_) *) 0)->motor_state) / sizeof(T(MotorState_)),
                 "upper command and state sizes differ");
  for (int g = 0; g < N_GROUPS; g++) {
    r->groups[g].name = names[g];
    r->groups[g].key = keys[g];
    r->groups[g].n = sizes[g];
  }
}

static void parse_args(robot *r, int argc, char **argv, dds_domainid_t *domain,
                       const char **record)
{
  if (argc < 2)
    die("usage: crobot <domain> [--record FILE] [--rate TOPIC=HZ ...] [--fsm ID] "
        "[--joint-fsm ID,...] [--init-upper Q,...] [--init-lower ...] [--init-hands ...] "
        "[--limits-upper LO:HI,...] [--limits-lower ...] [--limits-hands ...] [--vmax RAD/S] "
        "[--amr-trip-s S] [--battery PCT] [--motor-mode N] [--probe]");
  uint32_t d;
  if (!parse_u32(argv[1], &d) || d > 232)
    die("domain %s: expected 0-232", argv[1]);
  *domain = (dds_domainid_t) d;
  static const char *const group_opt[N_GROUPS] = { "upper", "lower", "hands" };
  for (int i = 2; i < argc; i++) {
    const char *opt = argv[i];
    if (strcmp(opt, "--probe") == 0) { /* the only option without a value */
      r->probe.enabled = true;
      continue;
    }
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (val == NULL)
      die("%s: missing value", opt);
    i++;
    uint32_t u;
    double x;
    bool done = false;
    for (int g = 0; g < N_GROUPS && !done; g++) {
      char init[32], limits[32];
      snprintf(init, sizeof(init), "--init-%s", group_opt[g]);
      snprintf(limits, sizeof(limits), "--limits-%s", group_opt[g]);
      if (strcmp(opt, init) == 0) {
        set_list(&r->groups[g], opt, val, r->groups[g].q);
        done = true;
      } else if (strcmp(opt, limits) == 0) {
        set_limits(&r->groups[g], opt, val);
        done = true;
      }
    }
    if (done)
      continue;
    if (strcmp(opt, "--record") == 0) {
      *record = val;
    } else if (strcmp(opt, "--rate") == 0) {
      char name[64];
      const char *eq = strchr(val, '=');
      if (eq == NULL || (size_t) (eq - val) >= sizeof(name))
        die("--rate %s: expected TOPIC=HZ", val);
      memcpy(name, val, (size_t) (eq - val));
      name[eq - val] = '\0';
      int st = state_topic_index(name);
      if (st < 0 || !parse_double(eq + 1, &x) || x <= 0)
        die("--rate %s: expected a state topic (rt/upper/state ...) = Hz > 0", val);
      r->hz[st] = x;
    } else if (strcmp(opt, "--fsm") == 0 && parse_u32(val, &u) && u <= UINT16_MAX) {
      r->fsm_id = (uint16_t) u;
    } else if (strcmp(opt, "--joint-fsm") == 0) {
      double ids[32];
      int n = parse_list(val, ids, LEN(r->joint_fsm));
      if (n < 0)
        die("--joint-fsm %s: expected comma-separated FSM ids", val);
      for (int k = 0; k < n; k++)
        r->joint_fsm[k] = (uint16_t) ids[k];
      r->n_joint_fsm = n;
    } else if (strcmp(opt, "--vmax") == 0 && parse_double(val, &x) && x > 0) {
      r->vmax = x;
    } else if (strcmp(opt, "--amr-trip-s") == 0 && parse_double(val, &x) && x >= 0) {
      r->amr_trip_s = x;
    } else if (strcmp(opt, "--battery") == 0 && parse_double(val, &x) && x >= 0 && x <= 100) {
      r->battery = x;
    } else if (strcmp(opt, "--motor-mode") == 0 && parse_u32(val, &u) && u <= UINT8_MAX) {
      r->motor_mode = (uint8_t) u;
    } else {
      die("unknown option or bad value: %s %s", opt, val);
    }
  }
}

static void init_nodes(T(MainNodesState_) *s)
{
  T(AxisStateInfo_) *arrays[] = { s->left_leg, s->right_leg, &s->waist, s->left_arm,
                                  s->right_arm, s->head };
  const int sizes[] = { LEN(s->left_leg), LEN(s->right_leg), 1, LEN(s->left_arm),
                        LEN(s->right_arm), LEN(s->head) };
  for (int a = 0; a < LEN(arrays); a++) {
    for (int i = 0; i < sizes[a]; i++) {
      T(AxisStateInfo_) *x = &arrays[a][i];
      x->servo_state = x->node_state = 8; /* operational */
      x->display_op_mode = 8;             /* cyclic synchronous position */
      x->mcu_temp = 42;
      x->mos_temp = 40;
      x->motor_temp = 38;
      x->bus_voltage = 48;
      x->software_version = 0x0203;
    }
  }
  for (int i = 0; i < LEN(s->ecat2can); i++) {
    s->ecat2can[i].slave_state = 8;
    s->ecat2can[i].software_version = 0x0100;
  }
}

static void create_entities(robot *r, dds_domainid_t domain)
{
  const dds_topic_descriptor_t *state_desc[N_STATE] = {
    DESC(UpperState_), DESC(LowerState_), DESC(HandsState_),
    DESC(AMRState_),   DESC(EmergencyState_), DESC(MainNodesState_),
  };
  const dds_topic_descriptor_t *command_desc[N_COMMAND] = {
    DESC(UpperCmd_),           DESC(LowerCmd_),    DESC(HandsCmd_), DESC(SetFsmId_),
    DESC(SwitchUpperControl_), DESC(ClearErrors_), DESC(AMRCommand_), DESC(RemoteControl_),
  };
  r->participant = check(dds_create_participant(domain, NULL, NULL), "create participant");
  /* State writers use CycloneDDS's defaults (reliable, keep-last 1, volatile): what a C
   * firmware gets without asking; the executive's best-effort readers match them. */
  for (int st = 0; st < N_STATE; st++) {
    dds_entity_t topic =
        check(dds_create_topic(r->participant, state_desc[st], STATE[st].name, NULL, NULL),
              STATE[st].name);
    r->writers[st] = check(dds_create_writer(r->participant, topic, NULL, NULL), "writer");
  }
  /* Command readers are reliable (they match the executive's reliable writers) and deep
   * enough that nothing of a 500 Hz stream is lost between two takes. */
  dds_qos_t *qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, READER_DEPTH);
  dds_qset_durability(qos, DDS_DURABILITY_VOLATILE);
  dds_entity_t topics[N_COMMAND];
  for (int ct = 0; ct < N_COMMAND; ct++) {
    topics[ct] =
        check(dds_create_topic(r->participant, command_desc[ct], COMMAND[ct].name, NULL, NULL),
              COMMAND[ct].name);
    r->readers[ct] = check(dds_create_reader(r->participant, topics[ct], qos, NULL), "reader");
  }
  if (r->probe.enabled) { /* readers of their own, so the main loop's takes are untouched */
    static const enum command_topic probed[N_GROUPS + 1] = { CT_UPPER, CT_LOWER, CT_HANDS,
                                                             CT_AMR };
    for (int k = 0; k <= N_GROUPS; k++) {
      probe_ctxs[k] = (probe_ctx) { r, k };
      dds_listener_t *listener = dds_create_listener(&probe_ctxs[k]);
      dds_lset_data_available(listener, probe_on_data);
      r->probe.readers[k] = check(
          dds_create_reader(r->participant, topics[probed[k]], qos, listener), "probe reader");
      dds_delete_listener(listener);
    }
  }
  dds_delete_qos(qos);
}

static void install_signals(sigset_t *during_sleep)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN); /* a parent that went away: writes fail, we see EOF and leave */
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGINT);
  sigprocmask(SIG_BLOCK, &blocked, during_sleep); /* during_sleep: the mask before, unblocked */
}

int main(int argc, char **argv)
{
  static robot r; /* large (the samples): static storage, zeroed */
  dds_domainid_t domain = 0;
  const char *record_path = NULL;
  init_groups(&r);
  for (int st = 0; st < N_STATE; st++)
    r.hz[st] = STATE[st].default_hz;
  r.vmax = 2.0;
  r.amr_trip_s = 1.0;
  r.battery = 85.0;
  r.motor_mode = 11; /* MIT (impedance) */
  r.amr.device = E(DEVIDLE);
  r.amr.nav = E(IDLE);
  parse_args(&r, argc, argv, &domain, &record_path);
  init_nodes(&r.nodes);
  pthread_mutex_init(&r.probe.lock, NULL);

  sigset_t during_sleep;
  install_signals(&during_sleep);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (record_path != NULL) {
    r.record = fopen(record_path, "w");
    if (r.record == NULL)
      die("cannot write %s: %s", record_path, strerror(errno));
    setvbuf(r.record, NULL, _IOFBF, 1 << 16);
  }
  fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);

  create_entities(&r, domain);
  double start = mono();
  if (r.record != NULL)
    record_header(&r, start);
  for (int st = 0; st < N_STATE; st++)
    r.next_due[st] = start;
  r.last_step = r.last_flush = start;
  printf("{\"event\":\"ready\",\"pid\":%ld,\"variant\":\"%s\"}\n", (long) getpid(),
         CROBOT_VARIANT);
  fflush(stdout);

  bool running = true;
  while (running && !stop_signal) {
    double now = mono();
    take_commands(&r, now);
    step_joints(&r, fmin(now - r.last_step, MAX_STEP_S));
    step_amr(&r, fmin(now - r.last_step, MAX_STEP_S));
    r.last_step = now;
    publish_due(&r, now);
    if (now - r.last_flush >= RECORD_FLUSH_S)
      record_flush(&r, now);

    double wait = fmax(0.0, next_wakeup(&r, now) - mono());
    struct timespec timeout = { (time_t) wait, (long) ((wait - floor(wait)) * NSEC) };
    struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
    int ready = ppoll(&in, 1, &timeout, &during_sleep);
    if (ready > 0 && (in.revents & (POLLIN | POLLHUP | POLLERR)))
      running = read_stdin(&r, mono());
    else if (ready < 0 && errno != EINTR)
      die("ppoll: %s", strerror(errno));
  }

  double end = mono();
  if (r.record != NULL) {
    record_counters(&r, end);
    fclose(r.record);
  }
  dds_delete(r.participant);
  fprintf(stderr, "crobot: stopped (%s)\n", stop_signal ? "signal" : "end of stdin");
  return 0;
}
