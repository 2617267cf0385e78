package cursus

// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"context"
	"errors"
)

// Class sentinels: errors.Is(err, ErrRouting) is true for every *Error of
// class "routing", and so on for each of the eight classes of the protocol.
var (
	// ErrValidation matches errors of class "validation": the request or a
	// value was invalid (invalid arguments included).
	ErrValidation = errors.New("cursus: validation error")
	// ErrAuthorization matches errors of class "authorization".
	ErrAuthorization = errors.New("cursus: authorization error")
	// ErrRouting matches errors of class "routing" (wrong broker).
	ErrRouting = errors.New("cursus: routing error")
	// ErrAvailability matches errors of class "availability" (retry later;
	// timeouts included).
	ErrAvailability = errors.New("cursus: availability error")
	// ErrConflict matches errors of class "conflict" (e.g. a stale revision).
	ErrConflict = errors.New("cursus: conflict error")
	// ErrFencing matches errors of class "fencing".
	ErrFencing = errors.New("cursus: fencing error")
	// ErrNotFound matches errors of class "not_found" (topic, group or
	// partition).
	ErrNotFound = errors.New("cursus: not_found error")
	// ErrInternal matches errors of class "internal".
	ErrInternal = errors.New("cursus: internal error")
)

// Kind sentinels for local failures.
var (
	// ErrTimeout matches an *Error whose deadline passed (status
	// StatusTimeout); such an error also matches context.DeadlineExceeded.
	ErrTimeout = errors.New("cursus: timeout")
	// ErrClosed matches the use of a closed client, a Poll interrupted by
	// Close, and the use in a forked child of a client created before
	// fork() (code "used_after_fork").
	ErrClosed = errors.New("cursus: closed")
	// ErrInvalidArgument matches a bad option, argument or handle.
	ErrInvalidArgument = errors.New("cursus: invalid argument")
)

var classSentinels = map[string]error{
	"validation":    ErrValidation,
	"authorization": ErrAuthorization,
	"routing":       ErrRouting,
	"availability":  ErrAvailability,
	"conflict":      ErrConflict,
	"fencing":       ErrFencing,
	"not_found":     ErrNotFound,
	"internal":      ErrInternal,
}

// Status is the C status code (CURSUS_OK, CURSUS_ERR_...): the error class
// or, for local failures, the kind.
type Status int

// Status values (see cursus_status_t in cursus.h).
const (
	StatusOK              Status = C.CURSUS_OK
	StatusValidation      Status = C.CURSUS_ERR_VALIDATION
	StatusAuthorization   Status = C.CURSUS_ERR_AUTHORIZATION
	StatusRouting         Status = C.CURSUS_ERR_ROUTING
	StatusAvailability    Status = C.CURSUS_ERR_AVAILABILITY
	StatusConflict        Status = C.CURSUS_ERR_CONFLICT
	StatusFencing         Status = C.CURSUS_ERR_FENCING
	StatusNotFound        Status = C.CURSUS_ERR_NOT_FOUND
	StatusInternal        Status = C.CURSUS_ERR_INTERNAL
	StatusTimeout         Status = C.CURSUS_ERR_TIMEOUT
	StatusClosed          Status = C.CURSUS_ERR_CLOSED
	StatusInvalidArgument Status = C.CURSUS_ERR_INVALID_ARGUMENT
)

// Error is every error the library reports. Use errors.As to get it and
// errors.Is with the class or kind sentinels to branch on it.
type Error struct {
	// Status is the C status: the class, or the local kind (timeout,
	// closed, invalid argument).
	Status Status
	// Code is the machine-readable code, e.g. "topic_not_found".
	Code string
	// Class is one of the eight classes, e.g. "not_found".
	Class string
	// Kind says where the error comes from: broker, io, timeout,
	// protocol, closed, invalid_argument or internal.
	Kind string
	// Retryable tells whether retrying (with backoff) may succeed.
	Retryable bool
	// Message is the detail message alone, as the broker or the engine
	// wrote it (may be empty; Error() gives the readable form).
	Message string
	// Fields are the structured details (e.g. "topic", "leader").
	Fields map[string]string
	text   string
}

// Error returns the readable text, exactly cursus_error_text: the same in
// every Cursus language, "code (class[, retryable]): message; field=value,
// ...", e.g. "topic_not_found (not_found): topic=orders".
func (e *Error) Error() string {
	if e.text == "" { // an Error built by hand, not by the library
		return e.Code + " (" + e.Class + "): " + e.Message
	}
	return e.text
}

// Is matches the class sentinel of e's class and the kind sentinel of its status.
func (e *Error) Is(target error) bool {
	if s, ok := classSentinels[e.Class]; ok && s == target {
		return true
	}
	switch target {
	case ErrTimeout, context.DeadlineExceeded:
		return e.Status == StatusTimeout
	case ErrClosed:
		return e.Status == StatusClosed
	case ErrInvalidArgument:
		return e.Status == StatusInvalidArgument
	}
	return false
}

// errorFrom copies a C error (borrowed; not destroyed here).
func errorFrom(status Status, e *C.cursus_error_t) *Error {
	if e == nil { // a failure without details (out_error was NULL)
		return &Error{Status: status, Code: "internal_error", Class: "internal", Kind: "internal",
			Message: "no error details", Fields: map[string]string{},
			text: "internal_error (internal): no error details"}
	}
	out := &Error{
		Status:    status,
		Code:      goString(C.cursus_error_code(e)),
		Class:     goString(C.cursus_error_class_name(e)),
		Kind:      goString(C.cursus_error_kind(e)),
		Retryable: bool(C.cursus_error_retryable(e)),
		Message:   goString(C.cursus_error_message(e)),
		Fields:    map[string]string{},
		text:      goString(C.cursus_error_text(e)),
	}
	n := C.cursus_error_field_count(e)
	for i := C.size_t(0); i < n; i++ {
		out.Fields[goString(C.cursus_error_field_name(e, i))] = goString(C.cursus_error_field_value(e, i))
	}
	return out
}

// check converts a status + owned C error into a Go error, destroying the C
// error. (Generic because cgo sees `enum cursus_status_t` and its typedef as
// two types.) A call that succeeded leaves no error to destroy: then check
// makes no cgo call (it runs after every call of the send path).
func check[S ~int32 | ~uint32](status S, e *C.cursus_error_t) error {
	if e != nil {
		defer C.cursus_error_destroy(e)
	}
	if Status(status) == StatusOK {
		return nil
	}
	return errorFrom(Status(status), e)
}
