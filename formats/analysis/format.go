package analysis

import (
	"fmt"
	"io"
	"strconv"

	"github.com/libocca/occa-tools/formats/trace"
)

// Format writes r as one readable line, for golden tests and debugging.
func Format(w io.Writer, p *Process, r *Row) error {
	b := make([]byte, 0, 160)
	b = fmt.Appendf(b, "rank=%d t%d %s", p.Rank, r.Thread, KindName(r.Kind))
	if r.Name != "" {
		b = append(b, ' ')
		b = strconv.AppendQuote(b, r.Name)
	}
	b = fmt.Appendf(b, " start=%d dur=%d", r.Start-p.Header.MonoStart, r.Dur)
	field := func(name string, v uint64) {
		if v != 0 {
			b = fmt.Appendf(b, " %s=%d", name, v)
		}
	}
	field("corr", r.Corr)
	field("status", r.Status)
	field("device", r.Device)
	field("stream", r.Stream)
	field("kernel", r.Kernel)
	field("memory", r.Memory)
	field("src", r.Src)
	field("dst", r.Dst)
	field("bytes", r.Bytes)
	field("aux", r.Aux)
	if d := r.Direction(); d != "" {
		b = append(b, " dir="+d...)
	}
	if r.DevDur >= 0 {
		if r.DevStart != 0 {
			b = fmt.Appendf(b, " dev_start=%d", r.DevStart-p.Header.MonoStart)
		}
		b = fmt.Appendf(b, " dev_dur=%d", r.DevDur)
	}
	if o := r.OMP; o != nil {
		b = append(b, " omp:"...)
		field("id", o.ID)
		field("parallel", o.Parallel)
		field("task", o.Task)
		field("parent", o.Parent)
		field("src_task", o.SrcTask)
		switch {
		case r.Kind == trace.OmpParallelBegin:
			field("requested_team", uint64(o.TeamSize))
		case o.TeamSize != 0:
			b = fmt.Appendf(b, " thread_num=%d team=%d", o.ThreadNum, o.TeamSize)
		}
		field("type", o.Type)
		field("count", o.Count)
		field("flags", o.Flags)
		field("launch", o.Launch)
		field("address", o.Address)
		if o.Created != 0 {
			b = fmt.Appendf(b, " created=%d", o.Created-p.Header.MonoStart)
		}
		if o.TaskTime != 0 {
			b = fmt.Appendf(b, " task_time=%d", o.TaskTime)
		}
		if o.Completed {
			b = append(b, " completed"...)
		}
		if o.HasDeps {
			b = append(b, " has_deps"...)
		}
	}
	b = append(b, '\n')
	_, err := w.Write(b)
	return err
}
