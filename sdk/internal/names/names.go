// Package names derives the registered name of a workflow or activity from
// its Go function.
package names

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
)

// FuncName returns the name Tether registers fn under: the last element of
// the function's full name, without package path, receiver and the "-fm"
// suffix of method values. "github.com/acme/files.Download" → "Download",
// "github.com/acme/files.(*Activities).Upload-fm" → "Upload".
//
// Anonymous functions (closures, whose names end in ".funcN") have no stable
// name: FuncName reports an error asking for an explicit name.
func FuncName(fn any) (string, error) {
	if fn == nil {
		return "", errors.New("nil function")
	}
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func {
		return "", fmt.Errorf("%T is not a function", fn)
	}
	rf := runtime.FuncForPC(v.Pointer())
	if rf == nil {
		return "", fmt.Errorf("cannot name function %T", fn)
	}
	full := rf.Name()
	name := Short(full)
	if isAnonymous(full, name) {
		return "", fmt.Errorf("function %s is anonymous: give it an explicit name", full)
	}
	return name, nil
}

// Short trims a runtime function name to its last element.
func Short(full string) string {
	name := strings.TrimSuffix(full, "-fm")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// isAnonymous reports a closure: "pkg.Outer.func1" or "pkg.Outer.func1.2".
func isAnonymous(full, short string) bool {
	if strings.HasPrefix(short, "func") && len(short) > 4 && allDigits(short[4:]) {
		return true
	}
	if allDigits(short) && strings.Contains(full, ".func") {
		return true
	}
	return false
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// HostQueueActivity is the built-in activity that workflow.RunOnHost runs
// on a shared queue to pick a host: a worker with a host task queue answers
// it with that queue's name, without running user code.
const HostQueueActivity = "tether.HostTaskQueue"

// SessionCreateActivity is the built-in activity that workflow.CreateSession
// runs on a shared queue (and RecreateSession on a host queue): a worker
// with worker.Options.EnableSessionWorker answers it with its host task
// queue, its host name and a new session id, when it has room for one
// more session.
const SessionCreateActivity = "tether.session.Create"

// SessionKeepActivity is the built-in activity that holds a session open on
// its worker's host task queue, from CreateSession to CompleteSession: it
// runs until it is cancelled, and fails when its worker stops or dies, or
// when the session's ExecutionTimeout runs out.
const SessionKeepActivity = "tether.session.Keep"
