/* C side of tests/wire/test_c_interop.py: a CycloneDDS C program built from Debian's
 * `idlc -l c` output for idl/, exchanging samples of every wire type with the Python side.
 *
 *   interop typeinfo            print each type's XTypes TypeInformation/TypeMapping, exit
 *   interop run <domain> <s> [xcdr1|xcdr2]
 *                               for every type: write interop_nsamples samples on
 *                               "interop/<Type>/c2py", print every sample read from
 *                               "interop/<Type>/py2c" until all arrived or <s> seconds pass,
 *                               print a per-type summary (samples, match counts), then wait
 *                               for EOF on stdin before leaving, so the Python side can still
 *                               read this process's transient-local samples.
 *
 * The optional last argument sets the writers' data representation QoS (default: CycloneDDS's
 * own choice, XCDR1 for these @final types), so the Python side can be shown both encodings
 * a conforming C peer may put on the wire.
 *
 * Output is one JSON object per line on stdout. Writers and readers are reliable and
 * transient-local, so whichever side starts first, nothing depends on timing.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop.h"

#define MAX_TAKE 16

void interop_dump_string(FILE *out, const char *s)
{
  fputc('"', out);
  for (; s != NULL && *s; s++) {
    unsigned char c = (unsigned char) *s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c < 0x20)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void print_hex(const unsigned char *data, uint32_t size)
{
  for (uint32_t i = 0; i < size; i++)
    printf("%02x", data[i]);
}

static int print_typeinfo(void)
{
  for (size_t i = 0; i < interop_ntypes; i++) {
    const dds_topic_descriptor_t *d = interop_types[i].desc;
    printf("{\"event\":\"typeinfo\",\"type\":\"%s\",\"typename\":\"%s\",\"typeinfo\":\"",
           interop_types[i].name, d->m_typename);
    print_hex(d->type_information.data, d->type_information.sz);
    printf("\",\"typemap\":\"");
    print_hex(d->type_mapping.data, d->type_mapping.sz);
    printf("\"}\n");
  }
  return 0;
}

static dds_entity_t check(dds_entity_t e, const char *what)
{
  if (e < 0) {
    fprintf(stderr, "interop: %s failed: %s\n", what, dds_strretcode(e));
    exit(2);
  }
  return e;
}

static int run(dds_domainid_t domain, double timeout_s, const char *representation)
{
  const size_t n = interop_ntypes;
  const int k_total = interop_nsamples;
  dds_entity_t pp = check(dds_create_participant(domain, NULL, NULL), "create participant");
  dds_entity_t ws = check(dds_create_waitset(pp), "create waitset");
  dds_entity_t *writers = calloc(n, sizeof(*writers));
  dds_entity_t *readers = calloc(n, sizeof(*readers));
  int *received = calloc(n, sizeof(*received));
  dds_qos_t *qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_durability(qos, DDS_DURABILITY_TRANSIENT_LOCAL);
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, k_total);
  /* what CycloneDDS keeps for late-joining readers; its default depth is 1 */
  dds_qset_durability_service(qos, 0, DDS_HISTORY_KEEP_LAST, k_total, DDS_LENGTH_UNLIMITED,
                              DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
  dds_qos_t *wqos = dds_create_qos();
  dds_copy_qos(wqos, qos);
  if (representation != NULL) {
    dds_data_representation_id_t id = strcmp(representation, "xcdr2") == 0
                                         ? DDS_DATA_REPRESENTATION_XCDR2
                                         : DDS_DATA_REPRESENTATION_XCDR1;
    dds_qset_data_representation(wqos, 1, &id);
  }
  char name[256];

  for (size_t i = 0; i < n; i++) {
    const interop_type *t = &interop_types[i];
    snprintf(name, sizeof(name), "interop/%s/c2py", t->name);
    dds_entity_t out = check(dds_create_topic(pp, t->desc, name, NULL, NULL), name);
    snprintf(name, sizeof(name), "interop/%s/py2c", t->name);
    dds_entity_t in = check(dds_create_topic(pp, t->desc, name, NULL, NULL), name);
    writers[i] = check(dds_create_writer(pp, out, wqos, NULL), "create writer");
    readers[i] = check(dds_create_reader(pp, in, qos, NULL), "create reader");
    dds_entity_t cond = check(dds_create_readcondition(readers[i], DDS_ANY_STATE), "readcondition");
    check(dds_waitset_attach(ws, cond, (dds_attach_t) i), "waitset attach");
    for (int k = 0; k < k_total; k++) {
      void *sample = calloc(1, t->size);
      t->fill(sample, k);
      check(dds_write(writers[i], sample), "write");
      dds_sample_free(sample, t->desc, DDS_FREE_ALL);
    }
  }
  dds_delete_qos(qos);
  dds_delete_qos(wqos);
  printf("{\"event\":\"written\"}\n");
  fflush(stdout);

  const dds_time_t deadline = dds_time() + (dds_duration_t) (timeout_s * 1e9);
  size_t complete = 0;
  while (complete < n && dds_time() < deadline) {
    (void) dds_waitset_wait_until(ws, NULL, 0, deadline);
    complete = 0;
    for (size_t i = 0; i < n; i++) {
      void *samples[MAX_TAKE] = { NULL };
      dds_sample_info_t infos[MAX_TAKE];
      dds_return_t got = dds_take(readers[i], samples, infos, MAX_TAKE, MAX_TAKE);
      for (dds_return_t j = 0; j < got; j++) {
        if (!infos[j].valid_data)
          continue;
        received[i]++;
        printf("{\"event\":\"sample\",\"type\":\"%s\",\"fields\":{", interop_types[i].name);
        interop_types[i].dump(stdout, samples[j]);
        printf("}}\n");
      }
      if (got > 0)
        (void) dds_return_loan(readers[i], samples, got);
      if (received[i] >= k_total)
        complete++;
    }
    fflush(stdout);
  }

  for (size_t i = 0; i < n; i++) {
    dds_publication_matched_status_t pub;
    dds_subscription_matched_status_t sub;
    (void) dds_get_publication_matched_status(writers[i], &pub);
    (void) dds_get_subscription_matched_status(readers[i], &sub);
    printf("{\"event\":\"summary\",\"type\":\"%s\",\"received\":%d,"
           "\"writer_matched\":%" PRIu32 ",\"reader_matched\":%" PRIu32 "}\n",
           interop_types[i].name, received[i], pub.current_count, sub.current_count);
  }
  printf("{\"event\":\"done\",\"complete\":%s}\n", complete == n ? "true" : "false");
  fflush(stdout);

  while (getchar() != EOF)
    ; /* the Python side closes our stdin once it has read our samples */
  dds_delete(pp);
  free(writers);
  free(readers);
  free(received);
  return complete == n ? 0 : 1;
}

int main(int argc, char **argv)
{
  if (argc == 2 && strcmp(argv[1], "typeinfo") == 0)
    return print_typeinfo();
  if ((argc == 4 || argc == 5) && strcmp(argv[1], "run") == 0)
    return run((dds_domainid_t) strtoul(argv[2], NULL, 10), strtod(argv[3], NULL),
               argc == 5 ? argv[4] : NULL);
  fprintf(stderr, "usage: %s typeinfo | run <domain> <timeout-seconds> [xcdr1|xcdr2]\n", argv[0]);
  return 2;
}
