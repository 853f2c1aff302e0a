/*
 * The e-stop reflex: hold every engaged joint stream and write the robot's cancel (a base's
 * task) from CycloneDDS's receive thread, in C, without the interpreter (issue 14,
 * DESIGN.md 4). Robot-neutral: the adapter's Python (executive/robots/<robot>/) hands it
 * the topic, the writers, the cancel's bytes and every offset; no robot's wire is named here.
 *
 * Why C: a Python listener waits for the GIL. A tick that holds it (a long call, a
 * garbage collection) held every e-stop with it, and a hung interpreter held nothing.
 * Three parts, each for one reason:
 *
 * 1. The reflex. Its own reader on the robot's e-stop topic with a C listener. A
 *    sample with any flag set (or one it cannot read: short, or an encapsulation a
 *    @final type never uses) trips it: under the gate it writes, in this order, the hold of every engaged
 *    stream (bytes the streamer pre-encodes every period, at the measured position) and
 *    the cancel, on the executive's own writers, then latches. Python learns of the
 *    trip afterwards (``on_trip``) and latches SAFE_STOP as before.
 *
 * 2. The gate. Every joint command the streamer publishes passes ``publish``, which
 *    refuses a command computed before a trip the streamer has not yet seen (``trips``):
 *    nothing that moves leaves after the reflex's hold, even before Python knows.
 *
 * 3. The diversion. CycloneDDS delivers a sample to its readers one after the other on
 *    one receive thread. A reader with a Python listener blocks that thread until the GIL
 *    is free, and every sample behind it waits: measured, a C reader on the e-stop topic
 *    fired only when a 4 s GIL-holding call ended. So the executive's robot readers get a
 *    C listener too, which calls their Python callback at once when the calling thread
 *    already holds the GIL (a local write from Python: unchanged, synchronous), and
 *    otherwise hands it to one dispatcher thread: the receive thread never waits for the
 *    interpreter.
 *
 * The reflex runs on whichever CycloneDDS thread delivers the sample (recvUC, on
 * loopback and on the robot network alike). With ``rt_priority`` each such thread is put
 * under SCHED_FIFO the first time it calls a listener of ours, as the streamer's thread
 * is, so a CPU hog cannot delay the hold; a refusal leaves it as it was, and Python says
 * so once (``on_thread``).
 *
 * The hold buffers are a double-buffered seqlock per stream: the streamer (one writer,
 * with the GIL) fills the buffer the reader is not pointed at, then flips ``current``;
 * the reflex never waits for it, and retries only if the writer lapped it mid-copy.
 *
 * A hold stored while the stream moves is the stream frozen at the position measured
 * when it was stored. While Python is blocked nothing refreshes it, and the arm goes on
 * towards the last target it was sent; so at the trip the reflex puts into it the newest
 * measured position still waiting in the executive's state reader (Python has not taken
 * it: it is newer than the hold), when that sample arrived within the state's age limit
 * and is XCDR1 little-endian (what CycloneDDS C writes). A hold stored while the streamer
 * already holds is sent as it is: a hold does not move.
 *
 * Writes go through ``dds_write`` with cyclonedds-python's sample container
 * ({pointer, size}), as its ``ddspy_write`` does (clayer/pysertype.c, 0.10.2): the
 * writer's sertype turns it into a serdata with a memcpy, in C. (``dds_writecdr`` would
 * need the writer's sertype, which CycloneDDS 0.10 has no public call to get.)
 *
 * The units, one idea each, behind this private header (the shared structs and constants,
 * and the calls one unit makes into another); each holds the Core methods of its idea:
 *
 *   core.c       the Python type ``Core``: its life (init, close), its table, the module
 *   trip.c       1. the reflex: judging an e-stop sample, firing; ``measure``, the latch
 *   gate.c       2. the gate every write passes under, and writing; ``publish``
 *   diversion.c  3. the diversion: the dispatcher thread, SCHED_FIFO, ``divert``
 *   holds.c      the seqlock'd hold buffers; ``store_hold``, ``load_hold``, its self-test
 *   plan.c       a stream's plan, sampled and frozen; ``plan``, ``sent``
 *   stream.c     the native streamer's thread and its dead man; ``stream_start``, ``renew``
 */
#ifndef REFLEX_H
#define REFLEX_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dds/dds.h"

#define MAX_STREAMS 4
#define MAX_SAMPLE 2048 /* bytes of one encoded sample, header included; ours are < 512 */
#define MAX_DIVERTED 16
#define MAX_FLAGS 32
#define TAKE_MAX 16
#define SEQLOCK_TRIES 64 /* a retry needs the writer to lap twice during one memcpy */
#define KEEP 64          /* bytes of the tripping sample kept for Python to judge */
#define MAX_JOINTS 64
#define MAX_THREADS 8

enum why { WHY_NONE = 0, WHY_FLAGS = 1, WHY_SHORT = 2, WHY_ENCAPSULATION = 3 };

