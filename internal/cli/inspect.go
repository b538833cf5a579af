package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/bytesize"
	"github.com/whestbake/whestbake/internal/safetext"
)

func newInspectCmd() *cobra.Command {
	var rowsShown int
	var asJSON bool
	cmd := &cobra.Command{
		Use: "inspect DIR",
		Short: "Validate a dataset directory " +
			"(every row, and its prepared Arrow tree against them) and print a summary table",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := dataset.Open(args[0], true)
			if err != nil {
				return err
			}
			// Every row is checked, and the prepared tree against it, but
			// only the first rowsShown of each split are kept, as the
			// lines printed for them: memory stays at one row however
			// large the dataset.
			shown := map[string][]rowLine{}
			err = d.ScanPrepared(func(s *dataset.SplitData, r dataset.Row) error {
				if len(shown[s.Name]) < rowsShown {
					shown[s.Name] = append(shown[s.Name], lineOf(r))
				}
				return nil
			})
			if err != nil {
				return err
			}
			splits := summarize(d, shown)
			if asJSON {
				return writeInspectJSON(cmd.OutOrStdout(), d, splits)
			}
			printSummary(cmd.OutOrStdout(), d, splits)
			return nil
		},
	}
	cmd.Flags().IntVar(&rowsShown, "rows", 8, "MLP rows to show per split")
	jsonFlag(cmd, &asJSON, "print the metadata and, per split, its files and first rows as JSON")
	return cmd
}

// rowLine is what inspect shows of one row.
type rowLine struct {
	MLPID       int32     `json:"mlp_id"`
	Name        string    `json:"mlp_name"`
	Seed        int64     `json:"mlp_seed"`
	AvgVariance jsonFloat `json:"avg_variance"`
	MeanOfFinal jsonFloat `json:"mean_final_means"` // mean of final_means
}

func lineOf(r dataset.Row) rowLine {
	var m float64
	for _, v := range r.FinalMeans {
		m += float64(v)
	}
	m /= float64(max(1, len(r.FinalMeans)))
	return rowLine{
		MLPID:       r.MLPID,
		Name:        r.Name,
		Seed:        r.Seed,
		AvgVariance: jsonFloat(r.AvgVariance),
		MeanOfFinal: jsonFloat(m),
	}
}

// splitSummary is what inspect shows of one split.
type splitSummary struct {
	Name  string    `json:"name"`
	NMLPs int64     `json:"n_mlps"`
	Files []string  `json:"files"` // relative to the dataset directory
	Bytes int64     `json:"bytes"` // of the files
	Rows  []rowLine `json:"rows"`  // the first --rows
}

// summarize is each split of d, with its rows in shown.
func summarize(d *dataset.Dir, shown map[string][]rowLine) []splitSummary {
	out := make([]splitSummary, 0, len(d.Splits))
	for _, s := range d.Splits {
		sum := splitSummary{
			Name:  s.Name,
			NMLPs: s.NMLPs,
			Files: []string{},
			Rows:  shown[s.Name],
		}
		if sum.Rows == nil {
			sum.Rows = []rowLine{}
		}
		for _, f := range s.Files {
			if st, err := os.Stat(f); err == nil {
				sum.Bytes += st.Size()
			}
			rel, _ := filepath.Rel(d.Path, f)
			sum.Files = append(sum.Files, rel)
		}
		out = append(out, sum)
	}
	return out
}

// inspectJSON is whestbake.inspect/v1.
type inspectJSON struct {
	Schema    string          `json:"schema"`
	Path      string          `json:"path"`
	Partial   bool            `json:"partial"`
	Metadata  json.RawMessage `json:"metadata"`
	NonFinite []string        `json:"non_finite"`
	Splits    []splitSummary  `json:"splits"`
}

func writeInspectJSON(w io.Writer, d *dataset.Dir, splits []splitSummary) error {
	data, nonFinite, err := metadataJSON(d.Meta)
	if err != nil {
		return err
	}
	return writeJSON(w, inspectJSON{
		Schema:    inspectSchema,
		Path:      d.Path,
		Partial:   d.Info.IsPartial,
		Metadata:  data,
		NonFinite: nonFinite,
		Splits:    splits,
	})
}

// printSummary prints d's metadata and, per split, its files and rows.
func printSummary(out io.Writer, d *dataset.Dir, splits []splitSummary) {
	md := d.Meta
	str := func(k string) string {
		if v, ok := md.Get(k); ok && v != nil {
			return safetext.Line(fmt.Sprint(v))
		}
		return "-"
	}
	fmt.Fprintf(out, "Dataset %s\n", d.Path)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  schema_version\t%s\tformat\t%s\tbackend\t%s\n",
		str("schema_version"), str("format"), str("backend"))
	if sp, ok := md.GetObject("seed_protocol"); ok {
		name, _ := sp.GetString("name")
		ver, _ := sp.GetString("version")
		fmt.Fprintf(tw, "  seed_protocol\t%s (version %s)\t\t\t\t\n",
			safetext.Line(name), safetext.Line(ver))
	}
	// Where a 4.0 salt is and which it is, never the salt itself.
	if p := d.Info.SeedProtocol; p.Name == dataset.SeedProtocolV4Name {
		where := "published in metadata.json"
		if p.SaltWithheld() {
			where = "withheld (" + dataset.SaltEnv + ")"
		}
		fmt.Fprintf(tw, "  salt\t%s\tsalt_id\t%s\tsalt_digest\t%s\n",
			where, safetext.Line(orDash(p.SaltID)), safetext.Line(orDash(p.SaltDigest)))
	}
	fmt.Fprintf(tw, "  width\t%s\tdepth\t%s\tn_samples\t%s\n",
		str("width"), str("depth"), str("n_samples"))
	fmt.Fprintf(tw, "  created_at_utc\t%s\t\t\t\t\n", str("created_at_utc"))
	if md.Truthy("is_partial") {
		fmt.Fprintf(tw, "  PARTIAL\tmlp_range %s of %s\t(merge before use)\t\t\t\n",
			str("mlp_range"), str("total_n_mlps"))
	}
	tw.Flush()
	for _, s := range splits {
		fmt.Fprintf(out, "\nsplit %s: %d MLPs, %d file(s), %s\n",
			safetext.Line(s.Name), s.NMLPs, len(s.Files), bytesize.Format(s.Bytes))
		if v, ok := splitValue(md, s.Name, "sampler"); ok {
			alg, _ := splitValue(md, s.Name, "algorithm_version")
			dev, _ := splitValue(md, s.Name, "device")
			fmt.Fprintf(out, "  sampler %s, algorithm %s, device %s\n",
				safetext.Line(fmt.Sprint(v)), safetext.Line(fmt.Sprint(alg)), safetext.Line(fmt.Sprint(dev)))
		}
		for _, f := range s.Files {
			fmt.Fprintf(out, "  %s\n", safetext.Line(f))
		}
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  mlp_id\tmlp_name\tmlp_seed\tavg_variance\tmean(final_means)\t")
		for _, r := range s.Rows {
			fmt.Fprintf(tw, "  %d\t%s\t%d\t%.6g\t%.6g\t\n",
				r.MLPID, safetext.Line(r.Name), r.Seed, float64(r.AvgVariance), float64(r.MeanOfFinal))
		}
		if more := s.NMLPs - int64(len(s.Rows)); more > 0 {
			fmt.Fprintf(tw, "  …\t%d more\t\t\t\t\n", more)
		}
		tw.Flush()
	}
}
