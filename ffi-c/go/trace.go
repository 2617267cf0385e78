package cursus

// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"strings"
	"unsafe"
)

// TraceContext is a W3C trace context (docs/observability.md, "Trace
// context in records"): what a record carries for the span that sent it
// (Record.TraceContext), and what a consumed record gives back
// (Message.TraceContext). The values are the W3C header values; the send
// checks them.
type TraceContext struct {
	// Traceparent is the traceparent header value,
	// "00-<32 hex trace id>-<16 hex span id>-<2 hex flags>".
	Traceparent string
	// Tracestate is the tracestate header value, "" for none.
	Tracestate string
}

// TraceContext returns the trace context the record's metadata carries
// (the sending span's), nil when it carries none or a malformed one: the
// parent of the record's process span, a link of its receive span. The
// engine reads it (its rules are every language's).
func (m *Message) TraceContext() *TraceContext {
	// Most metadata carries none: no call into the library for it.
	if m.Metadata == nil || !strings.Contains(*m.Metadata, "traceparent") {
		return nil
	}
	md := cstr(*m.Metadata)
	defer C.free(unsafe.Pointer(md))
	var c *C.cursus_trace_context_t
	var e *C.cursus_error_t
	if check(C.cursus_trace_context_extract(md, &c, &e), e) != nil || c == nil {
		return nil // extraction never fails but on a NUL byte, which no context has
	}
	defer C.cursus_trace_context_destroy(c)
	return &TraceContext{
		Traceparent: goString(C.cursus_trace_context_traceparent(c)),
		Tracestate:  goString(C.cursus_trace_context_tracestate(c)),
	}
}

// traced reports whether the record needs the traced send (metadata or a
// trace context).
func (r *Record) traced() bool { return r.Metadata != "" || r.TraceContext != nil }

// tracedArgs gives the record's metadata and trace context as the traced
// sends take them (NULL: none), and the function freeing them after the
// call.
func (r *Record) tracedArgs() (metadata, traceparent, tracestate *C.char, free func()) {
	var owned []*C.char
	opt := func(s string, present bool) *C.char {
		if !present {
			return nil
		}
		c := cstr(s)
		owned = append(owned, c)
		return c
	}
	metadata = opt(r.Metadata, r.Metadata != "")
	if tc := r.TraceContext; tc != nil {
		traceparent = opt(tc.Traceparent, true)
		tracestate = opt(tc.Tracestate, tc.Tracestate != "")
	}
	return metadata, traceparent, tracestate, func() {
		for _, c := range owned {
			C.free(unsafe.Pointer(c))
		}
	}
}
