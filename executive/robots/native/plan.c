/*
 * A stream's plan for the native streamer (stream.c): Python hands it over when it changes
 * (``plan``), the streamer samples it every period (per joint a minimum-jerk segment or a
 * fixed target; the torques from knots in trajectory time, whose clock ramps down to a
 * pause as the Python streamer's does), and a hold freezes it: at what it sent last
 * (``sent``) when the dead man lapses, at what the reflex fired at a trip.
 */

#include "reflex.h"

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
bool patch(const native_plan *p, unsigned char *buf, const double *q, const float *tau) {
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

void sample_plan(const native_plan *p, double now, double *q, float *tau) {
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
void freeze(native_plan *p) {
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
void adopt_fired(stream_slot *s) {
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

/* -- Core's methods ------------------------------------------------------------------- */

/* plan(slot, seen_trips, seen_deadman, template | None, q_kind, q_at, tau_at, table,
 *      knot_t0, knot_dt, knots, paused_at, ramp_s, write_now) -> 1 taken, 0 refused (a trip or a dead-man hold
 * Python has not seen), < 0 a DDS error of the write ``write_now`` asked for.
 * ``table``: float64 n x 8 (target, lower, upper, has segment, t0, duration, start, goal);
 * ``knots``: float32 K x len(tau_at). None as template: the stream is not engaged. */
PyObject *Core_plan(Core *self, PyObject *args) {
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

PyObject *Core_sent(Core *self, PyObject *args) {
  core *c;
  stream_slot *s = slot_arg(self, args, &c);
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
