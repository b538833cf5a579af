package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows how far a long local verb is: a thread-safe bar with ETA
// on a terminal; elsewhere, in logs, CI or a pipe, a timestamped line at
// most every progressEvery while the work advances, as `bake --wait` prints
// its lines, so that a log shows the bake alive without a bar's redraws.
// WHESTBAKE_NO_PROGRESS silences both.
type progress struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
	// Without a terminal: where the lines go, nil for nowhere, and the account.
	lines        io.Writer
	label, unit  string
	total, done  int64
	start, shown time.Time
}

// progressEvery is the least time between two progress lines.
var progressEvery = 5 * time.Second

func newProgress(w io.Writer, label, unit string, total int64) *progress {
	if os.Getenv("WHESTBAKE_NO_PROGRESS") != "" {
		return &progress{}
	}
	if f, ok := w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		now := time.Now()
		return &progress{
			lines: w,
			label: label,
			unit:  unit,
			total: total,
			start: now,
			shown: now,
		}
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
	if p.bar == nil && p.lines == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Add64(n)
		return
	}
	p.done += n
	if now := time.Now(); now.Sub(p.shown) >= progressEvery {
		p.shown = now
		fmt.Fprintln(p.lines, p.line(now))
	}
}

// line is the progress line at now: share done, counts, time so far, and
// the time left at the rate so far.
func (p *progress) line(now time.Time) string {
	elapsed := now.Sub(p.start)
	percent := 100 * float64(p.done) / float64(max(p.total, 1))
	s := fmt.Sprintf("%s %s: %.1f%% (%d/%d %s), %s", now.Format(time.TimeOnly), p.label,
		percent, p.done, p.total, p.unit, formatDuration(elapsed))
	if p.done > 0 && p.done < p.total {
		left := time.Duration(float64(elapsed) * float64(p.total-p.done) / float64(p.done))
		s += ", ETA " + formatDuration(left)
	}
	return s
}

// Finish removes the bar.
func (p *progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
