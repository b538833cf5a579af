package bakeclient

import (
	"context"
	"time"
)

// WatchInput says which bake to follow, and what to do with each refresh.
type WatchInput struct {
	ID string
	// Every is the time between two refreshes.
	Every time.Duration
	// Each gets every refresh's status; an error ends the watch.
	Each func(Status) error
}

// Watch collects a bake's status every in.Every until the bake no longer
// runs, and returns its last status. Each refresh reads only what changed:
// the workflow input once per run, a closed workflow's history once. A
// split's counts never go down from one refresh to the next.
func (c *Client) Watch(ctx context.Context, in WatchInput) (Status, error) {
	tc, err := c.connect(ctx)
	if err != nil {
		return Status{}, err
	}
	w := newWatcher(tc, c.cfg, in.ID)
	for {
		st, err := w.collect(ctx)
		if err != nil {
			return st, err
		}
		if err := in.Each(st); err != nil {
			return st, err
		}
		if !st.Running() {
			return st, nil
		}
		if err := sleep(ctx, in.Every); err != nil {
			return st, err
		}
	}
}
