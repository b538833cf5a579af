// Command scale measures the peak memory, RSS, and wall time of every local
// dataset verb and every bake activity on a dataset of gigabytes, to show
// that memory does not grow with the dataset: issue 8 asks for below 256 MiB
// plus one row. It prints a Markdown table for docs/benchmarks.md.
//
// The verbs run as child processes of bin/whestbake under /usr/bin/time,
// which reports their peak RSS. The activities run in this
// process, one after another as in a long-lived worker, against a private
// MinIO on free loopback ports: before each one the heap is returned to the
// OS and the kernel's high-water mark is reset through /proc/self/clear_refs, so
// each row is that activity's peak, the process's baseline included.
//
// Disk: datasets live under -dir, by default the system's temp directory, and
// are deleted as soon as the next step no longer needs them; a merge or a
// combine needs its input and its output at once, and the activities their
// scratch copies beside MinIO's objects, so about four times the dataset
// size must be free.
//
// Usage, from the repository root once `make build tools` has run:
//
//	go run ./internal/bench/scale              # 1000 MLPs × 256×8 (≈ 2 GiB)
//	go run ./internal/bench/scale -mlps 100    # a quick look
//	go run ./internal/bench/scale -mlps 16 -width 1024 -depth 16 -slice-size 4
//	                                           # rows of 64 MiB (≈ 1 GiB)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bytesize"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/hostinfo"
	"github.com/whestbake/whestbake/internal/shards"
	"github.com/whestbake/whestbake/internal/store"
)

type config struct {
	whestbake, binDir, dir   string
	mlps, width, depth       int
	nSamples                 int64
	sliceSize, threads, kVer int
	s3Only, serial           bool
}

// row is one line of the table.
type row struct {
	step, how string
	peak      int64 // bytes
	wall      time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.whestbake, "whestbake", "bin/whestbake",
		"the whestbake binary whose verbs are measured")
	flag.StringVar(&c.binDir, "bin-dir", "bin", "directory holding the minio binary (`make tools`)")
	flag.StringVar(&c.dir, "dir", os.TempDir(),
		"where the datasets and MinIO's data go (deleted at the end)")
	flag.IntVar(&c.mlps, "mlps", 1000, "MLPs in the dataset")
	flag.IntVar(&c.width, "width", 256, "MLP width")
	flag.IntVar(&c.depth, "depth", 8, "MLP depth")
	flag.Int64Var(&c.nSamples, "n-samples", 64,
		"samples per MLP (small: this measures data handling, not sampling)")
	flag.IntVar(&c.sliceSize, "slice-size", 250, "MLPs per BakeSlice activity")
	flag.IntVar(&c.threads, "threads", runtime.NumCPU(), "CPU threads")
	flag.IntVar(&c.kVer, "k", 3, "MLPs dataset verify recomputes")
	flag.BoolVar(&c.s3Only, "s3-only", false,
		"measure only the activities against MinIO (and the release's download)")
	flag.BoolVar(&c.serial, "serial", false,
		"merge after the slices, alone (its own peak and speed), not beside them as a bake does")
	flag.Parse()
	log.SetFlags(0)
	if err := run(c); err != nil {
		log.Fatal(err)
	}
}

