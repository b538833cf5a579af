// Package card writes a dataset's README.md: the Hugging Face dataset card
// whose YAML front matter tells the Hub and datasets how to load the
// directory, and whose Markdown says what the rows are, how they were made,
// how to re-bake them and where they came from. Free text from
// metadata.json is escaped where it lands, as escape.go says.
package card

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/whestbake/whestbake/dataset/internal/metadata"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// Options are what a card shows beyond the metadata.
type Options struct {
	// Repo names the hub repository the dataset is published as, for the
	// loading snippets; "" gives a <your-repo> placeholder.
	Repo string
	// Report adds the report's section: every figure as an image with a
	// relative path, which the Hub renders from the repository, and a link
	// to the page. Only for a directory that holds the report.
	Report bool
}

// Render writes the README.md dataset card of a dataset whose metadata
// decodes to info: YAML front matter and a Markdown body describing the
// data, how it was computed, how to re-bake it and where it came from. The
// front matter holds the keys HF reads, with the configs block of
// whestbench's generate_readme in
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_io.py,
// which HF uses to load the directory. The dataset size is taken from the
// metadata: n_mlps, or the sum over splits.
func Render(info *metadata.Info, opts Options) string {
	var total int64
	for _, s := range info.Splits {
		total += s.NMLPs
	}
	c := &card{
		info:       info,
		splits:     info.Splits,
		total:      total,
		repo:       cmp.Or(opts.Repo, "<your-repo>"),
		withReport: opts.Report,
	}
	var b strings.Builder
	b.WriteString(cardFrontMatter(info, total))
	b.WriteString("\n")
	for _, section := range []func(*strings.Builder){
		c.intro, c.loading, c.columns, c.method, c.summary,
		c.report, c.reproduce, c.provenance, c.license,
	} {
		section(&b)
	}
	return b.String()
}

type card struct {
	info       *metadata.Info
	splits     []metadata.SplitInfo
	total      int64
	repo       string
	withReport bool
}

// dim shows a dimension, or "?" for 0, where the metadata has none.
func dim[T int | int64](n T) string {
	if n == 0 {
		return "?"
	}
	return strconv.FormatInt(int64(n), 10)
}

func (c *card) intro(b *strings.Builder) {
	fmt.Fprintf(b, "# %s\n\n", cardText(c.info.Title()))
	fmt.Fprintf(b, "Ground truth for [WhestBench](https://github.com/AIcrowd/whestbench), "+
		"the white-box estimation benchmark: %s random ReLU networks of width %s and depth %s. "+
		"Each row holds one network's weights and the mean of every neuron under standard "+
		"Gaussian inputs, estimated from **%s** samples per network. "+
		"The directory is in whestbench's schema-%s format "+
		"(`data/<split>-NNNNN-of-MMMMM.parquet`, `metadata.json`, this card), "+
		"baked by whestbake.\n\n",
		thousands(c.total), dim(c.info.Width), dim(c.info.Depth), c.samples(),
		metadata.SchemaVersion)
	b.WriteString("| split | HF config | networks |\n|---|---|---|\n")
	configs := splitConfigs(c.info)
	for _, s := range c.splits {
		fmt.Fprintf(b, "| `%s` | `%s` | %s |\n", s.Name, configs[s.Name], thousands(s.NMLPs))
	}
	if def := c.info.DefaultSplit; def != "" {
		fmt.Fprintf(b, "\nThe default split is `%s`.\n", def)
	}
	b.WriteString("\n")
}

func (c *card) samples() string {
	if n := c.info.NSamples; n != 0 {
		return thousands(n)
	}
	return "?"
}

