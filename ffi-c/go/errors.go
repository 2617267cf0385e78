package cursus

// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"context"
	"errors"
)

// Class sentinels: errors.Is(err, ErrRouting) is true for every *Error of
// class "routing", and so on for each of the eight classes.
var (
	ErrValidation    = errors.New("cursus: validation error")
	ErrAuthorization = errors.New("cursus: authorization error")
	ErrRouting       = errors.New("cursus: routing error")
	ErrAvailability  = errors.New("cursus: availability error")
	ErrConflict      = errors.New("cursus: conflict error")
	ErrFencing       = errors.New("cursus: fencing error")
	ErrNotFound      = errors.New("cursus: not_found error")
	ErrInternal      = errors.New("cursus: internal error")
)

// Kind sentinels for local failures: ErrTimeout (a deadline passed; such an
// error also matches context.DeadlineExceeded), ErrClosed (use of a closed
// client, or of one created before fork()) and ErrInvalidArgument (bad
// option, argument or handle).
var (
	ErrTimeout         = errors.New("cursus: timeout")
	ErrClosed          = errors.New("cursus: closed")
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

// Status is the C status code (CURSUS_OK, CURSUS_ERR_...).
type Status int

// Status values (see cursus.h).
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

// Error is every error the engine reports. Use errors.As to get it and
// errors.Is with the class or kind sentinels to branch on it.
type Error struct {
	Status    Status            // C status
	Code      string            // machine-readable code, e.g. "topic_not_found"
	Class     string            // one of the eight classes
	Kind      string            // broker, io, timeout, protocol, closed, invalid_argument or internal
	Retryable bool              // whether retrying (with backoff) may succeed
	Message   string            // the detail message alone
	Fields    map[string]string // structured details (e.g. "topic", "leader")
	text      string
}

// Error is the readable text, the same in every Cursus language:
// "code (class[, retryable]): message; field=value, ...".
func (e *Error) Error() string {
	if e.text == "" {
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
	if e == nil {
		return &Error{Status: status, Code: "internal_error", Class: "internal", Kind: "internal",
			Message: "no error details", Fields: map[string]string{}}
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
// two types.)
func check[S ~int32 | ~uint32](status S, e *C.cursus_error_t) error {
	defer C.cursus_error_destroy(e)
	if Status(status) == StatusOK {
		return nil
	}
	return errorFrom(Status(status), e)
}
