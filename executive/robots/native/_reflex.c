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
 */
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
#include "dds/ddsi/ddsi_serdata.h"

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

/* cyclonedds-python 0.10.2's ddspy_sample_container_t: what its sertype's from_sample takes */
typedef struct {
  void *usample;
  size_t usample_size;
} py_sample_container;

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

static int64_t now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* -- the seqlock ----------------------------------------------------------------------- */

/* One writer at a time (the streamer, holding the GIL). */
static void hold_store(hold_slot *s, const unsigned char *data, uint32_t len, bool fresh) {
  uint32_t w = 1u - atomic_load_explicit(&s->current, memory_order_relaxed);
  hold_buf *b = &s->buf[w];
  uint32_t seq = atomic_load_explicit(&b->seq, memory_order_relaxed);
  atomic_store_explicit(&b->seq, seq + 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&b->len, len, memory_order_relaxed);
  atomic_store_explicit(&b->fresh, fresh, memory_order_relaxed);
  if (len)
    memcpy(b->data, data, len);
  atomic_store_explicit(&b->seq, seq + 2, memory_order_release);
  atomic_store_explicit(&s->current, w, memory_order_release);
}

/* The newest complete hold: its length (0: not engaged), or -1 if the writer lapped every try. */
static int64_t hold_load(hold_slot *s, unsigned char *out, bool *fresh) {
  for (int i = 0; i < SEQLOCK_TRIES; i++) {
    uint32_t c = atomic_load_explicit(&s->current, memory_order_acquire);
    hold_buf *b = &s->buf[c & 1u];
    uint32_t s1 = atomic_load_explicit(&b->seq, memory_order_acquire);
    if (s1 & 1u)
      continue;
    uint32_t len = atomic_load_explicit(&b->len, memory_order_relaxed);
    bool f = atomic_load_explicit(&b->fresh, memory_order_relaxed);
    if (len > MAX_SAMPLE)
      continue;
    memcpy(out, b->data, len);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&b->seq, memory_order_relaxed) == s1) {
      if (fresh != NULL)
        *fresh = f;
      return len;
    }
  }
  return -1;
}

/* -- writing ------------------------------------------------------------------------- */

/* What raw_write does: the bytes padded to 4, through the writer's (Python) sertype. */
static dds_return_t write_bytes(dds_entity_t writer, const unsigned char *data, uint32_t len) {
  unsigned char padded[MAX_SAMPLE + 4];
  py_sample_container sample = {(void *)data, len};
  if (len % 4) {
    memcpy(padded, data, len);
    memset(padded + len, 0, 4 - len % 4);
    sample.usample = padded;
    sample.usample_size = len + 4 - len % 4;
  }
  return dds_write(writer, &sample);
}

static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* -- the dispatcher ---------------------------------------------------------------------- */

static void wake(core *c) {
  pthread_mutex_lock(&c->dmu);
  c->signalled = true;
  pthread_cond_signal(&c->dcond);
  pthread_mutex_unlock(&c->dmu);
}

static bool finalizing(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/* Whether the calling thread holds the GIL (a Python thread inside dds_write: a local
 * delivery). PyGILState_Check would answer yes for every thread once a subinterpreter
 * exists; this compares the thread's own state with the GIL holder's. */
static bool holds_gil(void) {
  PyThreadState *mine = PyGILState_GetThisThreadState();
  if (mine == NULL)
    return false;
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked() == mine;
#else
  return _PyThreadState_UncheckedGet() == mine;
#endif
}

static void call_python(PyObject *fn, PyObject *arg) {
  PyObject *r = arg ? PyObject_CallOneArg(fn, arg) : PyObject_CallNoArgs(fn);
  if (r == NULL)
    PyErr_WriteUnraisable(fn); /* the callbacks catch their own; a listener must not raise */
  Py_XDECREF(r);
}

static void call_on_trip(core *c) {
  if (c->on_trip != NULL && c->on_trip != Py_None)
    call_python(c->on_trip, NULL);
}

static void report_threads(core *c);

static void *dispatch(void *arg) {
  core *c = arg;
  pthread_setname_np(pthread_self(), "dds-to-python");
  pthread_mutex_lock(&c->dmu);
  for (;;) {
    while (!c->stopping && !c->signalled)
      pthread_cond_wait(&c->dcond, &c->dmu);
    if (c->stopping)
      break;
    c->signalled = false;
    pthread_mutex_unlock(&c->dmu);
    if (!finalizing()) {
      PyGILState_STATE g = PyGILState_Ensure();
      atomic_fetch_add(&c->batches, 1);
      if (atomic_exchange(&c->pending_trip, 0)) /* Python learns of a trip first */
        call_on_trip(c);
      if (atomic_exchange(&c->pending_threads, 0))
        report_threads(c);
      for (uint32_t i = 0; i < c->ndiverted; i++)
        if (atomic_exchange(&c->div[i].pending, 0))
          call_python(c->div[i].callback, c->div[i].reader_obj);
      PyGILState_Release(g);
    }
    pthread_mutex_lock(&c->dmu);
  }
  pthread_mutex_unlock(&c->dmu);
  return NULL;
}

/* The priority this thread was given by a reflex (a thread serves every reader). */
static __thread int thread_priority;

/* Put the CycloneDDS thread calling a listener of ours under SCHED_FIFO, once. Never a
 * Python thread delivering its own write: that is the application's to schedule. */
static void promote(core *c) {
  if (c->rt_priority <= thread_priority || holds_gil())
    return;
  struct sched_param p = {.sched_priority = c->rt_priority};
  int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p);
  thread_priority = c->rt_priority; /* refused or not: asked once */
  uint32_t i = atomic_fetch_add(&c->nthreads, 1);
  if (i < MAX_THREADS) {
    thread_note *n = &c->threads[i];
    pthread_getname_np(pthread_self(), n->name, sizeof n->name);
    n->tid = (pid_t)gettid();
    n->err = err;
    atomic_store(&n->ready, 1);
    atomic_store(&c->pending_threads, 1);
    wake(c);
  }
}

static void report_threads(core *c) {
  uint32_t n = atomic_load(&c->nthreads);
  for (uint32_t i = 0; i < n && i < MAX_THREADS; i++) {
    thread_note *t = &c->threads[i];
    if (!atomic_load(&t->ready) || atomic_exchange(&t->reported, 1))
      continue;
    if (c->on_thread == NULL || c->on_thread == Py_None)
      continue;
    PyObject *r = PyObject_CallFunction(c->on_thread, "siis", t->name, (int)t->tid,
                                        c->rt_priority, t->err ? strerror(t->err) : "");
    if (r == NULL)
      PyErr_WriteUnraisable(c->on_thread);
    Py_XDECREF(r);
  }
}

/* A diverted reader's listener: its Python callback now if this thread holds the GIL
 * (a write from Python delivered locally: as before), else on the dispatcher. A reader
 * diverted with no callback (None: polled, read at the tick) only stamps its arrival: a
 * Python call per sample of a 500 Hz topic was most of an idle service's CPU (issue 22). */
static void on_diverted(dds_entity_t reader, void *arg) {
  diverted *d = arg;
  (void)reader;
  atomic_store(&d->last_ns, now_ns(CLOCK_MONOTONIC));
  if (atomic_load(&d->core->closed))
    return;
  promote(d->core);
  if (d->callback == Py_None) /* polled: the arrival is all the reflex needs, no Python */
    return;
  if (holds_gil()) {
    atomic_fetch_add(&d->core->synchronous, 1);
    call_python(d->callback, d->reader_obj);
  } else {
    atomic_fetch_add(&d->core->deferred, 1);
    atomic_store(&d->pending, 1);
    wake(d->core);
  }
}

/* -- the native streamer ------------------------------------------------------------------
 *
 * The fixed-rate joint command stream without the interpreter (issue 22): one thread,
 * SCHED_FIFO where granted, samples each engaged stream's plan every period and writes it
 * under the gate, so a trip's hold and the streamer never interleave and nothing computed
 * before a trip leaves after it. Python hands it plans (``plan``) when they change and
 * renews a dead man (``renew``); past the deadline every stream holds at the last
 * position it sent (and its torque), and plans are refused until Python has seen that hold
 * (``seen_deadman``), as after a trip (``seen_trips``). */