typedef struct {
  _Atomic uint32_t seq;   /* odd while being written */
  _Atomic uint32_t len;   /* 0: the stream is not engaged */
  _Atomic uint32_t fresh; /* 1: frozen at a measurement; newer one may replace it at the trip */
  unsigned char data[MAX_SAMPLE];
} hold_buf;

typedef struct {
  _Atomic uint32_t current; /* which buffer holds the newest complete hold */
  hold_buf buf[2];
} hold_slot;

/* Where the measured positions are in a state sample and the targets in a command. */
typedef struct {
  int div;            /* the diverted state reader (index), -1: none */
  int64_t max_age_ns; /* a state sample older than this is not a measurement */
  uint32_t min_size, n;
  uint32_t state_at[MAX_JOINTS], cmd_at[MAX_JOINTS];
  float lo[MAX_JOINTS], hi[MAX_JOINTS];
} measure_map;

#define MAX_KNOTS 64

enum { Q_F32 = 0, Q_U32 = 1 }; /* how a position lies in a command: float32, or rounded counts */

/* One stream's plan for the native streamer: a template command (everything but the
 * positions and the feed-forward), where the positions and the torques lie in it, and per
 * joint either a minimum-jerk segment or a fixed target. The torques are knots in
 * trajectory time, linearly interpolated (beyond the last knot: the last). Under the gate. */
typedef struct {
  bool engaged;
  uint32_t len, n, ntau, q_kind;
  unsigned char tmpl[MAX_SAMPLE];
  uint32_t q_at[MAX_JOINTS], tau_at[MAX_JOINTS];
  double target[MAX_JOINTS], lo[MAX_JOINTS], hi[MAX_JOINTS];
  double t0[MAX_JOINTS], dur[MAX_JOINTS], a[MAX_JOINTS], b[MAX_JOINTS];
  unsigned char seg[MAX_JOINTS];
  uint32_t nknots;
  double knot_t0, knot_dt;
  double paused_at, ramp_s; /* the trajectories' clock: paused_at < 0 runs */
  float tau[MAX_KNOTS][MAX_JOINTS];
  double last_q[MAX_JOINTS]; /* what the streamer sent last (valid once ``sent``) */
  float last_tau[MAX_JOINTS];
  bool sent;
} native_plan;

typedef struct {
  dds_entity_t writer;
  hold_slot hold;
  measure_map measure;
  native_plan plan;
  uint32_t fired_len; /* what the reflex wrote at the trip (under the gate) */
  unsigned char fired[MAX_SAMPLE];
} stream_slot;

struct core;

typedef struct {
  struct core *core;
  dds_entity_t reader;
  PyObject *callback;   /* owned: the reader's Python on_data_available */
  PyObject *reader_obj; /* owned: the DataReader passed to it */
  dds_listener_t *saved; /* its listener before the diversion, restored by close */
  _Atomic int pending;
  _Atomic int64_t last_ns; /* CLOCK_MONOTONIC of its newest sample */
} diverted;

typedef struct {
  int why;
  uint32_t detail;
  int64_t t_sample, t_first_hold, t_holds, t_cancel; /* CLOCK_MONOTONIC ns */
  uint32_t held;                                    /* bit i: stream i held */
  uint32_t measured;                                /* bit i: stream i at a newer measurement */
  int hold_rc, cancel_rc;
  uint32_t size;
  uint32_t kept;
  unsigned char data[KEEP];
} trip_record;

typedef struct {
  _Atomic int ready, reported;
  char name[16];
  pid_t tid;
  int err; /* 0: SCHED_FIFO rt_priority; else pthread_setschedparam's error */
} thread_note;

