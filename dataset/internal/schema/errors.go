package schema

import "fmt"

// InvalidDatasetError reports a dataset directory, metadata document or parquet
// file that does not satisfy the schema-3.0 rules. The message names the
// offending file or field and what to do about it.
type InvalidDatasetError struct{ Msg string }

func (e *InvalidDatasetError) Error() string { return e.Msg }

// Errorf is an *InvalidDatasetError with the formatted message.
func Errorf(format string, args ...any) error {
	return &InvalidDatasetError{Msg: fmt.Sprintf(format, args...)}
}
