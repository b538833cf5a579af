package activities

import (
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/whestbake/whestbake/bakeapi"
)

// The checkpointer's save policy: a failed save is a blip; the attempt
// ends at the third failure in a row, or at any failure two minutes after
// the first of the run, as a retryable StoreUnavailable naming the address;
// a save that goes through ends the run.
func TestCheckpointerEndsTheAttemptAfterARunOfFailedSaves(t *testing.T) {
	const at = "s3://b/bakes/x/checkpoints/public/0.json"
	refused := errors.New("connection refused")
	var c checkpointer
	for i := 1; i < maxFailedSaves; i++ {
		if err := c.record(refused, at); err != nil {
			t.Fatalf("failure %d of a run ended the attempt: %v", i, err)
		}
	}
	if err := c.record(nil, at); err != nil || c.failedSaves != 0 {
		t.Fatalf("a save that went through: %v, %d failures counted", err, c.failedSaves)
	}
	for i := 1; i < maxFailedSaves; i++ {
		if err := c.record(refused, at); err != nil {
			t.Fatalf("failure %d after a good save ended the attempt: %v", i, err)
		}
	}
	err := c.record(refused, at)
	wantStoreUnavailable(t, err, "S3 failed 3 checkpoint saves in a row", at, "connection refused")

	var slow checkpointer
	if err := slow.record(refused, at); err != nil {
		t.Fatal(err)
	}
	slow.failingSince = slow.failingSince.Add(-maxFailingSaves)
	err = slow.record(refused, at)
	wantStoreUnavailable(t, err, "S3 failed 2 checkpoint saves in a row over 2m0s", at)
}

// wantStoreUnavailable fails unless err is a retryable StoreUnavailable
// failure that says each of wants.
func wantStoreUnavailable(t *testing.T, err error, wants ...string) {
	t.Helper()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != bakeapi.ErrStoreUnavailable || app.NonRetryable() {
		t.Fatalf("error %v, want a retryable %s", err, bakeapi.ErrStoreUnavailable)
	}
	for _, want := range wants {
		if !strings.Contains(app.Error(), want) {
			t.Errorf("error %q does not say %q", app.Error(), want)
		}
	}
}
