package settings

import (
	"net/url"
	"os"
	"strings"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/store"
)

// BakeInput validates cfg's values and builds the workflow input: the
// shape, the splits, the release and the policy. A split with a seeds file
// points at the key the starter uploads it to. It holds no credentials. The
// starter calls it through preflight.Bake, which reads the seeds files first.
func BakeInput(cfg Config) (bakeapi.BakeInput, error) {
	if err := cfg.Validate(); err != nil {
		return bakeapi.BakeInput{}, err
	}
	b := cfg.Bake
	salt, err := b.Salt(os.Getenv) // Validate has read it successfully
	if err != nil {
		return bakeapi.BakeInput{}, err
	}
	inFlight, _ := b.InFlight() // validated above
	in := bakeapi.BakeInput{
		BakeParams: bakeapi.BakeParams{
			BakeID:            b.ID,
			Spec:              b.Spec(salt),
			SliceSize:         b.SliceSize,
			MaxInFlight:       inFlight,
			GPUQueue:          b.GPUQueue,
			Policy:            bakeapi.Policy(cfg.Policy),
			KeepIntermediates: b.KeepIntermediates,
		},
		DefaultSplit: b.DefaultSplit,
		Release: bakeapi.ReleaseSpec{
			Bucket: cfg.Release.Bucket,
			Prefix: cfg.Release.Prefix,
			Name:   cfg.Release.Name,
			Tag:    cfg.Release.Tag,
		},
		Hub: cfg.Release.Hub.Spec(),
	}
	for _, s := range b.Splits {
		spec := bakeapi.SplitSpec{Name: s.Name, Config: s.Config, NMLPs: int(s.NMLPs)}
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
	return store.Config{
		Endpoint:   s.Endpoint,
		AccessKey:  s.AccessKey.Reveal(),
		SecretKey:  s.SecretKey.Reveal(),
		Secure:     s.Secure,
		Region:     s.Region,
		CAFile:     s.CAFile,
		Addressing: s.Addressing,
	}
}

// WorkflowURL is the Web UI page of a workflow, "" when the UI is not known
// because temporal.ui is empty.
func (c Config) WorkflowURL(workflowID string) string {
	if c.Temporal.UI == "" {
		return ""
	}
	ui := strings.TrimSuffix(c.Temporal.UI, "/")
	return ui + "/namespaces/" + url.PathEscape(c.Temporal.Namespace) +
		"/workflows/" + url.PathEscape(workflowID)
}
