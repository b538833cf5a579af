package dataset

import (
	"fmt"

	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// InvalidDatasetError reports a dataset directory, metadata document or
// parquet file that does not satisfy the schema-3.0 rules. The message names
// the offending file or field and what to do about it. Every format package
// of dataset returns it as schema.InvalidDatasetError.
type InvalidDatasetError = schema.InvalidDatasetError

// The four merge errors mirror whestbench, where they subclass
// InvalidDatasetError: errors.As(err, new(*InvalidDatasetError)) matches them
// too, so a caller that only cares "is this dataset unusable" needs one check.

// MergeIncompatibleError reports inputs to Merge or Combine that cannot be
// joined: different bake parameters, the wrong kind of input, bad arguments.
type MergeIncompatibleError struct{ Msg string }

func (e *MergeIncompatibleError) Error() string { return e.Msg }
func (e *MergeIncompatibleError) As(t any) bool { return asInvalid(e.Msg, t) }

// MergeIncompleteError reports partials that leave MLP indices uncovered.
type MergeIncompleteError struct{ Msg string }

func (e *MergeIncompleteError) Error() string { return e.Msg }
func (e *MergeIncompleteError) As(t any) bool { return asInvalid(e.Msg, t) }

// MergeOverlapError reports partials whose mlp_range values overlap.
type MergeOverlapError struct{ Msg string }

func (e *MergeOverlapError) Error() string { return e.Msg }
func (e *MergeOverlapError) As(t any) bool { return asInvalid(e.Msg, t) }

// MergeCorruptError reports a partial whose rows disagree with its declared
// mlp_range.
type MergeCorruptError struct{ Msg string }

func (e *MergeCorruptError) Error() string { return e.Msg }
func (e *MergeCorruptError) As(t any) bool { return asInvalid(e.Msg, t) }

func asInvalid(msg string, target any) bool {
	t, ok := target.(**InvalidDatasetError)
	if ok {
		*t = &InvalidDatasetError{Msg: msg}
	}
	return ok
}

// invalidf is an *InvalidDatasetError with the formatted message.
func invalidf(format string, args ...any) error { return schema.Errorf(format, args...) }

// fixMetadataOrRebake ends the errors of metadata that the parquet files
// contradict.
const fixMetadataOrRebake = "; fix metadata.json or re-bake"

func incompatiblef(format string, args ...any) error {
	return &MergeIncompatibleError{Msg: fmt.Sprintf(format, args...)}
}
