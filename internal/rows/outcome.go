package rows

// Outcome is how an attempt got an MLP's result, or a slice's: what the
// bake did, which metrics and logs only label.
type Outcome string

const (
	Computed Outcome = "computed" // computed from scratch by this attempt
	// Resumed is an MLP continued from a checkpoint, or a slice finished by
	// a retry that reused earlier work.
	Resumed Outcome = "resumed"
	Reused  Outcome = "reused" // already finished by an earlier attempt
)

// Outcomes lists every outcome, for metrics that show them all from the start.
var Outcomes = []Outcome{Computed, Resumed, Reused}

// SliceOutcome is a slice's outcome from what its MLPs' were: reused when
// an earlier attempt had finished all n of them, computed when this attempt
// computed all of them from scratch, else resumed.
func SliceOutcome(computed, resumed, reused, n int) Outcome {
	switch {
	case reused == n && computed == 0 && resumed == 0:
		return Reused
	case reused == 0 && resumed == 0:
		return Computed
	}
	return Resumed
}
