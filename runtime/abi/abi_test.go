package abi

import (
	"strconv"
	"testing"
	"time"
)

// The version is a date, so that versions compare by age.
func TestVersionIsADate(t *testing.T) {
	if _, err := time.Parse("20060102", strconv.Itoa(Version)); err != nil {
		t.Errorf("abi.Version %d is not a date YYYYMMDD: %v", Version, err)
	}
}
