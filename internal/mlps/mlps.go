// Package mlps says which MLPs a split holds: their input seeds, read from
// a seeds file or drawn, the salt of seed protocol 4.0, each MLP's streams
// and whestbench name, the identity blocks a slice reads them from, and the
// ranges that pick some of them. The local bake and the activities take
// their MLPs from here.
package mlps

import (
	"github.com/whestbake/whestbake/internal/mlps/naming"
	"github.com/whestbake/whestbake/internal/seeds"
)

// MLP is one slot of the dataset: input seed, derived streams and name.
type MLP struct {
	Index   int
	Seed    int64
	Name    string
	Streams seeds.Streams
}

// Identities derives every seed's streams and names them over the whole
// list, so collision suffixes agree between slices, as whestbench's
// dataset.py does.
func Identities(list []int64, salt seeds.Salt) []MLP {
	out := make([]MLP, len(list))
	nameSeeds := make([]int64, len(list))
	for i, s := range list {
		st := Streams(s, salt)
		out[i] = MLP{Index: i, Seed: s, Streams: st}
		nameSeeds[i] = st.NameSeed
	}
	for i, n := range Names(nameSeeds) {
		out[i].Name = n
	}
	return out
}

// Streams is the one derivation of an MLP's streams from its input seed:
// protocol 3.0's with a zero salt, 4.0's keyed by salt.
func Streams(seed int64, salt seeds.Salt) seeds.Streams {
	if salt.IsZero() {
		return seeds.DeriveV3(uint64(seed))
	}
	return seeds.DeriveV4(uint64(seed), salt)
}

// Names assigns whestbench's unique names from name seeds.
func Names(nameSeeds []int64) []string { return naming.AssignUnique(nameSeeds) }
