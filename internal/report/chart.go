package report

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// The figures are drawn here, on an image with x/image's anti-aliasing
// rasteriser and the Go font, rather than with a plotting library: the
// ones at hand, such as gonum/plot, parse a dozen fonts and build LaTeX symbol
// tables when the program starts, about 6 MiB in every process that links
// them — the GPU worker and every whestbake verb — for five line charts.
// Parsing one font happens only when a report is drawn.

// Every figure is FigureWidth × FigureHeight pixels.
const (
	FigureWidth  = 800
	FigureHeight = 450
	dpi          = 96
)

// palette gives each split a colour and a dash pattern, in pixels on and
// off. The colours are Okabe and Ito's, which colour-blind readers tell
// apart too.
var palette = []struct {
	color  color.NRGBA
	dashes []float64
}{
	{color.NRGBA{0x00, 0x72, 0xb2, 0xff}, nil},
	{color.NRGBA{0xe6, 0x9f, 0x00, 0xff}, []float64{8, 4}},
	{color.NRGBA{0x00, 0x9e, 0x73, 0xff}, []float64{2, 3}},
	{color.NRGBA{0xd5, 0x5e, 0x00, 0xff}, []float64{8, 3, 2, 3}},
	{color.NRGBA{0xcc, 0x79, 0xa7, 0xff}, []float64{12, 4}},
	{color.NRGBA{0x56, 0xb4, 0xe9, 0xff}, []float64{4, 4}},
}

func seriesColor(i int) color.NRGBA { return palette[i%len(palette)].color }

var (
	ink       = color.NRGBA{0x22, 0x22, 0x22, 0xff}
	gridColor = color.NRGBA{0xdd, 0xdd, 0xdd, 0xff}
	white     = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// fonts are the faces a figure uses, from one parse of the Go font.
type fonts struct{ title, label, tick font.Face }

func loadFonts() (*fonts, error) {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, err
	}
	face := func(pt float64) (font.Face, error) {
		return opentype.NewFace(f, &opentype.FaceOptions{
			Size:    pt,
			DPI:     dpi,
			Hinting: font.HintingNone,
		})
	}
	var fs fonts
	for _, x := range []struct {
		dst *font.Face
		pt  float64
	}{{&fs.title, 12}, {&fs.label, 10.5}, {&fs.tick, 9.5}} {
		if *x.dst, err = face(x.pt); err != nil {
			return nil, err
		}
	}
	return &fs, nil
}

type point struct{ x, y float64 }

// tick is a mark on an axis; one without a label is a minor one.
type tick struct {
	value float64
	label string
}

// series is one split's line on a chart, in data coordinates.
type series struct {
	name    string
	points  []point
	markers bool
}

// chart is a line chart: the axes' ranges and ticks, and a series per split.
type chart struct {
	title, xLabel, yLabel  string
	xMin, xMax, yMin, yMax float64
	xTicks, yTicks         []tick
	series                 []series
}

// canvas is the image a chart is drawn on, in pixels, y down.
type canvas struct {
	img    *image.RGBA
	raster vector.Rasterizer
}

func newCanvas() *canvas {
	c := &canvas{img: image.NewRGBA(image.Rect(0, 0, FigureWidth, FigureHeight))}
	draw.Draw(c.img, c.img.Bounds(), image.NewUniform(white), image.Point{}, draw.Src)
	return c
}

// begin starts a shape; fill draws every polygon added since in one
// colour. Polygons all go round the same way, clockwise on the image, so
// where they overlap the coverage adds up instead of cancelling.
func (c *canvas) begin() { c.raster.Reset(FigureWidth, FigureHeight) }

func (c *canvas) fill(col color.NRGBA) {
	c.raster.Draw(c.img, c.img.Bounds(), image.NewUniform(col), image.Point{})
}

func (c *canvas) polygon(ps ...point) {
	c.raster.MoveTo(float32(ps[0].x), float32(ps[0].y))
	for _, p := range ps[1:] {
		c.raster.LineTo(float32(p.x), float32(p.y))
	}
	c.raster.ClosePath()
}

