package gate

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// Baseline is the content of bench/baseline.json: one run of the full suite
// and where it ran, so a reader can tell whether its figures apply to a
// machine.
type Baseline struct {
	// Machine is the host line of the run (CPU, cores, memory, kernel, Go,
	// forward kernel); speed ratios hold for that machine only.
	Machine string `json:"machine"`
	// Commit is the commit the run measured (with "+dirty" when the tree had
	// changes, as it does when a change and its new baseline are committed
	// together).
	Commit  string   `json:"commit"`
	Date    string   `json:"date"`
	Metrics []Metric `json:"metrics"`
}

// Load reads a baseline file.
func Load(path string) (Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Baseline{}, fmt.Errorf("baseline: %w (record one with `make bench-baseline`)", err)
	}
	var b Baseline
	if err := json.Unmarshal(data, &b); err != nil {
		return Baseline{}, fmt.Errorf("baseline %s: %v", path, err)
	}
	return b, nil
}

// Save writes b to path, one metric per line so a re-baseline reads as a
// diff of the metrics it changed.
func Save(path string, b Baseline) error {
	head, err := json.Marshal(struct {
		Machine string `json:"machine"`
		Commit  string `json:"commit"`
		Date    string `json:"date"`
	}{b.Machine, b.Commit, b.Date})
	if err != nil {
		return err
	}
	out := append(head[:len(head)-1], ",\n\"metrics\": ["...)
	for i, m := range b.Metrics {
		m.Values = slices.Clone(m.Values)
		for j, v := range m.Values {
			m.Values[j] = round4(v)
		}
		line, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, "\n  "...)
		out = append(out, line...)
	}
	out = append(out, "\n]}\n"...)
	return os.WriteFile(path, out, 0o644)
}

// round4 keeps four significant digits, more than any figure's noise
// justifies, so the file stays readable.
func round4(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return f
}

// Merge replaces the metrics of base that run measured, keeps the others in
// place and appends the new ones: accepting a change to some metrics
// (`make bench-baseline ONLY=...`) leaves the rest of the baseline as it was.
func Merge(base, run []Metric) []Metric {
	byKey := map[string]Metric{}
	for _, m := range run {
		byKey[m.Key()] = m
	}
	out := make([]Metric, 0, len(base)+len(run))
	for _, m := range base {
		if r, ok := byKey[m.Key()]; ok {
			m = r
			delete(byKey, m.Key())
		}
		out = append(out, m)
	}
	for _, m := range run {
		if _, ok := byKey[m.Key()]; ok {
			out = append(out, m)
		}
	}
	return out
}
