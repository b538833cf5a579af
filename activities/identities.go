package activities

import (
	"context"
	"errors"
	"fmt"

	tlog "go.temporal.io/sdk/log"
	"golang.org/x/sync/errgroup"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
)

// identityWriters bounds the parallel uploads of identity blocks: a split of
// a million MLPs has about a thousand of them.
const identityWriters = 8

// identitiesDone is the content of keys.IdentitiesDone.
type identitiesDone struct {
	SeedsSHA256 string    `json:"seeds_sha256"`
	NMLPs       int       `json:"n_mlps"`
	Blocks      int       `json:"blocks"`
	Seal        seal.Seal `json:"seal"`
}

// storedBlock is an identity block in the store, sealed for its key, bake
// and split: a damaged block is written again from the seeds file.
type storedBlock struct {
	mlps.IdentityBlock
	Seal seal.Seal `json:"seal"`
}

// identityBlockKey is where block k of the split's identities named under
// salt lives. Protocol 3.0 blocks, of the zero salt, are written by
// GenerateSeeds, and 4.0 blocks by the GPU workers, which alone hold the
// salt: the two never share a key.
func identityBlockKey(bakeID, split string, salt seeds.Salt, k int) string {
	if salt.IsZero() {
		return keys.Bake(bakeID).IdentityBlock(split, k)
	}
	return keys.Bake(bakeID).SaltedIdentityBlock(split, salt.Digest(), k)
}