func run(c config) error {
	spec := bakeapi.Spec{
		Width:    c.width,
		Depth:    c.depth,
		NSamples: c.nSamples,
		Sampler:  bakeapi.SamplerPhilox,
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	size := int64(c.mlps) * dataset.RowBytes(spec)
	if err := checkDisk(c.dir, 4*size); err != nil {
		return err
	}
	work, err := os.MkdirTemp(c.dir, "whestbake-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	wb, err := filepath.Abs(c.whestbake)
	if err != nil {
		return err
	}
	log.Printf("%d MLPs of %d×%d, n_samples %d: about %s of parquet in %s",
		c.mlps, c.width, c.depth, c.nSamples, bytesize.Format(size), work)
	var rows []row
	if !c.s3Only {
		if rows, err = localVerbs(c, wb, work); err != nil {
			return err
		}
	}
	s3rows, err := s3Steps(c, spec, wb, work)
	if err != nil {
		return err
	}
	rows = append(rows, s3rows...)

	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	rowBytes := dataset.RowBytes(spec)
	fmt.Printf("\n%d MLPs × W=%d D=%d, n_samples %d, %d threads: %.0f MiB of parquet; "+
		"one row is %.1f MiB, so the goal is below %.1f MiB.\n\n",
		c.mlps, c.width, c.depth, c.nSamples, c.threads, mib(size),
		mib(rowBytes), mib(256<<20+rowBytes))
	fmt.Println("| step | measured as | peak RSS | wall time |")
	fmt.Println("|---|---|---:|---:|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %.0f MiB | %.1f s |\n",
			r.step, r.how, mib(r.peak), r.wall.Seconds())
	}
	return nil
}

// localVerbs measures the dataset verbs, keeping as few datasets on disk at
// once as each step allows.
func localVerbs(c config, wb, work string) ([]row, error) {
	var rows []row
	n := strconv.Itoa(c.mlps)
	shape := []string{
		"--width", strconv.Itoa(c.width),
		"--depth", strconv.Itoa(c.depth),
		"--n-samples", strconv.FormatInt(c.nSamples, 10),
		"--threads", strconv.Itoa(c.threads),
	}
	seeds := filepath.Join(work, "seeds.json")
	_, err := verb(wb, "dataset", "generate-seeds", "--n-mlps", n, "--seed", "1", "--output", seeds)
	if err != nil {
		return nil, err
	}
	step := func(name string, args ...string) error {
		r, err := verb(wb, args...)
		if err != nil {
			return err
		}
		r.step = name
		r.how = "child process"
		rows = append(rows, r)
		log.Printf("%s: %s peak, %.1f s", name, bytesize.Format(r.peak), r.wall.Seconds())
		return nil
	}
	bakeArgs := func(out string, extra ...string) []string {
		args := []string{"dataset", "bake", "--n-mlps", n, "--mlp-seeds", seeds, "--output", out}
		args = append(args, shape...)
		return append(args, extra...)
	}
	full := filepath.Join(work, "full")
	for _, s := range []struct {
		name string
		args []string
	}{
		{"`dataset bake` (" + n + " MLPs)", bakeArgs(full)},
		{"`dataset inspect`", []string{"dataset", "inspect", full}},
		{"`dataset verify --k " + strconv.Itoa(c.kVer) + "`",
			[]string{"dataset", "verify", full, "--k", strconv.Itoa(c.kVer)}},
	} {
		if err := step(s.name, s.args...); err != nil {
			return nil, err
		}
	}
	os.RemoveAll(full)

	half := filepath.Join(work, "half0")
	err = step("`dataset bake --slice 0/2` (a partial)", bakeArgs(half, "--slice", "0/2")...)
	if err != nil {
		return nil, err
	}
	if _, err := verb(wb, bakeArgs(filepath.Join(work, "half1"), "--slice", "1/2")...); err != nil {
		return nil, err
	}
	merged := filepath.Join(work, "merged")
	err = step("`dataset merge` (2 partials)",
		"dataset", "merge", half, filepath.Join(work, "half1"), "--output", merged)
	if err != nil {
		return nil, err
	}
	os.RemoveAll(half)
	os.RemoveAll(filepath.Join(work, "half1"))

	hold := filepath.Join(work, "holdout")
	holdArgs := append([]string{"dataset", "bake",
		"--n-mlps", "4",
		"--seed", "2",
		"--split", "holdout",
		"--config", "holdout",
		"--output", hold,
	}, shape...)
	if _, err := verb(wb, holdArgs...); err != nil {
		return nil, err
	}
	combined := filepath.Join(work, "combined")
	err = step("`dataset combine-splits` (+ a 4-MLP split)",
		"dataset", "combine-splits", merged, hold, "--output", combined)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{merged, hold, combined, seeds} {
		os.RemoveAll(d)
	}
	return rows, nil
}

// verb runs whestbake with args and returns its peak RSS and wall time.
func verb(wb string, args ...string) (row, error) {
	return child(exec.Command(wb, args...))
}

// child runs cmd under /usr/bin/time, which reports the peak RSS of the
// command alone. The kernel's own figure for a direct child would not do:
// Go starts children with vfork, and exec folds the peak RSS of the address
// space it replaces, this process's, into the child's.
func child(cmd *exec.Cmd) (row, error) {
	cmd.Args = append([]string{"/usr/bin/time", "-f", "%M"}, cmd.Args...)
	cmd.Path = "/usr/bin/time"
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "WHESTBAKE_NO_PROGRESS=1")
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return row{}, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	wall := time.Since(t0)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	kb, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		return row{}, fmt.Errorf("%s: reading the peak RSS /usr/bin/time printed: %v",
			strings.Join(cmd.Args, " "), err)
	}
	return row{peak: kb << 10, wall: wall}, nil
}

