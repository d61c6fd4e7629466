package occatest

import "github.com/libocca/occa-tools/formats/trace"

// Launch is a launch of a trace with what its events say of it.
type Launch struct {
	Corr, Stream uint64
	Begin, End   int64      // host clock; End 0 when it has no end
	DeviceTimes  [][2]int64 // each device_time's [start, end)
}

// Launches returns ev's launches in the order they began, each with its
// ends and device times, and the correlation ids of device times that
// belong to no launch, in file order.
func Launches(ev *Events) (launches []Launch, orphans []uint64) {
	at := map[uint64]int{} // correlation id -> index in launches
	for _, e := range ev.Events {
		switch e.Kind {
		case trace.RunBegin:
			at[e.Args[0]] = len(launches)
			launches = append(launches, Launch{Corr: e.Args[0], Stream: e.Args[3], Begin: e.Time})
		case trace.RunEnd:
			if i, ok := at[e.Args[0]]; ok {
				launches[i].End = e.Time
			}
		case trace.DeviceTime:
			if i, ok := at[e.Args[0]]; ok {
				launches[i].DeviceTimes = append(launches[i].DeviceTimes, [2]int64{int64(e.Args[1]), int64(e.Args[2])})
			} else {
				orphans = append(orphans, e.Args[0])
			}
		}
	}
	return launches, orphans
}
