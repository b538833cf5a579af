package settings

// Under gives values to Keys that nothing else gives: the addresses of the
// dev stack that `whestbake dev up` recorded, devstack.ClientDefaults, so
// that a config that names no server reaches that stack and not whatever
// else holds the default ports. Read is called only when one of Keys is
// left without a value, so a config that names every server never reads
// the record, whatever lies at its path.
type Under struct {
	Keys []string
	Read func() (map[string]string, error)
}

// LoadUnder is Load with under's values in place of the built-in defaults
// of its keys: any value the file, the environment or overrides give wins
// over it.
func LoadUnder(file string, under Under, overrides map[string]string) (Config, error) {
	if under.Read == nil {
		return Load(file, overrides)
	}
	given, err := Read(file)
	if err != nil {
		return Config{}, err
	}
	isSet := func(key string) bool {
		_, set := overrides[key]
		return set || given.Given(key)
	}
	missing := false
	for _, key := range under.Keys {
		missing = missing || !isSet(key)
	}
	if !missing {
		return Load(file, overrides)
	}
	values, err := under.Read()
	if err != nil {
		return Config{}, err
	}
	merged := make(map[string]string, len(overrides)+len(values))
	for key, v := range overrides {
		merged[key] = v
	}
	for key, v := range values {
		if !isSet(key) {
			merged[key] = v
		}
	}
	return Load(file, merged)
}
