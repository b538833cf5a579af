// Package metadata is the typed view of a dataset's metadata.json,
// whestbench's metadata of schema 3.0: Info, decoded once from the
// document by Decode, which checks each key's type in one place, the
// constants of whestbench's format and seed protocols, and what follows
// from the splits alone, their HF configs and whether they load. Validation
// of the document against whestbench's rules is dataset's Validate, which
// runs first.
package metadata

import (
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// Info is the typed view of a dataset's metadata: the values whestbake
// interprets, decoded and checked once by Decode. The document it came
// from stays the record of the dataset: merge and combine copy from it, so
// keys Info does not know, and the exact JSON of those it does, reach their
// output unchanged.
type Info struct {
	SeedProtocol SeedProtocol
	// NSamples, Width and Depth are 0 when the metadata leaves them out, as
	// whestbench's validator allows.
	NSamples         int64
	Width, Depth     int
	CreatedAt        string // created_at_utc
	WhestbakeVersion string
	PrettyName       string // the card's title; "" for the default one
	DefaultSplit     string
	// IsPartial marks one slice of a parallel bake, holding MLPs
	// [MLPRange[0], MLPRange[1]) of TotalNMLPs. Python truthiness decides it,
	// as in whestbench.
	IsPartial  bool
	MLPRange   [2]int64
	TotalNMLPs int64
	// MultiSplit is whestbench's multi-split form, a "splits" object, which
	// a dataset keeps even with a single entry.
	MultiSplit bool
	// Provenance is the top level's. Combine moves each input's into its
	// split's entry, so a combined dataset's is in its Splits.
	Provenance
	Splits []SplitInfo // metadata order
}

// SeedProtocol names how the mlp_seed values were derived: one of the
// SeedProtocolV* pairs, and for 4.0 the salt declaration Validate has
// checked.
type SeedProtocol struct {
	Name, Version string
	// SaltSource is SaltSourceMetadata, where Salt holds the salt as hex, or
	// SaltSourceEnv, where the salt is withheld; "" under protocols before 4.0.
	SaltSource string
	SaltDigest string // hex SHA-256 of the salt; may be "" for a published salt
	SaltID     string
	Salt       string
}

// SaltWithheld reports whether the dataset's salt must come from SaltEnv.
func (p SeedProtocol) SaltWithheld() bool { return p.SaltSource == SaltSourceEnv }

// SplitInfo is one split as the metadata describes it: its entry under
// "splits", or the top level of a single-split dataset.
type SplitInfo struct {
	Name string
	// Config is the HF config name as written, "" when the split names none.
	Config string
	NMLPs  int64
	// Seed is protocol 2.0's root seed, nil for the explicit-seed protocols.
	// Python integers have no size limit, so neither has this.
	Seed *big.Int
	Provenance
}

// HFConfig is the HF config the split loads under.
func (s *SplitInfo) HFConfig() string {
	if s.Config == "" {
		return DefaultConfig
	}
	return s.Config
}

// Provenance records what computed a split's rows.
type Provenance struct {
	Backend          string
	Sampler          string
	AlgorithmVersion string
	DotProduct       string
	Engine           string
	Device           string
	Driver           string
	SeedFileSHA256   string
	PartialsCount    int64 // > 0: merged from this many partial bakes
	// Host records stay Objects: whestbench's carry keys whestbake does not
	// know, and nulls, and they are only shown or copied. Hardware is the
	// host of a direct bake, HardwareFingerprints the hosts of a merge; an
	// element is nil where a record was null.
	Hardware             *pyjson.Object
	HardwareFingerprints []*pyjson.Object
}

// Split returns the split named name, or nil.
func (in *Info) Split(name string) *SplitInfo {
	for i := range in.Splits {
		if in.Splits[i].Name == name {
			return &in.Splits[i]
		}
	}
	return nil
}

// Decode decodes the values whestbake interprets from md, which dataset's
// Validate has accepted. A key of the wrong type is a
// *schema.InvalidDatasetError naming it. A null string or host
// record counts as absent, since whestbench writes None for what it does not
// know; a null number is an error, as no count or size can be unknown.
func Decode(md *pyjson.Object) (*Info, error) {
	var d infoDecoder
	in := &Info{
		SeedProtocol:     d.seedProtocol(md),
		NSamples:         d.integer(md, "", "n_samples", 1),
		Width:            int(d.integer(md, "", "width", 1)),
		Depth:            int(d.integer(md, "", "depth", 1)),
		CreatedAt:        d.str(md, "", "created_at_utc"),
		WhestbakeVersion: d.str(md, "", "whestbake_version"),
		PrettyName:       d.str(md, "", "pretty_name"),
		DefaultSplit:     d.str(md, "", "default_split"),
		IsPartial:        md.Truthy("is_partial"),
	}
	if in.IsPartial {
		d.partialRange(md, in)
	}
	if splits, ok := md.GetObject("splits"); ok {
		in.MultiSplit = true
		in.Provenance = d.provenance(md, "")
		for _, name := range splits.Keys() {
			entry, _ := splits.GetObject(name)
			in.Splits = append(in.Splits, d.split(name, entry, fmt.Sprintf("splits[%q].", name)))
		}
	} else {
		name := d.str(md, "", "split")
		if name == "" {
			name = DefaultSplit
		}
		s := d.split(name, md, "")
		in.Provenance = s.Provenance
		in.Splits = []SplitInfo{s}
	}
	if d.err != nil {
		return nil, d.err
	}
	return in, nil
}

// infoDecoder keeps the first error so Decode reads as a list of fields.
type infoDecoder struct{ err error }

func (d *infoDecoder) failf(format string, args ...any) {
	if d.err == nil {
		d.err = schema.Errorf(format, args...)
	}
}

// fail records that path+key holds v where want was needed.
func (d *infoDecoder) fail(path, key string, v any, want string) {
	d.failf("%s%s=%s must be %s", path, key, pyjson.Compact(v), want)
}

func (d *infoDecoder) str(o *pyjson.Object, path, key string) string {
	v, _ := o.Get(key)
	s, ok := v.(string)
	if !ok && v != nil {
		d.fail(path, key, v, "a string")
	}
	return s
}

// integer is o[key] as an integer of at least min, 0 when absent.
func (d *infoDecoder) integer(o *pyjson.Object, path, key string, min int64) int64 {
	v, ok := o.Get(key)
	if !ok {
		return 0
	}
	n, ok := pyjson.AsInt(v)
	if !ok || n < min {
		want := "a positive integer"
		if min == 0 {
			want = "a non-negative integer"
		}
		d.fail(path, key, v, want)
	}
	return n
}

func (d *infoDecoder) object(o *pyjson.Object, path, key string) *pyjson.Object {
	v, _ := o.Get(key)
	obj, ok := v.(*pyjson.Object)
	if !ok && v != nil {
		d.fail(path, key, v, "an object")
	}
	return obj
}

func (d *infoDecoder) split(name string, o *pyjson.Object, path string) SplitInfo {
	s := SplitInfo{
		Name:       name,
		Config:     d.str(o, path, "config"),
		NMLPs:      d.integer(o, path, "n_mlps", 0), // Validate has checked it is present
		Provenance: d.provenance(o, path),
	}
	if v, ok := o.Get("seed"); ok {
		n, ok := v.(json.Number)
		if ok && pyjson.IsIntText(string(n)) {
			s.Seed, ok = new(big.Int).SetString(string(n), 10)
		}
		if !ok {
			d.fail(path, "seed", v, "an integer")
		}
	}
	return s
}

func (d *infoDecoder) provenance(o *pyjson.Object, path string) Provenance {
	p := Provenance{
		Backend:          d.str(o, path, "backend"),
		Sampler:          d.str(o, path, "sampler"),
		AlgorithmVersion: d.str(o, path, "algorithm_version"),
		DotProduct:       d.str(o, path, "dot_product"),
		Engine:           d.str(o, path, "engine"),
		Device:           d.str(o, path, "device"),
		Driver:           d.str(o, path, "driver"),
		SeedFileSHA256:   d.str(o, path, "seed_file_sha256"),
		PartialsCount:    d.integer(o, path, "partials_count", 1),
		Hardware:         d.object(o, path, "hardware"),
	}
	v, _ := o.Get("hardware_fingerprints")
	fps, ok := v.([]any)
	if !ok && v != nil {
		d.fail(path, "hardware_fingerprints", v, "a list of host records")
	}
	for i, fp := range fps {
		host, ok := fp.(*pyjson.Object)
		if !ok && fp != nil {
			d.fail(path, fmt.Sprintf("hardware_fingerprints[%d]", i), fp, "an object")
		}
		p.HardwareFingerprints = append(p.HardwareFingerprints, host)
	}
	return p
}

func (d *infoDecoder) seedProtocol(md *pyjson.Object) SeedProtocol {
	const path = "seed_protocol."
	proto, _ := md.GetObject("seed_protocol")
	p := SeedProtocol{Name: d.str(proto, path, "name"), Version: d.str(proto, path, "version")}
	if p.Name == SeedProtocolV4Name {
		// Validate has checked the declaration; an absent salt_source means
		// the salt is in the metadata, as in whestbench's resolve_salt.
		p.SaltSource = d.str(proto, path, "salt_source")
		if p.SaltSource == "" {
			p.SaltSource = SaltSourceMetadata
		}
		p.SaltDigest = d.str(proto, path, "salt_digest")
		p.SaltID = d.str(proto, path, "salt_id")
		p.Salt = d.str(proto, path, "salt")
	}
	return p
}

// partialRange decodes where a partial sits in its bake.
func (d *infoDecoder) partialRange(md *pyjson.Object, in *Info) {
	raw, _ := md.Get("mlp_range")
	r, _ := raw.([]any)
	ok := len(r) == 2
	if ok {
		start, ok1 := pyjson.AsInt(r[0])
		end, ok2 := pyjson.AsInt(r[1])
		in.MLPRange = [2]int64{start, end}
		ok = ok1 && ok2 && 0 <= start && start < end
	}
	if !ok {
		d.failf("mlp_range=%s is not a [start, end] pair of integers with 0 <= start < end; "+
			"a partial must record the MLPs it holds", pyjson.Compact(raw))
		return
	}
	total, ok := md.GetInt("total_n_mlps")
	if !ok || total < in.MLPRange[1] {
		raw, _ := md.Get("total_n_mlps")
		d.failf("total_n_mlps=%s must be an integer no smaller than mlp_range end %d",
			pyjson.Compact(raw), in.MLPRange[1])
	}
	in.TotalNMLPs = total
}
