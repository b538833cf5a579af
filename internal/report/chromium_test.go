package report

import (
	"context"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/whestbake/whestbake/dataset"
)

// TestPageRendersInHeadlessChromium opens the page in a real browser, when
// one is installed (CI does not install one), and looks for each split's
// series colour in the screenshot: pixels that only the embedded figures
// can have put there.
func TestPageRendersInHeadlessChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; not under -short")
	}
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium in PATH (apt-get install chromium runs this check)")
	}
	tmp := t.TempDir()
	pub, _, _ := randomSplit(t, tmp, "public", 30, 8, 5, 5)
	hold, _, _ := randomSplit(t, tmp, "holdout", 12, 8, 5, 6)
	out := filepath.Join(tmp, "combined")
	if err := Combine([]string{pub, hold}, out, ""); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(tmp, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless",
		"--no-sandbox",
		"--disable-gpu",
		"--hide-scrollbars",
		"--user-data-dir="+filepath.Join(tmp, "profile"),
		"--window-size=1200,4200",
		"--screenshot="+shot,
		"file://"+filepath.Join(out, dataset.ReportDir, dataset.ReportPage))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, b)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		want := color.NRGBAModel.Convert(seriesColor(i)).(color.NRGBA)
		n := 0
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				if c.R == want.R && c.G == want.G && c.B == want.B {
					n++
				}
			}
		}
		if n < 100 {
			t.Errorf("the screenshot has %d pixels of split %d's colour %v: "+
				"the figures did not render", n, i, want)
		}
	}
}