#define LATENESS_RING 65536

static double blend(double s) { return s * s * s * (10.0 + s * (-15.0 + 6.0 * s)); }

/* Trajectory time at monotonic ``now`` (s): the clock's rate falls linearly from 1 to 0
 * over ``ramp_s`` once paused, as the Python streamer's ``_ramp``. Under the gate. */
static double traj_time(const native_plan *p, double now) {
  if (p->paused_at < 0)
    return now;
  double dt = now - p->paused_at;
  dt = dt < 0 ? 0 : dt > p->ramp_s ? p->ramp_s : dt;
  return p->paused_at + (p->ramp_s > 0 ? dt - dt * dt / (2 * p->ramp_s) : 0);
}

/* Put q (and tau) into ``buf`` (a copy of the template): false if any is not finite. */
static bool patch(const native_plan *p, unsigned char *buf, const double *q, const float *tau) {
  for (uint32_t j = 0; j < p->n; j++) {
    if (!isfinite(q[j]))
      return false;
    if (p->q_kind == Q_U32) {
      double r = nearbyint(q[j]);
      uint32_t v = r < 0 ? 0 : r > 4294967295.0 ? 4294967295u : (uint32_t)r;
      memcpy(buf + p->q_at[j], &v, 4);
    } else {
      float f = (float)q[j];
      memcpy(buf + p->q_at[j], &f, 4);
    }
  }
  for (uint32_t j = 0; j < p->ntau; j++)
    memcpy(buf + p->tau_at[j], &tau[j], 4);
  return true;
}

static void sample_plan(const native_plan *p, double now, double *q, float *tau) {
  double t = traj_time(p, now);
  for (uint32_t j = 0; j < p->n; j++) {
    double v = p->target[j];
    if (p->seg[j]) {
      if (p->dur[j] <= 0)
        v = p->b[j];
      else {
        double s = (t - p->t0[j]) / p->dur[j];
        s = s < 0 ? 0 : s > 1 ? 1 : s;
        v = p->a[j] + (p->b[j] - p->a[j]) * blend(s);
      }
    }
    q[j] = v < p->lo[j] ? p->lo[j] : v > p->hi[j] ? p->hi[j] : v;
  }
  if (p->nknots == 0)
    return;
  double x = p->knot_dt > 0 ? (t - p->knot_t0) / p->knot_dt : 0;
  if (x <= 0 || p->nknots == 1) {
    memcpy(tau, p->tau[0], p->ntau * sizeof(float));
    return;
  }
  if (x >= p->nknots - 1) {
    memcpy(tau, p->tau[p->nknots - 1], p->ntau * sizeof(float));
    return;
  }
  uint32_t k = (uint32_t)x;
  double f = x - k;
  for (uint32_t j = 0; j < p->ntau; j++)
    tau[j] = (float)(p->tau[k][j] * (1 - f) + p->tau[k + 1][j] * f);
}

/* Freeze ``p`` at what it last sent (never sent: at its targets, Python's last sample):
 * the hold. Under the gate. */
static void freeze(native_plan *p) {
  for (uint32_t j = 0; j < p->n; j++) {
    if (p->sent)
      p->target[j] = p->last_q[j];
    p->seg[j] = 0;
  }
  if (p->sent && p->ntau) {
    memcpy(p->tau[0], p->last_tau, p->ntau * sizeof(float));
    p->nknots = 1;
  }
}

/* At a trip (under the gate): the stream goes on sending the hold the reflex wrote. */
static void adopt_fired(stream_slot *s) {
  native_plan *p = &s->plan;
  if (!p->engaged || s->fired_len == 0 || s->fired_len != p->len)
    return;
  memcpy(p->tmpl, s->fired, p->len);
  for (uint32_t j = 0; j < p->n; j++) {
    if (p->q_kind == Q_U32) {
      uint32_t v;
      memcpy(&v, s->fired + p->q_at[j], 4);
      p->target[j] = v;
    } else {
      float f;
      memcpy(&f, s->fired + p->q_at[j], 4);
      p->target[j] = f;
    }
    p->seg[j] = 0;
  }
  if (p->ntau) {
    for (uint32_t j = 0; j < p->ntau; j++)
      memcpy(&p->tau[0][j], s->fired + p->tau_at[j], 4);
    p->nknots = 1;
  }
}

/* Past the dead man's deadline: every stream holds at what it sent last, once per lapse
 * (renew arms it again). Caller holds the gate. */
static void lapse_if_due(core *c, int64_t now) {
  int64_t deadline = atomic_load(&c->deadline_ns);
  if (deadline > 0 && now > deadline && !atomic_load(&c->tripped)) {
    atomic_store(&c->deadline_ns, 0);
    for (uint32_t i = 0; i < c->nstreams; i++)
      freeze(&c->streams[i].plan);
    atomic_store(&c->lapsed_ns, deadline);
    atomic_store(&c->deadman_ns, now);
    atomic_fetch_add(&c->deadman, 1);
  }
}

/* One period: every engaged stream sampled and written, under the gate. */
static void stream_period(core *c, int64_t now) {
  unsigned char buf[MAX_SAMPLE];
  double q[MAX_JOINTS];
  float tau[MAX_JOINTS];
  pthread_mutex_lock(&c->gate);
  lapse_if_due(c, now); /* Python stopped renewing: hold */
  double t = (double)now / 1e9;
  for (uint32_t i = 0; i < c->nstreams; i++) {
    stream_slot *s = &c->streams[i];
    native_plan *p = &s->plan;
    if (!p->engaged || s->writer <= 0)
      continue;
    sample_plan(p, t, q, tau);
    memcpy(buf, p->tmpl, p->len);
    if (!patch(p, buf, q, tau)) {
      atomic_fetch_add(&c->s_refused, 1);
      continue;
    }
    if (write_bytes(s->writer, buf, p->len) >= 0)
      atomic_fetch_add(&c->s_writes, 1);
    memcpy(p->last_q, q, p->n * sizeof(double));
    memcpy(p->last_tau, tau, p->ntau * sizeof(float));
    p->sent = true;
  }
  pthread_mutex_unlock(&c->gate);
}

#ifndef PR_SET_TIMERSLACK
#define PR_SET_TIMERSLACK 29
#endif
#include <sys/prctl.h>

/* Nothing engaged: wait until a plan engages a stream (or the stop), no period running.
 * True if it waited. A lapse meanwhile is seen by the next renewal (``lapse_if_due``);
 * with nothing engaged there is nothing it would hold. */
static bool park(core *c) {
  bool waited = false;
  pthread_mutex_lock(&c->smu);
  while (!atomic_load(&c->sstop) && atomic_load(&c->nengaged) == 0) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 1; /* a bound, not a period: ``plan`` signals */
    pthread_cond_timedwait(&c->scond, &c->smu, &until);
    waited = true;
  }
  pthread_mutex_unlock(&c->smu);
  return waited;
}

/* Wake the parked stream thread: a stream engaged, or the stop. */
static void unpark(core *c) {
  pthread_mutex_lock(&c->smu);
  pthread_cond_broadcast(&c->scond);
  pthread_mutex_unlock(&c->smu);
}

