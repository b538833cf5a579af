package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
)

// failed says where a bake failed while keeping the root cause's error type on
// top, so the Web UI and `whestbake status` show e.g. "InvalidSeeds" rather than
// a wrapper. Cancellation passes through untouched: a cancelled bake must close
// as cancelled, not failed.
func failed(err error, format string, a ...any) error {
	if temporal.IsCanceledError(err) {
		return err
	}
	kind := bakeapi.ErrBakeFailed
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		kind = app.Type()
	}
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, a...), kind, err)
}
