package parquet

import (
	"sync"

	"github.com/klauspost/compress/zstd"
	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// pageWindow is the zstd window of the pages' encoders: twice pageBuffer,
// so that a whole page is one window and the output is what the default
// window of 4 MiB gives. An encoder's history is two windows: 1 MiB here,
// where the default's was 8 MiB.
const pageWindow = 2 * pageBuffer

// pageCodec compresses every Parquet file's pages. It is one value for all
// files so that its encoders outlive a file: parquet-go's codec, made per
// file, built an encoder with its 8 MiB history for each file, and on 16
// cores (-j 16) clearing those histories took 6 % of convert's CPU.
var pageCodec = &codec{}

// codec is parquet-go's zstd codec at the fastest level, with encoders of
// pageWindow pooled across files; decoding is parquet-go's.
type codec struct {
	pqzstd.Codec
	encoders sync.Pool // *zstd.Encoder
}

// Encode compresses src into dst as one zstd frame.
func (c *codec) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.encoders.Get().(*zstd.Encoder)
	if e == nil {
		var err error
		e, err = zstd.NewWriter(nil,
			zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithWindowSize(pageWindow),
			zstd.WithZeroFrames(true),
			zstd.WithEncoderCRC(false))
		if err != nil {
			return dst[:0], err
		}
	}
	defer c.encoders.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
}
