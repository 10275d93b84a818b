package loadgen

import (
	"runtime"
	"time"
)

// usage is what the whole process, the embedded server included, has used
// so far.
type usage struct {
	cpu        time.Duration // user and system CPU time; 0 where unknown
	allocBytes uint64        // bytes allocated on the heap
	allocs     uint64        // heap objects allocated
}

// readUsage returns the process's usage now. It stops the world briefly.
func readUsage() usage {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return usage{cpu: processCPU(), allocBytes: ms.TotalAlloc, allocs: ms.Mallocs}
}

// setUsage fills in the usage columns of r from the usage between start
// and end.
func (r *RunResult) setUsage(start, end usage) {
	n := float64(r.Events)
	r.CPUSeconds = (end.cpu - start.cpu).Seconds()
	r.CPUMicrosPerEvent = (end.cpu - start.cpu).Seconds() * 1e6 / n
	r.AllocsPerEvent = float64(end.allocs-start.allocs) / n
	r.AllocBytesPerEvent = float64(end.allocBytes-start.allocBytes) / n
}
