package gpuengine_test

import (
	"context"
	"fmt"
	"log"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
)

// Bake one MLP on the CPU twin of the philox sampler. Its bits do not depend
// on the machine, the thread count or the engine (the CUDA engine gives the
// same), so the output can be compared exactly.
func Example() {
	spec := bakeapi.Spec{
		Width:    4,
		Depth:    2,
		NSamples: 4096,
		Sampler:  bakeapi.SamplerPhilox,
	}
	job, err := gpuengine.JobForSeed(spec, 1001)
	if err != nil {
		log.Fatal(err)
	}
	res, err := gpuengine.CPU{}.BakeMLP(context.Background(), spec, job, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(spec.Algorithm())
	fmt.Println("avg_variance", res.AvgVariance)
	fmt.Println("final means", res.FinalMeans(spec.Width))
	// Output:
	// philox4x32-10-boxmuller-tile32-fix64/1
	// avg_variance 0.7977412109795613
	// final means [0.38810644 9.341316e-05 0.0076163127 1.2616245]
}

// The numpy sampler is whestbench's CPU backend bit for bit: seed 1001 with
// 100 samples is the first row of whestbench's single_split_v3_protocol
// fixture: the same bits as the float64 whestbench stored.
func Example_numpy() {
	spec := bakeapi.Spec{
		Width:    4,
		Depth:    2,
		NSamples: 100,
		Sampler:  bakeapi.SamplerNumpy,
		Dot:      bakeapi.DotFMA,
	}
	job, err := gpuengine.JobForSeed(spec, 1001)
	if err != nil {
		log.Fatal(err)
	}
	res, err := gpuengine.CPU{}.BakeMLP(context.Background(), spec, job, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("avg_variance", res.AvgVariance)
	fmt.Println("final means", res.FinalMeans(spec.Width))
	// Output:
	// avg_variance 1.074743449815292
	// final means [0.35644302 0.00011175524 0.005849282 1.1584041]
}
