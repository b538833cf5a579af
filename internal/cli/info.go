package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/safetext"
)

func newInfoCmd() *cobra.Command {
	var h hubFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use: "info SOURCE",
		Short: "Summarise a dataset from its metadata.json alone: " +
			"a directory, or hf://owner/name[@rev] (one small download)",
		Long: `Prints whestbench's summary of a dataset (its info verb): the fields of
metadata.json, read from the directory SOURCE or, for hf://OWNER/NAME[@REVISION],
downloaded alone from the Hub (a token, from --token-file or HF_TOKEN, only for
private repositories). Nothing is validated and no row is read: ` + "`dataset inspect`" + `
checks a whole dataset.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			md, err := infoMetadata(cmd, h, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeInfoJSON(cmd.OutOrStdout(), args[0], md)
			}
			printInfo(cmd.OutOrStdout(), md)
			return nil
		},
	}
	h.register(cmd)
	jsonFlag(cmd, &asJSON, "print the source and its whole metadata.json as JSON")
	return cmd
}

// infoJSON is whestbake.info/v1: metadata.json itself, which info
// summarises, in JSON any reader parses, by metadataJSON.
type infoJSON struct {
	Schema    string          `json:"schema"`
	Source    string          `json:"source"`
	Metadata  json.RawMessage `json:"metadata"`
	NonFinite []string        `json:"non_finite"`
}

func writeInfoJSON(w io.Writer, src string, md dataset.Metadata) error {
	data, nonFinite, err := metadataJSON(md)
	if err != nil {
		return err
	}
	return writeJSON(w, infoJSON{
		Schema:    infoSchema,
		Source:    src,
		Metadata:  data,
		NonFinite: nonFinite,
	})
}

func infoMetadata(cmd *cobra.Command, h hubFlags, src string) (dataset.Metadata, error) {
	repo, rev, ok, err := hub.ParseURI(src)
	if err != nil {
		return nil, cmdline.Usage(err)
	}
	if !ok {
		if err := hubRepoHint(src); err != nil {
			return nil, err
		}
		return dataset.ReadMetadata(src)
	}
	c, err := h.reader()
	if err != nil {
		return nil, err
	}
	return c.ReadMetadata(cmd.Context(), repo, rev)
}

// infoKeys are the single-split fields whestbench's info prints, when
// present, in its order, then whestbake's provenance.
var infoKeys = []string{
	"schema_version", "format", "backend", "seed", "split", "config", "n_mlps",
	"n_samples", "width", "depth", "created_at_utc", "device", "cuda_device_name",
	"sampler", "algorithm_version",
}

// printInfo writes whestbench's summary of md.
func printInfo(w io.Writer, md dataset.Metadata) {
	splits, multi := md.GetObject("splits")
	if !multi {
		fmt.Fprintln(w, "WhestBench dataset")
		for _, k := range infoKeys {
			if v, ok := md.Get(k); ok {
				fmt.Fprintf(w, "  %s: %s\n", k, infoValue(v))
			}
		}
		if p, ok := md.GetObject("seed_protocol"); ok {
			name, _ := p.Get("name")
			version, _ := p.Get("version")
			fmt.Fprintf(w, "  seed_protocol:  %s (version %s)\n",
				infoValue(name), infoValue(version))
		}
		return
	}
	fmt.Fprintln(w, "WhestBench dataset (multi-split)")
	for _, k := range []string{"schema_version", "format", "backend"} {
		v, _ := md.Get(k)
		fmt.Fprintf(w, "  %s: %s\n", k, infoValue(v))
	}
	width, _ := md.Get("width")
	depth, _ := md.Get("depth")
	n, _ := md.Get("n_samples")
	fmt.Fprintf(w, "  width: %s  depth: %s  n_samples: %s\n",
		infoValue(width), infoValue(depth), thousands(n))
	fmt.Fprintln(w, "  splits:")
	for _, name := range slices.Sorted(slices.Values(splits.Keys())) {
		s, _ := splits.GetObject(name)
		nm, _ := s.Get("n_mlps")
		line := fmt.Sprintf("    %s:  n_mlps=%s", safetext.Line(name), thousands(nm))
		if v, ok := s.Get("seed"); ok {
			line += "  seed=" + infoValue(v)
		}
		if v, ok := s.Get("config"); ok {
			line += "  config=" + infoValue(v)
		}
		fmt.Fprintln(w, line)
	}
	if p, ok := md.GetObject("prepared_splits"); ok {
		prepared := slices.Sorted(slices.Values(p.Keys()))
		fmt.Fprintf(w, "  prepared_splits: %s\n", safetext.Line(strings.Join(prepared, ", ")))
	}
	created, _ := md.Get("created_at_utc")
	fmt.Fprintf(w, "  created_at_utc: %s\n", infoValue(created))
}

// infoValue is v as Python's str() shows a JSON value: a string bare,
// None for null, anything else as JSON; printable, since it comes from the
// dataset.
func infoValue(v any) string {
	switch x := v.(type) {
	case string:
		return safetext.Line(x)
	case nil:
		return "None"
	case json.Number:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return safetext.Line(fmt.Sprint(v))
	}
	return safetext.Line(string(b))
}

// thousands is an integer with comma separators, as Python's {:,}; anything
// else as infoValue shows it.
func thousands(v any) string {
	num, ok := v.(json.Number)
	if !ok {
		return infoValue(v)
	}
	i, err := strconv.ParseInt(num.String(), 10, 64)
	if err != nil {
		return num.String()
	}
	s := strconv.FormatInt(max(i, -i), 10)
	for j := len(s) - 3; j > 0; j -= 3 {
		s = s[:j] + "," + s[j:]
	}
	if i < 0 {
		s = "-" + s
	}
	return s
}
