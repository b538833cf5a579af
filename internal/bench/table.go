package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/whestbake/whestbake/gpuengine"
)

// column is one measured column of the table: its header, markdown alignment and cell.
type column struct {
	head, align string
	cell        func(Result) string
}

// cpuColumns are the columns of docs/benchmarks.md's CPU table, kept as they are so
// CPU-only runs stay comparable with it.
func cpuColumns() []column {
	return []column{
		{"samples/s", "---:", func(r Result) string {
			return fmt.Sprintf("%.0f", r.SamplesPerSecond())
		}},
		{"ms per 1e6 samples", "---:", func(r Result) string {
			return fmt.Sprintf("%.0f", 1e9/r.SamplesPerSecond())
		}},
		{"GFLOP/s", "---:", func(r Result) string { return fmt.Sprintf("%.1f", r.GFLOPS()) }},
	}
}

// gpuColumns are the GPU table's: time, throughput, effective rate and its share of
// the GPU's FP32 peak, in GPU rows only, as a CPU row has no such peak.
func gpuColumns(peakTFLOPS float64) []column {
	return []column{
		{"ms per 1e6 samples", "---:", func(r Result) string {
			return fmt.Sprintf("%.1f", 1e9/r.SamplesPerSecond())
		}},
		{"samples/s", "---:", func(r Result) string {
			return fmt.Sprintf("%.0f", r.SamplesPerSecond())
		}},
		{"effective TFLOP/s", "---:", func(r Result) string {
			return fmt.Sprintf("%.2f", r.GFLOPS()/1e3)
		}},
		{"% of FP32 peak", "---:", func(r Result) string {
			if r.Device != gpuengine.DeviceCUDA {
				return "-"
			}
			return fmt.Sprintf("%.1f%%", 100*r.GFLOPS()/1e3/peakTFLOPS)
		}},
	}
}

// ratioColumn is every row's throughput over peer's on the same network
// shape; its header names what the peer ran, ranOn, beside every ratio.
func ratioColumn(peer, ranOn string, rates map[shape]float64) column {
	head := "vs " + peer
	if ranOn != "" {
		head += " (" + ranOn + ")"
	}
	return column{head, "---:", func(r Result) string {
		p, ok := rates[r.Config.shape()]
		if !ok {
			return "-"
		}
		return fmt.Sprintf("%.2f×", r.SamplesPerSecond()/p)
	}}
}

// Table prints results in the order given. With only CPU rows it keeps the CPU
// table's columns; with a GPU row it takes the GPU layout, whose "% of FP32 peak"
// divides by peakTFLOPS. Each peer that ran adds a ratio column against it. Failed
// measurements are listed under the table.
func Table(w io.Writer, results []Result, peakTFLOPS float64) {
	cols := cpuColumns()
	for _, r := range results {
		if r.Device == gpuengine.DeviceCUDA {
			cols = gpuColumns(peakTFLOPS)
			break
		}
	}
	for _, peer := range []string{PeerNumpy, PeerTorch} {
		if rates, ran := peerRates(results, peer); ran {
			cols = append(cols, ratioColumn(peer, peerRanOn(results, peer), rates))
		}
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head, align := []string{"configuration", "implementation"}, []string{"---", "---"}
	for _, c := range cols {
		head, align = append(head, c.head), append(align, c.align)
	}
	row := func(cells []string) { fmt.Fprintf(tw, "| %s\t|\n", strings.Join(cells, "\t| ")) }
	row(head)
	fmt.Fprintf(tw, "|%s\t|\n", strings.Join(align, "\t|"))
	// Errors go under the table, numbered, so a long message does not widen a column.
	var errs []string
	for _, r := range results {
		shape := fmt.Sprintf("W=%d D=%d N=%d", r.Config.Width, r.Config.Depth, r.Config.NSamples)
		cells := []string{shape, r.Impl}
		for i, c := range cols {
			switch {
			case r.Err == nil:
				cells = append(cells, c.cell(r))
			case i == 0:
				errs = append(errs, fmt.Sprintf("error %d: %s, W=%d D=%d: %v",
					len(errs)+1, r.Impl, r.Config.Width, r.Config.Depth, r.Err))
				cells = append(cells, fmt.Sprintf("error %d", len(errs)))
			default:
				cells = append(cells, "")
			}
		}
		row(cells)
	}
	tw.Flush()
	if len(errs) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(errs, "\n"))
	}
}

// peerRates are peer's measured throughputs by shape; ran reports whether the peer
// has a row at all: a failed one still gets its column, with its error in its row.
func peerRates(results []Result, peer string) (rates map[shape]float64, ran bool) {
	rates = map[shape]float64{}
	for _, r := range results {
		if r.Peer != peer {
			continue
		}
		ran = true
		if r.Err == nil {
			rates[r.Config.shape()] = r.SamplesPerSecond()
		}
	}
	return rates, ran
}

// peerRanOn joins the distinct descriptions of what peer's rows ran.
func peerRanOn(results []Result, peer string) string {
	var seen []string
	for _, r := range results {
		if r.Peer == peer && r.RanOn != "" && !slices.Contains(seen, r.RanOn) {
			seen = append(seen, r.RanOn)
		}
	}
	return strings.Join(seen, "; ")
}