static void *stream_thread(void *arg) {
  core *c = arg;
  pthread_setname_np(pthread_self(), "motion-streamer");
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  c->s_err = 0;
  if (c->s_priority > 0) {
    struct sched_param sp = {.sched_priority = c->s_priority};
    c->s_err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
  }
  atomic_store(&c->s_ready, 1);
  int64_t deadline = now_ns(CLOCK_MONOTONIC) + c->period_ns;
  while (!atomic_load(&c->sstop)) {
    if (atomic_load(&c->nengaged) == 0 && park(c))
      deadline = now_ns(CLOCK_MONOTONIC); /* a stream engaged: its first period now */
    struct timespec ts = {.tv_sec = deadline / 1000000000, .tv_nsec = deadline % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
      ;
    int64_t woke = now_ns(CLOCK_MONOTONIC);
    if (atomic_load(&c->sstop))
      break;
    stream_period(c, woke);
    int64_t done = now_ns(CLOCK_MONOTONIC);
    uint64_t k = atomic_fetch_add(&c->s_periods, 1);
    c->lateness[k % LATENESS_RING] = woke - deadline;
    atomic_fetch_add(&c->s_busy_ns, (uint64_t)(done - woke));
    deadline += c->period_ns;
    if (done > deadline) { /* overran: skip the periods already missed, count them */
      int64_t missed = (done - deadline) / c->period_ns + 1;
      atomic_fetch_add(&c->s_missed, (uint64_t)missed);
      deadline += missed * c->period_ns;
    }
  }
  return NULL;
}

static void stream_stop_c(core *c) {
  if (!c->sthread_started)
    return;
  atomic_store(&c->sstop, 1);
  unpark(c);
  pthread_join(c->sthread, NULL);
  c->sthread_started = false;
}

/* -- the reflex ------------------------------------------------------------------------ */

/* Why this sample trips the reflex (WHY_NONE: it does not). Generic: N booleans after
 * the 4-byte encapsulation header, whatever the options say (idl/README.md). */
static int judge(const core *c, struct ddsi_serdata *sd, uint32_t *detail, trip_record *t) {
  uint32_t size = ddsi_serdata_size(sd);
  unsigned char b[KEEP];
  uint32_t n = size < KEEP ? size : KEEP;
  if (n)
    ddsi_serdata_to_ser(sd, 0, n, b);
  if (size < 4) {
    *detail = size;
    goto trip;
  }
  /* XCDR1 and plain XCDR2, either byte order: what a @final type may come as */
  if (b[0] != 0 || (b[1] != 0 && b[1] != 1 && b[1] != 6 && b[1] != 7)) {
    *detail = (uint32_t)(b[0] << 8 | b[1]);
    t->why = WHY_ENCAPSULATION;
    goto keep;
  }
  if (size < 4 + c->nflags) {
    *detail = size;
    goto trip;
  }
  uint32_t bits = 0;
  for (uint32_t k = 0; k < c->nflags; k++)
    if (b[4 + k])
      bits |= 1u << k;
  if (!bits)
    return WHY_NONE;
  *detail = bits;
  t->why = WHY_FLAGS;
  goto keep;
trip:
  t->why = WHY_SHORT;
keep:
  t->size = size;
  t->kept = n;
  memcpy(t->data, b, n);
  return t->why;
}

/* Put the newest measured positions into ``hold`` (a command of ``len`` bytes): true if
 * done. Only from a sample Python has not taken yet, so newer than what the hold was made
 * from, that arrived within the age limit, XCDR1 little-endian, all finite. */
static bool measure_into(core *c, const measure_map *m, unsigned char *hold, uint32_t len,
                         int64_t now) {
  unsigned char state[MAX_SAMPLE];
  struct ddsi_serdata *sd;
  dds_sample_info_t si;
  float q[MAX_JOINTS];
  if (m->div < 0 || m->n == 0)
    return false;
  diverted *d = &c->div[m->div];
  int64_t last = atomic_load(&d->last_ns);
  if (last == 0 || now - last > m->max_age_ns)
    return false;
  if (dds_readcdr(d->reader, &sd, 1, &si, 0) != 1)
    return false;
  uint32_t size = ddsi_serdata_size(sd);
  bool ok = si.valid_data && size >= m->min_size && size <= MAX_SAMPLE;
  if (ok)
    ddsi_serdata_to_ser(sd, 0, size, state);
  ddsi_serdata_unref(sd);
  if (!ok || state[0] != 0 || state[1] != 1)
    return false;
  for (uint32_t j = 0; j < m->n; j++) {
    if (m->cmd_at[j] + 4 > len)
      return false;
    memcpy(&q[j], state + m->state_at[j], 4); /* little-endian wire, little-endian host */
    if (!isfinite(q[j]))
      return false;
    q[j] = q[j] < m->lo[j] ? m->lo[j] : q[j] > m->hi[j] ? m->hi[j] : q[j];
  }
  for (uint32_t j = 0; j < m->n; j++)
    memcpy(hold + m->cmd_at[j], &q[j], 4);
  return true;
}

/* True if this call tripped the reflex (false: it was latched already). */
static bool fire(core *c, trip_record *t) {
  unsigned char buf[MAX_SAMPLE];
  pthread_mutex_lock(&c->gate);
  if (atomic_load(&c->tripped)) { /* latched: one reaction per trip */
    pthread_mutex_unlock(&c->gate);
    return false;
  }
  atomic_store(&c->tripped, 1);
  atomic_fetch_add(&c->trips, 1);
  for (uint32_t i = 0; i < c->nstreams; i++) {
    stream_slot *s = &c->streams[i];
    s->fired_len = 0;
    bool fresh = false;
    int64_t len = hold_load(&s->hold, buf, &fresh);
    if (len < 0) {
      atomic_fetch_add(&c->torn, 1);
      continue;
    }
    if (len == 0 || s->writer <= 0)
      continue;
    if (fresh && measure_into(c, &s->measure, buf, (uint32_t)len, t->t_sample))
      t->measured |= 1u << i;
    dds_return_t rc = write_bytes(s->writer, buf, (uint32_t)len);
    if (t->held == 0)
      t->t_first_hold = now_ns(CLOCK_MONOTONIC);
    if (rc < 0)
      t->hold_rc = rc;
    t->held |= 1u << i;
    memcpy(s->fired, buf, (size_t)len);
    s->fired_len = (uint32_t)len;
    adopt_fired(s); /* the native streamer goes on sending this hold */
  }
  for (uint32_t i = 0; i < c->nstreams; i++) /* engaged natively, no hold stored: stop it */
    if (!(t->held >> i & 1))
      freeze(&c->streams[i].plan);
  t->t_holds = now_ns(CLOCK_MONOTONIC);
  if (c->cancel_writer > 0 && c->cancel_len) {
    memcpy(buf, c->cancel, c->cancel_len);
    if (c->cancel_id_at)
      put_le(buf + c->cancel_id_at, c->cancel_id++, 4);
    if (c->cancel_stamp_at) /* as Python's time.time_ns() */
      put_le(buf + c->cancel_stamp_at, (uint64_t)now_ns(CLOCK_REALTIME), 8);
    t->cancel_rc = write_bytes(c->cancel_writer, buf, c->cancel_len);
    t->t_cancel = now_ns(CLOCK_MONOTONIC);
  }
  c->last = *t;
  c->has_last = true;
  pthread_mutex_unlock(&c->gate);
  return true;
}

static void on_estop(dds_entity_t reader, void *arg) {
  core *c = arg;
  struct ddsi_serdata *sd[TAKE_MAX];
  dds_sample_info_t si[TAKE_MAX];
  trip_record t;
  memset(&t, 0, sizeof t);
  t.t_sample = now_ns(CLOCK_MONOTONIC);
  if (atomic_load(&c->closed))
    return;
  promote(c);
  dds_return_t n = dds_takecdr(reader, sd, TAKE_MAX, si, 0);
  int why = WHY_NONE;
  for (dds_return_t i = 0; i < n; i++) {
    if (why == WHY_NONE && si[i].valid_data)
      why = judge(c, sd[i], &t.detail, &t);
    ddsi_serdata_unref(sd[i]);
  }
  if (why == WHY_NONE)
    return;
  if (!fire(c, &t))
    return;
  if (holds_gil()) /* a local write from Python: it learns now, as before */
    call_on_trip(c);
  else {
    atomic_store(&c->pending_trip, 1);
    wake(c);
  }
}

/* -- the Python type ------------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD core *c;
} Core;

/* The gate from a thread that may hold the GIL: never wait for the gate with it, since a
 * trip that writes to an in-process Python reader needs the GIL to finish. */
/* The gate, for a thread that holds the GIL. It never waits for the GIL while it holds the
 * gate: the stream thread and the reflex (SCHED_FIFO, no GIL) would wait behind it for
 * whichever Python thread has the GIL, preempted by anything (the GIL inherits no
 * priority; the gate does). So on contention it waits for the gate to be free without
 * the GIL, takes the GIL back, and tries again. */
static void gate_lock_py(core *c) {
  while (pthread_mutex_trylock(&c->gate) != 0) {
    Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&c->gate);
    pthread_mutex_unlock(&c->gate);
    Py_END_ALLOW_THREADS
  }
}

