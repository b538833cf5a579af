package settings

// LoadUnder is Load with under (config key → value) in place of the
// built-in defaults of those keys: any value the file, the environment or
// overrides give wins over it. The starter and the worker put there the
// addresses of the dev stack that `whestbake dev up` recorded
// (devstack.ClientDefaults), so that a config that names no server reaches
// that stack and not whatever else holds the default ports.
func LoadUnder(file string, under, overrides map[string]string) (Config, error) {
	if len(under) == 0 {
		return Load(file, overrides)
	}
	given, err := Read(file)
	if err != nil {
		return Config{}, err
	}
	merged := make(map[string]string, len(overrides)+len(under))
	for key, v := range overrides {
		merged[key] = v
	}
	for key, v := range under {
		if _, set := merged[key]; !set && !given.Given(key) {
			merged[key] = v
		}
	}
	return Load(file, merged)
}