func (c *card) loading(b *strings.Builder) {
	first := cmp.Or(c.info.DefaultSplit, c.splits[0].Name)
	b.WriteString("## Loading\n\n```python\nimport whestbench\n\n")
	fmt.Fprintf(b, "ds = whestbench.load_dataset(%q, split=%q)"+
		"  # a local directory or a hub repo id\n```\n\n",
		c.repo, first)
	b.WriteString("With 🤗 datasets alone")
	if len(c.splits) > 1 {
		b.WriteString(", one split at a time from the config the table above names")
	}
	b.WriteString(":\n\n```python\nimport datasets\n\n")
	configs := splitConfigs(c.info)
	for _, s := range c.splits {
		// The default config is the one load_dataset takes without a name, as
		// utils/metadata.py MetadataConfigs.get_default_config_name picks it.
		if config := configs[s.Name]; config == metadata.DefaultConfig {
			fmt.Fprintf(b, "ds = datasets.load_dataset(%q, split=%q)\n", c.repo, s.Name)
		} else {
			fmt.Fprintf(b, "ds = datasets.load_dataset(%q, %q, split=%q)\n", c.repo, config, s.Name)
		}
	}
	b.WriteString("```\n\nA partial dataset (one slice of a parallel bake) is refused by " +
		"whestbench's loader until its partials are merged with `whestbake dataset merge`.\n\n")
	if c.info.SeedProtocol.SaltWithheld() {
		fmt.Fprintf(b, "This dataset's salt is withheld (seed protocol 4.0): "+
			"whestbench derives each MLP's participant-facing seed (`MLP.seed`) with it, "+
			"so it needs the salt as hex in `%s`; the rows themselves load without it.\n\n",
			metadata.SaltEnv)
	}
}

// columns is the card's table of schema.Columns: each column's type, its
// shape in this dataset, and what it means, which for the name and the
// seed depends on the seed protocol.
func (c *card) columns(b *strings.Builder) {
	meaning := map[int]string{}
	switch c.info.SeedProtocol.Name {
	case metadata.SeedProtocolV2Name:
		meaning[schema.ColSeed] = "the estimator seed of the network, derived from the split's root seed " +
			"(seed protocol 2.0)"
	case metadata.SeedProtocolV4Name:
		meaning[schema.ColSeed] = "the network's input seed: weights and statistics are a function of it, " +
			"n_samples and the sampler; the participant-facing seed (`MLP.seed`) " +
			"and the name also depend on the dataset's salt (seed protocol 4.0)"
		meaning[schema.ColName] = "a readable name derived from a salted seed of its own (faker 37.12.0, " +
			"en_US, `first-last`, suffixed on collision)"
	}
	b.WriteString("## Columns\n\n| column | type | meaning |\n|---|---|---|\n")
	for i, col := range schema.Columns {
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", col.Name, c.columnType(&col), cmp.Or(meaning[i], col.Doc))
	}
	b.WriteString("\n")
}

// columnType is col's type as the card's table writes it: float32 [2][4]
// for an array of this dataset's shape, "string (JSON)" for JSON text.
func (c *card) columnType(col *schema.Column) string {
	t := col.Type.String()
	if col.Array() {
		t += " "
		for _, n := range col.Dims(c.info.Width, c.info.Depth) {
			t += "[" + dim(n) + "]"
		}
	}
	if col.JSON {
		t += " (JSON)"
	}
	return t
}

// backend names whestbench's backend for a dataset whestbake did not bake.
func (c *card) backend() string { return cmp.Or(c.info.Backend, "unknown") }

func (c *card) samplerText(sampler string) string {
	switch sampler {
	case "numpy":
		dot := c.info.DotProduct
		if dot != "" {
			dot = fmt.Sprintf(", dot products as sequential %s float32 chains", cardText(dot))
		}
		return "sampler `numpy`: numpy's PCG64 seeded by `ss[1]` draws the inputs with numpy's " +
			"float32 ziggurat, in whestbench's chunks of max(1024, min(16384, 2^20 / W)) " +
			"rows and in its summation order" + dot + ", reproducing whestbench's CPU reference"
	case "philox":
		return "sampler `philox`: a counter-based Philox4x32-10 stream keyed from `ss[1]`, " +
			"so each sample's inputs are a pure function of (key, sample index), " +
			"turned into normals by a fixed sequence of floating-point operations. " +
			"Sums are accumulated exactly (fixed-point integers in a fixed order), " +
			"so the statistics are bit-identical on CPU and GPU for any chunking, " +
			"batching or slicing, and statistically equivalent to the `numpy` sampler"
	case "":
		return fmt.Sprintf("inputs drawn by whestbench's %s backend", cardCode(c.backend()))
	}
	return "sampler " + cardCode(sampler)
}

