package summary

import "slices"

// maxNames is how many names a by-name table (kernels, builds, OpenMP
// figures by kernel, steps, MPI functions) keeps rows of: the first in
// byte order. The others are summed in one row (otherKernels, ...). Names
// are strings and ids of the trace: 200,000 kernel ids in an 800 KB trace
// took summary's heap to 243 MiB and its report to 14.8 MB, and a
// kernel's figures alone may hold 66 KiB.
const maxNames = 1024

const (
	otherKernels   = "(other kernels)"
	otherRegions   = "(other regions)"
	otherFunctions = "(other functions)"
)

// nameCut keeps a by-name table to the maxNames smallest names in byte
// order: whatever order names, traces and collectors come in, the same
// names keep rows and the same figures go to the other row, as they all
// merge exactly. While a collector sums, a table may hold a quarter more,
// so that it is trimmed once per maxNames/4 new names.
type nameCut struct {
	cut   bool   // names after last go to the other row
	last  string // the largest name kept
	trims int    // times the table was trimmed: pointers into it went stale
}

// named returns the figures that name's go into in m (its own, or the
// other row's), trimming m first when it is full.
func named[V any](m map[string]*V, n *nameCut, name, other string, merge func(dst, src *V)) *V {
	if v := m[name]; v != nil {
		return v
	}
	if (!n.cut || name <= n.last) && len(m) >= maxNames+maxNames/4 {
		trimNames(m, n, other, merge)
	}
	if n.cut && name > n.last {
		name = other
	}
	return getOr(m, name)
}

// trimNames keeps the maxNames smallest names of m, summing the others
// into m[other].
func trimNames[V any](m map[string]*V, n *nameCut, other string, merge func(dst, src *V)) {
	names := make([]string, 0, len(m))
	for k := range m {
		if k != other {
			names = append(names, k)
		}
	}
	if len(names) <= maxNames {
		return
	}
	slices.Sort(names)
	o := m[other]
	if o == nil {
		o = new(V)
		m[other] = o
	}
	for _, k := range names[maxNames:] {
		merge(o, m[k])
		delete(m, k)
	}
	n.cut, n.last = true, names[maxNames-1]
	n.trims++
}

func mergeKernel(dst, src *kernelStats) {
	dst.host.Merge(&src.host)
	dst.dev.Merge(&src.dev)
}

func mergeBuild(dst, src *buildStats) {
	dst.Dist.Merge(&src.Dist)
	dst.hits, dst.misses, dst.failed = dst.hits+src.hits, dst.misses+src.misses, dst.failed+src.failed
}

func mergeStep(dst, src *stepStats) { dst.merge(src) }

func mergeOMP(dst, src *ompStats) { dst.merge(src) }

func mergeMPI(dst, src *mpiStats) { dst.merge(src) }

// trimTables trims every by-name table to exactly maxNames names, so that
// a report or a partial summary holds the same rows whatever order the
// names came in.
func (c *Collector) trimTables() {
	trimNames(c.kernels, &c.kernelCut, otherKernels, mergeKernel)
	trimNames(c.builds, &c.buildCut, otherKernels, mergeBuild)
	trimNames(c.steps, &c.stepCut, otherRegions, mergeStep)
	if c.ompBy != nil {
		trimNames(c.ompBy, &c.ompCut, otherKernels, mergeOMP)
	}
	trimNames(c.mpi, &c.mpiCut, otherFunctions, mergeMPI)
	clear(c.kernBy)
}
