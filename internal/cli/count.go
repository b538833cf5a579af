package cli

import (
	"fmt"

	"github.com/whestbake/whestbake/internal/settings"
)

// countValue is a positive integer flag that also accepts 1e9 and 1_000_000_000,
// the spellings whestbench's docs use for sample counts.
type countValue struct {
	v   *int64
	max int64
}

func newCount(p *int64, def, max int64) *countValue {
	*p = def
	return &countValue{v: p, max: max}
}

func (c *countValue) String() string { return fmt.Sprint(*c.v) }
func (c *countValue) Type() string   { return "count" }

func (c *countValue) Set(s string) error {
	n, err := settings.ParseCount(s) // the CLI flags and the config file accept the same spellings
	if err != nil {
		return err
	}
	if n > c.max {
		return fmt.Errorf("%s is above the limit %d", s, c.max)
	}
	*c.v = n
	return nil
}
