package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// File is the content of bench/baseline.json: one Baseline per machine
// class, in the order they were first recorded.
type File struct {
	Baselines []Baseline `json:"baselines"`
}

// Baseline is one run of the full suite on one machine class and where it
// ran, so a reader can tell whether its figures apply to a machine.
type Baseline struct {
	// Class is the machine class, as Class.Same tells classes apart: the
	// CPU-dependent metrics gate only runs of this class.
	Class Class `json:"class"`
	// Machine is the host line of the run: CPU, cores, memory, kernel, Go,
	// forward kernel, numpy and its OpenBLAS core.
	Machine string `json:"machine"`
	// Commit is the commit the run measured, with "+dirty" when the tree had
	// changes, as it does when a change and its new baseline are committed
	// together.
	Commit string `json:"commit"`
	// Date is when the run was recorded, RFC 3339 in UTC, or a date alone in
	// entries recorded in the one-entry layout; Refs prefers the newest entry.
	Date string `json:"date"`
	// Note says what a reader should know about the entry, such as how it
	// was migrated or what it could not record.
	Note    string   `json:"note,omitempty"`
	Metrics []Metric `json:"metrics"`
}

// legacy is the one-entry layout of bench/baseline.json, which has no
// machine classes.
type legacy struct {
	Machine string   `json:"machine"`
	Commit  string   `json:"commit"`
	Date    string   `json:"date"`
	Metrics []Metric `json:"metrics"`
}

// legacyNote is the Note of an entry read from the one-entry layout.
const legacyNote = "recorded before machine classes: its class comes from the machine line, " +
	"without a family or model, so it gates no host's CPU-dependent metrics (Class.Same); " +
	"it still serves the other metrics"

// Load reads a baseline file. A file of the one-entry layout, without
// classes, as a bisect at an older commit writes it, reads as one entry whose
// class comes from its machine line.
func Load(path string) (File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("baseline: %w (record one with `make bench-baseline`)", err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return File{}, fmt.Errorf("baseline %s: %v", path, err)
	}
	if _, old := probe["metrics"]; old {
		var l legacy
		if err := json.Unmarshal(data, &l); err != nil {
			return File{}, fmt.Errorf("baseline %s: %v", path, err)
		}
		return File{Baselines: []Baseline{{
			Class:   classOfMachineLine(l.Machine),
			Machine: l.Machine,
			Commit:  l.Commit,
			Date:    l.Date,
			Note:    legacyNote,
			Metrics: l.Metrics,
		}}}, nil
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return File{}, fmt.Errorf("baseline %s: %v", path, err)
	}
	return f, nil
}

// Put replaces the entry of b's class with b, or appends b when the file has
// none: `make bench-baseline` writes only the class it runs on.
func (f *File) Put(b Baseline) {
	for i := range f.Baselines {
		if f.Baselines[i].Class.Same(b.Class) {
			f.Baselines[i] = b
			return
		}
	}
	f.Baselines = append(f.Baselines, b)
}

// Save writes f to path, one metric per line so a re-baseline reads as a
// diff of the metrics it changed.
func Save(path string, f File) error {
	out := []byte(`{"baselines": [`)
	for i, b := range f.Baselines {
		head, err := json.Marshal(struct {
			Class   Class  `json:"class"`
			Machine string `json:"machine"`
			Commit  string `json:"commit"`
			Date    string `json:"date"`
			Note    string `json:"note,omitempty"`
		}{
			Class:   b.Class,
			Machine: b.Machine,
			Commit:  b.Commit,
			Date:    b.Date,
			Note:    b.Note,
		})
		if err != nil {
			return err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '\n')
		out = append(out, head[:len(head)-1]...)
		out = append(out, ",\n\"metrics\": ["...)
		for j, m := range b.Metrics {
			m.Values = slices.Clone(m.Values)
			for k, v := range m.Values {
				m.Values[k] = round4(v)
			}
			line, err := json.Marshal(m)
			if err != nil {
				return err
			}
			if j > 0 {
				out = append(out, ',')
			}
			out = append(out, "\n  "...)
			out = append(out, line...)
		}
		out = append(out, "\n]}"...)
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
// place and appends the new ones: accepting a change to some metrics with
// `make bench-baseline ONLY=...` leaves the rest of the baseline as it was.
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
