//go:build !linux

package main

import "os"

// senders: elsewhere every signal occa-prof receives is passed on.
type senders struct{}

func findSenders() *senders                      { return &senders{} }
func (s *senders) reachedProgram(os.Signal) bool { return false }
func (s *senders) close()                        {}