// s3Steps runs every activity of a one-split bake in this process against a
// private MinIO, then `dataset download` of the release as a child process.
func s3Steps(c config, spec bakeapi.Spec, wb, work string) ([]row, error) {
	ctx := context.Background()
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	o := devstack.Options{
		Dir:              filepath.Join(work, "stack"),
		BinDir:           c.binDir,
		TemporalPort:     ports[0],
		UIPort:           ports[1],
		MinIOPort:        ports[2],
		MinIOConsolePort: ports[3],
		AccessKey:        devstack.DevAccessKey,
		SecretKey:        devstack.DevSecretKey,
		Buckets:          []string{devstack.ArtifactsBucket, devstack.ReleasesBucket},
	}
	if _, err := devstack.Start(ctx, o, devstack.MinIO); err != nil {
		return nil, err
	}
	defer func() {
		if err := devstack.Stop(o, devstack.MinIO); err != nil {
			log.Print(err)
		}
	}()
	st, err := store.Open(ctx, o.S3Config(), devstack.ArtifactsBucket)
	if err != nil {
		return nil, err
	}
	scratch := filepath.Join(work, "scratch")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		return nil, err
	}
	a := &activities.Activities{
		Store:   st,
		Engine:  gpuengine.CPU{},
		Threads: c.threads,
		TempDir: scratch,
	}
	var rows []row
	measure := func(name string, method, in, out any) error {
		r, err := inProcess(a, method, in, out)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		r.step = name
		r.how = "in process"
		rows = append(rows, r)
		log.Printf("%s: %s peak, %.1f s", name, bytesize.Format(r.peak), r.wall.Seconds())
		return nil
	}
	const bakeID, split = "scale", "public"
	root := uint64(1)
	var sd bakeapi.GenerateSeedsOutput
	seedsIn := bakeapi.GenerateSeedsInput{
		BakeID: bakeID,
		Split:  split,
		NMLPs:  c.mlps,
		Seed:   &root,
	}
	if err := measure("GenerateSeeds", a.GenerateSeeds, seedsIn, &sd); err != nil {
		return nil, err
	}
	// The merge follows the slices as a bake runs it, BakeWorkflow starting
	// it beside the split, so that its share of the release tail is what
	// is left when the last slice lands; with -serial it runs after them,
	// alone, for its own peak and speed.
	nSlices := (c.mlps + c.sliceSize - 1) / c.sliceSize
	mergeIn := bakeapi.MergeSplitInput{BakeID: bakeID, Split: split, NMLPs: c.mlps, NSlices: nSlices}
	var merged bakeapi.MergeSplitOutput
	mergeDone := make(chan error, 1)
	var mergeEnd time.Time
	follow := func() {
		var ts testsuite.WorkflowTestSuite
		ts.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		env := ts.NewTestActivityEnvironment()
		env.RegisterActivity(a)
		v, err := env.ExecuteActivity(a.MergeSplit, mergeIn)
		mergeEnd = time.Now()
		if err == nil {
			err = v.Get(&merged)
		}
		mergeDone <- err
	}
	if !c.serial {
		go follow()
	}
	var worst row
	for k := range nSlices {
		start := k * c.sliceSize
		in := bakeapi.BakeSliceInput{
			BakeID:      bakeID,
			Split:       split,
			Config:      "default",
			Slice:       k,
			Start:       start,
			End:         min(c.mlps, start+c.sliceSize),
			NMLPs:       c.mlps,
			SeedsKey:    sd.SeedsKey,
			SeedsSHA256: sd.SHA256,
			Spec:        spec,
		}
		var out bakeapi.BakeSliceOutput
		r, err := inProcess(a, a.BakeSlice, in, &out)
		if err != nil {
			return nil, fmt.Errorf("BakeSlice %d: %w", k, err)
		}
		if r.peak > worst.peak {
			worst.peak = r.peak
		}
		worst.wall += r.wall
	}
	how := "the merge following them"
	if c.serial {
		how = "no merge beside them"
	}
	worst.step = fmt.Sprintf("BakeSlice ×%d (%d MLPs each, %s; "+
		"the largest peak, the summed time)", nSlices, c.sliceSize, how)
	worst.how = "in process"
	rows = append(rows, worst)
	log.Printf("BakeSlice: %s peak, %.1f s", bytesize.Format(worst.peak), worst.wall.Seconds())

	// The release tail: from the last slice's result to the release
	// being readable, the steps run as the workflow runs them.
	var tailWall time.Duration
	if c.serial {
		err := measure("MergeSplit, after the slices", a.MergeSplit, mergeIn, &merged)
		if err != nil {
			return nil, err
		}
		tailWall = rows[len(rows)-1].wall
	} else {
		tail := time.Now()
		if err := <-mergeDone; err != nil {
			return nil, fmt.Errorf("MergeSplit: %w", err)
		}
		tailWall = max(0, mergeEnd.Sub(tail))
		rows = append(rows, row{
			step: "MergeSplit, following the slices: what is left after the last",
			how:  "in process", wall: tailWall,
		})
		log.Printf("MergeSplit after the last slice: %.1f s", tailWall.Seconds())
	}
	var combined bakeapi.CombineSplitsOutput
	combineIn := bakeapi.CombineSplitsInput{BakeID: bakeID, Splits: []string{merged.Prefix}}
	err = measure("CombineSplits (one split)", a.CombineSplits, combineIn, &combined)
	if err != nil {
		return nil, err
	}
	if err := deleteAll(ctx, st, merged.Prefix+"/"); err != nil {
		return nil, err
	}
	var pushed bakeapi.PushOutput
	pushIn := bakeapi.PushInput{
		DatasetPrefix: combined.Prefix,
		Bucket:        devstack.ReleasesBucket,
		Prefix:        "datasets",
		Name:          "scale",
		Tag:           "v1",
	}
	t := time.Now()
	if err := measure("Push", a.Push, pushIn, &pushed); err != nil {
		return nil, err
	}
	tailWall += time.Since(t) + rows[len(rows)-2].wall
	rows = append(rows, row{
		step: "release tail (MergeSplit + CombineSplits + Push, after the last slice)",
		how:  "in process", wall: tailWall,
	})
	log.Printf("release tail: %.1f s", tailWall.Seconds())
	parquets, err := releaseShards(c)
	if err != nil {
		return nil, err
	}
	raws, err := rawS3(ctx, o.S3Config(), devstack.ArtifactsBucket,
		pushed.URI, devstack.ReleasesBucket, parquets)
	if err != nil {
		return nil, err
	}
	rows = append(rows, raws...)
	if err := deleteAll(ctx, st, combined.Prefix+"/"); err != nil {
		return nil, err
	}

	download := filepath.Join(work, "download")
	dl := exec.Command(wb, "dataset", "download", pushed.URI, "--output", download)
	dl.Env = append(os.Environ(), "WHESTBAKE_S3_ENDPOINT="+o.S3Config().Endpoint,
		"WHESTBAKE_S3_ACCESS_KEY="+o.AccessKey, "WHESTBAKE_S3_SECRET_KEY="+o.SecretKey)
	r, err := child(dl)
	if err != nil {
		return nil, err
	}
	r.step = "`dataset download` (the release)"
	r.how = "child process"
	rows = append(rows, r)
	log.Printf("download: %s peak, %.1f s", bytesize.Format(r.peak), r.wall.Seconds())
	return rows, os.RemoveAll(download)
}