static int init_mutex(pthread_mutex_t *m) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  /* the streamer may run SCHED_FIFO while it holds the gate for one write */
  pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
  int rc = pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
  return rc;
}

static int Core_init(Core *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"participant", "estop_topic", "estop_qos_from", "nflags",
                          "stream_writers", "cancel_writer", "cancel", "cancel_id_at",
                          "cancel_stamp_at", "cancel_id", "on_trip", "rt_priority",
                          "on_thread", NULL};
  int participant, topic, qos_from, cancel_writer, rt_priority = 0;
  PyObject *on_thread = Py_None;
  unsigned int nflags, id_at, stamp_at, cancel_id;
  PyObject *writers, *on_trip;
  Py_buffer cancel;
  if (self->c != NULL) {
    PyErr_SetString(PyExc_RuntimeError, "already initialised");
    return -1;
  }
  if (!PyArg_ParseTupleAndKeywords(args, kw, "iiiIOiy*IIIO|iO", names, &participant, &topic,
                                   &qos_from, &nflags, &writers, &cancel_writer, &cancel, &id_at,
                                   &stamp_at, &cancel_id, &on_trip, &rt_priority, &on_thread))
    return -1;
  PyObject *seq = PySequence_Fast(writers, "stream_writers must be a sequence of handles");
  int ret = -1;
  core *c = NULL;
  if (seq == NULL)
    goto out;
  Py_ssize_t nw = PySequence_Fast_GET_SIZE(seq);
  if (nw > MAX_STREAMS || nflags == 0 || nflags > MAX_FLAGS || cancel.len > MAX_SAMPLE ||
      (id_at && id_at + 4 > (size_t)cancel.len) || (stamp_at && stamp_at + 8 > (size_t)cancel.len)) {
    PyErr_SetString(PyExc_ValueError, "reflex: too many streams or flags, or a bad cancel");
    goto out;
  }
  if ((on_trip != Py_None && !PyCallable_Check(on_trip)) ||
      (on_thread != Py_None && !PyCallable_Check(on_thread)) || rt_priority < 0 ||
      rt_priority > 99) {
    PyErr_SetString(PyExc_TypeError, "on_trip, on_thread: callable or None; rt_priority 0..99");
    goto out;
  }
  c = calloc(1, sizeof *c);
  if (c == NULL) {
    PyErr_NoMemory();
    goto out;
  }
  c->nflags = nflags;
  c->nstreams = (uint32_t)nw;
  for (Py_ssize_t i = 0; i < nw; i++) {
    long h = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
    if (h == -1 && PyErr_Occurred())
      goto out;
    c->streams[i].writer = (dds_entity_t)h;
    c->streams[i].measure.div = -1;
  }
  c->cancel_writer = cancel_writer;
  c->cancel_len = (uint32_t)cancel.len;
  memcpy(c->cancel, cancel.buf, (size_t)cancel.len);
  c->cancel_id_at = id_at;
  c->cancel_stamp_at = stamp_at;
  c->cancel_id = cancel_id;
  Py_INCREF(on_trip);
  c->on_trip = on_trip;
  Py_INCREF(on_thread);
  c->on_thread = on_thread;
  c->rt_priority = rt_priority;
  pthread_condattr_t monotonic;
  if (pthread_condattr_init(&monotonic) ||
      pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC) || init_mutex(&c->gate) ||
      pthread_mutex_init(&c->dmu, NULL) || pthread_cond_init(&c->dcond, NULL) ||
      pthread_mutex_init(&c->smu, NULL) || pthread_cond_init(&c->scond, &monotonic)) {
    PyErr_SetString(PyExc_OSError, "reflex: cannot create its locks");
    goto out;
  }
  pthread_condattr_destroy(&monotonic);
  if (pthread_create(&c->thread, NULL, dispatch, c) != 0) {
    PyErr_SetString(PyExc_OSError, "reflex: cannot start its dispatcher thread");
    goto out;
  }
  c->thread_started = true;
  if (participant > 0 && topic > 0) {
    dds_qos_t *qos = dds_create_qos();
    dds_listener_t *l = dds_create_listener(c);
    dds_entity_t rd;
    if (qos_from > 0)
      dds_get_qos(qos_from, qos); /* the executive's e-stop reader's: it matches what that does */
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 8);
    dds_lset_data_available_arg(l, on_estop, c, true);
    Py_BEGIN_ALLOW_THREADS rd = dds_create_reader(participant, topic, qos, l);
    Py_END_ALLOW_THREADS
    dds_delete_listener(l);
    dds_delete_qos(qos);
    if (rd < 0) {
      PyErr_Format(PyExc_OSError, "reflex: cannot create its e-stop reader: %s",
                   dds_strretcode(rd));
      goto out;
    }
    c->estop_reader = rd;
  }
  self->c = c;
  c = NULL;
  ret = 0;
out:
  if (c != NULL) { /* failed half-way: nothing refers to it yet but the dispatcher */
    if (c->thread_started) {
      pthread_mutex_lock(&c->dmu);
      c->stopping = true;
      pthread_cond_signal(&c->dcond);
      pthread_mutex_unlock(&c->dmu);
      Py_BEGIN_ALLOW_THREADS pthread_join(c->thread, NULL);
      Py_END_ALLOW_THREADS
    }
    Py_XDECREF(c->on_trip);
    Py_XDECREF(c->on_thread);
    free(c);
  }
  Py_XDECREF(seq);
  PyBuffer_Release(&cancel);
  return ret;
}

static core *live(Core *self) {
  if (self->c == NULL || atomic_load(&self->c->closed)) {
    PyErr_SetString(PyExc_RuntimeError, "the reflex is closed");
    return NULL;
  }
  return self->c;
}

static stream_slot *slot_of(core *c, int slot) {
  if (slot < 0 || (uint32_t)slot >= c->nstreams) {
    PyErr_Format(PyExc_IndexError, "no stream slot %d", slot);
    return NULL;
  }
  return &c->streams[slot];
}

static PyObject *Core_divert(Core *self, PyObject *args) {
  int reader;
  PyObject *callback, *reader_obj;
  core *c = live(self);
  if (c == NULL || !PyArg_ParseTuple(args, "iOO", &reader, &callback, &reader_obj))
    return NULL;
  if (c->ndiverted >= MAX_DIVERTED || (callback != Py_None && !PyCallable_Check(callback))) {
    PyErr_SetString(PyExc_ValueError,
                    "divert: too many readers, or the callback is neither callable nor None");
    return NULL;
  }
  diverted *d = &c->div[c->ndiverted];
  dds_listener_t *l = dds_create_listener(NULL);
  d->saved = dds_create_listener(NULL);
  dds_return_t rc = dds_get_listener(reader, d->saved);
  if (rc == 0) {
    dds_copy_listener(l, d->saved); /* every other callback it had stays */
    d->core = c;
    d->reader = reader;
    Py_INCREF(callback);
    Py_INCREF(reader_obj);
    d->callback = callback;
    d->reader_obj = reader_obj;
    atomic_store(&d->pending, 0);
    dds_lset_data_available_arg(l, on_diverted, d, true);
    c->ndiverted++; /* visible to the dispatcher before any callback can mark it */
    Py_BEGIN_ALLOW_THREADS rc = dds_set_listener(reader, l);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
      c->ndiverted--;
      Py_CLEAR(d->callback);
      Py_CLEAR(d->reader_obj);
    }
  }
  dds_delete_listener(l);
  if (rc != 0) {
    dds_delete_listener(d->saved);
    d->saved = NULL;
    PyErr_Format(PyExc_OSError, "divert reader %d: %s", reader, dds_strretcode(rc));
    return NULL;
  }
  Py_RETURN_NONE;
}

