package config

import (
	"net/url"
	"path"
	"strings"

	"github.com/whestbake/whestbake/activities"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/keys"
	"github.com/whestbake/whestbake/store"
	"github.com/whestbake/whestbake/workflows"
)

// BakeInput validates cfg and builds the workflow input: the shape, the
// splits (a split with a seeds file points at the key the starter uploads it
// to), the release and the policy. It holds no credentials.
func BakeInput(cfg Config) (workflows.BakeInput, error) {
	if err := cfg.Validate(); err != nil {
		return workflows.BakeInput{}, err
	}
	b := cfg.Bake
	shape := activities.Shape{Width: b.Width, Depth: b.Depth, NSamples: int64(b.NSamples), Sampler: b.Sampler, ChunkSize: b.ChunkSize}
	if gpuengine.Sampler(b.Sampler) == gpuengine.SamplerNumpy {
		shape.Dot = b.DotProduct
	}
	in := workflows.BakeInput{
		BakeID: b.ID, Shape: shape, DefaultSplit: b.DefaultSplit,
		SliceSize: b.SliceSize, MaxInFlight: b.MaxInFlight, GPUQueue: b.GPUQueue,
		Release: workflows.ReleaseSpec{Bucket: cfg.Release.Bucket, Prefix: cfg.Release.Prefix, Name: cfg.Release.Name, Tag: cfg.Release.Tag},
		Policy:  workflows.Policy(cfg.Policy),
	}
	for _, s := range b.Splits {
		spec := workflows.SplitSpec{Name: s.Name, Config: s.Config, NMLPs: int(s.NMLPs)}
		if s.Seed != nil {
			seed := *s.Seed
			spec.Seed = &seed
		}
		if s.SeedsFile != "" {
			spec.SeedsKey = keys.Bake(b.ID).InputSeeds(s.Name)
		}
		in.Splits = append(in.Splits, spec)
	}
	return in, nil
}

// StoreConfig is the S3 section as the store package takes it.
func (c Config) StoreConfig() store.Config {
	s := c.S3
	return store.Config{Endpoint: s.Endpoint, AccessKey: s.AccessKey.Reveal(), SecretKey: s.SecretKey.Reveal(), Secure: s.Secure, Region: s.Region}
}

// WorkflowURL is the Web UI page of a workflow.
func (c Config) WorkflowURL(workflowID string) string {
	return strings.TrimSuffix(c.Temporal.UI, "/") + "/namespaces/" + url.PathEscape(c.Temporal.Namespace) + "/workflows/" + url.PathEscape(workflowID)
}

// ReleaseURI is where Push publishes release name/tag: s3://bucket/prefix/name/tag/.
func ReleaseURI(bucket, prefix, name, tag string) string {
	return "s3://" + path.Join(bucket, keys.Release(prefix, name, tag)) + "/"
}