// segment adds a line of width w from a to b as a rectangle.
func (c *canvas) segment(a, b point, w float64) {
	dx, dy := b.x-a.x, b.y-a.y
	l := math.Hypot(dx, dy)
	if l == 0 {
		return
	}
	nx, ny := -dy/l*w/2, dx/l*w/2
	c.polygon(
		point{a.x + nx, a.y + ny},
		point{b.x + nx, b.y + ny},
		point{b.x - nx, b.y - ny},
		point{a.x - nx, a.y - ny},
	)
}

// disc adds a filled circle.
func (c *canvas) disc(p point, r float64) {
	const n = 16
	ps := make([]point, n)
	for k := range ps {
		a := -2 * math.Pi * float64(k) / n
		ps[k] = point{p.x + r*math.Cos(a), p.y + r*math.Sin(a)}
	}
	c.polygon(ps...)
}

// stroke adds a polyline of width w with round joins to the shape, dashed
// when dashes is not empty.
func (c *canvas) stroke(ps []point, w float64, dashes []float64) {
	on, left, k := true, math.Inf(1), 0
	if len(dashes) > 0 {
		left = dashes[0]
	}
	for i := 1; i < len(ps); i++ {
		a, b := ps[i-1], ps[i]
		l := math.Hypot(b.x-a.x, b.y-a.y)
		for done := 0.0; done < l; {
			step := min(left, l-done)
			p := point{a.x + (b.x-a.x)*done/l, a.y + (b.y-a.y)*done/l}
			q := point{a.x + (b.x-a.x)*(done+step)/l, a.y + (b.y-a.y)*(done+step)/l}
			if on {
				c.segment(p, q, w)
				c.disc(q, w/2)
			}
			done += step
			if left -= step; left <= 0 {
				k = (k + 1) % len(dashes)
				on, left = !on, dashes[k]
			}
		}
	}
}

// line draws one polyline in col.
func (c *canvas) line(ps []point, w float64, dashes []float64, col color.NRGBA) {
	c.begin()
	c.stroke(ps, w, dashes)
	c.fill(col)
}

// text draws s with its baseline at y; ax places it: 0 starts at x, 0.5
// centres it on x, 1 ends at x.
func (c *canvas) text(face font.Face, s string, x, y, ax float64, col color.NRGBA) {
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: face}
	w := float64(d.MeasureString(s)) / 64
	d.Dot = fixed.Point26_6{
		X: fixed.Int26_6(math.Round((x - ax*w) * 64)),
		Y: fixed.Int26_6(math.Round(y * 64)),
	}
	d.DrawString(s)
}

// textUp draws s turned a quarter left to read upwards, centred on x, y:
// drawn level on its own image, then turned pixel by pixel.
func (c *canvas) textUp(face font.Face, s string, x, y float64, col color.NRGBA) {
	m := face.Metrics()
	w := font.MeasureString(face, s).Ceil()
	h := (m.Ascent + m.Descent).Ceil()
	flat := image.NewRGBA(image.Rect(0, 0, w, h))
	d := font.Drawer{
		Dst:  flat,
		Src:  image.NewUniform(col),
		Face: face,
		Dot:  fixed.Point26_6{Y: m.Ascent},
	}
	d.DrawString(s)
	up := image.NewRGBA(image.Rect(0, 0, h, w))
	for fy := range h {
		for fx := range w {
			up.SetRGBA(fy, w-1-fx, flat.RGBAAt(fx, fy))
		}
	}
	at := image.Pt(int(math.Round(x))-h/2, int(math.Round(y))-w/2)
	draw.Draw(c.img, up.Bounds().Add(at), up, image.Point{}, draw.Over)
}

func textWidth(face font.Face, s string) float64 {
	return float64(font.MeasureString(face, s)) / 64
}

// lineHeight is the height of a line of face's text.
func lineHeight(face font.Face) float64 {
	m := face.Metrics()
	return float64(m.Ascent+m.Descent) / 64
}

