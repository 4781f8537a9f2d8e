package pipeline

import (
	"context"
	"fmt"

	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/writers"
)

// drawFigures renders what a Figurer drew (d; nil for a job that draws
// nothing), --concurrency figures at once (each into its own slot), and
// returns the figure files (figure-<name>.svg and .png, in the job's
// order), the report with its Figures section appended, and report.html
// built from that report.
func (j *job) drawFigures(ctx context.Context, d *scoring.Drawn, report string) ([]outFile, string, []byte, error) {
	if d == nil {
		d = &scoring.Drawn{}
	}
	type drawn struct {
		svg, png []byte
		err      error
	}
	slots := make([]drawn, len(d.Figures))
	j.parallel(len(d.Figures), func(i int) {
		if ctx.Err() != nil {
			return
		}
		phase("figures")
		s := &slots[i]
		if s.svg, s.err = d.Figures[i].SVG(); s.err == nil {
			s.png, s.err = d.Figures[i].PNG()
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, "", nil, err
	}
	var files []outFile
	var refs []writers.FigureRef
	var inline []writers.Figure
	for i, f := range d.Figures {
		if slots[i].err != nil {
			return nil, "", nil, fmt.Errorf("drawing %s: %w", f.Name, slots[i].err)
		}
		svg, png := "figure-"+f.Name+".svg", "figure-"+f.Name+".png"
		files = append(files, outFile{name: svg, data: slots[i].svg}, outFile{name: png, data: slots[i].png})
		refs = append(refs, writers.FigureRef{Title: f.Title, PNG: png, SVG: svg, Caption: f.Caption})
		inline = append(inline, writers.Figure{PNG: png, SVG: slots[i].svg})
	}
	report += writers.FiguresSection(refs)
	page, err := writers.HTML(report, inline)
	if err != nil {
		return nil, "", nil, fmt.Errorf("report.html: %w", err)
	}
	return files, report, page, nil
}
