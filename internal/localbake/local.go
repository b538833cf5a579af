// Package localbake is the bake of `whestbake dataset bake`, on this
// machine: it checks everything the verb was given before any compute or
// output, opens the engine the device asks for, and writes the dataset
// directory a row at a time.
package localbake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/rows"
	"github.com/whestbake/whestbake/internal/seeds"
)

// FieldMaxMemory is the field of Input.MemoryLimit, which bakeapi does
// not name, as Plan's messages name it through Input.Names.
const FieldMaxMemory = "max-memory"

// Input is a bake on this machine, `dataset bake`, as a front end was
// given it: the split's settings, where its salt and seeds come from, and
// what the machine must have for it.
type Input struct {
	NMLPs  int
	Split  string
	Config string
	// Spec is the shape, sampler and seed protocol; of its Salt only
	// Withhold and ID, since Plan resolves the salt and declares its
	// SHA-256.
	Spec bakeapi.Spec
	// SaltHex is protocol 4.0's salt as given, "" for none.
	SaltHex string
	// Sliced says a slice or an MLP range was asked for, even the whole
	// one: its salt must then be given, for every slice to share it.
	Sliced bool
	// Slice is "K/N" and MLPRange "START-END", inclusive; "" for none.
	Slice    string
	MLPRange string
	// SeedsFile holds the input seeds; without it they derive from
	// RootSeed, or without that from OS entropy.
	SeedsFile string
	RootSeed  *int64
	Threads   int
	// MemoryLimit is the memory the bake may use, 0 for no limit. It is
	// asked once the settings are valid, so that their errors come first;
	// nil is no limit.
	MemoryLimit func() (int64, error)
	// Output is the dataset directory to create, which must not exist.
	Output string
	// Getenv reads dataset.SaltEnv for a withheld salt; nil is os.Getenv.
	Getenv func(string) string
	// Names is how the front end calls a field in Plan's messages, as the
	// CLI calls width --width; nil keeps the fields' own names.
	Names func(field string) string
}

// SettingsError is a Plan error in the bake's settings: shape, split,
// salt, MLP range. What they point to or need, the seeds, the output
// directory or memory, fails otherwise. The CLI reports it as a usage
// error.
type SettingsError struct{ Err error }

func (e SettingsError) Error() string { return e.Err.Error() }
func (e SettingsError) Unwrap() error { return e.Err }

// Plan checks everything a local bake was given, before any compute
// or output, and returns what to bake. Its field errors are renamed by
// in.Names.
func Plan(in Input) (rows.Plan, error) {
	plan := rows.Plan{
		NMLPs:  in.NMLPs,
		Split:  in.Split,
		Config: in.Config,
		Spec:   rows.NormalizeSpec(in.Spec),
	}
	if err := in.resolveSalt(&plan); err != nil {
		return rows.Plan{}, SettingsError{err}
	}
	if err := plan.ValidateSettings(); err != nil {
		return rows.Plan{}, SettingsError{bakeapi.Rename(err, in.name)}
	}
	if err := in.checkMemory(plan.Spec); err != nil {
		return rows.Plan{}, err
	}
	if err := dataset.CheckOutputFree(in.Output); err != nil {
		return rows.Plan{}, err
	}
	rng, err := in.mlpRange()
	if err != nil {
		return rows.Plan{}, SettingsError{bakeapi.Rename(err, in.name)}
	}
	sf, err := in.seeds()
	if err != nil {
		return rows.Plan{}, bakeapi.Rename(err, in.name)
	}
	plan.Range = rng
	plan.Seeds = sf
	if err := plan.Validate(); err != nil {
		return rows.Plan{}, bakeapi.Rename(err, in.name)
	}
	return plan, nil
}

// name is field as in.Names calls it.
func (in Input) name(field string) string {
	if in.Names == nil {
		return field
	}
	return in.Names(field)
}

// resolveSalt puts the salt into plan, as whestbench's resolve_bake_salt
// does: an explicit salt wins; a sliced 4.0 bake must have one, since its
// slices have to share it; otherwise one is generated. A withheld salt
// comes from dataset.SaltEnv only, so it never stands on a command line
// where ps and the shell history see it, and is never generated, since
// nobody could recover it. Under another protocol the salt only reaches the declaration, where
// bakeapi's validator refuses it.
func (in Input) resolveSalt(plan *rows.Plan) error {
	var salt seeds.Salt
	if in.SaltHex != "" {
		s, err := mlps.ParseBakeSalt(in.SaltHex)
		if err != nil {
			return fmt.Errorf("%s %v", in.name(bakeapi.FieldSeedSalt), err)
		}
		salt = s
	}
	withhold := in.Spec.Salt.Withhold
	if plan.Spec.Protocol() == bakeapi.SeedProtocolV4 {
		switch {
		case withhold && !salt.IsZero():
			return fmt.Errorf("%s takes the salt from %s only, not from %s "+
				"(nor WHESTBAKE_SEED_SALT or a config file): a withheld salt must not stand on "+
				"a command line, where ps and the shell history see it, nor in a file",
				in.name(bakeapi.FieldWithholdSalt), dataset.SaltEnv, in.name(bakeapi.FieldSeedSalt))
		case !salt.IsZero():
		case withhold:
			s, err := in.envSalt()
			if err != nil {
				return err
			}
			salt = s
		case in.Sliced:
			return fmt.Errorf(
				"a sliced seed protocol 4.0 bake (%s or %s) needs %s: "+
					"every slice must derive seeds and names from the same salt; "+
					"make one (`openssl rand -hex %d`) and pass it to every slice",
				in.name(mlps.FieldSlice),
				in.name(mlps.FieldMLPRange),
				in.name(bakeapi.FieldSeedSalt),
				seeds.SaltBytes,
			)
		default:
			salt = seeds.GenerateSalt()
		}
		plan.Salt = salt
	}
	plan.Spec.Salt.SHA256 = ""
	if !salt.IsZero() {
		plan.Spec.Salt.SHA256 = salt.Digest()
	}
	return nil
}

