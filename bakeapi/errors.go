package bakeapi

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError is one unusable field. Problem says what is wrong and the fix
// without naming a flag or a config key, so each front end can put its own
// name in front with Rename.
type FieldError struct {
	Field   string // FieldWidth, FieldNMLPs, …
	Problem string
}

func (e FieldError) Error() string { return e.Field + " " + e.Problem }

// FieldErrors is every problem of one validation, in field order.
type FieldErrors []FieldError

func (e FieldErrors) Error() string {
	parts := make([]string, len(e))
	for i, f := range e {
		parts[i] = f.Error()
	}
	return strings.Join(parts, "; ")
}

func (e *FieldErrors) add(field, format string, a ...any) {
	*e = append(*e, FieldError{Field: field, Problem: fmt.Sprintf(format, a...)})
}

// inRange is the one wording of a bounded count.
func (e *FieldErrors) inRange(field string, v, hi int64, what string) {
	if v == 0 {
		e.add(field, "is missing or 0: must be in [1, %d] (%s)", hi, what)
	} else if v < 1 || v > hi {
		e.add(field, "= %d: must be in [1, %d] (%s)", v, hi, what)
	}
}

func (e FieldErrors) orNil() error {
	if len(e) == 0 {
		return nil
	}
	return e
}

// AsFieldErrors returns the field errors inside err, nil if there are none.
func AsFieldErrors(err error) FieldErrors {
	var fe FieldErrors
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}

// Rename returns err with every field renamed by name, for example "width" to
// "--width", or err itself when it holds no field errors. Fields that name
// maps to "" keep their own name.
func Rename(err error, name func(field string) string) error {
	fe := AsFieldErrors(err)
	if fe == nil {
		return err
	}
	out := make(FieldErrors, len(fe))
	for i, f := range fe {
		out[i] = f
		if n := name(f.Field); n != "" {
			out[i].Field = n
		}
	}
	return out
}

// Error types of failed activities and workflows, as Temporal's
// ApplicationError.Type reports them. These cannot be fixed by a retry.
//
// The types are part of recorded histories, not only of this code: each
// failed activity and workflow event holds its type, every scheduled
// activity's retry policy lists NonRetryable, the worker's metrics label
// slice failures by them, and `whestbake status` and users' scripts read
// them. So a type is never renamed or split; a new kind of failure gets a
// new type only when it is a new failure, and its meaning is written here.
const (
	ErrInvalidConfig = "InvalidConfig"
	ErrInvalidSeeds  = "InvalidSeeds"
	// ErrCorruptPartial is a stored object of the bake that no retry can
	// read as what it should be, and that the failing step cannot
	// recompute: not only a slice's partial, as its name, kept for the
	// reasons above, suggests, but any of
	//   - in BakeSlice, a per-MLP result with the wrong number of means, or
	//     a checkpoint the engine refuses;
	//   - in MergeSplit, CombineSplits and Push, a committed directory, be it
	//     a slice partial, a merged split or a dataset, whose manifest or
	//     files fail their checks, or whose manifest points outside it;
	//   - an object an earlier step committed, such as a directory's manifest
	//     or files or a split's seeds file GenerateSeeds stored, that is gone
	//     from the bucket: something outside whestbake deleted it;
	//   - in MergeSplit and CombineSplits, a partial's metadata.json, or a
	//     merged dataset the dataset package rejects;
	//   - in HubPush, a dataset whose metadata.json or card the Hub's card
	//     cannot be rendered from;
	//   - in any step, an object over its reader's size bound.
	// Damaged objects that can be recomputed, which are results,
	// checkpoints, identity blocks and a slice's partial, are discarded and
	// recomputed instead, and counted in BakeSliceOutput.Discarded. The
	// message names the object.
	ErrCorruptPartial      = "CorruptPartial"
	ErrFingerprintMismatch = "FingerprintMismatch"
	ErrDestinationConflict = "DestinationConflict"
	ErrStoreAccess         = "StoreAccess"
	// ErrHubAccess is a Hub push that no retry fixes: a rejected or
	// read-only token, a repository or branch that does not exist or is
	// not the token's, a request over the Hub's size limits, a tag on
	// another commit, or no token on the control worker.
	ErrHubAccess = "HubAccess"
)

// Retryable error types with their own meaning.
const (
	ErrEngineStalled  = "EngineStalled"
	ErrWorkerStopping = "WorkerStopping"
	// ErrStoreUnavailable is a slice attempt ended because S3 kept failing
	// it: its checkpoint saves failed several times in a row, or an S3
	// request held it past the stall timeout. The message names S3 and the
	// key; the slice is retried, on any worker, as after a failure.
	ErrStoreUnavailable = "StoreUnavailable"
	// ErrBakeFailed wraps a failure whose cause had no type of its own.
	ErrBakeFailed = "BakeFailed"
)

// NonRetryable is the list workflows put in their retry policies as a second
// line of defence; activities already mark these errors non-retryable.
var NonRetryable = []string{
	ErrInvalidConfig,
	ErrInvalidSeeds,
	ErrCorruptPartial,
	ErrFingerprintMismatch,
	ErrDestinationConflict,
	ErrStoreAccess,
	ErrHubAccess,
}

// Join collects the field errors of several validations into one FieldErrors,
// nil when there are none. An error that holds no field errors is returned
// as it is, before any field error: it is not a validation result.
func Join(errs ...error) error {
	var all FieldErrors
	for _, err := range errs {
		if err == nil {
			continue
		}
		fe := AsFieldErrors(err)
		if fe == nil {
			return err
		}
		all = append(all, fe...)
	}
	return all.orNil()
}
