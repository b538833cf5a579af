package activities

import (
	"context"
	"encoding/json"
	"errors"

	"golang.org/x/sync/errgroup"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/keys"
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

// writeIdentities stores a split's identity blocks, then the marker that they
// are complete. The bytes are a pure function of the seeds file, so a retried
// or concurrent writer puts the same objects.
func (a *Activities) writeIdentities(ctx context.Context, bakeID, split string, sf bake.SeedFile) error {
	b := keys.Bake(bakeID)
	blocks := bake.IdentityBlocks(sf)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(identityWriters)
	for k, blk := range blocks {
		g.Go(func() error {
			data, err := json.Marshal(blk)
			if err != nil {
				return err
			}
			return storeErr(a.Store.Put(gctx, b.IdentityBlock(split, k), data))
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	data, _ := json.Marshal(identitiesDone{SeedsSHA256: sf.SHA256, NMLPs: len(sf.Seeds), Blocks: len(blocks)})
	return storeErr(a.Store.Put(ctx, b.IdentitiesDone(split), data))
}

// identitiesWritten reports whether a split's identity blocks are complete
// for the seeds file of sha256 sum.
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
// derives those MLPs only.
func (a *Activities) sliceIdentities(ctx context.Context, in bakeapi.BakeSliceInput) ([]bake.MLP, error) {
	r := bakeapi.Range{Start: in.Start, End: in.End}
	var blocks []bake.IdentityBlock
	for _, k := range bake.IdentityBlocksOf(r) {
		key := keys.Bake(in.BakeID).IdentityBlock(in.Split, k)
		data, err := a.Store.Get(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			// A split seeded by a release that wrote no identity blocks (a bake
			// that was running across the upgrade): write them now, once.
			if err := a.identitiesFromSeedsFile(ctx, in); err != nil {
				return nil, err
			}
			data, err = a.Store.Get(ctx, key)
		}
		if err != nil {
			return nil, storeErr(err)
		}
		blk, err := bake.ParseIdentityBlock(key, data, k, in.NMLPs, in.SeedsSHA256)
		if err != nil {
			return nil, fatal(bakeapi.ErrInvalidSeeds, "%v: the bake's stored seeds are not the ones it started with; start it under a new --id", err)
		}
		blocks = append(blocks, blk)
	}
	ids, err := bake.RangeIdentities(blocks, r)
	if err != nil {
		return nil, fatal(bakeapi.ErrInvalidSeeds, "slice %d of split %s: %v", in.Slice, in.Split, err)
	}
	return ids, nil
}

// identitiesFromSeedsFile writes the identity blocks of the slice's split from
// its seeds file, checked against the sha256 the workflow recorded.
func (a *Activities) identitiesFromSeedsFile(ctx context.Context, in bakeapi.BakeSliceInput) error {
	data, err := a.Store.Get(ctx, in.SeedsKey)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fatal(bakeapi.ErrInvalidSeeds, "seeds file %s is missing", in.SeedsKey)
		}
		return storeErr(err)
	}
	sf, err := parseSeeds(in.SeedsKey, data, in.NMLPs)
	if err != nil {
		return err
	}
	if sf.SHA256 != in.SeedsSHA256 {
		return fatal(bakeapi.ErrInvalidSeeds, "seeds file %s changed after the bake started (sha256 %s, recorded %s)", in.SeedsKey, sf.SHA256, in.SeedsSHA256)
	}
	return a.writeIdentities(ctx, in.BakeID, in.Split, sf)
}
