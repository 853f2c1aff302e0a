/*
 * The diversion (reflex.h, part 3): CycloneDDS's receive thread never waits for the GIL. A
 * diverted reader's listener calls its Python callback at once where the calling thread
 * holds the GIL already, else marks it for the dispatcher thread, which also tells Python of
 * a trip (``on_trip``) and of a thread put under SCHED_FIFO (``on_thread``). Every listener
 * of ours promotes the CycloneDDS thread that calls it, once (``rt_priority``).
 */

#include "reflex.h"

/* -- the dispatcher ---------------------------------------------------------------------- */

void wake(core *c) {
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
bool holds_gil(void) {
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

void call_on_trip(core *c) {
  if (c->on_trip != NULL && c->on_trip != Py_None)
    call_python(c->on_trip, NULL);
}

static void report_threads(core *c);

void *dispatch(void *arg) {
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
void promote(core *c) {
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

/* -- Core's methods ------------------------------------------------------------------- */

PyObject *Core_divert(Core *self, PyObject *args) {
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
