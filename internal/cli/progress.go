package cli

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is a thread-safe bar with ETA on a terminal, and a no-op elsewhere so
// logs and CI output stay clean.
type progress struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

func newProgress(w io.Writer, label, unit string, total int64) *progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || os.Getenv("WHESTBAKE_NO_PROGRESS") != "" {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionShowIts(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionFullWidth(),
		progressbar.OptionClearOnFinish(),
	)}
}

// Add records n more finished units.
func (p *progress) Add(n int64) {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	_ = p.bar.Add64(n)
	p.mu.Unlock()
}

// Finish removes the bar.
func (p *progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
