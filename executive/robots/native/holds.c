/*
 * The holds: one double-buffered seqlock per stream (reflex.h, "The hold buffers"). The
 * streamer, one writer with the GIL, stores the command that holds its stream where it is;
 * the reflex loads it at a trip on whichever thread delivers the e-stop, without waiting
 * for the writer. The self-test drives both sides from two threads without the GIL.
 */

#include "reflex.h"

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
int64_t hold_load(hold_slot *s, unsigned char *out, bool *fresh) {
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

/* -- Core's methods ------------------------------------------------------------------- */

PyObject *Core_store_hold(Core *self, PyObject *args) {
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

PyObject *Core_load_hold(Core *self, PyObject *args) {
  unsigned char buf[MAX_SAMPLE];
  core *c;
  stream_slot *s = slot_arg(self, args, &c);
  if (s == NULL)
    return NULL;
  int64_t len = hold_load(&s->hold, buf, NULL);
  if (len < 0) {
    PyErr_SetString(PyExc_RuntimeError, "load_hold: the writer lapped every try");
    return NULL;
  }
  return bytes_or_none(buf, len);
}

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
PyObject *seqlock_selftest(PyObject *mod, PyObject *args) {
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
