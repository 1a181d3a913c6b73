package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
)

// BenchmarkHeartbeatParts compares each part of a heartbeat the fast path
// replaced with the general code it stands in for (no database needed).
func BenchmarkHeartbeatParts(b *testing.B) {
	srv := New(nil, nil, Config{}, nil)
	body := []byte(`{"worker_id":"bench-1234","identity":"tether-bench","lease_duration":"10s"}`)
	newContext := func() (echo.Context, *http.Request, *bytes.Reader) {
		req := httptest.NewRequest(http.MethodPost, "/v1/namespaces/default/workers/heartbeat", nil)
		c := srv.echo.NewContext(req, newDiscardWriter())
		c.SetParamNames("namespace")
		c.SetParamValues("default")
		return c, req, bytes.NewReader(body)
	}

	b.Run("bind/general", func(b *testing.B) {
		c, req, rd := newContext()
		b.ReportAllocs()
		for b.Loop() {
			rd.Reset(body)
			req.Body = io.NopCloser(rd)
			bd := srv.bind(c)
			_ = bd.namespace()
			var hb api.WorkerHeartbeatRequest
			bd.body(&hb)
			if bd.err() != nil {
				b.Fatal(bd.err())
			}
		}
	})
	b.Run("bind/fast", func(b *testing.B) {
		c, req, rd := newContext()
		b.ReportAllocs()
		for b.Loop() {
			rd.Reset(body)
			req.Body = io.NopCloser(rd)
			buf := srv.heartbeatBufs.get()
			data, err := readBody((*buf)[:0], req.Body)
			var hb api.WorkerHeartbeatRequest
			if err != nil || !validName(c.Param("namespace")) || !decodeHeartbeat(data, &hb) || !heartbeatValid(&hb) {
				b.Fatal("not accepted")
			}
			*buf = data
			srv.heartbeatBufs.put(buf)
		}
	})

	answer := api.WorkerHeartbeatResponse{State: api.WorkerActive, LeaseExpiresAt: time.Now(), Cancels: []api.AttemptCancel{}}
	b.Run("answer/c.JSON", func(b *testing.B) {
		c, _, _ := newContext()
		w := c.Response().Writer.(*discardWriter)
		b.ReportAllocs()
		for b.Loop() {
			w.reset()
			c.Response().Committed = false
			if err := c.JSON(http.StatusOK, answer); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("answer/fast", func(b *testing.B) {
		c, _, _ := newContext()
		w := c.Response().Writer.(*discardWriter)
		b.ReportAllocs()
		for b.Loop() {
			w.reset()
			c.Response().Committed = false
			buf := srv.heartbeatBufs.get()
			// writeHeartbeatAnswer less heartbeatAnswer (no transition).
			out, ok := appendHeartbeatAnswer((*buf)[:0], &answer)
			if !ok {
				b.Fatal("not encoded")
			}
			if h := c.Response().Header(); h.Get(echo.HeaderContentType) == "" {
				h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
			}
			c.Response().WriteHeader(http.StatusOK)
			_, _ = c.Response().Write(out)
			*buf = out
			srv.heartbeatBufs.put(buf)
		}
	})
}
