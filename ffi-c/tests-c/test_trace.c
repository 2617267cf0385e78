/* C tests of the trace-context hook (docs/observability.md, "C and C++"):
 * a send carrying metadata and a W3C context, read back from the consumed
 * message; records without one; malformed contexts refused with the code
 * invalid_trace_context; extraction from a record view's metadata. */
#include "test_util.h"

#define PARENT2 "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"

void test_trace_context_round_trip(void) {
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-trace");
  unique_name(group, sizeof group, "c-trace-group");
  cursus_config_t *pc = config_for("producer", NULL), *cc = config_for("consumer", group);
  set_option(cc, "auto_offset_reset", "earliest");
  cursus_producer_t *p = NULL;
  cursus_consumer_t *c = NULL;
  cursus_message_t *m = NULL;
  cursus_trace_context_t *ctx = NULL;
  cursus_error_t *e = NULL;
  cursus_record_metadata_t md;
  const char *topics[] = {topic};
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_new(pc, &p, &err));
  /* 0: a context with state, next to the application's metadata. */
  CHECK_OK(cursus_producer_send_traced(p, topic, 0, NULL, 0, (const uint8_t *)"a", 1, CURSUS_NO_TIMESTAMP,
                                       "{\"app\":1}", TRACE_PARENT, "congo=t61rcWkgMzE", &md, &err));
  CHECK(md.offset == 0);
  /* 1: a context alone, queued without a callback. */
  CHECK_OK(cursus_producer_send_cb_traced(p, topic, 0, NULL, 0, (const uint8_t *)"b", 1, CURSUS_NO_TIMESTAMP, NULL,
                                          PARENT2, NULL, NULL, NULL, &err));
  CHECK_OK(cursus_producer_flush(p, CURSUS_DEFAULT_TIMEOUT, &err));
  /* 2: metadata without a context. */
  CHECK_OK(cursus_producer_send_traced(p, topic, 0, NULL, 0, (const uint8_t *)"c", 1, CURSUS_NO_TIMESTAMP,
                                       "{\"app\":2}", NULL, NULL, &md, &err));
  /* 3: neither (an empty tracestate is none). */
  CHECK_OK(cursus_producer_send_traced(p, topic, 0, NULL, 0, (const uint8_t *)"d", 1, CURSUS_NO_TIMESTAMP, NULL, NULL,
                                       "", &md, &err));

  /* Malformed contexts: refused, nothing sent. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_producer_send_traced(p, topic, 0, NULL, 0, (const uint8_t *)"x", 1, CURSUS_NO_TIMESTAMP, NULL,
                                          "00-not-a-context", NULL, &md, &e),
              &e);
  CHECK(str_is(cursus_error_code(e), "invalid_trace_context"));
  CHECK(cursus_error_class(e) == CURSUS_CLASS_VALIDATION);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_producer_send_cb_traced(p, topic, 0, NULL, 0, (const uint8_t *)"x", 1, CURSUS_NO_TIMESTAMP,
                                             NULL, TRACE_PARENT, "bad\x01state", NULL, NULL, &e),
              &e);
  CHECK(str_is(cursus_error_code(e), "invalid_trace_context"));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_producer_send_traced(p, topic, 0, NULL, 0, (const uint8_t *)"x", 1, CURSUS_NO_TIMESTAMP, NULL,
                                          NULL, "k=v", &md, &e),
              &e);
  CHECK(str_is(cursus_error_code(e), "invalid_trace_context"));

  CHECK_OK(cursus_consumer_new(cc, &c, &err));
  CHECK_OK(cursus_consumer_subscribe(c, topics, 1, &err));
  CHECK((m = next_message(c)) != NULL);
  CHECK(str_is(cursus_message_traceparent(m), TRACE_PARENT));
  CHECK(str_is(cursus_message_tracestate(m), "congo=t61rcWkgMzE"));
  /* The application's metadata is kept, the context in front of it. */
  CHECK(strstr(cursus_message_metadata(m), "\"app\":1}") != NULL);
  /* The same context from the metadata alone (a record view's records). */
  CHECK_OK(cursus_trace_context_extract(cursus_message_metadata(m), &ctx, &err));
  CHECK(ctx != NULL && str_is(cursus_trace_context_traceparent(ctx), TRACE_PARENT));
  CHECK(str_is(cursus_trace_context_tracestate(ctx), "congo=t61rcWkgMzE"));
  cursus_trace_context_destroy(ctx);
  ctx = NULL;
  cursus_message_destroy(m);
  CHECK((m = next_message(c)) != NULL);
  CHECK(str_is(cursus_message_traceparent(m), PARENT2) && cursus_message_tracestate(m) == NULL);
  cursus_message_destroy(m);
  CHECK((m = next_message(c)) != NULL);
  CHECK(str_is(cursus_message_metadata(m), "{\"app\":2}"));
  CHECK(cursus_message_traceparent(m) == NULL && cursus_message_tracestate(m) == NULL);
  CHECK_OK(cursus_trace_context_extract(cursus_message_metadata(m), &ctx, &err));
  CHECK(ctx == NULL);
  cursus_message_destroy(m);
  CHECK((m = next_message(c)) != NULL);
  CHECK(cursus_message_metadata(m) == NULL && cursus_message_traceparent(m) == NULL);
