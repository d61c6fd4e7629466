package perfetto

// A minimal protobuf encoder for the Perfetto trace messages we write
// (field numbers in /work/shared/notes and perfetto_trace.proto).

const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
)

// Field numbers.
const (
	fTracePacket = 1

	fPktTimestamp      = 8
	fPktTimestampClock = 58
	fPktClockSnapshot  = 6
	fPktDefaults       = 59
	fPktTrackEvent     = 11
	fPktSeqID          = 10
	fPktInterned       = 12
	fPktSeqFlags       = 13
	fPktTrackDesc      = 60
	fPktFirstOnSeq     = 87
	fPktCompressed     = 50 // compressed_packets: a zlib-compressed Trace
	fTDUUID            = 1
	fTDName            = 2
	fTDProcess         = 3
	fTDThread          = 4
	fTDParent          = 5
	fTDCounter         = 8
	fTDChildOrder      = 11
	fTDSiblingRank     = 12
	fPDPid             = 1
	fPDName            = 6
	fThPid             = 1
	fThTid             = 2
	fThName            = 5
	fCDUnit            = 3
	fTEType            = 9
	fTENameIID         = 10
	fTETrack           = 11
	fTECategories      = 22
	fTECounterValue    = 30
	fTEFlowIDs         = 47
	fTETermFlowIDs     = 48
	fTEDebug           = 4
	fDAName            = 10
	fDANameIID         = 1
	fIDDebugNames      = 3
	fDAUint            = 3
	fDAString          = 6
	fIDEventNames      = 2
	fINIID             = 1
	fINName            = 2
	fCSClocks          = 1 // ClockSnapshot.clocks
	fClkID             = 1 // ClockSnapshot.Clock
	fClkTimestamp      = 2
	fClkIncremental    = 3
	fClkUnitNs         = 4
	fDefClock          = 58 // TracePacketDefaults.timestamp_clock_id
	fDefTrackEvent     = 11 // TracePacketDefaults.track_event_defaults
	fTEDTrack          = 11 // TrackEventDefaults.track_uuid
	clockBoottime      = 6  // BuiltinClock BOOTTIME, the trace's clock
	seqIncrementalClr  = 1
	seqNeedsIncrState  = 2
	typeSliceBegin     = 1
	typeSliceEnd       = 2
	typeInstant        = 3
	typeCounter        = 4
	unitSizeBytes      = 3
	childOrderExplicit = 3
)

type enc []byte

func (b enc) varint(v uint64) enc {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func (b enc) tag(field, wire int) enc { return b.varint(uint64(field)<<3 | uint64(wire)) }

func (b enc) uint(field int, v uint64) enc { return b.tag(field, wireVarint).varint(v) }

func (b enc) int(field int, v int64) enc { return b.tag(field, wireVarint).varint(uint64(v)) }

func (b enc) fixed64(field int, v uint64) enc {
	b = b.tag(field, wireI64)
	for i := 0; i < 8; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

func (b enc) str(field int, s string) enc {
	b = b.tag(field, wireLen).varint(uint64(len(s)))
	return append(b, s...)
}

func (b enc) bytes(field int, m []byte) enc {
	b = b.tag(field, wireLen).varint(uint64(len(m)))
	return append(b, m...)
}
