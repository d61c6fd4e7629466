//go:build !amd64

package perfetto

import "unsafe"

// prefetch is a no-op where no assembly version is written.
func prefetch(p, last unsafe.Pointer) {}
