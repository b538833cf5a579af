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

// storeErr marks bad credentials and missing buckets as permanent.
func storeErr(err error) error {
	if errors.Is(err, store.ErrAuth) || errors.Is(err, store.ErrNoBucket) {
		return temporal.NewNonRetryableApplicationError(err.Error(), bakeapi.ErrStoreAccess, nil)
	}
	return err
}