func (c *card) method(b *strings.Builder) {
	proto := c.info.SeedProtocol
	b.WriteString("## How the ground truth was made\n\n")
	fmt.Fprintf(b, "For every network, with W = %s, D = %s and N = %s:\n\n",
		dim(c.info.Width), dim(c.info.Depth), c.samples())
	switch proto.Name {
	case metadata.SeedProtocolV3Name:
		b.WriteString("1. `ss = numpy.random.SeedSequence(mlp_seed).spawn(3)`: " +
			"`ss[0]` seeds the weights, `ss[1]` the inputs, `ss[2]` the estimator seed.\n")
	case metadata.SeedProtocolV4Name:
		b.WriteString("1. `ss = numpy.random.SeedSequence(mlp_seed).spawn(3)`: " +
			"`ss[0]` seeds the weights, `ss[1]` the inputs (as in seed protocol 3.0). " +
			"The estimator seed and the seed of the name are 8-byte BLAKE2b digests of " +
			"`mlp_seed` (8 bytes, big-endian) keyed by the dataset's salt, " +
			"personalised `whest-4.0-est` and `whest-4.0-name`, " +
			"read big-endian and cut to 32 and 63 bits.\n")
	default:
		fmt.Fprintf(b, "1. Seeds follow seed protocol %s (`%s`), as whestbench defines it.\n",
			proto.Version, proto.Name)
	}
	b.WriteString("2. Weights: numpy PCG64 `standard_normal` in float64, scaled by sqrt(2/W) (He " +
		"initialisation, W_l ~ N(0, 2/W)) and rounded to float32; D matrices of W × W.\n")
	fmt.Fprintf(b, "3. Inputs: N vectors x ~ N(0, I_W) in float32; %s.\n",
		c.samplerText(c.commonValue(samplerOf)))
	b.WriteString("4. Forward pass in float32 with row vectors: h_0 = x, " +
		"h_l = relu(h_{l-1} @ W_l) for l = 1..D. There is no output layer.\n")
	b.WriteString("5. `all_layer_means[l][j]` = float32((1/N) Σ_n h_{l+1,j}(x_n)), " +
		"summed in float64; `final_means` is its last layer.\n")
	b.WriteString("6. `avg_variance` = (1/W) Σ_j ((1/N) Σ_n h_{D,j}(x_n)² − μ_j²) " +
		"in float64, with μ_j the float32 `final_means[j]`.\n\n")
	if n := c.info.NSamples; n != 0 && n != 1_000_000_000 {
		fmt.Fprintf(b, "Production ground truth uses N = 10⁹; with N = %s the means carry "+
			"Monte-Carlo error of order 1/√N.\n\n", thousands(n))
	}
}

// Provenance fields the card shows per split.
func samplerOf(p *metadata.Provenance) string   { return p.Sampler }
func algorithmOf(p *metadata.Provenance) string { return p.AlgorithmVersion }
func backendOf(p *metadata.Provenance) string   { return p.Backend }
func seedsSHAOf(p *metadata.Provenance) string  { return p.SeedFileSHA256 }

func (c *card) summary(b *strings.Builder) {
	proto := c.info.SeedProtocol
	b.WriteString("## Summary\n\n| | |\n|---|---|\n")
	fmt.Fprintf(b, "| networks | **%s** |\n", thousands(c.total))
	fmt.Fprintf(b, "| width × depth | %s × %s |\n", dim(c.info.Width), dim(c.info.Depth))
	fmt.Fprintf(b, "| samples per network | **%s** |\n", c.samples())
	fmt.Fprintf(b, "| seed protocol | `%s` (%s) |\n", proto.Name, proto.Version)
	if proto.Name == metadata.SeedProtocolV4Name {
		fmt.Fprintf(b, "| salt | %s |\n", tableCell(c.saltText()))
	}
	for _, row := range []struct {
		label string
		get   func(*metadata.Provenance) string
	}{{"sampler", samplerOf}, {"algorithm version", algorithmOf}, {"backend", backendOf}} {
		if v := c.splitValue(row.get); v != "" {
			fmt.Fprintf(b, "| %s | %s |\n", row.label, tableCell(v))
		}
	}
	b.WriteString("\n")
}

// commonValue is get's value when the dataset, or every split of it, has
// one value for it, else "".
func (c *card) commonValue(get func(*metadata.Provenance) string) string {
	if vals := c.splitValues(get); len(vals) == 1 {
		return vals[0]
	}
	return ""
}

// splitValue shows splitValues as code, "" when there are none.
func (c *card) splitValue(get func(*metadata.Provenance) string) string {
	vals := c.splitValues(get)
	for i, v := range vals {
		vals[i] = cardCode(v)
	}
	return strings.Join(vals, ", ")
}