// releaseShards are the keys of the release's parquet shards.
func releaseShards(c config) ([]string, error) {
	plan, err := shards.For(c.width, c.depth, int64(c.mlps))
	if err != nil {
		return nil, err
	}
	var keys []string
	for i := range plan.Count {
		keys = append(keys, "datasets/scale/v1/data/"+plan.Name("public", i, "parquet"))
	}
	return keys, nil
}

// rawS3 measures what the machine's MinIO does with the bytes of the
// release's parquet shards, keys in bucket, with minio-go and nothing of
// whestbake: a copy through this process, a GET streamed into a PUT; a read
// alone; and a copy on the server by UploadPartCopy, shard after shard. A
// step that must read and write every byte through a worker cannot beat
// the first.
func rawS3(ctx context.Context, cfg store.Config, scratch, uri, bucket string, keys []string) (
	[]row, error,
) {
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Region: cfg.Region,
	})
	if err != nil {
		return nil, err
	}
	var size int64
	for _, key := range keys {
		info, err := c.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s%s: %w", uri, key, err)
		}
		size += info.Size
	}
	mb := float64(size) / 1e6
	var rows []row
	add := func(name string, f func(key string) error) error {
		t := time.Now()
		for _, key := range keys {
			if err := f(key); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if err := c.RemoveObject(ctx, scratch, "raw", minio.RemoveObjectOptions{}); err != nil {
				return err
			}
		}
		wall := time.Since(t)
		rows = append(rows, row{step: fmt.Sprintf("%s (%.0f MB/s)", name, mb/wall.Seconds()),
			how: "minio-go", wall: wall})
		log.Printf("%s: %.1f s, %.0f MB/s", name, wall.Seconds(), mb/wall.Seconds())
		return nil
	}
	name := fmt.Sprintf("raw S3 copy through the process, %.0f MB in %d shards", mb, len(keys))
	if err := add(name, func(key string) error {
		obj, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer obj.Close()
		st, err := obj.Stat()
		if err != nil {
			return err
		}
		_, err = c.PutObject(ctx, scratch, "raw", obj, st.Size, minio.PutObjectOptions{})
		return err
	}); err != nil {
		return nil, err
	}
	if err := add("raw S3 read", func(key string) error {
		obj, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer obj.Close()
		_, err = io.Copy(io.Discard, obj)
		return err
	}); err != nil {
		return nil, err
	}
	if err := add("raw S3 copy on the server", func(key string) error {
		_, err := c.ComposeObject(ctx, minio.CopyDestOptions{Bucket: scratch, Object: "raw"},
			minio.CopySrcOptions{Bucket: bucket, Object: key})
		return err
	}); err != nil {
		return nil, err
	}
	return rows, nil
}