done:
  cursus_message_destroy(m);
  cursus_trace_context_destroy(ctx);
  cursus_error_destroy(e);
  if (c) cursus_consumer_close(c, NULL);
  cursus_consumer_destroy(c);
  if (p) cursus_producer_close(p, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(p);
  cursus_config_destroy(pc);
  cursus_config_destroy(cc);
}

void test_trace_context_accessors_of_invalid_handles(void) {
  /* NULL handles: the accessors' fallbacks, never a crash. */
  CHECK(cursus_message_traceparent(NULL) == NULL && cursus_message_tracestate(NULL) == NULL);
  CHECK(cursus_trace_context_traceparent(NULL) == NULL && cursus_trace_context_tracestate(NULL) == NULL);
done:;
}

/* The value of attribute `key` of `span` (strings; NULL when absent or an integer). */
static const char *span_str(const cursus_span_spec_t *span, const char *key) {
  for (size_t i = 0; i < cursus_span_spec_attribute_count(span); i++)
    if (str_is(cursus_span_spec_attribute_key(span, i), key)) return cursus_span_spec_attribute_string(span, i);
  return NULL;
}

/* The value of integer attribute `key` of `span` (-1 when absent). */
static int64_t span_int(const cursus_span_spec_t *span, const char *key) {
  for (size_t i = 0; i < cursus_span_spec_attribute_count(span); i++)
    if (str_is(cursus_span_spec_attribute_key(span, i), key) && !cursus_span_spec_attribute_string(span, i))
      return cursus_span_spec_attribute_int(span, i);
  return -1;
}

