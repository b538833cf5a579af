package dataset_test

import (
	"errors"
	"fmt"
	"io"
	"log"

	"github.com/whestbake/whestbake/dataset"
)

// Read a whole dataset directory: metadata.json is validated, each split's
// parquet shards are found and every row is checked against the metadata.
func ExampleReadDir() {
	d, err := dataset.ReadDir("../testdata/whestbench-fixtures/single_split_v3_protocol", false)
	if err != nil {
		log.Fatal(err)
	}
	nSamples, _ := d.Meta.GetInt("n_samples")
	fmt.Println("n_samples", nSamples)
	for _, s := range d.Splits {
		first := s.Rows[0]
		fmt.Printf("%s: %d MLPs, width %d, depth %d\n", s.Name, len(s.Rows), s.Width, s.Depth)
		fmt.Printf("first: %s (seed %d), avg_variance %.6f\n",
			first.Name, first.Seed, first.AvgVariance)
	}
	// Output:
	// n_samples 100
	// public: 4 MLPs, width 4, depth 2
	// first: emily-hart (seed 1001), avg_variance 1.074743
}

// Stream one parquet file a row at a time, which keeps memory flat however
// large the file is.
func ExampleOpenParquet() {
	r, err := dataset.OpenParquet("../testdata/whestbench-fixtures/single_split_v3_protocol/" +
		"data/public-00000-of-00001.parquet")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Printf("%d rows of width %d, depth %d\n", r.NumRows(), r.Width(), r.Depth())
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d %s final means %.4f\n", row.MLPID, row.Name, row.FinalMeans)
	}
	// Output:
	// 4 rows of width 4, depth 2
	// 0 emily-hart final means [0.3564 0.0001 0.0058 1.1584]
	// 1 elizabeth-rice final means [0.0004 0.2968 0.2402 0.0000]
	// 2 mary-rivera final means [0.5498 0.3728 0.1319 0.4500]
	// 3 ann-andrews final means [0.0241 0.4439 0.2878 0.9222]
}