// inProcess runs one activity in a test activity environment, a real
// activity context without a server, and returns its peak RSS and time.
func inProcess(a *activities.Activities, method, in, out any) (row, error) {
	var ts testsuite.WorkflowTestSuite
	ts.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	if err := resetPeak(); err != nil {
		return row{}, err
	}
	t0 := time.Now()
	v, err := env.ExecuteActivity(method, in)
	wall := time.Since(t0)
	if err != nil {
		return row{}, err
	}
	peak, err := peakRSS()
	if err != nil {
		return row{}, err
	}
	return row{peak: peak, wall: wall}, v.Get(out)
}

// resetPeak hands freed memory back to the OS and resets the kernel's
// high-water mark of this process's RSS to its current RSS.
func resetPeak() error {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS is VmHWM from /proc/self/status.
func peakRSS() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}

func deleteAll(ctx context.Context, st *store.Store, prefix string) error {
	keys, err := st.List(ctx, prefix)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := st.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

func checkDisk(dir string, need int64) error {
	free, err := hostinfo.DiskFree(dir)
	if err != nil {
		return err
	}
	if free < need {
		return fmt.Errorf("%s has %s free; this run needs about %s (four times the dataset): "+
			"pass a smaller -mlps or another -dir",
			dir, bytesize.Format(free), bytesize.Format(need))
	}
	return nil
}

func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}
