module github.com/libocca/occa-tools

go 1.24.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/klauspost/compress v1.18.2
	github.com/mattn/go-isatty v0.0.20
	github.com/parquet-go/parquet-go v0.25.1
	github.com/rs/zerolog v1.35.1
)

require (
	github.com/andybalholm/brotli v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/pierrec/lz4/v4 v4.1.21 // indirect
	golang.org/x/sys v0.36.0 // indirect
)
