package activities

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/store"
)

func fatal(kind, format string, a ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, a...), kind, nil)
}

// storeErr marks bad credentials, missing buckets and objects over their
// reader's bound as permanent.
func storeErr(err error) error {
	if errors.Is(err, store.ErrAuth) || errors.Is(err, store.ErrNoBucket) {
		return temporal.NewNonRetryableApplicationError(err.Error(), bakeapi.ErrStoreAccess, nil)
	}
	// An object over its reader's bound does not shrink on a retry.
	if errors.Is(err, store.ErrTooLarge) {
		return temporal.NewNonRetryableApplicationError(err.Error(), bakeapi.ErrCorruptPartial, nil)
	}
	return err
}
