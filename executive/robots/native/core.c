/*
 * The Python type ``Core`` (executive/robots/native/__init__.py wraps it) and the module: a
 * core's life (init makes its locks, starts its dispatcher and creates the reflex's own
 * e-stop reader; close stops them, gives each diverted reader its listener back, and frees
 * what no listener can refer to any more), its counters, and the table of its methods,
 * each defined with its idea (reflex.h lists the units).
 */

#include "reflex.h"

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
