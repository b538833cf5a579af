package dataset

import (
	"maps"
	"slices"

	"github.com/whestbake/whestbake/dataset/internal/pyjson"
)

// fingerprints collapses the partials' hosts into one entry per group of
// partials that share a signature: device, engine, Go version, whestbake
// version and CPU brand, the fields that name what computed the numbers,
// and for whestbench's partials those its _collapse_hardware_fingerprints
// in dataset_io.py groups by: GPU, torch, Python, numpy, whestbench and
// flopscope versions and the torch determinism flags of bake_config, which
// an entry also carries as whestbench's does. A field a partial lacks
// drops out, so whestbake's partials group by whestbake's fields alone.
// Fleet noise, such as host names, kernels and drivers, is aggregated inside a group
// instead of splitting it. Partials are added one at a time and only the
// groups are kept, so a merge of any number of partials holds as many
// entries as the fleet had kinds of hosts. Entries come in first-appearance
// order; null values, empty lists and an empty bake_config are dropped, as
// whestbench does.
//
// Unlike whestbench, whose mlp_count counts partials, mlp_count here counts
// MLPs and partials_count counts partials.
type fingerprints struct {
	order  []string
	groups map[string]*fingerprintGroup
}

// fingerprintGroup is what one group's entry needs: its first partial's
// metadata and the aggregated noise of the rest.
type fingerprintGroup struct {
	rep              Metadata
	mlps             int64
	partials         int
	drivers, kernels map[string]bool
	hosts            []string // the first three distinct host names
}

func (f *fingerprints) add(p *partial) {
	hw, _ := p.md.GetObject("hardware")
	sig := pyjson.Compact([]any{
		field(p.md, "device"), field(p.md, "engine"), field(hw, "go_version"),
		field(p.md, "whestbake_version"), field(hw, "cpu_brand"),
		field(p.md, "cuda_device_name"), field(p.md, "cuda_device_capability"),
		field(p.md, "torch_version"), field(hw, "python_version"), field(hw, "numpy_version"),
		field(p.md, "whestbench_version"), field(p.md, "flopscope_version"),
		field(p.md, "bake_config"),
	})
	g, ok := f.groups[sig]
	if !ok {
		if f.groups == nil {
			f.groups = map[string]*fingerprintGroup{}
		}
		g = &fingerprintGroup{rep: p.md, drivers: map[string]bool{}, kernels: map[string]bool{}}
		f.groups[sig] = g
		f.order = append(f.order, sig)
	}
	g.mlps += p.end - p.start
	g.partials++
	for _, key := range []string{"driver", "cuda_driver_version"} {
		if d, ok := p.md.GetString(key); ok {
			g.drivers[d] = true
		}
	}
	if k, ok := hw.GetString("os_release"); ok {
		g.kernels[k] = true
	}
	if h, ok := hw.GetString("hostname"); ok && len(g.hosts) < 3 && !slices.Contains(g.hosts, h) {
		g.hosts = append(g.hosts, h)
	}
}

// list is the hardware_fingerprints value.
func (f *fingerprints) list() []any {
	out := make([]any, 0, len(f.order))
	for _, sig := range f.order {
		g := f.groups[sig]
		hw, _ := g.rep.GetObject("hardware")
		fp := NewObject()
		for _, kv := range []struct {
			key string
			val any
		}{
			{"cuda_device_name", field(g.rep, "cuda_device_name")},
			{"cuda_device_capability", field(g.rep, "cuda_device_capability")},
			{"torch_version", field(g.rep, "torch_version")},
			{"device", field(g.rep, "device")},
			{"engine", field(g.rep, "engine")},
			{"cpu_brand", field(hw, "cpu_brand")},
			{"cpu_count_logical", field(hw, "cpu_count_logical")},
			{"ram_total_bytes", field(hw, "ram_total_bytes")},
			{"python_version", field(hw, "python_version")},
			{"numpy_version", field(hw, "numpy_version")},
			{"go_version", field(hw, "go_version")},
			{"os", field(hw, "os")},
			{"whestbench_version", field(g.rep, "whestbench_version")},
			{"flopscope_version", field(g.rep, "flopscope_version")},
			{"whestbake_version", field(g.rep, "whestbake_version")},
			{"bake_config", field(g.rep, "bake_config")},
			{"mlp_count", g.mlps},
			{"partials_count", g.partials},
			{"drivers_seen", slices.Sorted(maps.Keys(g.drivers))},
			{"kernels_seen", slices.Sorted(maps.Keys(g.kernels))},
			{"representative_hostnames", g.hosts},
		} {
			v := pyjson.Canonical(kv.val)
			a, isList := v.([]any)
			o, isObject := v.(*Object)
			if v == nil || (isList && len(a) == 0) || (isObject && o.Len() == 0) {
				continue
			}
			fp.Set(kv.key, v)
		}
		out = append(out, fp)
	}
	return out
}

// field is o[key], or nil when o or the key is missing.
func field(o *Object, key string) any {
	v, _ := o.Get(key)
	return v
}
