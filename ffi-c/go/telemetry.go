package cursus

// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// SpanSpec is a span a tracing layer starts, as the engine declares it
// (core/src/telemetry.rs, docs/observability.md "Spans"): every language
// names and describes its spans the same way. The sub-package
// cursus/otel starts them with OpenTelemetry.
type SpanSpec struct {
	// Name is the span's name, e.g. "publish orders".
	Name string
	// Kind is "producer", "consumer" or "client".
	Kind string
	// Attributes are the attributes known when the span starts.
	Attributes []SpanAttribute
}

// SpanAttribute is one attribute of a span: a string or an integer.
type SpanAttribute struct {
	// Key is the attribute's key, e.g. "messaging.destination.name".
	Key string
	// IsInt tells which of Str and Int holds the value.
	IsInt bool
	// Str is the value of a string attribute.
	Str string
	// Int is the value of an integer attribute.
	Int int64
}

// readSpan copies a span spec and destroys it.
func readSpan(h *C.cursus_span_spec_t) SpanSpec {
	defer C.cursus_span_spec_destroy(h)
	n := int(C.cursus_span_spec_attribute_count(h))
	s := SpanSpec{
		Name:       goString(C.cursus_span_spec_name(h)),
		Kind:       goString(C.cursus_span_spec_kind(h)),
		Attributes: make([]SpanAttribute, n),
	}
	for i := range s.Attributes {
		a := &s.Attributes[i]
		a.Key = goString(C.cursus_span_spec_attribute_key(h, C.size_t(i)))
		if str := C.cursus_span_spec_attribute_string(h, C.size_t(i)); str != nil {
			a.Str = C.GoString(str)
		} else {
			a.IsInt, a.Int = true, int64(C.cursus_span_spec_attribute_int(h, C.size_t(i)))
		}
	}
	return s
}

// spanCall makes one span_* call.
func spanCall(f func(out **C.cursus_span_spec_t, e **C.cursus_error_t) C.enum_cursus_status_t) (SpanSpec, error) {
	var h *C.cursus_span_spec_t
	var e *C.cursus_error_t
	if err := check(f(&h, &e), e); err != nil {
		return SpanSpec{}, err
	}
	return readSpan(h), nil
}

// optCString is s as C takes an optional string: NULL for "".
func optCString(s string) *C.char {
	if s == "" {
		return nil
	}
	return cstr(s)
}

// freeC frees C strings made by cstr (NULL ones included).
func freeC(ss ...*C.char) {
	for _, s := range ss {
		C.free(unsafe.Pointer(s))
	}
}

// keyArgs gives a key as C takes an optional byte buffer (NULL: none).
func keyArgs(key []byte) (*C.uint8_t, C.size_t, func()) {
	if len(key) == 0 {
		return nil, 0, func() {}
	}
	k := C.CBytes(key)
	return (*C.uint8_t)(k), C.size_t(len(key)), func() { C.free(k) }
}

// SpanScope is the instrumentation scope a tracing layer names its tracer
// with ("cursus").
func SpanScope() string {
	var out *C.char
	var e *C.cursus_error_t
	if check(C.cursus_span_scope(&out, &e), e) != nil {
		return ""
	}
	defer C.cursus_string_free(out)
	return C.GoString(out)
}

// PublishSpan is the span of a send of r (started at the send, ended at
// its acknowledgement); clientID "" for none.
func PublishSpan(r *Record, clientID string) (SpanSpec, error) {
	t, cid := cstr(r.Topic), optCString(clientID)
	defer freeC(t, cid)
	k, klen, freeKey := keyArgs(r.Key)
	defer freeKey()
	return spanCall(func(out **C.cursus_span_spec_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_span_publish(t, C.int32_t(r.Partition), k, klen, C.uint64_t(len(r.Value)), cid, out, e)
	})
}

// AcknowledgedAttributes are what a publish span adds once its record is
// acknowledged.
func AcknowledgedAttributes(md RecordMetadata) ([]SpanAttribute, error) {
	s, err := spanCall(func(out **C.cursus_span_spec_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_span_acknowledged(C.uint32_t(md.Partition), C.int64_t(md.Offset), out, e)
	})
	return s.Attributes, err
}

