// Package naming derives whestbench's human-readable MLP names ("megan-chang") from
// seeds, bit-for-bit as faker 37.12.0 does for whestbench: a fresh random.Random(|seed|),
// one weighted first-name pick, one weighted last-name pick, each slugified.
package naming

import "strconv"

// Name returns the slug whestbench's generate_mlp_name gives seed; negative seeds name
// like their absolute value because Python's random.seed takes abs of an int.
func Name(seed int64) string {
	abs := uint64(seed)
	if seed < 0 {
		abs = -abs // two's complement, so MinInt64 maps to 2^63 as Python does
	}
	var m mt19937
	m.seedPython(abs)
	l := lists()
	first := l.first.pick(&m)
	last := l.last.pick(&m)
	return slugify(first) + "-" + slugify(last)
}

// AssignUnique names every seed in order; the k-th repeat of a base name (k >= 2) becomes
// "base-k". Pass the whole dataset's seed list, not a slice of it, so every worker
// assigns the same suffixes.
func AssignUnique(seeds []int64) []string {
	seen := make(map[string]int, len(seeds))
	out := make([]string, len(seeds))
	for i, s := range seeds {
		base := Name(s)
		seen[base]++
		if k := seen[base]; k > 1 {
			out[i] = base + "-" + strconv.Itoa(k)
		} else {
			out[i] = base
		}
	}
	return out
}
