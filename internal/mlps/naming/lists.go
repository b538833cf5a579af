package naming

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The lists are faker 37.12.0's en_US first_names (male list updated with the female
// list) and last_names, extracted by testdata/extract_lists.py with each weight written
// exactly as in faker's source.
var (
	//go:embed data/first_names.tsv
	firstNamesTSV string
	//go:embed data/last_names.tsv
	lastNamesTSV string
)

// weightedList mirrors what random.choices builds per call: the population and the
// running float64 sums of its weights. Building it once keeps Name cheap.
type weightedList struct {
	names []string
	cum   []float64
}

type nameLists struct {
	first, last weightedList
}

var lists = sync.OnceValue(func() nameLists {
	return nameLists{
		first: mustParseList("data/first_names.tsv", firstNamesTSV),
		last:  mustParseList("data/last_names.tsv", lastNamesTSV),
	}
})

// mustParseList panics because the data is embedded at build time: a malformed file is
// a broken build, not a runtime condition a caller could handle.
func mustParseList(file, text string) weightedList {
	l, err := parseList(text)
	if err != nil {
		msg := fmt.Sprintf(
			"naming: embedded %s: %v (regenerate it with testdata/extract_lists.py)",
			file,
			err,
		)
		panic(msg)
	}
	return l
}

func parseList(text string) (weightedList, error) {
	var l weightedList
	total := 0.0
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		name, weightText, ok := strings.Cut(line, "\t")
		if !ok || name == "" {
			return weightedList{}, fmt.Errorf(
				"line %d: want \"name<TAB>weight\", got %q",
				i+1,
				line,
			)
		}
		w, err := strconv.ParseFloat(weightText, 64)
		if err != nil || !(w >= 0) {
			return weightedList{}, fmt.Errorf(
				"line %d: weight %q must be a non-negative float",
				i+1,
				weightText,
			)
		}
		// Accumulate in list order, as itertools.accumulate does, so the sums round identically.
		total += w
		l.names = append(l.names, name)
		l.cum = append(l.cum, total)
	}
	if !(total > 0) {
		return weightedList{}, fmt.Errorf("total weight %v must be positive", total)
	}
	return l, nil
}

// pick is random.choices(names, weights, k=1)[0]: bisect_right(cum, u*total, 0, n-1).
// The hi bound of n-1 guards against u*total rounding past the last sum.
func (l *weightedList) pick(m *mt19937) string {
	n := len(l.cum)
	x := m.random() * l.cum[n-1]
	i := sort.Search(n-1, func(i int) bool { return l.cum[i] > x })
	return l.names[i]
}
