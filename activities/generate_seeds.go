package activities

import (
	"context"
	"errors"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
)

// GenerateSeeds writes the split's seeds file once. A retry that finds it
// already written returns the stored file, so OS-entropy seeds never change
// after the first attempt that stored them.
func (a *Activities) GenerateSeeds(ctx context.Context, in bakeapi.GenerateSeedsInput) (bakeapi.GenerateSeedsOutput, error) {
	key := keys.Bake(in.BakeID).Seeds(in.Split)
	// Step 1. Already written: return it (after checking it, it may be a user's file).
	if data, err := a.Store.Get(ctx, key); err == nil {
		return a.seedsOutput(key, data, in.NMLPs)
	} else if !errors.Is(err, store.ErrNotFound) {
		return bakeapi.GenerateSeedsOutput{}, storeErr(err)
	}
	// Step 2. Produce the bytes: the user's upload, or a generated list.
	var data []byte
	if in.UploadedKey != "" {
		d, err := a.Store.Get(ctx, in.UploadedKey)
		if errors.Is(err, store.ErrNotFound) {
			return bakeapi.GenerateSeedsOutput{}, fatal(bakeapi.ErrInvalidSeeds, "split %s: uploaded seeds file %s is missing from the bucket; start the bake again with the starter, which uploads it", in.Split, in.UploadedKey)
		}
		if err != nil {
			return bakeapi.GenerateSeedsOutput{}, storeErr(err)
		}
		data = d
	} else {
		list, err := seeds.GenerateInputSeeds(in.NMLPs, in.Seed)
		if err != nil {
			return bakeapi.GenerateSeedsOutput{}, fatal(bakeapi.ErrInvalidConfig, "split %s: %v", in.Split, err)
		}
		data = bake.EncodeSeeds(list)
	}
	if _, err := bake.ParseSeeds(in.Split+" seeds", data, in.NMLPs); err != nil {
		return bakeapi.GenerateSeedsOutput{}, fatal(bakeapi.ErrInvalidSeeds, "%v", err)
	}
	// Step 3. Create-only: a concurrent attempt may have won; then its file is the file.
	if err := a.Store.PutCreate(ctx, key, data); err != nil && !errors.Is(err, store.ErrExists) {
		return bakeapi.GenerateSeedsOutput{}, storeErr(err)
	}
	stored, err := a.Store.Get(ctx, key)
	if err != nil {
		return bakeapi.GenerateSeedsOutput{}, storeErr(err)
	}
	return a.seedsOutput(key, stored, in.NMLPs)
}

func (a *Activities) seedsOutput(key string, data []byte, n int) (bakeapi.GenerateSeedsOutput, error) {
	sf, err := bake.ParseSeeds(key, data, n)
	if err != nil {
		return bakeapi.GenerateSeedsOutput{}, fatal(bakeapi.ErrInvalidSeeds, "%v", err)
	}
	return bakeapi.GenerateSeedsOutput{SeedsKey: key, SHA256: sf.SHA256, NMLPs: n}, nil
}
