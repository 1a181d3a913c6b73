package names

import (
	"context"
	"strings"
	"testing"
)

type acts struct{}

func (acts) Upload(ctx context.Context) error  { return nil }
func (*acts) Delete(ctx context.Context) error { return nil }
func Download(ctx context.Context) error       { return nil }

func TestFuncName(t *testing.T) {
	var a acts
	for _, tc := range []struct {
		fn   any
		want string
	}{
		{Download, "Download"},
		{a.Upload, "Upload"},
		{(&a).Delete, "Delete"},
		{acts.Upload, "Upload"},
		{strings.ToUpper, "ToUpper"},
	} {
		got, err := FuncName(tc.fn)
		if err != nil || got != tc.want {
			t.Errorf("FuncName(%T) = %q, %v; want %q", tc.fn, got, err, tc.want)
		}
	}
	if _, err := FuncName(func() {}); err == nil || !strings.Contains(err.Error(), "anonymous") {
		t.Errorf("closure: %v", err)
	}
	if _, err := FuncName(42); err == nil {
		t.Error("non-function accepted")
	}
}