// draw renders the chart as a PNG: the title on top, the legend of split
// names in a column to the right where it hides no data, the y label
// turned upwards on the left.
func (ch *chart) draw(fs *fonts) ([]byte, error) {
	c := newCanvas()
	const margin, tickLen, gap = 10.0, 5.0, 6.0
	var legendW float64
	for _, s := range ch.series {
		legendW = max(legendW, textWidth(fs.label, s.name))
	}
	legendW = min(legendW+40+2*margin, FigureWidth/4)
	var yTickW float64
	for _, t := range ch.yTicks {
		yTickW = max(yTickW, textWidth(fs.tick, t.label))
	}
	titleH, labelH, tickH := lineHeight(fs.title), lineHeight(fs.label), lineHeight(fs.tick)
	left := margin + labelH + gap + yTickW + gap + tickLen
	right := FigureWidth - legendW
	top := margin + titleH + gap
	bottom := FigureHeight - margin - labelH - gap - tickH - gap - tickLen
	px := func(v float64) float64 { return left + (v-ch.xMin)/(ch.xMax-ch.xMin)*(right-left) }
	py := func(v float64) float64 { return bottom - (v-ch.yMin)/(ch.yMax-ch.yMin)*(bottom-top) }

	// Grid, axes and ticks, each colour in one pass of the rasteriser.
	c.begin()
	for _, t := range ch.xTicks {
		if t.label != "" {
			c.stroke([]point{{px(t.value), top}, {px(t.value), bottom}}, 1, nil)
		}
	}
	for _, t := range ch.yTicks {
		c.stroke([]point{{left, py(t.value)}, {right, py(t.value)}}, 1, nil)
	}
	c.fill(gridColor)
	c.begin()
	c.stroke([]point{{left, top}, {left, bottom}, {right, bottom}}, 1, nil)
	for _, t := range ch.xTicks {
		l := tickLen
		if t.label == "" {
			l /= 2
		}
		c.stroke([]point{{px(t.value), bottom}, {px(t.value), bottom + l}}, 1, nil)
	}
	for _, t := range ch.yTicks {
		c.stroke([]point{{left - tickLen, py(t.value)}, {left, py(t.value)}}, 1, nil)
	}
	c.fill(ink)
	tickAscent := float64(fs.tick.Metrics().Ascent) / 64
	for _, t := range ch.xTicks {
		if t.label != "" {
			c.text(fs.tick, t.label, px(t.value), bottom+tickLen+gap+tickAscent, 0.5, ink)
		}
	}
	for _, t := range ch.yTicks {
		c.text(fs.tick, t.label, left-tickLen-gap, py(t.value)+tickAscent/2-1, 1, ink)
	}
	titleAscent := float64(fs.title.Metrics().Ascent) / 64
	labelDescent := float64(fs.label.Metrics().Descent) / 64
	c.text(fs.title, ch.title, (left+right)/2, margin+titleAscent, 0.5, ink)
	c.text(fs.label, ch.xLabel, (left+right)/2, FigureHeight-margin-labelDescent, 0.5, ink)
	c.textUp(fs.label, ch.yLabel, margin+labelH/2, (top+bottom)/2, ink)

	// The series, then the legend.
	for i, s := range ch.series {
		pts := make([]point, len(s.points))
		for j, p := range s.points {
			pts[j] = point{px(p.x), py(p.y)}
		}
		c.line(pts, 2, palette[i%len(palette)].dashes, seriesColor(i))
		if s.markers {
			c.begin()
			for _, p := range pts {
				c.disc(p, 3.5)
			}
			c.fill(seriesColor(i))
		}
		y := top + float64(i)*(labelH+4) + labelH/2
		x := right + margin
		c.line([]point{{x, y}, {x + 28, y}}, 2, palette[i%len(palette)].dashes, seriesColor(i))
		if s.markers {
			c.begin()
			c.disc(point{x + 14, y}, 3.5)
			c.fill(seriesColor(i))
		}
		c.text(fs.label, s.name, x+36, y+float64(fs.label.Metrics().Ascent)/64/2-1, 0, ink)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, c.img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// niceTicks are labelled ticks in [lo, hi] at the multiples of the
// smallest step of 1, 2 or 5 × 10^k that is at least (hi − lo)/n: at most
// n+1 of them, labelled with as many decimals as the step has.
func niceTicks(lo, hi float64, n int) []tick {
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ts []tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v := k * step
		if v == 0 {
			v = 0 // no "-0"
		}
		ts = append(ts, tick{v, strconv.FormatFloat(v, 'f', decimals, 64)})
	}
	return ts
}