typedef struct core {
  dds_entity_t estop_reader;
  uint32_t nflags;
  uint32_t nstreams;
  stream_slot streams[MAX_STREAMS];
  dds_entity_t cancel_writer;
  uint32_t cancel_len, cancel_id_at, cancel_stamp_at, cancel_id;
  unsigned char cancel[MAX_SAMPLE];

  pthread_mutex_t gate;
  _Atomic int tripped;
  _Atomic uint32_t trips;
  trip_record last; /* under the gate */
  bool has_last;

  pthread_mutex_t dmu;
  pthread_cond_t dcond;
  pthread_t thread;
  bool thread_started, stopping, signalled;
  _Atomic int pending_trip;
  PyObject *on_trip; /* owned */
  int rt_priority;   /* 0: leave CycloneDDS's threads as they are */
  _Atomic int pending_threads;
  _Atomic uint32_t nthreads;
  thread_note threads[MAX_THREADS];
  PyObject *on_thread; /* owned: on_thread(name, tid, priority, error) */
  _Atomic uint32_t ndiverted;
  diverted div[MAX_DIVERTED];

  /* the native streamer (``stream_start``): its thread, clock, dead man and timing */
  pthread_t sthread;
  bool sthread_started;
  _Atomic int sstop;
  /* engaged streams (``plan``, under the gate): with none the thread parks on ``scond``
   * instead of waking every period for nothing (issue 22: an idle service) */
  _Atomic uint32_t nengaged;
  _Atomic int64_t engaged_ns; /* when a plan last engaged a stream with none engaged */
  pthread_mutex_t smu;
  pthread_cond_t scond; /* CLOCK_MONOTONIC */
  int64_t period_ns;
  int s_priority, s_err; /* asked for; pthread_setschedparam's answer (0: granted) */
  _Atomic int s_ready;
  _Atomic int64_t deadline_ns; /* the dead man: 0 unarmed */
  _Atomic uint32_t deadman;    /* dead-man holds so far */
  _Atomic int64_t deadman_ns, renewed_ns, lapsed_ns; /* lapsed_ns: the deadline that lapsed */
  _Atomic int64_t back_ns;  /* the first renewal after the latest lapse */
  _Atomic uint32_t back_of; /* the lapse back_ns is for */
  _Atomic uint64_t s_periods, s_missed, s_busy_ns, s_writes, s_refused;
  int64_t *lateness; /* ring of LATENESS_RING, ns */

  _Atomic int closed; /* listeners left in place after close() do nothing */
  _Atomic uint64_t deferred, synchronous, torn, batches;
} core;

typedef struct {
  PyObject_HEAD core *c;
} Core;

static inline int64_t now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline core *live(Core *self) {
  if (self->c == NULL || atomic_load(&self->c->closed)) {
    PyErr_SetString(PyExc_RuntimeError, "the reflex is closed");
    return NULL;
  }
  return self->c;
}

static inline stream_slot *slot_of(core *c, int slot) {
  if (slot < 0 || (uint32_t)slot >= c->nstreams) {
    PyErr_Format(PyExc_IndexError, "no stream slot %d", slot);
    return NULL;
  }
  return &c->streams[slot];
}

/* The stream slot a method's one argument names, on a live core (``*c``): NULL with the
 * error set. */
static inline stream_slot *slot_arg(Core *self, PyObject *args, core **c) {
  int slot;
  *c = live(self);
  if (*c == NULL || !PyArg_ParseTuple(args, "i", &slot))
    return NULL;
  return slot_of(*c, slot);
}

static inline PyObject *bytes_or_none(const unsigned char *p, int64_t len) {
  if (len <= 0)
    Py_RETURN_NONE;
  return PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)len);
}

/* The calls one unit makes into another, hidden as the one file's statics were: the module
 * exports PyInit__reflex only, and no other library's symbol of the same name can stand in
 * for one of these. */
#pragma GCC visibility push(hidden)

/* holds.c */
int64_t hold_load(hold_slot *s, unsigned char *out, bool *fresh);
PyObject *Core_store_hold(Core *self, PyObject *args);
PyObject *Core_load_hold(Core *self, PyObject *args);
PyObject *seqlock_selftest(PyObject *mod, PyObject *args);

/* gate.c */
dds_return_t write_bytes(dds_entity_t writer, const unsigned char *data, uint32_t len);
int init_mutex(pthread_mutex_t *m);
void gate_lock_py(core *c);
PyObject *Core_publish(Core *self, PyObject *args);

/* diversion.c */
void wake(core *c);
bool holds_gil(void);
void call_on_trip(core *c);
void promote(core *c);
void *dispatch(void *arg);
PyObject *Core_divert(Core *self, PyObject *args);

/* trip.c */
void on_estop(dds_entity_t reader, void *arg);
int offsets(PyObject *seq, uint32_t *n, uint32_t *out);
PyObject *Core_measure(Core *self, PyObject *args);
PyObject *Core_fired(Core *self, PyObject *args);
PyObject *Core_tripped(Core *self, PyObject *Py_UNUSED(ignored));
PyObject *Core_trips(Core *self, PyObject *Py_UNUSED(ignored));
PyObject *Core_reset(Core *self, PyObject *Py_UNUSED(ignored));
PyObject *Core_last_trip(Core *self, PyObject *Py_UNUSED(ignored));

/* plan.c */
bool patch(const native_plan *p, unsigned char *buf, const double *q, const float *tau);
void sample_plan(const native_plan *p, double now, double *q, float *tau);
void freeze(native_plan *p);
void adopt_fired(stream_slot *s);
PyObject *Core_plan(Core *self, PyObject *args);
PyObject *Core_sent(Core *self, PyObject *args);

/* stream.c */
void unpark(core *c);
void stream_stop_c(core *c);
PyObject *Core_stream_start(Core *self, PyObject *args);
PyObject *Core_stream_stop(Core *self, PyObject *Py_UNUSED(ignored));
PyObject *Core_renew(Core *self, PyObject *args);
PyObject *Core_stream_stats(Core *self, PyObject *args);

#pragma GCC visibility pop

#endif /* REFLEX_H */
