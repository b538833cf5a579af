package settings

import (
	"fmt"
	"os"
)

// Loaded is the configuration of a verb whose flags default to config keys:
// the Config, and which keys the file or the environment gave, since only
// those may fill a flag. A default must not hide the flag's own default.
type Loaded struct {
	Config
	given  map[string]bool
	values map[string]any // every key's value, as leafKeys walks them
}

// Read loads the configuration of file, "" for none, and the environment,
// with the same rules and errors as Load, and records which keys were given.
func Read(file string) (Loaded, error) {
	c, v, err := loadViper(file, nil)
	if err != nil {
		return Loaded{}, err
	}
	given := map[string]bool{}
	values := leafKeys(c)
	for key := range values {
		// An empty variable clears its key: neither it nor the file gave it.
		if os.Getenv(EnvName(key)) != "" || (file != "" && v.InConfig(key) && !cleared(key)) {
			given[key] = true
		}
	}
	return Loaded{Config: c, given: given, values: values}, nil
}

// Given reports whether the file or the environment set key.
func (l Loaded) Given(key string) bool { return l.given[key] }

// Flag is key's value spelled as its flag takes it: counts and sizes as
// integers, durations as 10s, booleans as true or false.
func (l Loaded) Flag(key string) string {
	v, ok := l.values[key]
	if !ok {
		return ""
	}
	return fmt.Sprint(v)
}
