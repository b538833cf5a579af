package card

import (
	"fmt"
	"strings"
)

// The report that `whestbake dataset report` makes with internal/report is part of a
// finished dataset's directory, like data/ and the card: its layout is
// fixed here so that the card can link it and every push of the same
// dataset carries the same file names.
const (
	// ReportDir is the report's folder in the dataset directory.
	ReportDir = "report"
	// ReportPage is the self-contained HTML page in ReportDir.
	ReportPage = "index.html"
)

// ReportFigure is one PNG of the report, in ReportDir.
type ReportFigure struct {
	File    string // file name in ReportDir
	Caption string // the card's alt text and the page's heading
}

// ReportFigures are the report's PNGs, in the order the card and the page
// show them; each has one series per split.
var ReportFigures = []ReportFigure{
	{"final_means.png", "Distribution of final means"},
	{"layer_means.png", "Mean activation per layer"},
	{"layer_variance.png", "Variance of the activation per layer"},
	{"dead_neurons.png", "Dead neurons per layer"},
	{"avg_variance.png", "Distribution of avg_variance"},
}

// ReportPaths are the report's files, '/'-separated and relative to the
// dataset directory: a dataset holds the report when it holds all of them.
func ReportPaths() []string {
	paths := []string{ReportDir + "/" + ReportPage}
	for _, f := range ReportFigures {
		paths = append(paths, ReportDir+"/"+f.File)
	}
	return paths
}

// report is the card's section on the report.
func (c *card) report(b *strings.Builder) {
	if !c.withReport {
		return
	}
	b.WriteString("## Report\n\n")
	fmt.Fprintf(b, "Plots of the ground truth, one series per split, "+
		"made by `whestbake dataset report` from the rows; "+
		"[%s/%s](%[1]s/%[2]s) shows them on one self-contained page with the numbers behind them "+
		"and what each plot measures.\n\n", ReportDir, ReportPage)
	for _, f := range ReportFigures {
		fmt.Fprintf(b, "![%s](%s/%s)\n\n", f.Caption, ReportDir, f.File)
	}
}
