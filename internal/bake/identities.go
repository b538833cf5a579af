package bake

import (
	"encoding/json"
	"fmt"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/seeds"
)

// IdentityBlockSize is the number of MLPs per identity block. A slice reads
// the block or two its range touches (about 40 KB each) instead of the whole
// seeds file, and derives streams for its own MLPs only, so its work does not
// grow with the split.
const IdentityBlockSize = 1024

// identityFormat names the layout of IdentityBlock; a change of it needs a new one.
const identityFormat = "whestbake-identities/1"

// IdentityBlock is MLPs [Start, Start+len(Seeds)) of a split: each one's input
// seed and whestbench name. Names are stored because their collision suffixes
// are assigned over the whole seed list: computed once, at seeding, they stay
// the ones Identities gives.
type IdentityBlock struct {
	Format string `json:"format"`
	// SeedsSHA256 ties the block to one seeds file, so a block of another
	// file under the same key is refused rather than baked.
	SeedsSHA256 string   `json:"seeds_sha256"`
	Start       int      `json:"start"`
	Seeds       []int64  `json:"seeds"`
	Names       []string `json:"names"`
}

// IdentityBlocks cuts a split's seeds into blocks of IdentityBlockSize MLPs,
// named over the whole list.
func IdentityBlocks(sf SeedFile) []IdentityBlock {
	est := make([]int64, len(sf.Seeds))
	for i, s := range sf.Seeds {
		est[i] = int64(seeds.DeriveV3(uint64(s)).EstimatorSeed)
	}
	names := Names(est)
	out := make([]IdentityBlock, 0, IdentityBlockCount(len(sf.Seeds)))
	for start := 0; start < len(sf.Seeds); start += IdentityBlockSize {
		end := min(start+IdentityBlockSize, len(sf.Seeds))
		out = append(out, IdentityBlock{Format: identityFormat, SeedsSHA256: sf.SHA256, Start: start,
			Seeds: sf.Seeds[start:end], Names: names[start:end]})
	}
	return out
}

// IdentityBlockCount is the number of blocks of a split of n MLPs.
func IdentityBlockCount(n int) int { return (n + IdentityBlockSize - 1) / IdentityBlockSize }

// IdentityBlocksOf lists the blocks that hold MLPs r.
func IdentityBlocksOf(r bakeapi.Range) []int {
	var out []int
	for b := r.Start / IdentityBlockSize; b*IdentityBlockSize < r.End; b++ {
		out = append(out, b)
	}
	return out
}

// ParseIdentityBlock decodes block b of a split of n MLPs and checks that it
// is that block of the seeds file whose sha256 is seedsSHA256.
func ParseIdentityBlock(name string, data []byte, b, n int, seedsSHA256 string) (IdentityBlock, error) {
	var blk IdentityBlock
	if err := json.Unmarshal(data, &blk); err != nil {
		return blk, fmt.Errorf("identity block %s is not valid JSON (%v)", name, err)
	}
	start, end := b*IdentityBlockSize, min((b+1)*IdentityBlockSize, n)
	switch {
	case blk.Format != identityFormat:
		return blk, fmt.Errorf("identity block %s has format %q, want %q", name, blk.Format, identityFormat)
	case blk.SeedsSHA256 != seedsSHA256:
		return blk, fmt.Errorf("identity block %s belongs to seeds file sha256 %s, this split's is %s", name, blk.SeedsSHA256, seedsSHA256)
	case blk.Start != start || len(blk.Seeds) != end-start || len(blk.Names) != end-start:
		return blk, fmt.Errorf("identity block %s holds MLPs [%d, %d) with %d names, want [%d, %d) of %d MLPs",
			name, blk.Start, blk.Start+len(blk.Seeds), len(blk.Names), start, end, n)
	}
	return blk, nil
}

// RangeIdentities derives MLPs r from the blocks that hold them (in block
// order, as IdentityBlocksOf lists them): the slice's share of Identities.
func RangeIdentities(blocks []IdentityBlock, r bakeapi.Range) ([]MLP, error) {
	out := make([]MLP, 0, r.Len())
	for _, blk := range blocks {
		for j, s := range blk.Seeds {
			i := blk.Start + j
			if i < r.Start || i >= r.End {
				continue
			}
			if i != r.Start+len(out) {
				return nil, fmt.Errorf("identity blocks skip MLP %d", r.Start+len(out))
			}
			out = append(out, MLP{Index: i, Seed: s, Name: blk.Names[j], Streams: seeds.DeriveV3(uint64(s))})
		}
	}
	if len(out) != r.Len() {
		return nil, fmt.Errorf("identity blocks hold %d of MLPs [%d, %d)", len(out), r.Start, r.End)
	}
	return out, nil
}
