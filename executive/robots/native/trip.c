/*
 * The reflex (reflex.h, part 1): its reader's listener judges every e-stop sample, and one
 * that trips it fires: under the gate, the hold of every engaged stream (at the newest
 * measurement still waiting, where there is one), then the cancel, then the latch. Its
 * methods: where that measurement is (``measure``), what fired, and the latch.
 */

#include "reflex.h"

#include "dds/ddsi/ddsi_serdata.h"

static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

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

void on_estop(dds_entity_t reader, void *arg) {
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

/* -- Core's methods ------------------------------------------------------------------- */

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

int offsets(PyObject *seq, uint32_t *n, uint32_t *out) {
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
PyObject *Core_measure(Core *self, PyObject *args) {
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

PyObject *Core_fired(Core *self, PyObject *args) {
  core *c;
  stream_slot *s = slot_arg(self, args, &c);
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

PyObject *Core_tripped(Core *self, PyObject *Py_UNUSED(ignored)) {
  if (self->c == NULL)
    Py_RETURN_FALSE;
  return PyBool_FromLong(atomic_load(&self->c->tripped));
}

PyObject *Core_trips(Core *self, PyObject *Py_UNUSED(ignored)) {
  if (self->c == NULL)
    return PyLong_FromLong(0);
  return PyLong_FromUnsignedLong(atomic_load(&self->c->trips));
}

PyObject *Core_reset(Core *self, PyObject *Py_UNUSED(ignored)) {
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

PyObject *Core_last_trip(Core *self, PyObject *Py_UNUSED(ignored)) {
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
