package cli

import (
	"fmt"

	"github.com/whestbake/whestbake/internal/settings"
)

// countValue is an integer flag that also accepts 1e9 and 1_000_000_000, the
// spellings whestbench's docs use for sample counts.
type countValue struct {
	target *int64
	// max > 0: the flag's own range is [1, max]. 0: a bakeapi validator
	// checks the value, so the flag only parses it; see newFieldCount.
	max int64
}

// newCount is a count flag in [1, max], for flags that no validator checks.
func newCount(p *int64, def, max int64) *countValue {
	*p = def
	return &countValue{target: p, max: max}
}

// newFieldCount is a count flag for a field of bakeapi.Spec or a split: it
// accepts any count, 0 included, and leaves the range to the validator, whose
// message is the same for the flag, the YAML config and the workflow input.
func newFieldCount(p *int64, def int64) *countValue {
	*p = def
	return &countValue{target: p}
}

func (c *countValue) String() string { return fmt.Sprint(*c.target) }
func (c *countValue) Type() string   { return "count" }

func (c *countValue) Set(s string) error {
	n, err := settings.ParseCount(s) // the CLI flags and the config file accept the same spellings
	if err != nil {
		return err
	}
	switch {
	case c.max == 0:
	case n < 1:
		return fmt.Errorf("%q must be at least 1", s)
	case n > c.max:
		return fmt.Errorf("%s is above the limit %d", s, c.max)
	}
	*c.target = n
	return nil
}