// ReceiveSpan is the span of one poll that returned messages (group ""
// for none); a layer links it to each message's trace context.
func ReceiveSpan(messages []Message, group string) (SpanSpec, error) {
	topics := make([]string, len(messages))
	for i := range messages {
		topics[i] = messages[i].Topic
	}
	arr, free := cstrings(topics)
	defer free()
	g := optCString(group)
	defer freeC(g)
	return spanCall(func(out **C.cursus_span_spec_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_span_receive(arr, C.size_t(len(topics)), C.uint64_t(len(messages)), g, out, e)
	})
}

// ProcessSpan is the span of the processing of m (group "" for none): a
// child of m's trace context.
func ProcessSpan(m *Message, group string) (SpanSpec, error) {
	t, g := cstr(m.Topic), optCString(group)
	defer freeC(t, g)
	k, klen, freeKey := keyArgs(m.Key)
	defer freeKey()
	return spanCall(func(out **C.cursus_span_spec_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_span_process(t, C.uint32_t(m.Partition), C.uint64_t(m.Offset), k, klen,
			C.uint64_t(len(m.Value)), g, out, e)
	})
}

// EndTransactionSpan is the span of a transaction's commit (commit true)
// or abort.
func EndTransactionSpan(transactionalID string, commit bool) (SpanSpec, error) {
	id := cstr(transactionalID)
	defer freeC(id)
	return spanCall(func(out **C.cursus_span_spec_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_span_end_transaction(id, C.bool(commit), out, e)
	})
}

// AppendSpan is the span of an event-store append to aggregate expecting
// version.
func AppendSpan(topic, aggregate string, version uint64) (SpanSpec, error) {
	t, a := cstr(topic), cstr(aggregate)
	defer freeC(t, a)
	return spanCall(func(out **C.cursus_span_spec_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_span_append(t, a, C.uint64_t(version), out, e)
	})
}

// ReadSpan is the span of an event-store read of aggregate from
// fromVersion.
func ReadSpan(topic, aggregate string, fromVersion uint64) (SpanSpec, error) {
	t, a := cstr(topic), cstr(aggregate)
	defer freeC(t, a)
	return spanCall(func(out **C.cursus_span_spec_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_span_read(t, a, C.uint64_t(fromVersion), out, e)
	})
}

// FailedAttributes are what the span of an operation that failed with err
// adds (error.type: the code of a *Error, "_OTHER" for another error, as
// the OpenTelemetry conventions say).
func FailedAttributes(err error) ([]SpanAttribute, error) {
	code := "_OTHER"
	if ce := (*Error)(nil); errors.As(err, &ce) {
		code = ce.Code
	}
	c := cstr(code)
	defer freeC(c)
	s, e2 := spanCall(func(out **C.cursus_span_spec_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_span_failed(c, out, e)
	})
	return s.Attributes, e2
}

// Metric is one of the instruments a metrics layer reports a client's
// Statistics as, as the engine declares them for every language
// (core/src/telemetry.rs metrics::ALL, docs/observability.md "Metrics"):
// a layer registers these rather than naming instruments of its own.
type Metric struct {
	// Name is the instrument name, e.g. "messaging.client.sent.messages".
	Name string
	// Field is the statistics field it reads, its names (those of
	// Statistics.JSON) joined by dots: "records_sent",
	// "produce_latency.p50_us", "partitions.lag".
	Field string
	// Unit is the UCUM unit ("{message}", "By", "us", ...).
	Unit string
	// Kind is "counter" (monotonic) or "gauge".
	Kind string
	// Client is the kind of client that reports it ("producer",
	// "consumer"), "" for every client.
	Client string
	// Breakdown is how the field becomes points: "none" (one),
	// "error_type" (one per error class) or "partition" (one per
	// partition with a known lag).
	Breakdown string
}

// MetricPoint is one value of a Metric in a statistics snapshot.
type MetricPoint struct {
	// Value is the field's value.
	Value int64
	// Attributes are the point's attributes (key, value), client id first.
	Attributes [][2]string
}

