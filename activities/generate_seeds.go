package activities

import (
	"bytes"
	"context"
	"errors"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
)

// GenerateSeeds writes the split's seeds file once, validates it, and writes
// the identity blocks its slices read (mlps.IdentityBlock): the one step of a
// split whose work grows with its size. A protocol-4.0 split's names need the
// salt, which this (control) worker does not hold, so its blocks are left to
// the GPU workers (sliceIdentities). A retry that finds the seeds file
// already written uses the stored file, so OS-entropy seeds never change
// after the first attempt that stored them.
func (a *Activities) GenerateSeeds(
	ctx context.Context,
	in bakeapi.GenerateSeedsInput,
) (bakeapi.GenerateSeedsOutput, error) {
	defer keepAlive(ctx)()
	key := keys.Bake(in.BakeID).Seeds(in.Split)
	// Step 1. Already written (it may be a user's file, so it is checked), or written now.
	var sf mlps.SeedFile
	data, err := a.getSeeds(ctx, key, in.NMLPs)
	switch {
	case errors.Is(err, store.ErrNotFound):
		sf, err = a.storeSeeds(ctx, in, key)
	case err != nil:
		err = storeErr(err)
	default:
		sf, err = parseSeeds(key, data, in.NMLPs)
	}
	if err != nil {
		return bakeapi.GenerateSeedsOutput{}, err
	}
	out := bakeapi.GenerateSeedsOutput{SeedsKey: key, SHA256: sf.SHA256, NMLPs: in.NMLPs}
	// Step 2. A restart of a bake that merged the split before needs no slices, so no identities.
	b := keys.Bake(in.BakeID)
	for _, p := range []string{b.Merged(in.Split), b.Dataset()} {
		_, _, done, err := committed(ctx, a.Store, p, seal.Seal{Bake: in.BakeID})
		if damaged(err) {
			return out, lost(err)
		}
		if err != nil || done {
			out.Merged = done
			return out, err
		}
	}
	// Step 3. The protocol-3.0 identity blocks, unless an earlier attempt completed them.
	if in.SeedProtocol == bakeapi.SeedProtocolV4 {
		return out, nil
	}
	if done, err := a.identitiesWritten(ctx, in.BakeID, in.Split, sf.SHA256); err != nil || done {
		return out, err
	}
	ids := mlps.Identities(sf.Seeds, seeds.Salt{})
	return out, a.writeIdentities(ctx, in.BakeID, in.Split, sf, ids, seeds.Salt{}, false)
}

// storeSeeds produces the seeds file's bytes (the user's upload, or a
// generated list), validates them and stores them create-only at key. A
// concurrent attempt may have won; then its file is the file.
func (a *Activities) storeSeeds(
	ctx context.Context,
	in bakeapi.GenerateSeedsInput,
	key string,
) (mlps.SeedFile, error) {
	var none mlps.SeedFile
	var data []byte
	if in.UploadedKey != "" {
		d, err := a.getSeeds(ctx, in.UploadedKey, in.NMLPs)
		if errors.Is(err, store.ErrNotFound) {
			// The starter uploads it before it starts the bake, but nothing
			// here proves that this bake came through the starter.
			return none, fatal(
				bakeapi.ErrInvalidSeeds,
				"split %s: the seeds file %s is not in the bucket: "+
					"`whestbake bake` uploads it before it starts a bake, "+
					"so something deleted it since "+
					"(a lifecycle rule, an emptied or restored bucket, a delete by hand, "+
					"a gc of another whestbake) "+
					"or the bake was started by another client; %s, which uploads it again",
				in.Split,
				uri(a.Store, in.UploadedKey),
				restart(in.BakeID),
			)
		}
		if err != nil {
			return none, storeErr(err)
		}
		data = d
	} else {
		list, err := seeds.GenerateInputSeeds(in.NMLPs, in.Seed)
		if err != nil {
			return none, fatal(bakeapi.ErrInvalidConfig, "split %s: %v", in.Split, err)
		}
		data = mlps.EncodeSeeds(list)
	}
	sf, err := parseSeeds(in.Split+" seeds", data, in.NMLPs)
	if err != nil {
		return none, err
	}
	if err := a.Store.PutCreate(ctx, key, data); err != nil && !errors.Is(err, store.ErrExists) {
		return none, storeErr(err)
	}
	stored, err := a.getSeeds(ctx, key, in.NMLPs)
	if err != nil {
		return none, storeErr(err)
	}
	if !bytes.Equal(stored, data) {
		return parseSeeds(key, stored, in.NMLPs)
	}
	return sf, nil
}

// parseSeeds is mlps.ParseSeeds with a bad file as a permanent error.
func parseSeeds(name string, data []byte, n int) (mlps.SeedFile, error) {
	sf, err := mlps.ParseSeeds(name, data, n)
	if err != nil {
		return sf, fatal(bakeapi.ErrInvalidSeeds, "%v", err)
	}
	return sf, nil
}

// getSeeds reads the seeds file of n seeds at key, no further than
// mlps.MaxSeedsFileBytes(n): a larger object is not a seeds file of n
// seeds, whoever put it in the bucket (ErrInvalidSeeds).
func (a *Activities) getSeeds(ctx context.Context, key string, n int) ([]byte, error) {
	data, err := a.Store.GetMax(ctx, key, mlps.MaxSeedsFileBytes(n))
	if errors.Is(err, store.ErrTooLarge) {
		return nil, fatal(bakeapi.ErrInvalidSeeds, "%v: it is not a seeds file of %d seeds", err, n)
	}
	return data, err
}
