//go:build !linux

package bench

import "os/exec"

// setDeathSignal does nothing outside Linux: the child stops when its
// standard input closes, which happens when this process dies.
func setDeathSignal(*exec.Cmd) {}
