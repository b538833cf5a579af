package gpuengine

import (
	"math"
	"slices"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
)

func TestJobForSeedIsTheSeedProtocol(t *testing.T) {
	spec := bakeapi.Spec{Width: 8, Depth: 3}
	got, err := JobForSeed(spec, 42)
	if err != nil {
		t.Fatal(err)
	}
	want := job(t, 42, 8, 3)
	if !slices.Equal(got.Weights, want.Weights) ||
		!slices.Equal(got.Sample.GenerateState32(4), want.Sample.GenerateState32(4)) {
		t.Error("JobForSeed differs from DeriveV3 + Weights")
	}
	for _, bad := range []struct {
		spec bakeapi.Spec
		seed int64
	}{
		{spec, -1},
		{bakeapi.Spec{Width: 0, Depth: 1}, 1},
		{bakeapi.Spec{Width: bakeapi.MaxWidth + 1, Depth: 1}, 1},
		{bakeapi.Spec{Width: 1, Depth: math.MaxInt}, 1},
	} {
		if _, err := JobForSeed(bad.spec, bad.seed); err == nil {
			t.Errorf("%+v seed %d accepted", bad.spec, bad.seed)
		}
	}
}
