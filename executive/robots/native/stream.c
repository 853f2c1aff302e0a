/* -- the native streamer ------------------------------------------------------------------
 *
 * The fixed-rate joint command stream without the interpreter (issue 22): one thread,
 * SCHED_FIFO where granted, samples each engaged stream's plan every period and writes it
 * under the gate, so a trip's hold and the streamer never interleave and nothing computed
 * before a trip leaves after it. Python hands it plans (``plan``, plan.c) when they change
 * and renews a dead man (``renew``); past the deadline every stream holds at the last
 * position it sent (and its torque), and plans are refused until Python has seen that hold
 * (``seen_deadman``), as after a trip (``seen_trips``). */

#include "reflex.h"

#define LATENESS_RING 65536

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
void unpark(core *c) {
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

void stream_stop_c(core *c) {
  if (!c->sthread_started)
    return;
  atomic_store(&c->sstop, 1);
  unpark(c);
  pthread_join(c->sthread, NULL);
  c->sthread_started = false;
}

/* -- Core's methods ------------------------------------------------------------------- */

/* stream_start(period_s, priority) -> "" (SCHED_FIFO granted, or priority 0: not asked)
 * or why it was refused: the thread runs either way. */
PyObject *Core_stream_start(Core *self, PyObject *args) {
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

PyObject *Core_stream_stop(Core *self, PyObject *Py_UNUSED(ignored)) {
  core *c = self->c;
  if (c != NULL) {
    Py_BEGIN_ALLOW_THREADS stream_stop_c(c);
    Py_END_ALLOW_THREADS
  }
  Py_RETURN_NONE;
}

/* renew(timeout_s) -> dead-man holds so far: the streams hold unless renewed again within
 * ``timeout_s``; 0 disarms it. */
PyObject *Core_renew(Core *self, PyObject *args) {
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

/* stream_stats(since=0) -> counters, and the lateness (int64 ns) of the periods from
 * ``since`` on (at most the ring's newest 65,536). */
PyObject *Core_stream_stats(Core *self, PyObject *args) {
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