// Metrics returns the engine's instruments, in the order a layer
// registers them.
func Metrics() ([]Metric, error) {
	var n C.uint64_t
	var e *C.cursus_error_t
	if err := check(C.cursus_metric_count(&n, &e), e); err != nil {
		return nil, err
	}
	out := make([]Metric, n)
	for i := range out {
		var h *C.cursus_metric_t
		if err := check(C.cursus_metric(C.uint64_t(i), &h, &e), e); err != nil {
			return nil, err
		}
		out[i] = Metric{
			Name:      goString(C.cursus_metric_name(h)),
			Field:     goString(C.cursus_metric_field(h)),
			Unit:      goString(C.cursus_metric_unit(h)),
			Kind:      goString(C.cursus_metric_kind(h)),
			Client:    goString(C.cursus_metric_client(h)),
			Breakdown: goString(C.cursus_metric_breakdown(h)),
		}
		C.cursus_metric_destroy(h)
	}
	return out, nil
}

// MetricAttribute is the attribute key of a metric point's attribute:
// "client_id" (every point), "error_type" (the class of an errors
// point), "topic" and "partition" (a lag point).
func MetricAttribute(attribute string) (string, error) {
	a := cstr(attribute)
	defer freeC(a)
	var out *C.char
	var e *C.cursus_error_t
	if err := check(C.cursus_telemetry_metric_attribute(a, &out, &e), e); err != nil {
		return "", err
	}
	defer C.cursus_string_free(out)
	return C.GoString(out), nil
}

// Points are m's values in s, as every language's layer computes them:
// none when s is of a kind of client that does not report m; otherwise
// each with the client id ("client_id"), plus the class ("error_type")
// or the topic and partition ("topic", "partition"); a partition whose
// lag is unknown has no point. The attribute keys are MetricAttribute's.
func (m Metric) Points(s *Statistics) ([]MetricPoint, error) {
	if m.Client != "" && m.Client != s.Kind {
		return nil, nil
	}
	keys, err := metricKeys()
	if err != nil {
		return nil, err
	}
	// The JSON snapshot has the field names the table's paths use.
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(s.JSON))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("cursus: statistics JSON: %w", err)
	}
	client := [2]string{keys["client_id"], s.ClientID}
	path := strings.Split(m.Field, ".")
	switch m.Breakdown {
	case "none":
		v, err := number(lookup(doc, path))
		if err != nil {
			return nil, fmt.Errorf("cursus: metric %s: %w", m.Name, err)
		}
		return []MetricPoint{{Value: v, Attributes: [][2]string{client}}}, nil
	case "error_type":
		byClass, _ := lookup(doc, path).(map[string]any)
		classes := make([]string, 0, len(byClass))
		for class := range byClass {
			classes = append(classes, class)
		}
		sort.Strings(classes)
		out := make([]MetricPoint, 0, len(classes))
		for _, class := range classes {
			v, err := number(byClass[class])
			if err != nil {
				return nil, fmt.Errorf("cursus: metric %s: %w", m.Name, err)
			}
			out = append(out, MetricPoint{Value: v, Attributes: [][2]string{client, {keys["error_type"], class}}})
		}
		return out, nil
	case "partition":
		rows, _ := lookup(doc, path[:len(path)-1]).([]any)
		leaf := path[len(path)-1]
		var out []MetricPoint
		for _, r := range rows {
			row, _ := r.(map[string]any)
			if row[leaf] == nil {
				continue // unknown: no point
			}
			v, err := number(row[leaf])
			if err != nil {
				return nil, fmt.Errorf("cursus: metric %s: %w", m.Name, err)
			}
			topic, _ := row["topic"].(string)
			partition, _ := row["partition"].(json.Number)
			out = append(out, MetricPoint{Value: v, Attributes: [][2]string{client,
				{keys["topic"], topic}, {keys["partition"], partition.String()}}})
		}
		return out, nil
	}
	return nil, fmt.Errorf("cursus: metric %s: unknown breakdown %q", m.Name, m.Breakdown)
}

// metricKeys are the attribute keys of metric points, by the names
// MetricAttribute takes (asked once: they never change).
var metricKeys = sync.OnceValues(func() (map[string]string, error) {
	keys := map[string]string{}
	for _, name := range []string{"client_id", "error_type", "topic", "partition"} {
		k, err := MetricAttribute(name)
		if err != nil {
			return nil, err
		}
		keys[name] = k
	}
	return keys, nil
})

// lookup follows path through nested JSON objects (nil when absent).
func lookup(v any, path []string) any {
	for _, name := range path {
		obj, _ := v.(map[string]any)
		v = obj[name]
	}
	return v
}

// number is a JSON integer as an int64.
func number(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number: %v", v)
	}
	return strconv.ParseInt(n.String(), 10, 64)
}
