package activities

import (
	"context"
	"encoding/json"
	"errors"

	"golang.org/x/sync/errgroup"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
)

// identityWriters bounds the parallel uploads of identity blocks: a split of
// a million MLPs has about a thousand of them.
const identityWriters = 8

// identitiesDone is the content of keys.IdentitiesDone.
type identitiesDone struct {
	SeedsSHA256 string `json:"seeds_sha256"`
	NMLPs       int    `json:"n_mlps"`
	Blocks      int    `json:"blocks"`
}

// identityBlockKey is where block k of the split's identities named under
// salt lives: protocol 3.0 blocks (zero salt, written by GenerateSeeds) and
// 4.0 blocks (written by the GPU workers, which alone hold the salt) never
// share a key.
func identityBlockKey(bakeID, split string, salt seeds.Salt, k int) string {
	if salt.IsZero() {
		return keys.Bake(bakeID).IdentityBlock(split, k)
	}
	return keys.Bake(bakeID).SaltedIdentityBlock(split, salt.Digest(), k)
}

// writeIdentities stores a split's identity blocks named under salt (zero:
// protocol 3.0). Protocol 3.0 blocks are followed by the marker that they are
// complete. The bytes are a pure function of the seeds file and the salt, so
// a retried or concurrent writer puts the same objects.
func (a *Activities) writeIdentities(ctx context.Context, bakeID, split string, sf bake.SeedFile, ids []bake.MLP, salt seeds.Salt) error {
	blocks := bake.BlocksOf(sf, ids, salt)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(identityWriters)
	for k, blk := range blocks {
		g.Go(func() error {
			data, err := json.Marshal(blk)
			if err != nil {
				return err
			}
			return storeErr(a.Store.Put(gctx, identityBlockKey(bakeID, split, salt, k), data))
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if !salt.IsZero() {
		return nil // a 4.0 slice reads its blocks, or writes them all again
	}
	data, _ := json.Marshal(identitiesDone{SeedsSHA256: sf.SHA256, NMLPs: len(sf.Seeds), Blocks: len(blocks)})
	return storeErr(a.Store.Put(ctx, keys.Bake(bakeID).IdentitiesDone(split), data))
}

// identitiesWritten reports whether a split's protocol-3.0 identity blocks
// are complete for the seeds file of sha256 sum.
func (a *Activities) identitiesWritten(ctx context.Context, bakeID, split, sum string) (bool, error) {
	data, err := a.Store.Get(ctx, keys.Bake(bakeID).IdentitiesDone(split))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, storeErr(err)
	}
	var d identitiesDone
	return json.Unmarshal(data, &d) == nil && d.SeedsSHA256 == sum, nil
}

// sliceIdentities reads the identity blocks that hold the slice's MLPs and
// derives those MLPs only, under protocol 3.0 with a zero salt and under 4.0
// keyed by salt.
//
// A 4.0 split's names come from salted name seeds, and their collision
// suffixes from the whole list, so the control worker (which has no salt)
// cannot write them: the first slices of such a split find no salted blocks,
// derive the whole split's identities from the seeds file here (the one O(split)
// step of a 4.0 split, done by the first wave of slices) and write the blocks
// every later slice reads.
func (a *Activities) sliceIdentities(ctx context.Context, in bakeapi.BakeSliceInput, salt seeds.Salt) ([]bake.MLP, error) {
	r := bakeapi.Range{Start: in.Start, End: in.End}
	saltSum := ""
	if !salt.IsZero() {
		saltSum = salt.Digest()
	}
	var blocks []bake.IdentityBlock
	for _, k := range bake.IdentityBlocksOf(r) {
		key := identityBlockKey(in.BakeID, in.Split, salt, k)
		data, err := a.Store.Get(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			// A 4.0 split not yet named under its salt, or a 3.0 split seeded by
			// a release that wrote no identity blocks (a bake that was running
			// across the upgrade): write them now, once.
			ids, err := a.identitiesFromSeedsFile(ctx, in, salt)
			if err != nil {
				return nil, err
			}
			return ids[r.Start:r.End], nil
		}
		if err != nil {
			return nil, storeErr(err)
		}
		blk, err := bake.ParseIdentityBlock(key, data, k, in.NMLPs, in.SeedsSHA256, saltSum)
		if err != nil {
			return nil, fatal(bakeapi.ErrInvalidSeeds, "%v: the bake's stored seeds are not the ones it started with; start it under a new --id", err)
		}
		blocks = append(blocks, blk)
	}
	ids, err := bake.RangeIdentities(blocks, r, salt)
	if err != nil {
		return nil, fatal(bakeapi.ErrInvalidSeeds, "slice %d of split %s: %v", in.Slice, in.Split, err)
	}
	return ids, nil
}

// identitiesFromSeedsFile derives the identities of the slice's whole split
// under salt from its seeds file, checked against the sha256 the workflow
// recorded, and writes them as identity blocks.
func (a *Activities) identitiesFromSeedsFile(ctx context.Context, in bakeapi.BakeSliceInput, salt seeds.Salt) ([]bake.MLP, error) {
	data, err := a.getSeeds(ctx, in.SeedsKey, in.NMLPs)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, fatal(bakeapi.ErrInvalidSeeds, "seeds file %s is missing", in.SeedsKey)
		}
		return nil, storeErr(err)
	}
	sf, err := parseSeeds(in.SeedsKey, data, in.NMLPs)
	if err != nil {
		return nil, err
	}
	if sf.SHA256 != in.SeedsSHA256 {
		return nil, fatal(bakeapi.ErrInvalidSeeds, "seeds file %s changed after the bake started (sha256 %s, recorded %s)", in.SeedsKey, sf.SHA256, in.SeedsSHA256)
	}
	ids := bake.Identities(sf.Seeds, salt)
	return ids, a.writeIdentities(ctx, in.BakeID, in.Split, sf, ids, salt)
}
