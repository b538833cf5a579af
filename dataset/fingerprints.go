package dataset

import (
	"maps"
	"slices"
)

// hardwareFingerprints collapses the partials' hosts into one entry per
// group of partials that share a signature: device, engine, Go version,
// whestbake version and CPU brand, the fields that name what computed the
// numbers. Fleet noise (host names, kernels, drivers) is aggregated inside
// a group instead of splitting it. Entries come in first-appearance order;
// null values and empty lists are dropped, as whestbench does.
//
// Unlike whestbench, whose mlp_count counts partials, mlp_count here counts
// MLPs and partials_count counts partials.
func hardwareFingerprints(partials []*partial) []any {
	type group struct {
		members []*partial
	}
	var order []string
	groups := map[string]*group{}
	for _, p := range partials {
		hw, _ := p.md.GetObject("hardware")
		sig := compactJSON([]any{
			field(p.md, "device"), field(p.md, "engine"), field(hw, "go_version"),
			field(p.md, "whestbake_version"), field(hw, "cpu_brand"),
		})
		g, ok := groups[sig]
		if !ok {
			g = &group{}
			groups[sig] = g
			order = append(order, sig)
		}
		g.members = append(g.members, p)
	}
	out := make([]any, 0, len(order))
	for _, sig := range order {
		g := groups[sig]
		rep := g.members[0].md
		hw, _ := rep.GetObject("hardware")
		var mlps int64
		var hosts []string
		drivers, kernels := map[string]bool{}, map[string]bool{}
		for _, p := range g.members {
			mlps += p.end - p.start
			phw, _ := p.md.GetObject("hardware")
			if d, ok := p.md.GetString("driver"); ok {
				drivers[d] = true
			}
			if k, ok := phw.GetString("os_release"); ok {
				kernels[k] = true
			}
			if h, ok := phw.GetString("hostname"); ok && len(hosts) < 3 && !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
		fp := NewObject()
		for _, kv := range []struct {
			key string
			val any
		}{
			{"device", field(rep, "device")},
			{"engine", field(rep, "engine")},
			{"cpu_brand", field(hw, "cpu_brand")},
			{"cpu_count_logical", field(hw, "cpu_count_logical")},
			{"ram_total_bytes", field(hw, "ram_total_bytes")},
			{"go_version", field(hw, "go_version")},
			{"os", field(hw, "os")},
			{"whestbake_version", field(rep, "whestbake_version")},
			{"mlp_count", mlps},
			{"partials_count", len(g.members)},
			{"drivers_seen", slices.Sorted(maps.Keys(drivers))},
			{"kernels_seen", slices.Sorted(maps.Keys(kernels))},
			{"representative_hostnames", hosts},
		} {
			v := canonical(kv.val)
			if a, isList := v.([]any); v == nil || (isList && len(a) == 0) {
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