static int floats(PyObject *seq, uint32_t n, float *out) {
  PyObject *f = PySequence_Fast(seq, "a sequence of numbers");
  if (f == NULL)
    return -1;
  if ((uint32_t)PySequence_Fast_GET_SIZE(f) != n) {
    Py_DECREF(f);
    PyErr_SetString(PyExc_ValueError, "measure: the lists differ in length");
    return -1;
  }
  for (uint32_t i = 0; i < n; i++) {
    out[i] = (float)PyFloat_AsDouble(PySequence_Fast_GET_ITEM(f, i));
    if (PyErr_Occurred()) {
      Py_DECREF(f);
      return -1;
    }
  }
  Py_DECREF(f);
  return 0;
}

static int offsets(PyObject *seq, uint32_t *n, uint32_t *out) {
  PyObject *f = PySequence_Fast(seq, "a sequence of offsets");
  if (f == NULL)
    return -1;
  Py_ssize_t len = PySequence_Fast_GET_SIZE(f);
  if (len > MAX_JOINTS) {
    Py_DECREF(f);
    PyErr_SetString(PyExc_ValueError, "measure: too many joints");
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(f, i));
    if (v < 0 || v + 4 > MAX_SAMPLE) {
      Py_DECREF(f);
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "measure: an offset outside a sample");
      return -1;
    }
    out[i] = (uint32_t)v;
  }
  *n = (uint32_t)len;
  Py_DECREF(f);
  return 0;
}

/* measure(slot, reader, max_age_s, min_size, state_at, cmd_at, lower, upper): where the
 * newest measurement of ``slot``'s stream is, in the (already diverted) state reader. */
static PyObject *Core_measure(Core *self, PyObject *args) {
  int slot, reader;
  double max_age;
  unsigned int min_size;
  PyObject *state_at, *cmd_at, *lower, *upper;
  core *c = live(self);
  if (c == NULL || !PyArg_ParseTuple(args, "iidIOOOO", &slot, &reader, &max_age, &min_size,
                                     &state_at, &cmd_at, &lower, &upper))
    return NULL;
  stream_slot *s = slot_of(c, slot);
  if (s == NULL)
    return NULL;
  measure_map m;
  memset(&m, 0, sizeof m);
  m.div = -1;
  for (uint32_t i = 0; i < c->ndiverted; i++)
    if (c->div[i].reader == reader)
      m.div = (int)i;
  uint32_t n2;
  if (m.div < 0) {
    PyErr_SetString(PyExc_ValueError, "measure: divert the state reader first");
    return NULL;
  }
  if (offsets(state_at, &m.n, m.state_at) < 0 || offsets(cmd_at, &n2, m.cmd_at) < 0 ||
      floats(lower, m.n, m.lo) < 0 || floats(upper, m.n, m.hi) < 0)
    return NULL;
  if (n2 != m.n || min_size > MAX_SAMPLE) {
    PyErr_SetString(PyExc_ValueError, "measure: state and command joints differ");
    return NULL;
  }
  for (uint32_t j = 0; j < m.n; j++)
    if (m.state_at[j] + 4 > min_size) {
      PyErr_SetString(PyExc_ValueError, "measure: an offset past the state's size");
      return NULL;
    }
  m.min_size = min_size;
  m.max_age_ns = (int64_t)(max_age * 1e9);
  gate_lock_py(c); /* the reflex reads it under the gate */
  s->measure = m;
  pthread_mutex_unlock(&c->gate);
  Py_RETURN_NONE;
}

static PyObject *Core_publish(Core *self, PyObject *args) {
  int slot;
  unsigned int seen;
  Py_buffer data;
  core *c = live(self);
  if (c == NULL || !PyArg_ParseTuple(args, "iy*I", &slot, &data, &seen))
    return NULL;
  stream_slot *s = slot_of(c, slot);
  if (s == NULL || data.len > MAX_SAMPLE) {
    if (s != NULL)
      PyErr_SetString(PyExc_ValueError, "publish: sample too large");
    PyBuffer_Release(&data);
    return NULL;
  }
  long result;
  gate_lock_py(c);
  if (atomic_load(&c->tripped) && seen != atomic_load(&c->trips))
    result = 0; /* computed before a trip the streamer has not seen: it may move */
  else {
    dds_return_t rc = write_bytes(s->writer, data.buf, (uint32_t)data.len);
    result = rc < 0 ? rc : 1;
  }
  pthread_mutex_unlock(&c->gate);
  PyBuffer_Release(&data);
  return PyLong_FromLong(result);
}

static PyObject *Core_store_hold(Core *self, PyObject *args) {
  int slot, fresh = 0;
  PyObject *obj;
  core *c = live(self);
  if (c == NULL || !PyArg_ParseTuple(args, "iO|p", &slot, &obj, &fresh))
    return NULL;
  stream_slot *s = slot_of(c, slot);
  if (s == NULL)
    return NULL;
  if (obj == Py_None) {
    hold_store(&s->hold, NULL, 0, false);
    Py_RETURN_NONE;
  }
  Py_buffer data;
  if (PyObject_GetBuffer(obj, &data, PyBUF_SIMPLE) < 0)
    return NULL;
  if (data.len == 0 || data.len > MAX_SAMPLE) {
    PyBuffer_Release(&data);
    PyErr_SetString(PyExc_ValueError, "store_hold: a hold is 1..2048 bytes (None: not engaged)");
    return NULL;
  }
  hold_store(&s->hold, data.buf, (uint32_t)data.len, fresh);
  PyBuffer_Release(&data);
  Py_RETURN_NONE;
}

/* stream_start(period_s, priority) -> "" (SCHED_FIFO granted, or priority 0: not asked)
 * or why it was refused: the thread runs either way. */
static PyObject *Core_stream_start(Core *self, PyObject *args) {
  double period;
  int priority;
  core *c = live(self);
  if (c == NULL || !PyArg_ParseTuple(args, "di", &period, &priority))
    return NULL;
  if (!(period >= 1e-4 && period <= 1.0) || priority < 0 || priority > 99) {
    PyErr_SetString(PyExc_ValueError, "stream_start: period 1e-4..1 s, priority 0..99");
    return NULL;
  }
  if (c->sthread_started) {
    PyErr_SetString(PyExc_RuntimeError, "stream_start: already streaming");
    return NULL;
  }
  if (c->lateness == NULL && (c->lateness = calloc(LATENESS_RING, sizeof(int64_t))) == NULL)
    return PyErr_NoMemory();
  c->period_ns = (int64_t)(period * 1e9);
  c->s_priority = priority;
  atomic_store(&c->sstop, 0);
  atomic_store(&c->s_ready, 0);
  if (pthread_create(&c->sthread, NULL, stream_thread, c) != 0) {
    PyErr_SetString(PyExc_OSError, "stream_start: cannot start the thread");
    return NULL;
  }
  c->sthread_started = true;
  Py_BEGIN_ALLOW_THREADS while (!atomic_load(&c->s_ready)) usleep(100);
  Py_END_ALLOW_THREADS
  return PyUnicode_FromString(c->s_err ? strerror(c->s_err) : "");
}

static PyObject *Core_stream_stop(Core *self, PyObject *Py_UNUSED(ignored)) {
  core *c = self->c;
  if (c != NULL) {
    Py_BEGIN_ALLOW_THREADS stream_stop_c(c);
    Py_END_ALLOW_THREADS
  }
  Py_RETURN_NONE;
}

/* plan(slot, seen_trips, seen_deadman, template | None, q_kind, q_at, tau_at, table,
 *      knot_t0, knot_dt, knots, paused_at, ramp_s, write_now) -> 1 taken, 0 refused (a trip or a dead-man hold
 * Python has not seen), < 0 a DDS error of the write ``write_now`` asked for.
 * ``table``: float64 n x 8 (target, lower, upper, has segment, t0, duration, start, goal);
 * ``knots``: float32 K x len(tau_at). None as template: the stream is not engaged. */