// writeIdentities stores a split's identity blocks named under salt, zero
// for protocol 3.0. Protocol 3.0 blocks are followed by the marker that they are
// complete. The bytes are a pure function of the seeds file and the salt, so
// a retried or concurrent writer puts the same objects. createOnly, as
// NameSplit asks, leaves a block already there as it is, so that a retry or a
// restarted bake never replaces a block a slice may be reading; a slice
// checks every block it reads and writes a damaged one again.
func (a *Activities) writeIdentities(
	ctx context.Context,
	bakeID, split string,
	sf mlps.SeedFile,
	ids []mlps.MLP,
	salt seeds.Salt,
	createOnly bool,
) error {
	blocks := mlps.BlocksOf(sf, ids, salt)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(identityWriters)
	for k, blk := range blocks {
		g.Go(func() error {
			key := identityBlockKey(bakeID, split, salt, k)
			sb := storedBlock{IdentityBlock: blk}
			data, err := seal.Marshal(
				&sb,
				&sb.Seal,
				seal.Seal{Key: key, Bake: bakeID, Split: split},
			)
			if err != nil {
				return err
			}
			if createOnly {
				if err := a.Store.PutCreate(gctx, key, data); !errors.Is(err, store.ErrExists) {
					return storeErr(err)
				}
				return nil
			}
			return storeErr(a.Store.Put(gctx, key, data))
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if !salt.IsZero() {
		return nil // a 4.0 slice reads its blocks, or writes them all again
	}
	key := keys.Bake(bakeID).IdentitiesDone(split)
	d := identitiesDone{SeedsSHA256: sf.SHA256, NMLPs: len(sf.Seeds), Blocks: len(blocks)}
	data, err := seal.Marshal(&d, &d.Seal, seal.Seal{Key: key, Bake: bakeID, Split: split})
	if err != nil {
		return err
	}
	return storeErr(a.Store.Put(ctx, key, data))
}

// identitiesWritten reports whether a split's protocol-3.0 identity blocks
// are complete for the seeds file of sha256 sum. A damaged marker says no:
// the blocks are written again. An intact marker of another seeds file
// means the split's seeds file changed after its blocks were written from
// it, which no retry or recomputation can undo.
func (a *Activities) identitiesWritten(
	ctx context.Context,
	bakeID, split, sum string,
) (bool, error) {
	var d identitiesDone
	_, err := a.Store.GetSealed(
		ctx,
		keys.Bake(bakeID).IdentitiesDone(split),
		&d,
		&d.Seal,
		seal.Seal{Bake: bakeID, Split: split},
	)
	if errors.Is(err, store.ErrNotFound) || damaged(err) {
		return false, nil
	}
	if err != nil {
		return false, storeErr(err)
	}
	if d.SeedsSHA256 != sum {
		return false, fatal(
			bakeapi.ErrInvalidSeeds,
			"the seeds file %s changed after the bake stored it: "+
				"it has sha256 %s, its identity blocks were written from sha256 %s; "+
				"a bake's seeds never change: restore the file, or bake again under a new --id",
			keys.Bake(bakeID).Seeds(split),
			sum,
			d.SeedsSHA256,
		)
	}
	return true, nil
}

// sliceIdentities reads the identity blocks that hold the slice's MLPs and
// derives those MLPs only, under protocol 3.0 with a zero salt and under 4.0
// keyed by salt.
//
// A 4.0 split's names come from salted name seeds, and their collision
// suffixes from the whole list, so the control worker, which has no salt,
// cannot write them: NameSplit writes them on a GPU worker before the
// split's first slice. A slice that finds a block missing or damaged
// derives the whole split's identities from the seeds file here and writes
// the blocks again, so that every later slice reads them.
func (a *Activities) sliceIdentities(
	ctx context.Context,
	in bakeapi.BakeSliceInput,
	salt seeds.Salt,
	log tlog.Logger,
	hb *heartbeat,
) ([]mlps.MLP, error) {
	r := bakeapi.Range{Start: in.Start, End: in.End}
	saltSum := ""
	if !salt.IsZero() {
		saltSum = salt.Digest()
	}
	var blocks []mlps.IdentityBlock
	for _, k := range mlps.IdentityBlocksOf(r) {
		key := identityBlockKey(in.BakeID, in.Split, salt, k)
		var sb storedBlock
		_, err := a.Store.GetSealed(
			ctx,
			key,
			&sb,
			&sb.Seal,
			seal.Seal{Bake: in.BakeID, Split: in.Split},
		)
		if err != nil && !errors.Is(err, store.ErrNotFound) && !damaged(err) {
			return nil, storeErr(err)
		}
		if err == nil {
			want := mlps.ExpectedBlock{
				Key:         key,
				Index:       k,
				NMLPs:       in.NMLPs,
				SeedsSHA256: in.SeedsSHA256,
				SaltSHA256:  saltSum,
			}
			if err = sb.Check(want); err == nil {
				blocks = append(blocks, sb.IdentityBlock)
				continue
			}
		}
		// A missing or damaged block: write them all now, from the seeds
		// file whose sha256 the workflow recorded.
		if !errors.Is(err, store.ErrNotFound) {
			if err := a.discard(ctx, log, hb, key, err); err != nil {
				return nil, err
			}
		}
		sf, err := a.recordedSeedsFile(ctx, in.BakeID, in.SeedsKey, in.NMLPs, in.SeedsSHA256)
		if err != nil {
			return nil, err
		}
		ids := mlps.Identities(sf.Seeds, salt)
		if err := a.writeIdentities(ctx, in.BakeID, in.Split, sf, ids, salt, false); err != nil {
			return nil, err
		}
		return ids[r.Start:r.End], nil
	}
	ids, err := mlps.RangeIdentities(blocks, r, salt)
	if err != nil {
		return nil, fatal(
			bakeapi.ErrInvalidSeeds,
			"slice %d of split %s: %v",
			in.Slice,
			in.Split,
			err,
		)
	}
	return ids, nil
}

// NameSplit writes a protocol-4.0 split's identity blocks, named under this
// worker's salt, from its seeds file: the one step of such a split whose
// work grows with it, done once on a GPU worker, as only they hold the salt,
// before its first slice,
// so that every slice reads only the blocks of its own MLPs. A worker
// without the bake's salt fails it as InvalidConfig, which no retry on the
// same worker can cure. Its keys are create-only and its bytes a pure
// function of the seeds file and the salt, so a retry writes only the blocks
// an earlier attempt did not.
func (a *Activities) NameSplit(
	ctx context.Context,
	in bakeapi.NameSplitInput,
) (bakeapi.NameSplitOutput, error) {
	salt, err := a.workerSalt(in.Salt)
	if err != nil {
		return bakeapi.NameSplitOutput{}, err
	}
	// Naming a million MLPs can outlast the GPU queue's heartbeat timeout.
	defer keepAlive(ctx)()
	sf, err := a.recordedSeedsFile(ctx, in.BakeID, in.SeedsKey, in.NMLPs, in.SeedsSHA256)
	if err != nil {
		return bakeapi.NameSplitOutput{}, err
	}
	ids := mlps.Identities(sf.Seeds, salt)
	if err := a.writeIdentities(ctx, in.BakeID, in.Split, sf, ids, salt, true); err != nil {
		return bakeapi.NameSplitOutput{}, err
	}
	blocks := mlps.IdentityBlocksOf(bakeapi.Range{Start: 0, End: in.NMLPs})
	return bakeapi.NameSplitOutput{Blocks: len(blocks)}, nil
}

// recordedSeedsFile reads the seeds file of n MLPs at key of bake bakeID,
// checked against the sha256 the workflow recorded when GenerateSeeds
// stored it: a missing one was stored, and is gone.
func (a *Activities) recordedSeedsFile(
	ctx context.Context,
	bakeID, key string,
	n int,
	sum string,
) (mlps.SeedFile, error) {
	data, err := a.getSeeds(ctx, key, n)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return mlps.SeedFile{}, gone(
				fmt.Sprintf(
					"seeds file %s was stored by GenerateSeeds "+
						"(the workflow recorded its sha256 %s), but it is gone",
					uri(a.Store, key),
					sum,
				),
				restart(bakeID)+", whose GenerateSeeds stores it again",
			)
		}
		return mlps.SeedFile{}, storeErr(err)
	}
	sf, err := parseSeeds(key, data, n)
	if err != nil {
		return mlps.SeedFile{}, err
	}
	if sf.SHA256 != sum {
		return mlps.SeedFile{}, fatal(
			bakeapi.ErrInvalidSeeds,
			"seeds file %s changed after the bake started (sha256 %s, recorded %s)",
			key,
			sf.SHA256,
			sum,
		)
	}
	return sf, nil
}