// splitValues is a provenance string that lives at the top level of a
// single-split dataset and in each split entry of a combined one: its
// distinct values, one when all splits agree, none when a split lacks it.
func (c *card) splitValues(get func(*metadata.Provenance) string) []string {
	if v := get(&c.info.Provenance); v != "" {
		return []string{v}
	}
	var vals []string
	for i := range c.splits {
		v := get(&c.splits[i].Provenance)
		if v == "" {
			return nil
		}
		if !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	return vals
}

func (c *card) reproduce(b *strings.Builder) {
	proto := c.info.SeedProtocol
	b.WriteString("## Reproducing this dataset\n\n")
	seeding := ""
	switch proto.Name {
	case metadata.SeedProtocolV2Name:
		fmt.Fprintf(b, "This dataset uses seed protocol %s (one root seed per split, "+
			"recorded in `metadata.json`), which whestbake reads but does not bake; "+
			"re-bake it with whestbench's own tools.\n\n", proto.Version)
		return
	case metadata.SeedProtocolV4Name:
		b.WriteString("Every row is a pure function of its `mlp_seed`, N, W, D, " +
			"the sampler and the dataset's salt (only the names depend on the salt), " +
			"so a split can be re-baked from its seeds and the salt. ")
		c.saltRecipe(b)
		b.WriteString("Then write the seeds to a JSON array and bake:\n\n")
		seeding = " --seed-protocol 4.0"
		if proto.SaltWithheld() {
			id := "<salt-id>"
			if proto.SaltID != "" {
				id = shellWord(proto.SaltID)
			}
			seeding += " --withhold-salt --salt-id " + id
		} else {
			seeding += ` --seed-salt "$SALT"`
		}
	default:
		b.WriteString("Every row is a pure function of its `mlp_seed`, N, W, D and the sampler, " +
			"so a split can be re-baked from its seeds. Write them to a JSON array:\n\n")
	}
	for _, s := range c.splits {
		sampler := cmp.Or(s.Sampler, c.info.Sampler, "numpy")
		dot := ""
		if s.DotProduct != "" && sampler == "numpy" {
			dot = " --dot-product " + shellWord(s.DotProduct)
		}
		fmt.Fprintf(b, "```bash\npython -c \"import json, datasets; "+
			"ds = datasets.load_dataset('parquet', data_files='data/%[1]s-*.parquet', "+
			"split='train'); json.dump(ds['mlp_seed'], open('%[1]s-seeds.json', 'w'))\"\n",
			s.Name)
		fmt.Fprintf(b, "whestbake dataset bake --n-mlps %d --n-samples %s "+
			"--width %s --depth %s \\\n"+
			"  --split %s --config %s --mlp-seeds %s-seeds.json "+
			"--sampler %s%s%s --output rebake-%s\n```\n\n",
			s.NMLPs, dim(c.info.NSamples), dim(c.info.Width), dim(c.info.Depth),
			s.Name, s.HFConfig(), s.Name, shellWord(sampler), dot, seeding, s.Name)
	}
	b.WriteString("Names and weights come out identical with every sampler. " +
		"With `--sampler philox` and the same algorithm version the statistics are " +
		"bit-identical on any engine, CPU or GPU, however the bake is sliced; " +
		"with `--sampler numpy` they match whestbench's CPU reference.")
	if c.splitValue(samplerOf) == "" {
		fmt.Fprintf(b, " This dataset was baked by whestbench's %s backend; "+
			"`--sampler numpy` is the closest whestbake equivalent.", cardCode(c.backend()))
	}
	b.WriteString("\n\n")
	if sha := c.splitValue(seedsSHAOf); sha != "" {
		fmt.Fprintf(b, "SHA-256 of the seeds the bake used: %s.\n\n", sha)
	}
}

// saltText says where a protocol-4.0 dataset's salt is, never what it is.
func (c *card) saltText() string {
	p := c.info.SeedProtocol
	var parts []string
	if p.SaltWithheld() {
		parts = append(parts, fmt.Sprintf("withheld: supply it as hex in `%s`", metadata.SaltEnv))
	} else {
		parts = append(parts, "published in `metadata.json` (`seed_protocol.salt`)")
	}
	if p.SaltID != "" {
		parts = append(parts, "id "+cardCode(p.SaltID))
	}
	if p.SaltDigest != "" {
		parts = append(parts, "SHA-256 "+cardCode(p.SaltDigest))
	}
	return strings.Join(parts, ", ")
}

// saltRecipe tells a re-baker of a protocol-4.0 dataset how to bring the
// salt, without printing it.
func (c *card) saltRecipe(b *strings.Builder) {
	p := c.info.SeedProtocol
	if !p.SaltWithheld() {
		b.WriteString("The salt is published in `metadata.json`; read it into `SALT` first:\n\n" +
			"```bash\nSALT=$(python -c \"import json; " +
			"print(json.load(open('metadata.json'))['seed_protocol']['salt'])\")\n```\n\n")
		return
	}
	id := ""
	if p.SaltID != "" {
		id = " (id " + cardCode(p.SaltID) + ")"
	}
	fmt.Fprintf(b, "The salt%s is withheld: this dataset records only its SHA-256, "+
		"so nobody without it can recompute the participant-facing seeds or the names. "+
		"Its holders put it in `%s`, typed rather than written on a command line:\n\n"+
		"```bash\nread -rs %[2]s && export %[2]s\n```\n\n", id, metadata.SaltEnv)
}

func (c *card) provenance(b *strings.Builder) {
	b.WriteString("## Provenance\n\n")
	if created := c.info.CreatedAt; created != "" {
		fmt.Fprintf(b, "Created %s", cardText(created))
		if v := c.info.WhestbakeVersion; v != "" {
			fmt.Fprintf(b, " by whestbake %s", cardText(v))
		}
		b.WriteString(".\n\n")
	}
	for _, s := range c.splits {
		split := s.Name
		if !c.info.MultiSplit {
			split = ""
		}
		c.hostLines(b, &s.Provenance, split)
	}
}

// hostLines describes where the data of one split, p, was computed: the
// partials of a merge, or the single host of a direct bake.
func (c *card) hostLines(b *strings.Builder, p *metadata.Provenance, split string) {
	assembled, single := "Assembled", "Single"
	if split != "" {
		fmt.Fprintf(b, "Split `%s`: ", split)
		assembled, single = "assembled", "single"
	}
	engine := ""
	if e := describeEngine(p); e != "" {
		engine = " (" + e + ")"
	}
	fps := p.HardwareFingerprints
	if p.PartialsCount > 0 {
		fmt.Fprintf(b, "%s from %d partial bakes%s:\n\n", assembled, p.PartialsCount, engine)
		for _, fp := range fps {
			fmt.Fprintf(b, "- %s\n", describeHost(fp))
		}
		b.WriteString("\n")
		return
	}
	hw := p.Hardware
	if hw == nil && len(fps) > 0 {
		hw = fps[0]
	}
	fmt.Fprintf(b, "%s bake%s on %s.\n\n", single, engine, describeHost(hw))
}

func describeEngine(p *metadata.Provenance) string {
	var parts []string
	for _, kv := range [][2]string{
		{"engine", p.Engine},
		{"device", p.Device},
		{"driver", p.Driver},
	} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+cardCode(kv[1]))
		}
	}
	return strings.Join(parts, ", ")
}

// describeHost is one line about a hardware block or fingerprint.
func describeHost(o *pyjson.Object) string {
	if o.Len() == 0 {
		return "an unrecorded host"
	}
	var parts []string
	for _, k := range []string{
		"device", "engine", "cpu_brand", "os", "go_version", "whestbake_version",
	} {
		if v, ok := o.GetString(k); ok && v != "" {
			parts = append(parts, k+" "+cardCode(v))
		}
	}
	if n, ok := o.GetInt("mlp_count"); ok {
		parts = append(parts, fmt.Sprintf("%s MLPs", thousands(n)))
	}
	if n, ok := o.GetInt("partials_count"); ok {
		parts = append(parts, fmt.Sprintf("%d partials", n))
	}
	if len(parts) == 0 {
		return "an unrecorded host"
	}
	return strings.Join(parts, ", ")
}

func (c *card) license(b *strings.Builder) {
	b.WriteString("## License\n\n[CC BY 4.0](https://creativecommons.org/licenses/by/4.0/).\n")
}

// thousands formats n with comma separators, like Python's f"{n:,}".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