static PyObject *Core_plan(Core *self, PyObject *args) {
  int slot, write_now;
  unsigned int seen, seen_dm, q_kind;
  PyObject *tmpl_obj, *q_at_obj, *tau_at_obj;
  Py_buffer table, knots;
  double knot_t0, knot_dt, paused_at, ramp_s;
  core *c = live(self);
  if (c == NULL || !PyArg_ParseTuple(args, "iIIOIOOy*ddy*ddp", &slot, &seen, &seen_dm, &tmpl_obj,
                                     &q_kind, &q_at_obj, &tau_at_obj, &table, &knot_t0, &knot_dt,
                                     &knots, &paused_at, &ramp_s, &write_now))
    return NULL;
  PyObject *result = NULL;
  Py_buffer tmpl = {0};
  bool have_tmpl = false;
  native_plan *p = calloc(1, sizeof *p);
  stream_slot *s = slot_of(c, slot);
  if (p == NULL) {
    PyErr_NoMemory();
    goto out;
  }
  if (s == NULL)
    goto out;
  if (tmpl_obj != Py_None) {
    if (PyObject_GetBuffer(tmpl_obj, &tmpl, PyBUF_SIMPLE) < 0)
      goto out;
    have_tmpl = true;
    uint32_t n, ntau;
    if (tmpl.len < 4 || tmpl.len > MAX_SAMPLE || q_kind > Q_U32 ||
        offsets(q_at_obj, &n, p->q_at) < 0 || offsets(tau_at_obj, &ntau, p->tau_at) < 0) {
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "plan: a template is 4..2048 bytes, q_kind 0 or 1");
      goto out;
    }
    bool ok = (size_t)table.len == n * 8 * sizeof(double) && (ntau == 0 || ntau == n) &&
              knots.len % (sizeof(float) * (ntau ? ntau : 1)) == 0;
    uint32_t nk = ntau ? (uint32_t)(knots.len / (sizeof(float) * ntau)) : 0;
    for (uint32_t j = 0; ok && j < n; j++)
      ok = p->q_at[j] + 4 <= (uint32_t)tmpl.len && (!ntau || p->tau_at[j] + 4 <= (uint32_t)tmpl.len);
    if (!ok || nk > MAX_KNOTS || (ntau && nk == 0)) {
      PyErr_SetString(PyExc_ValueError,
                      "plan: the table is n x 8 float64, the knots 1..64 x n float32, and "
                      "every offset inside the template");
      goto out;
    }
    const double *tb = table.buf;
    for (uint32_t j = 0; j < n; j++) {
      const double *r = tb + 8 * j;
      p->target[j] = r[0], p->lo[j] = r[1], p->hi[j] = r[2], p->seg[j] = r[3] != 0;
      p->t0[j] = r[4], p->dur[j] = r[5], p->a[j] = r[6], p->b[j] = r[7];
    }
    if (ntau)
      for (uint32_t k = 0; k < nk; k++)
        memcpy(p->tau[k], (const float *)knots.buf + k * ntau, ntau * sizeof(float));
    p->engaged = true;
    p->len = (uint32_t)tmpl.len;
    memcpy(p->tmpl, tmpl.buf, p->len);
    p->n = n, p->ntau = ntau, p->q_kind = q_kind, p->nknots = nk;
    p->knot_t0 = knot_t0, p->knot_dt = knot_dt;
    p->paused_at = paused_at < 0 ? -1 : paused_at, p->ramp_s = ramp_s;
  }
  long r = 1;
  gate_lock_py(c);
  if ((atomic_load(&c->tripped) && seen != atomic_load(&c->trips)) ||
      seen_dm != atomic_load(&c->deadman))
    r = 0; /* computed before a hold Python has not seen: it may move */
  else {
    native_plan *old = &s->plan;
    if (old->sent && p->engaged && old->n == p->n) { /* what it sent stays what it sent */
      memcpy(p->last_q, old->last_q, sizeof p->last_q);
      memcpy(p->last_tau, old->last_tau, sizeof p->last_tau);
      p->sent = true;
    }
    s->plan = *p;
    uint32_t engaged = 0;
    for (uint32_t i = 0; i < c->nstreams; i++)
      engaged += c->streams[i].plan.engaged;
    if (atomic_exchange(&c->nengaged, engaged) == 0 && engaged) {
      atomic_store(&c->engaged_ns, now_ns(CLOCK_MONOTONIC));
      unpark(c);
    }
    if (write_now && p->engaged && s->writer > 0) {
      unsigned char buf[MAX_SAMPLE];
      double q[MAX_JOINTS];
      float tau[MAX_JOINTS];
      sample_plan(&s->plan, (double)now_ns(CLOCK_MONOTONIC) / 1e9, q, tau);
      memcpy(buf, s->plan.tmpl, s->plan.len);
      if (patch(&s->plan, buf, q, tau)) {
        dds_return_t rc = write_bytes(s->writer, buf, s->plan.len);
        r = rc < 0 ? rc : 1;
        memcpy(s->plan.last_q, q, s->plan.n * sizeof(double));
        memcpy(s->plan.last_tau, tau, s->plan.ntau * sizeof(float));
        s->plan.sent = true;
      }
    }
  }
  pthread_mutex_unlock(&c->gate);
  result = PyLong_FromLong(r);
out:
  if (have_tmpl)
    PyBuffer_Release(&tmpl);
  PyBuffer_Release(&table);
  PyBuffer_Release(&knots);
  free(p);
  return result;
}

/* renew(timeout_s) -> dead-man holds so far: the streams hold unless renewed again within
 * ``timeout_s``; 0 disarms it. */
static PyObject *Core_renew(Core *self, PyObject *args) {
  double timeout;
  core *c = live(self);
  if (c == NULL || !PyArg_ParseTuple(args, "d", &timeout))
    return NULL;
  gate_lock_py(c);
  int64_t now = now_ns(CLOCK_MONOTONIC);
  /* A renewal past the deadline is a lapse, even if no period has run since to see it:
   * after the whole process was stopped (SIGSTOP) or starved, Python's renewal may run
   * before the stream thread, and re-arming would have the next period sample every plan
   * at the new time, seconds along its trajectory (a 1 rad jump, tests/integration/
   * test_stall.py). Counted here, Python sees the lapse and its length and holds. */
  lapse_if_due(c, now);
  uint32_t lapses = atomic_load(&c->deadman);
  if (atomic_load(&c->back_of) != lapses) {
    atomic_store(&c->back_ns, now);
    atomic_store(&c->back_of, lapses);
  }
  atomic_store(&c->renewed_ns, now);
  atomic_store(&c->deadline_ns, timeout > 0 ? now + (int64_t)(timeout * 1e9) : 0);
  pthread_mutex_unlock(&c->gate);
  return PyLong_FromUnsignedLong(lapses);
}

static PyObject *Core_sent(Core *self, PyObject *args) {
  int slot;
  core *c = live(self);
  if (c == NULL || !PyArg_ParseTuple(args, "i", &slot))
    return NULL;
  stream_slot *s = slot_of(c, slot);
  if (s == NULL)
    return NULL;
  double q[MAX_JOINTS];
  gate_lock_py(c); /* copied under the gate; no Python object is made there (an allocation
                    * may run a garbage collection, and the stream would wait for it) */
  uint32_t n = s->plan.sent ? s->plan.n : 0;
  memcpy(q, s->plan.last_q, n * sizeof(double));
  pthread_mutex_unlock(&c->gate);
  PyObject *r = PyList_New(n);
  for (uint32_t j = 0; r != NULL && j < n; j++)
    PyList_SET_ITEM(r, j, PyFloat_FromDouble(q[j]));
  return r;
}

/* stream_stats(since=0) -> counters, and the lateness (int64 ns) of the periods from
 * ``since`` on (at most the ring's newest 65,536). */
