package mlps

import (
	"encoding/json"
	"fmt"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/seeds"
)

// IdentityBlockSize is the number of MLPs per identity block, about 40 KB.
// A slice reads the block or two its range touches instead of the whole
// seeds file, and derives streams for its own MLPs only, so its work does not
// grow with the split.
const IdentityBlockSize = 1024

// identityFormat names the layout of IdentityBlock; a change of it needs a new one.
const identityFormat = "whestbake-identities/1"

// IdentityBlock is the MLPs of a split from Start on: each one's input seed
// and whestbench name. Names are stored because their collision suffixes
// are assigned over the whole seed list: computed once, they stay the ones
// Identities gives.
//
// Under protocol 4.0 the names come from name seeds keyed by the salt, which
// only the GPU workers hold in dataset.SaltEnv. Such blocks are written by a
// GPU worker, from the whole seeds file, and record the salt's SHA-256, so a
// block named under no salt or another one is never read as a 4.0 block.
type IdentityBlock struct {
	Format string `json:"format"`
	// SeedsSHA256 ties the block to one seeds file, so a block of another
	// file under the same key is refused rather than baked.
	SeedsSHA256 string `json:"seeds_sha256"`
	// SaltSHA256 is the SHA-256 of the protocol-4.0 salt the names were
	// derived with; empty for protocol 3.0 names.
	SaltSHA256 string   `json:"salt_sha256,omitempty"`
	Start      int      `json:"start"`
	Seeds      []int64  `json:"seeds"`
	Names      []string `json:"names"`
}

// IdentityBlocks cuts a split's seeds into blocks of IdentityBlockSize MLPs,
// named over the whole list as Identities names them: under protocol 3.0
// with a zero salt, under 4.0 with its salt.
func IdentityBlocks(sf SeedFile, salt seeds.Salt) []IdentityBlock {
	return BlocksOf(sf, Identities(sf.Seeds, salt), salt)
}

// BlocksOf cuts ids, the Identities of sf's seeds under salt, into identity
// blocks.
func BlocksOf(sf SeedFile, ids []MLP, salt seeds.Salt) []IdentityBlock {
	var saltSum string
	if !salt.IsZero() {
		saltSum = salt.Digest()
	}
	out := make([]IdentityBlock, 0, IdentityBlockCount(len(ids)))
	for start := 0; start < len(ids); start += IdentityBlockSize {
		end := min(start+IdentityBlockSize, len(ids))
		blk := IdentityBlock{
			Format:      identityFormat,
			SeedsSHA256: sf.SHA256,
			SaltSHA256:  saltSum,
			Start:       start,
			Seeds:       make([]int64, 0, end-start),
			Names:       make([]string, 0, end-start),
		}
		for _, m := range ids[start:end] {
			blk.Seeds = append(blk.Seeds, m.Seed)
			blk.Names = append(blk.Names, m.Name)
		}
		out = append(out, blk)
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

// ExpectedBlock is what a stored identity block must be: block Index of a
// split of NMLPs MLPs of the seeds file whose sha256 is SeedsSHA256, named
// under the salt whose SHA-256 is SaltSHA256, empty under protocol 3.0,
// which has no salt. Key names the block in errors.
type ExpectedBlock struct {
	Key         string
	Index       int
	NMLPs       int
	SeedsSHA256 string
	SaltSHA256  string
}

// ParseIdentityBlock decodes the block want names and checks it with Check.
func ParseIdentityBlock(data []byte, want ExpectedBlock) (IdentityBlock, error) {
	var blk IdentityBlock
	if err := json.Unmarshal(data, &blk); err != nil {
		return blk, fmt.Errorf("identity block %s is not valid JSON (%v)", want.Key, err)
	}
	return blk, blk.Check(want)
}

// Check says whether blk is the block want names.
func (blk IdentityBlock) Check(want ExpectedBlock) error {
	name := want.Key
	n := want.NMLPs
	start, end := want.Index*IdentityBlockSize, min((want.Index+1)*IdentityBlockSize, n)
	switch {
	case blk.Format != identityFormat:
		return fmt.Errorf(
			"identity block %s has format %q, want %q",
			name,
			blk.Format,
			identityFormat,
		)
	case blk.SeedsSHA256 != want.SeedsSHA256:
		return fmt.Errorf("identity block %s belongs to seeds file sha256 %s, this split's is %s",
			name, blk.SeedsSHA256, want.SeedsSHA256)
	case blk.SaltSHA256 != want.SaltSHA256:
		return fmt.Errorf(
			"identity block %s names its MLPs under salt sha256 %q, this bake's is %q",
			name,
			blk.SaltSHA256,
			want.SaltSHA256,
		)
	case blk.Start != start || len(blk.Seeds) != end-start || len(blk.Names) != end-start:
		return fmt.Errorf(
			"identity block %s holds MLPs [%d, %d) with %d names, want [%d, %d) of %d MLPs",
			name,
			blk.Start,
			blk.Start+len(blk.Seeds),
			len(blk.Names),
			start,
			end,
			n,
		)
	}
	return nil
}

// RangeIdentities derives MLPs r from the blocks that hold them, in the
// order IdentityBlocksOf lists them, under protocol 3.0 with a zero salt
// and under 4.0 keyed by salt: the slice's share of Identities. The blocks'
// names must be those of the same salt, as ParseIdentityBlock checks.
func RangeIdentities(blocks []IdentityBlock, r bakeapi.Range, salt seeds.Salt) ([]MLP, error) {
	var saltSum string
	if !salt.IsZero() {
		saltSum = salt.Digest()
	}
	out := make([]MLP, 0, r.Len())
	for _, blk := range blocks {
		if blk.SaltSHA256 != saltSum {
			return nil, fmt.Errorf(
				"identity block of MLP %d names its MLPs under salt sha256 %q, not %q",
				blk.Start,
				blk.SaltSHA256,
				saltSum,
			)
		}
		for j, s := range blk.Seeds {
			i := blk.Start + j
			if i < r.Start || i >= r.End {
				continue
			}
			if i != r.Start+len(out) {
				return nil, fmt.Errorf("identity blocks skip MLP %d", r.Start+len(out))
			}
			out = append(out, MLP{
				Index:   i,
				Seed:    s,
				Name:    blk.Names[j],
				Streams: Streams(s, salt),
			})
		}
	}
	if len(out) != r.Len() {
		return nil, fmt.Errorf("identity blocks hold %d of MLPs [%d, %d)", len(out), r.Start, r.End)
	}
	return out, nil
}
