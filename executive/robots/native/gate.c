/*
 * The gate (reflex.h, part 2): the one mutex under which every joint command leaves, from
 * Python (``publish``, ``plan``), the native streamer and the reflex, so a trip's holds and
 * a command never interleave and nothing computed before a trip leaves after it. And how
 * the bytes are written: through the writer's own (Python) sertype, in C.
 */

#include "reflex.h"

/* cyclonedds-python 0.10.2's ddspy_sample_container_t: what its sertype's from_sample takes */
typedef struct {
  void *usample;
  size_t usample_size;
} py_sample_container;

/* What raw_write does: the bytes padded to 4, through the writer's (Python) sertype. */
dds_return_t write_bytes(dds_entity_t writer, const unsigned char *data, uint32_t len) {
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

int init_mutex(pthread_mutex_t *m) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  /* the streamer may run SCHED_FIFO while it holds the gate for one write */
  pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
  int rc = pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
  return rc;
}

/* The gate from a thread that may hold the GIL: never wait for the gate with it, since a
 * trip that writes to an in-process Python reader needs the GIL to finish. */
/* The gate, for a thread that holds the GIL. It never waits for the GIL while it holds the
 * gate: the stream thread and the reflex (SCHED_FIFO, no GIL) would wait behind it for
 * whichever Python thread has the GIL, preempted by anything (the GIL inherits no
 * priority; the gate does). So on contention it waits for the gate to be free without
 * the GIL, takes the GIL back, and tries again. */
void gate_lock_py(core *c) {
  while (pthread_mutex_trylock(&c->gate) != 0) {
    Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&c->gate);
    pthread_mutex_unlock(&c->gate);
    Py_END_ALLOW_THREADS
  }
}

/* -- Core's methods ------------------------------------------------------------------- */

PyObject *Core_publish(Core *self, PyObject *args) {
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