static PyObject *Core_stream_stats(Core *self, PyObject *args) {
  unsigned long long since = 0;
  core *c = self->c;
  if (!PyArg_ParseTuple(args, "|K", &since))
    return NULL;
  if (c == NULL)
    Py_RETURN_NONE;
  uint64_t periods = atomic_load(&c->s_periods);
  uint64_t first = since > periods ? periods : since;
  if (periods - first > LATENESS_RING)
    first = periods - LATENESS_RING;
  PyObject *late = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((periods - first) * sizeof(int64_t)));
  if (late == NULL)
    return NULL;
  int64_t *out = (int64_t *)PyBytes_AS_STRING(late);
  for (uint64_t k = first; k < periods; k++)
    out[k - first] = c->lateness ? c->lateness[k % LATENESS_RING] : 0;
  return Py_BuildValue(
      "{s:K,s:K,s:K,s:K,s:K,s:I,s:L,s:L,s:L,s:L,s:L,s:i,s:s,s:N}", "periods", (unsigned long long)periods,
      "missed", (unsigned long long)atomic_load(&c->s_missed), "busy_ns",
      (unsigned long long)atomic_load(&c->s_busy_ns), "writes",
      (unsigned long long)atomic_load(&c->s_writes), "refused",
      (unsigned long long)atomic_load(&c->s_refused), "deadman", atomic_load(&c->deadman),
      "deadman_ns", (long long)atomic_load(&c->deadman_ns), "lapsed_ns",
      (long long)atomic_load(&c->lapsed_ns), "back_ns", (long long)atomic_load(&c->back_ns),
      "renewed_ns", (long long)atomic_load(&c->renewed_ns), "engaged_ns",
      (long long)atomic_load(&c->engaged_ns), "priority", c->s_priority, "scheduling_error",
      c->s_err ? strerror(c->s_err) : "", "lateness_ns", late);
}

static PyObject *bytes_or_none(const unsigned char *p, int64_t len) {
  if (len <= 0)
    Py_RETURN_NONE;
  return PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)len);
}

static PyObject *Core_load_hold(Core *self, PyObject *args) {
  int slot;
  unsigned char buf[MAX_SAMPLE];
  core *c = live(self);
  if (c == NULL || !PyArg_ParseTuple(args, "i", &slot))
    return NULL;
  stream_slot *s = slot_of(c, slot);
  if (s == NULL)
    return NULL;
  int64_t len = hold_load(&s->hold, buf, NULL);
  if (len < 0) {
    PyErr_SetString(PyExc_RuntimeError, "load_hold: the writer lapped every try");
    return NULL;
  }
  return bytes_or_none(buf, len);
}

static PyObject *Core_fired(Core *self, PyObject *args) {
  int slot;
  core *c = live(self);
  if (c == NULL || !PyArg_ParseTuple(args, "i", &slot))
    return NULL;
  stream_slot *s = slot_of(c, slot);
  if (s == NULL)
    return NULL;
  unsigned char fired[MAX_SAMPLE];
  gate_lock_py(c); /* copied under the gate, made a Python object after it */
  int64_t len = atomic_load(&c->tripped) ? (int64_t)s->fired_len : -1;
  if (len > 0)
    memcpy(fired, s->fired, (size_t)len);
  pthread_mutex_unlock(&c->gate);
  if (len < 0)
    Py_RETURN_NONE;
  return bytes_or_none(fired, len);
}

static PyObject *Core_tripped(Core *self, PyObject *Py_UNUSED(ignored)) {
  if (self->c == NULL)
    Py_RETURN_FALSE;
  return PyBool_FromLong(atomic_load(&self->c->tripped));
}

static PyObject *Core_trips(Core *self, PyObject *Py_UNUSED(ignored)) {
  if (self->c == NULL)
    return PyLong_FromLong(0);
  return PyLong_FromUnsignedLong(atomic_load(&self->c->trips));
}

static PyObject *Core_reset(Core *self, PyObject *Py_UNUSED(ignored)) {
  core *c = live(self);
  if (c == NULL)
    return NULL;
  gate_lock_py(c);
  atomic_store(&c->tripped, 0);
  for (uint32_t i = 0; i < c->nstreams; i++)
    c->streams[i].fired_len = 0;
  pthread_mutex_unlock(&c->gate);
  Py_RETURN_NONE;
}

static PyObject *Core_last_trip(Core *self, PyObject *Py_UNUSED(ignored)) {
  core *c = live(self);
  if (c == NULL)
    return NULL;
  gate_lock_py(c);
  trip_record t = c->last;
  bool has = c->has_last;
  pthread_mutex_unlock(&c->gate);
  if (!has)
    Py_RETURN_NONE;
  return Py_BuildValue("{s:i,s:I,s:L,s:L,s:L,s:L,s:I,s:I,s:i,s:i,s:I,s:y#}", "why", t.why, "detail",
                       t.detail, "t_sample", (long long)t.t_sample, "t_first_hold",
                       (long long)t.t_first_hold, "t_holds", (long long)t.t_holds, "t_cancel",
                       (long long)t.t_cancel, "held", t.held, "measured", t.measured, "hold_rc", t.hold_rc, "cancel_rc",
                       t.cancel_rc, "size", t.size, "data", (const char *)t.data,
                       (Py_ssize_t)t.kept);
}

static PyObject *Core_stats(Core *self, PyObject *Py_UNUSED(ignored)) {
  core *c = self->c;
  if (c == NULL)
    Py_RETURN_NONE;
  return Py_BuildValue("{s:K,s:K,s:K,s:K,s:I,s:I}", "deferred",
                       (unsigned long long)atomic_load(&c->deferred), "synchronous",
                       (unsigned long long)atomic_load(&c->synchronous), "torn",
                       (unsigned long long)atomic_load(&c->torn), "batches",
                       (unsigned long long)atomic_load(&c->batches), "diverted", c->ndiverted,
                       "estop_reader", (unsigned int)(c->estop_reader > 0 ? c->estop_reader : 0));
}

static bool gone(dds_return_t rc) {
  return rc == 0 || rc == DDS_RETCODE_BAD_PARAMETER || rc == DDS_RETCODE_ALREADY_DELETED;
}

/* Stop: the listeners do nothing from now on; with ``restore`` each diverted reader gets
 * its own listener back and the reflex's reader is deleted, and the memory is freed once
 * no listener can refer to it (else it is left: at exit, no Python callback may run). */
static PyObject *Core_close(Core *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"restore", NULL};
  int restore = 1;
  core *c = self->c;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|p", names, &restore))
    return NULL;
  if (c == NULL || atomic_exchange(&c->closed, 1))
    Py_RETURN_NONE;
  bool free_it = true;
  Py_BEGIN_ALLOW_THREADS
  stream_stop_c(c); /* no period may write after close */
  if (c->estop_reader > 0)
    free_it = gone(dds_delete(c->estop_reader)) && free_it;
  for (uint32_t i = 0; i < c->ndiverted; i++) {
    if (restore)
      free_it = gone(dds_set_listener(c->div[i].reader, c->div[i].saved)) && free_it;
    else
      free_it = false;
  }
  pthread_mutex_lock(&c->dmu);
  c->stopping = true;
  pthread_cond_signal(&c->dcond);
  pthread_mutex_unlock(&c->dmu);
  pthread_join(c->thread, NULL);
  Py_END_ALLOW_THREADS
  if (!free_it) /* a listener may still run (inert): leave it everything it refers to */
    Py_RETURN_NONE;
  for (uint32_t i = 0; i < c->ndiverted; i++) {
    Py_CLEAR(c->div[i].callback);
    Py_CLEAR(c->div[i].reader_obj);
    dds_delete_listener(c->div[i].saved);
    c->div[i].saved = NULL;
  }
  Py_CLEAR(c->on_trip);
  Py_CLEAR(c->on_thread);
  {
    pthread_mutex_destroy(&c->gate);
    pthread_mutex_destroy(&c->dmu);
    pthread_cond_destroy(&c->dcond);
    pthread_mutex_destroy(&c->smu);
    pthread_cond_destroy(&c->scond);
    free(c->lateness);
    free(c);
    self->c = NULL;
  }
  Py_RETURN_NONE;
}

