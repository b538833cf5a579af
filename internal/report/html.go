package report

import (
	"bytes"
	"encoding/base64"
	"html/template"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/whestbake/whestbake/dataset"
)

// page is the self-contained HTML report: the figures as data: URIs, the
// dataset's key facts and the numbers behind every plot. It holds nothing
// that differs between two bakes of the same rows, no time, host or path,
// so it is as deterministic as the figures.
//
// It is parsed on first use, not when the program starts: every process
// that links the report, the GPU worker and each whestbake verb, would pay
// for it otherwise.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"num":   num,
		"count": count,
		"pct":   pct,
	}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}} (report)</title>
<style>
body { font-family: sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
img { max-width: 100%; height: auto; border: 1px solid #ddd; }
code { background: #f3f3f3; padding: 0 0.2rem; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>This report plots the ground truth of {{count .Total}} random ReLU networks ` +
		`of width {{.Width}} and depth
{{.Depth}}, each estimated from {{.Samples}} samples. ` +
		`<code>whestbake dataset report</code> made it from every
row of the dataset; the same rows always give the same page.</p>
<table>
<tr><th>width × depth</th><td>{{.Width}} × {{.Depth}}</td></tr>
<tr><th>samples per network (n_samples)</th><td>{{.Samples}}</td></tr>
<tr><th>seed protocol</th><td>{{.Protocol}}</td></tr>
{{- if .Sampler}}
<tr><th>sampler</th><td>{{.Sampler}}</td></tr>
{{- end}}
<tr><th>networks</th><td>{{count .Total}}</td></tr>
</table>
<table>
<tr><th>split</th><th>HF config</th><th>networks</th>` +
		`<th>mean of final means</th><th>final means min – max</th>` +
		`<th>mean avg_variance</th><th>avg_variance min – max</th>` +
		`<th>dead neurons</th></tr>
{{- range .Splits}}
<tr><td>{{.Name}}{{if .Default}} (default){{end}}</td><td>{{.Config}}</td>` +
		`<td>{{count .NMLPs}}</td>` +
		`<td>{{num .FinalMean}}</td><td>{{num .FinalMin}} – {{num .FinalMax}}</td>` +
		`<td>{{num .VarMean}}</td><td>{{num .VarMin}} – {{num .VarMax}}</td>` +
		`<td>{{pct .Dead}}</td></tr>
{{- end}}
</table>
{{- if .NonFinite}}
<p><strong>{{count .NonFinite}} values are NaN or infinite</strong>; ` +
		`the plots and numbers leave them out.</p>
{{- end}}
{{range .Figures}}
<h2>{{.Caption}}</h2>
<p>{{.About}}</p>
<img {{.Src}} alt="{{.Caption}}" width="{{.Width}}" height="{{.Height}}">
{{end}}
<h2>Per layer</h2>
<p>Over all MLPs and neurons of a split: ` +
		`the mean of <code>all_layer_means</code> at each layer, its standard
deviation and variance, and the fraction of dead neurons (mean exactly 0).</p>
{{- range .Splits}}
<h3>{{.Name}}</h3>
<table>
<tr><th>layer</th><th>mean</th><th>s.d.</th><th>variance</th><th>dead</th></tr>
{{- range .Layers}}
<tr><td>{{.Index}}</td><td>{{num .Mean}}</td><td>{{num .SD}}</td>` +
		`<td>{{num .Variance}}</td><td>{{pct .Dead}}</td></tr>
{{- end}}
</table>
{{- end}}
</body>
</html>
`))
})

// about says what each figure measures, for the page.
var about = map[string]string{
	"final_means.png": "Every neuron's final mean (the last layer of all_layer_means, " +
		"what estimators are scored against) of every MLP, as the fraction of a split's " +
		"neurons per bin. Bins are powers of two wide, shared by all splits. The x axis " +
		"stops past the 99th percentile of each split: the few largest means (the axis " +
		"label says how many, and the table their maximum) lie beyond it.",
	"layer_means.png": "Per layer, the mean of all_layer_means over all MLPs and all " +
		"neurons of a split: the average post-ReLU activation at that depth.",
	"layer_variance.png": "Per layer, the (population) variance of all_layer_means over " +
		"all MLPs and all neurons of a split: one number for the spread between neurons " +
		"of one network and between networks together.",
	"dead_neurons.png": "Per layer, the fraction of neurons (over all MLPs of a split) " +
		"whose mean activation is exactly 0: post-ReLU, that is a neuron that was 0 on " +
		"every sample, i.e. never active.",
	"avg_variance.png": "Every MLP's avg_variance (mean over output neurons of the " +
		"sample variance at the last layer), as the fraction of a split's MLPs per bin.",
}

