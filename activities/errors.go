package activities

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/store"
)

// Error types that no retry can fix; workflows and the UI show them as such.
const (
	ErrInvalidConfig       = "InvalidConfig"
	ErrInvalidSeeds        = "InvalidSeeds"
	ErrCorruptPartial      = "CorruptPartial"
	ErrFingerprintMismatch = "FingerprintMismatch"
	ErrDestinationConflict = "DestinationConflict"
	ErrStoreAccess         = "StoreAccess"
)

// Retryable error types with their own meaning.
const (
	ErrEngineStalled  = "EngineStalled"
	ErrWorkerStopping = "WorkerStopping"
)

// NonRetryable is the list workflows put in their retry policies as a second
// line of defence (activities already mark these errors non-retryable).
var NonRetryable = []string{ErrInvalidConfig, ErrInvalidSeeds, ErrCorruptPartial, ErrFingerprintMismatch, ErrDestinationConflict, ErrStoreAccess}

func fatal(kind, format string, a ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, a...), kind, nil)
}

// storeErr marks bad credentials and missing buckets as permanent.
func storeErr(err error) error {
	if errors.Is(err, store.ErrAuth) || errors.Is(err, store.ErrNoBucket) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrStoreAccess, nil)
	}
	return err
}