static void Core_dealloc(Core *self) {
  if (self->c != NULL) {
    PyObject *none = PyTuple_New(0);
    PyObject *r = none ? Core_close(self, none, NULL) : NULL;
    Py_XDECREF(r);
    Py_XDECREF(none);
    PyErr_Clear();
  }
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Core_methods[] = {
    {"divert", (PyCFunction)Core_divert, METH_VARARGS,
     "divert(reader, callback, reader_obj): the reader's Python callback off the receive thread"},
    {"publish", (PyCFunction)Core_publish, METH_VARARGS,
     "publish(slot, data, seen_trips) -> 1 written, 0 refused (a trip not yet seen), <0 DDS error"},
    {"store_hold", (PyCFunction)Core_store_hold, METH_VARARGS,
     "store_hold(slot, data | None, fresh=False): the stream's hold, or None: not engaged; "
     "fresh: frozen at a measurement, which a newer one may replace at the trip"},
    {"measure", (PyCFunction)Core_measure, METH_VARARGS,
     "measure(slot, reader, max_age_s, min_size, state_at, cmd_at, lower, upper)"},
    {"load_hold", (PyCFunction)Core_load_hold, METH_VARARGS, "load_hold(slot) -> bytes | None"},
    {"fired", (PyCFunction)Core_fired, METH_VARARGS,
     "fired(slot) -> the hold the reflex wrote at the trip, while tripped"},
    {"tripped", (PyCFunction)Core_tripped, METH_NOARGS, "tripped() -> bool"},
    {"trips", (PyCFunction)Core_trips, METH_NOARGS, "trips() -> the number of trips so far"},
    {"reset", (PyCFunction)Core_reset, METH_NOARGS, "reset(): clear the latch"},
    {"last_trip", (PyCFunction)Core_last_trip, METH_NOARGS, "last_trip() -> dict | None"},
    {"stats", (PyCFunction)Core_stats, METH_NOARGS, "stats() -> dict of counters"},
    {"stream_start", (PyCFunction)Core_stream_start, METH_VARARGS,
     "stream_start(period_s, priority) -> '' or why SCHED_FIFO was refused"},
    {"stream_stop", (PyCFunction)Core_stream_stop, METH_NOARGS, "stream_stop()"},
    {"plan", (PyCFunction)Core_plan, METH_VARARGS,
     "plan(slot, seen_trips, seen_deadman, template, q_kind, q_at, tau_at, table, knot_t0, "
     "knot_dt, knots, paused_at, ramp_s, write_now) -> 1 taken, 0 refused, <0 DDS error"},
    {"renew", (PyCFunction)Core_renew, METH_VARARGS, "renew(timeout_s) -> dead-man holds so far"},
    {"sent", (PyCFunction)Core_sent, METH_VARARGS, "sent(slot) -> the positions sent last"},
    {"stream_stats", (PyCFunction)Core_stream_stats, METH_VARARGS,
     "stream_stats(since=0) -> counters and the lateness of periods since"},
    {"close", (PyCFunction)(void (*)(void))Core_close, METH_VARARGS | METH_KEYWORDS,
     "close(restore=True)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "executive.robots.native._reflex.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The e-stop reflex's C state: its reader, the gate, the holds, the dispatcher.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_methods = Core_methods,
};

/* -- a self-test of the seqlock without the GIL ------------------------------------------- */

typedef struct {
  hold_slot *slot;
  _Atomic int stop;
  uint64_t stores;
  bool stall; /* leave one store half-done for a while, as a preempted writer would */
} stress_arg;

static void *stress_writer(void *arg) {
  stress_arg *a = arg;
  unsigned char buf[MAX_SAMPLE];
  uint32_t k = 0;
  while (!atomic_load(&a->stop)) {
    k++;
    uint32_t len = 8 + (k * 37u) % (MAX_SAMPLE - 8);
    memset(buf, (int)(k & 0xff), len);
    memcpy(buf, &k, sizeof k);
    if (a->stall && k % 1000 == 0) { /* a half-written buffer, left odd for 1 ms */
      uint32_t w = 1u - atomic_load(&a->slot->current);
      hold_buf *b = &a->slot->buf[w];
      uint32_t seq = atomic_load(&b->seq);
      atomic_store(&b->seq, seq + 1);
      memset(b->data, 0xEE, 64);
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
      atomic_store(&b->seq, seq + 2); /* as if finished, the bytes left torn: never current */
      continue;
    }
    hold_store(a->slot, buf, len, false);
    a->stores++;
  }
  return NULL;
}

/* The reader's view is either a complete buffer (every byte after the counter equal to the
 * counter's low byte, and its length the counter's) or a retry: never a mix of two. */
static PyObject *seqlock_selftest(PyObject *mod, PyObject *args) {
  double seconds;
  int stall;
  (void)mod;
  if (!PyArg_ParseTuple(args, "dp", &seconds, &stall))
    return NULL;
  hold_slot *slot = calloc(1, sizeof *slot);
  if (slot == NULL)
    return PyErr_NoMemory();
  unsigned char first[8];
  memset(first, 0, sizeof first);
  hold_store(slot, first, sizeof first, false);
  stress_arg a = {.slot = slot, .stall = stall};
  pthread_t w;
  uint64_t reads = 0, bad = 0, lapped = 0, max_seen = 0;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = pthread_create(&w, NULL, stress_writer, &a);
  if (rc == 0) {
    unsigned char buf[MAX_SAMPLE];
    int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
    while (now_ns(CLOCK_MONOTONIC) < end) {
      int64_t len = hold_load(slot, buf, NULL);
      reads++;
      if (len < 0) {
        lapped++;
        continue;
      }
      uint32_t k;
      memcpy(&k, buf, sizeof k);
      uint32_t want = k ? 8 + (k * 37u) % (MAX_SAMPLE - 8) : 8;
      bool ok = (uint64_t)len == want;
      for (int64_t i = 4; ok && i < len; i++)
        ok = buf[i] == (k ? (unsigned char)(k & 0xff) : 0);
      if (!ok)
        bad++;
      if (k > max_seen)
        max_seen = k;
    }
    atomic_store(&a.stop, 1);
    pthread_join(w, NULL);
  }
  Py_END_ALLOW_THREADS
  free(slot);
  if (rc != 0) {
    PyErr_SetString(PyExc_OSError, "seqlock selftest: no writer thread");
    return NULL;
  }
  return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K}", "reads", (unsigned long long)reads, "torn",
                       (unsigned long long)bad, "lapped", (unsigned long long)lapped, "stores",
                       (unsigned long long)a.stores, "newest_seen",
                       (unsigned long long)max_seen);
}

static PyMethodDef module_methods[] = {
    {"seqlock_selftest", seqlock_selftest, METH_VARARGS,
     "seqlock_selftest(seconds, stall) -> {reads, torn, lapped, stores, newest_seen}"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "executive.robots.native._reflex",
    .m_doc = "The native core in C (the e-stop reflex, the gate, the stream): "
             "see executive/robots/native/__init__.py.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__reflex(void) {
  if (PyType_Ready(&CoreType) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module);
  if (m == NULL)
    return NULL;
  Py_INCREF(&CoreType);
  if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0 ||
      PyModule_AddIntConstant(m, "WHY_FLAGS", WHY_FLAGS) < 0 ||
      PyModule_AddIntConstant(m, "WHY_SHORT", WHY_SHORT) < 0 ||
      PyModule_AddIntConstant(m, "WHY_ENCAPSULATION", WHY_ENCAPSULATION) < 0 ||
      PyModule_AddIntConstant(m, "MAX_SAMPLE", MAX_SAMPLE) < 0 ||
      PyModule_AddIntConstant(m, "MAX_STREAMS", MAX_STREAMS) < 0) {
    Py_DECREF(&CoreType);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