type pageData struct {
	Title, Samples, Protocol, Sampler string
	Width, Depth                      string
	Total, NonFinite                  int64
	Splits                            []pageSplit
	Figures                           []pageFigure
}

type pageSplit struct {
	Name, Config                  string
	Default                       bool
	NMLPs                         int64
	FinalMean, FinalMin, FinalMax float64
	VarMean, VarMin, VarMax, Dead float64
	Layers                        []pageLayer
}

type pageLayer struct {
	Index                    int
	Mean, SD, Variance, Dead float64
}

type pageFigure struct {
	Caption, About string
	// Src is src="data:…": base64 needs no escaping, and html/template
	// would turn every + into &#43;.
	Src           template.HTMLAttr
	Width, Height int
}

// renderPage writes the HTML page of st with the figures pngs, in
// dataset.ReportFigures' order.
func renderPage(st *Stats, pngs [][]byte) ([]byte, error) {
	info := st.Info
	d := pageData{
		Title:    info.Title(),
		Samples:  dimText(info.NSamples),
		Protocol: info.SeedProtocol.Name + " (" + info.SeedProtocol.Version + ")",
		Sampler:  commonSampler(info),
	}
	var width, depth int
	for _, s := range st.Splits {
		d.Total += s.NMLPs
		width = max(width, s.Width)
		depth = max(depth, s.Depth)
		ps := pageSplit{
			Name:      s.Name,
			Config:    s.Config,
			Default:   s.Name == info.DefaultSplit,
			NMLPs:     s.NMLPs,
			FinalMean: s.FinalMeans.mean(),
			FinalMin:  s.FinalMeans.min,
			FinalMax:  s.FinalMeans.max,
			VarMean:   s.AvgVariance.mean(),
			VarMin:    s.AvgVariance.min,
			VarMax:    s.AvgVariance.max,
		}
		d.NonFinite += s.FinalMeans.nonFinite + s.AvgVariance.nonFinite
		var dead, neurons int64
		for l, ly := range s.Layers {
			ps.Layers = append(ps.Layers, pageLayer{
				Index:    l + 1,
				Mean:     ly.Mean,
				SD:       math.Sqrt(ly.Variance()),
				Variance: ly.Variance(),
				Dead:     ly.DeadFraction(),
			})
			dead += ly.Dead
			neurons += ly.Finite + ly.NonFinite
			if l < len(s.Layers)-1 { // the last layer is final_means, counted above
				d.NonFinite += ly.NonFinite
			}
		}
		ps.Dead = math.NaN()
		if neurons > 0 {
			ps.Dead = float64(dead) / float64(neurons)
		}
		d.Splits = append(d.Splits, ps)
	}
	d.Width = dimText(int64(width))
	d.Depth = dimText(int64(depth))
	for i, f := range dataset.ReportFigures {
		encoded := base64.StdEncoding.EncodeToString(pngs[i])
		d.Figures = append(d.Figures, pageFigure{
			Caption: f.Caption,
			About:   about[f.File],
			Width:   FigureWidth,
			Height:  FigureHeight,
			Src:     template.HTMLAttr(`src="data:image/png;base64,` + encoded + `"`),
		})
	}
	var b bytes.Buffer
	if err := page().Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// commonSampler is the sampler of every split, or "" when they differ or
// none is recorded.
func commonSampler(info *dataset.Info) string {
	if info.Sampler != "" {
		return info.Sampler
	}
	s := ""
	for i, sp := range info.Splits {
		if i > 0 && sp.Sampler != s {
			return ""
		}
		s = sp.Sampler
	}
	return s
}

func dimText(n int64) string {
	if n == 0 {
		return "?"
	}
	return count(n)
}

// num shows a statistic with four significant digits, and "–" where a
// split has no finite value.
func num(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(100*x, 'f', 2, 64) + " %"
}

// count formats n with thin separators every three digits.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