// envSalt is a withheld salt, from dataset.SaltEnv.
func (in Input) envSalt() (seeds.Salt, error) {
	getenv := in.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s, err := mlps.EnvSalt(getenv)
	if errors.Is(err, mlps.ErrSaltUnset) {
		return s, fmt.Errorf("%s takes the salt from %s, which is not set: a withheld salt is "+
			"never generated, since nobody could recover it; make one (`openssl rand -hex %d`), "+
			"keep it safe and export it",
			in.name(bakeapi.FieldWithholdSalt), dataset.SaltEnv, seeds.SaltBytes)
	}
	return s, err
}

// checkMemory refuses a shape whose rows would not fit in the memory
// limit.
func (in Input) checkMemory(spec bakeapi.Spec) error {
	if in.MemoryLimit == nil {
		return nil
	}
	limit, err := in.MemoryLimit()
	if err != nil {
		return err
	}
	if err := rows.CheckMemory(spec, in.Threads, limit); err != nil {
		return fmt.Errorf("%w (%s sets the limit)", err, in.name(FieldMaxMemory))
	}
	return nil
}

// mlpRange is the MLPs to bake: the slice, the MLP range, or all of them.
func (in Input) mlpRange() (bakeapi.Range, error) {
	switch {
	case in.Slice != "":
		return mlps.ParseSlice(in.Slice, in.NMLPs)
	case in.MLPRange != "":
		return mlps.ParseMLPRange(in.MLPRange, in.NMLPs)
	}
	return bakeapi.Range{Start: 0, End: in.NMLPs}, nil
}

// seeds reads the seeds file, or derives the seeds from the root seed, or
// draws them from OS entropy.
func (in Input) seeds() (mlps.SeedFile, error) {
	n := in.NMLPs
	if in.SeedsFile != "" {
		data, err := mlps.ReadSeedsFile(in.SeedsFile, n)
		if err != nil {
			return mlps.SeedFile{}, fmt.Errorf(
				"cannot read %s file: %v",
				in.name(bakeapi.FieldMLPSeeds),
				err,
			)
		}
		return mlps.ParseSeeds(in.SeedsFile, data, n)
	}
	list, err := mlps.DrawSeeds(n, in.RootSeed)
	if err != nil {
		return mlps.SeedFile{}, err
	}
	sf := mlps.FromSeeds(list)
	sf.Generated = in.RootSeed == nil
	return sf, nil
}

// OpenEngine opens the engine of device for p: under "auto", the CPU when
// p is too little work to repay a GPU's start-up, by gpuengine's cost
// model. Its errors are gpuengine.Open's, field errors of
// gpuengine.FieldDevice. A tf32x3 bake needs the cuda device named: auto
// never chooses the tensor cores' numbers, nor may it fall back to the CPU,
// which computes fp32.
func OpenEngine(device string, p rows.Plan, threads int) (gpuengine.Engine, error) {
	s := p.Spec
	if s.Precision == bakeapi.PrecisionTF32x3 && device != gpuengine.DeviceCUDA {
		return nil, bakeapi.FieldErrors{{Field: gpuengine.FieldDevice, Problem: fmt.Sprintf(
			"%q: precision %s runs on the cuda device only; choose it explicitly",
			device, s.Precision)}}
	}
	mlps := int64(p.Range.Len())
	if device == gpuengine.DeviceAuto &&
		!gpuengine.DefaultRates.PreferGPU(s.Width, s.Depth, mlps, s.NSamples, threads) {
		device = gpuengine.DeviceCPU
	}
	return gpuengine.Open(device, s.Sampler)
}

// WriteInput is a planned bake with what runs it.
type WriteInput struct {
	Plan    rows.Plan
	Engine  gpuengine.Engine
	Threads int
	// Progress, when set, receives the number of newly finished samples.
	Progress func(samples int64)
	// Output is the dataset directory to create.
	Output string
}

// WriteDir bakes the plan's MLPs and writes them, with the plan's metadata,
// as the dataset directory in.Output, a row at a time through
// dataset.WriteDirStream: nothing is left there if it fails.
func WriteDir(ctx context.Context, in WriteInput) error {
	p := in.Plan
	desc, err := gpuengine.DescribeFor(in.Engine, p.Spec)
	if err != nil {
		return err
	}
	md := rows.Metadata(p, desc, time.Now())
	ids := mlps.Identities(p.Seeds.Seeds, p.Salt)
	return dataset.WriteDirStream(in.Output, md, p.Spec, func(write func(dataset.Row) error) error {
		baker := rows.Baker{
			Engine:   in.Engine,
			Spec:     p.Spec,
			Threads:  in.Threads,
			Progress: in.Progress,
		}
		return baker.Stream(ctx, ids, p.Range, write)
	})
}
