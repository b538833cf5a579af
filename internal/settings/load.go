package settings

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/readlimit"
	"github.com/whestbake/whestbake/internal/safetext"
)

// EnvPrefix starts every environment variable of the configuration.
const EnvPrefix = "WHESTBAKE"

// MaxConfigFileBytes caps a config file, and an old one that `config
// migrate` reads: configs/example.yaml, every key with its comment, is
// about 10 KiB.
const MaxConfigFileBytes = 1 << 20

// ReadConfigFile reads a config file, refusing one over MaxConfigFileBytes
// before reading more than that: every verb reads --config-file, which may
// name anything.
func ReadConfigFile(file string) ([]byte, error) {
	data, err := readlimit.File(file, MaxConfigFileBytes)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", file, err)
	}
	return data, nil
}

// EnvName is the environment variable of a config key: bake.n-samples → WHESTBAKE_BAKE_N_SAMPLES.
func EnvName(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(envReplacer.Replace(key))
}

var envReplacer = strings.NewReplacer(".", "_", "-", "_")

// Load builds the configuration from, lowest precedence first: the defaults,
// the YAML file, skipped when file is "", WHESTBAKE_* environment variables
// and overrides, config key → value, typically the flags the user set: see
// FlagOverrides. Unknown keys in the file are errors, so a typo cannot be
// silently ignored. Load does not validate: the worker and the starter's
// verbs run the preflight step of internal/preflight, which validates and
// reads the files the config names.
func Load(file string, overrides map[string]string) (Config, error) {
	c, _, err := loadViper(file, overrides)
	return c, err
}

// loadViper is Load, also returning the viper instance that holds where each
// value came from, which Read asks.
func loadViper(file string, overrides map[string]string) (Config, *viper.Viper, error) {
	v := viper.NewWithOptions(viper.EnvKeyReplacer(envReplacer))
	v.SetEnvPrefix(EnvPrefix)
	v.AutomaticEnv()
	// Unmarshal only sees environment variables of keys viper already knows,
	// so every key gets a default.
	for key, val := range leafKeys(Default()) {
		v.SetDefault(key, val)
	}
	if file != "" {
		// Syntax errors and unknown keys first, with their lines; viper
		// would report them less precisely, as checkFile says. viper gets
		// the bytes read here, so the file is read once, under its cap.
		data, err := ReadConfigFile(file)
		if err != nil {
			return Config{}, nil, err
		}
		if err := checkFile(data); err != nil {
			return Config{}, nil, fmt.Errorf("config file %s: %w", file, err)
		}
		v.SetConfigType("yaml")
		if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
			return Config{}, nil, fmt.Errorf("config file %s: %s", file, scrubAll(err.Error(), v))
		}
	}
	// One rule for every variable: an empty WHESTBAKE_* clears its key,
	// which takes its default as if neither the file nor the environment
	// set it. viper alone would ignore the empty variable and keep the
	// file's value.
	for key, def := range leafKeys(Default()) {
		if cleared(key) {
			v.Set(key, def)
		}
	}
	for key, val := range overrides {
		v.Set(key, val)
	}
	c, err := decode(v, file)
	if err != nil {
		return Config{}, nil, err
	}
	if c.Worker.Threads == 0 {
		c.Worker.Threads = gpuengine.DefaultThreads()
	}
	resolvePaths(&c, file, v, overrides)
	for i := range c.Bake.Splits {
		s := &c.Bake.Splits[i]
		if s.Config == "" {
			s.Config = "default"
		}
		if s.SeedsFile != "" && file != "" && !filepath.IsAbs(s.SeedsFile) {
			s.SeedsFile = filepath.Join(filepath.Dir(file), s.SeedsFile)
		}
	}
	return c, v, nil
}

// decode is the Config viper holds, with its count, size, protocol and
// duration spellings read; its errors name the file and keep secrets out.
func decode(v *viper.Viper, file string) (Config, error) {
	var c Config
	err := v.UnmarshalExact(&c, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		countHook,
		byteSizeHook,
		unsignedHook,
		protocolHook,
		durationHook,
		mapstructure.StringToTimeDurationHookFunc(),
	)))
	if err == nil {
		return c, nil
	}
	where := "configuration"
	if file != "" {
		where = "config file " + file + " (or its WHESTBAKE_* environment)"
	}
	msg := strings.Replace(
		err.Error(),
		"decoding failed due to the following error(s):\n\n",
		"",
		1,
	)
	// One line per problem that the decoder found, each quoting the file.
	lines := strings.Split(strings.TrimSpace(scrubAll(msg, v)), "\n")
	lines[0] = where + ": " + lines[0]
	return Config{}, safetext.LinesError{Text: lines}
}

// pathKeys are the keys that name a file or a directory, with their field.
func pathKeys(c *Config) map[string]*string {
	return map[string]*string{
		"temporal.tls.ca-file":   &c.Temporal.TLS.CAFile,
		"temporal.tls.cert-file": &c.Temporal.TLS.CertFile,
		"temporal.tls.key-file":  &c.Temporal.TLS.KeyFile,
		"s3.ca-file":             &c.S3.CAFile,
		"release.hub.token-file": &c.Release.Hub.TokenFile,
		"worker.scratch-dir":     &c.Worker.ScratchDir,
	}
}

