package dataset

import "github.com/whestbake/whestbake/dataset/internal/card"

// CardOption adjusts RenderCard.
type CardOption func(*card.Options)

// CardRepo names the hub repository the dataset is published as, for the
// loading snippets; without it they use a <your-repo> placeholder. To
// re-render the card of a dataset directory, use WriteCard, which keeps the
// report's section when the directory has a report.
func CardRepo(id string) CardOption { return func(o *card.Options) { o.Repo = id } }

// CardReport adds the report's section to the card: every figure as an
// image with a relative path, which the Hub renders from the repository,
// and a link to the page. Only pass it for a directory that holds the
// report; WriteCard decides that itself.
func CardReport() CardOption { return func(o *card.Options) { o.Report = true } }

// RenderCard writes the README.md dataset card of a dataset with metadata md,
// as card.Render does: YAML front matter, with the configs block HF uses to load
// the directory, and a Markdown body describing the data, how it was
// computed, how to re-bake it and where it came from. The dataset size is
// taken from the metadata: n_mlps, or the sum over splits.
func RenderCard(md Metadata, opts ...CardOption) (string, error) {
	info, err := ParseInfo(md, true)
	if err != nil {
		return "", err
	}
	return renderCard(info, opts...), nil
}

// renderCard is RenderCard of metadata the writers have already decoded.
func renderCard(info *Info, opts ...CardOption) string {
	var o card.Options
	for _, opt := range opts {
		opt(&o)
	}
	return card.Render(info, o)
}