void test_span_specs_are_the_engines(void) {
  cursus_span_spec_t *s = NULL;
  char *scope = NULL;
  const char *topics[] = {"a", "b"};
  CHECK_OK(cursus_span_scope(&scope, &err));
  CHECK(str_is(scope, "cursus"));
  CHECK_OK(cursus_span_publish("orders", 2, (const uint8_t *)"o-7", 3, 5, "app", &s, &err));
  CHECK(str_is(cursus_span_spec_name(s), "publish orders") && str_is(cursus_span_spec_kind(s), "producer"));
  CHECK(str_is(span_str(s, "messaging.system"), "cursus"));
  CHECK(str_is(span_str(s, "messaging.destination.partition.id"), "2"));
  CHECK(str_is(span_str(s, "messaging.cursus.message.key"), "o-7"));
  CHECK(span_int(s, "messaging.message.body.size") == 5);
  /* Out of range: the fallbacks. */
  CHECK(cursus_span_spec_attribute_key(s, 99) == NULL && cursus_span_spec_attribute_int(s, 99) == 0);
  cursus_span_spec_destroy(s);
  s = NULL;
  /* No partition chosen, no key, no client: left out. */
  CHECK_OK(cursus_span_publish("orders", -1, NULL, 0, 0, NULL, &s, &err));
  CHECK(span_str(s, "messaging.destination.partition.id") == NULL && span_str(s, "messaging.client.id") == NULL);
  cursus_span_spec_destroy(s);
  s = NULL;
  CHECK_OK(cursus_span_acknowledged(1, 42, &s, &err));
  CHECK(str_is(cursus_span_spec_name(s), "") && span_int(s, "messaging.cursus.offset") == 42);
  cursus_span_spec_destroy(s);
  s = NULL;
  CHECK_OK(cursus_span_receive(topics, 2, 2, "g", &s, &err));
  CHECK(str_is(cursus_span_spec_name(s), "receive") && str_is(cursus_span_spec_kind(s), "consumer"));
  CHECK(span_int(s, "messaging.batch.message_count") == 2 && str_is(span_str(s, "messaging.consumer.group.name"), "g"));
  cursus_span_spec_destroy(s);
  s = NULL;
  CHECK_OK(cursus_span_end_transaction("tx-1", false, &s, &err));
  CHECK(str_is(cursus_span_spec_name(s), "abort_transaction") && str_is(cursus_span_spec_kind(s), "client"));
  cursus_span_spec_destroy(s);
  s = NULL;
  CHECK_OK(cursus_span_failed("timeout", &s, &err));
  CHECK(str_is(span_str(s, "error.type"), "timeout"));
  CHECK(cursus_span_spec_name(NULL) == NULL && cursus_span_spec_attribute_count(NULL) == 0);
done:
  cursus_span_spec_destroy(s);
  cursus_string_free(scope);
}

void test_trace_context_new_and_metric_names(void) {
  cursus_trace_context_t *ctx = NULL, *bad = NULL;
  cursus_error_t *e = NULL;
  cursus_metric_t *sent = NULL, *past_end = NULL;
  uint64_t count = 0;
  char *name = NULL;
  /* A context checked without a send, split into its fields. */
  CHECK_OK(cursus_trace_context_new(TRACE_PARENT, "congo=t61rcWkgMzE", &ctx, &err));
  CHECK(str_is(cursus_trace_context_traceparent(ctx), TRACE_PARENT));
  CHECK(str_is(cursus_trace_context_trace_id(ctx), "4bf92f3577b34da6a3ce929d0e0e4736"));
  CHECK(str_is(cursus_trace_context_span_id(ctx), "00f067aa0ba902b7"));
  CHECK(cursus_trace_context_sampled(ctx));
  CHECK(!cursus_trace_context_sampled(NULL));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_trace_context_new("00-nope", NULL, &bad, &e), &e);
  CHECK(str_is(cursus_error_code(e), "invalid_trace_context") && bad == NULL);
  /* The metrics of the statistics come from the engine's table. */
  CHECK_OK(cursus_metric_count(&count, &err));
  for (uint64_t i = 0; i < count && sent == NULL; i++) {
    cursus_metric_t *m = NULL;
    CHECK_OK(cursus_metric(i, &m, &err));
    if (str_is(cursus_metric_field(m), "records_sent")) {
      sent = m;
    } else {
      cursus_metric_destroy(m);
    }
  }
  CHECK(sent != NULL);
  CHECK(str_is(cursus_metric_name(sent), "messaging.client.sent.messages"));
  CHECK(str_is(cursus_metric_unit(sent), "{message}"));
  CHECK(str_is(cursus_metric_client(sent), "producer"));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_metric(count, &past_end, &e), &e);
  CHECK(past_end == NULL);
  CHECK_OK(cursus_telemetry_metric_attribute("partition", &name, &err));
  CHECK(str_is(name, "messaging.destination.partition.id"));
done:
  cursus_metric_destroy(sent);
  cursus_error_destroy(e);
  cursus_trace_context_destroy(ctx);
  cursus_string_free(name);
}
