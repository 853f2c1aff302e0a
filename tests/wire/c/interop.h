/* Interface between the hand-written interop harness (interop_main.c) and the per-variant
 * table that tests/wire/c_interop.py generates from the Python wire types at test time. */
#ifndef ATOM_INTEROP_H
#define ATOM_INTEROP_H

#include <stddef.h>
#include <stdio.h>

#include "dds/dds.h"

typedef struct interop_type {
  const char *name;                       /* IDL short name, e.g. "UpperState_" */
  const dds_topic_descriptor_t *desc;     /* from Debian's `idlc -l c` over idl/ */
  size_t size;                            /* sizeof the C struct */
  void (*fill)(void *sample, int k);      /* sample k of the path-derived values */
  void (*dump)(FILE *out, const void *sample); /* JSON object: field path -> value */
} interop_type;

extern const interop_type interop_types[];
extern const size_t interop_ntypes;
extern const int interop_nsamples;

/* JSON string with escaping, for string fields. */
void interop_dump_string(FILE *out, const char *s);

#endif
