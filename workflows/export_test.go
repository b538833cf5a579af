package workflows

// SetRunEventBudget sets the event budget of a split workflow run for a test
// and returns what restores it: tests continue as new after a few slices
// instead of hundreds.
func SetRunEventBudget(n int) (restore func()) {
	old := runEventBudget
	runEventBudget = n
	return func() { runEventBudget = old }
}

// RunStartEvents and SliceEvents are the run's event accounting, for tests
// that size a budget in slices.
const (
	RunStartEvents = runStartEvents
	SliceEvents    = sliceEvents
)

// RunEventBudget is the event budget of a split workflow run.
func RunEventBudget() int { return runEventBudget }
