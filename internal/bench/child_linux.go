package bench

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the child get SIGKILL when this process dies, so
// that no worker outlives a killed bench.
func setDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