// resolvePaths makes the relative paths the config file names relative to
// that file, like its seeds files, so a config reads the same from any
// directory. A path from the environment or a flag stays as given: relative
// to the working directory, as a shell user expects.
func resolvePaths(c *Config, file string, v *viper.Viper, overrides map[string]string) {
	for key, path := range pathKeys(c) {
		_, fromFlag := overrides[key]
		if *path != "" &&
			file != "" &&
			!filepath.IsAbs(*path) &&
			v.InConfig(key) &&
			os.Getenv(EnvName(key)) == "" &&
			!fromFlag {
			*path = filepath.Join(filepath.Dir(file), *path)
		}
	}
}

// cleared reports whether key's variable is set and empty, which clears
// the key in loadViper.
func cleared(key string) bool {
	val, ok := os.LookupEnv(EnvName(key))
	return ok && val == ""
}

// Keys lists every config key that has an environment variable, sorted:
// all but the lists, such as bake.splits.
func Keys() []string {
	var out []string
	for k := range leafKeys(Default()) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// secretKeys are the keys whose values are Secrets.
var secretKeys = []string{"s3.secret-key", "temporal.api-key"}

// scrubAll removes every secret value viper holds from a library's error text.
func scrubAll(text string, v *viper.Viper) string {
	for _, k := range secretKeys {
		text = scrub(text, Secret(v.GetString(k)))
	}
	return text
}

// FlagOverrides returns the values of the flags the user set, keyed by config
// key: keys maps a flag name to its config key, as "id" → "bake.id".
func FlagOverrides(fs *pflag.FlagSet, keys map[string]string) map[string]string {
	out := map[string]string{}
	for flag, key := range keys {
		if f := fs.Lookup(flag); f != nil && f.Changed {
			out[key] = f.Value.String()
		}
	}
	return out
}

// leafKeys lists every key of c with its value, following the mapstructure
// tags; lists such as bake.splits come from the file only.
func leafKeys(c Config) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			key := prefix + t.Field(i).Tag.Get("mapstructure")
			f := v.Field(i)
			switch {
			case f.Kind() == reflect.Struct:
				walk(key+".", f)
			case f.Kind() == reflect.Slice:
			case f.Kind() == reflect.Pointer:
			default:
				out[key] = f.Interface()
			}
		}
	}
	walk("", reflect.ValueOf(c))
	return out
}

var (
	durationType = reflect.TypeOf(bakeapi.Duration(0))
	countType    = reflect.TypeOf(Count(0))
	byteSizeType = reflect.TypeOf(ByteSize(0))
	protocolType = reflect.TypeOf(bakeapi.SeedProtocol(""))
)

// byteSizeHook reads a ByteSize from "64GiB", "512MiB" or a count.
func byteSizeHook(from, to reflect.Type, data any) (any, error) {
	s, ok := data.(string)
	if to != byteSizeType || !ok {
		return data, nil
	}
	if strings.TrimSpace(s) == "" {
		return ByteSize(0), nil
	}
	n, err := ParseByteSize(s)
	return ByteSize(n), err
}

// durationHook reads a policy duration from "90s" as a time.Duration
// would be read; a bare number stays nanoseconds, which validation refuses.
func durationHook(from, to reflect.Type, data any) (any, error) {
	s, ok := data.(string)
	if to != durationType || !ok {
		return data, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	return bakeapi.Duration(d), err
}

// protocolHook reads an unquoted YAML `seed-protocol: 4.0`, which YAML
// makes the float 4, back as the version "4.0" rather than "4".
func protocolHook(from, to reflect.Type, data any) (any, error) {
	x, ok := data.(float64)
	if to != protocolType || !ok {
		return data, nil
	}
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.1f", x), nil
	}
	return strconv.FormatFloat(x, 'f', -1, 64), nil
}

// unsignedHook refuses negative numbers for unsigned fields such as split
// seeds, which weak decoding would otherwise wrap around to huge values.
func unsignedHook(from, to reflect.Type, data any) (any, error) {
	if to.Kind() != reflect.Uint64 {
		return data, nil
	}
	v := reflect.ValueOf(data)
	switch {
	case v.CanInt() && v.Int() < 0, v.CanFloat() && v.Float() < 0:
		return nil, fmt.Errorf("%v is negative: give a non-negative integer", data)
	case v.CanFloat() && v.Float() != math.Trunc(v.Float()):
		return nil, fmt.Errorf("%v is not a whole number", data)
	case v.Kind() == reflect.String && strings.HasPrefix(strings.TrimSpace(v.String()), "-"):
		return nil, fmt.Errorf("%q is negative: give a non-negative integer", data)
	}
	return data, nil
}

// countHook reads a Count from "1e9", "1_000_000", 1e9 as a YAML float, or an
// integer. An empty string is 0, which Validate reports as missing.
func countHook(from, to reflect.Type, data any) (any, error) {
	if to != countType || from == countType {
		return data, nil
	}
	var text string
	switch x := data.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			return Count(0), nil
		}
		text = x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v is not a count", x)
		}
		text = strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		text = strconv.FormatFloat(float64(x), 'g', -1, 32)
	default:
		return data, nil // integers: Validate checks the range
	}
	n, err := ParseCount(text)
	if err != nil {
		return nil, err
	}
	return Count(n), nil
}
