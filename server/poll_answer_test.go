package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
)

// TestAnswerPoll: a poll's error passes through, an empty poll is a 204
// without a body, and a found task is a 200 whose nil lists fill made
// empty, encoded [] and not null.
func TestAnswerPoll(t *testing.T) {
	e := echo.New()
	answer := func(found bool, err error, task *api.WorkflowTask) (*httptest.ResponseRecorder, error) {
		rec := httptest.NewRecorder()
		c := e.NewContext(httptest.NewRequest(http.MethodPost, "/", nil), rec)
		return rec, answerPoll(c, found, err, task, func(t *api.WorkflowTask) {
			t.History, t.Messages = orEmpty(t.History), orEmpty(t.Messages)
		})
	}
	boom := errors.New("boom")
	if _, err := answer(false, boom, nil); !errors.Is(err, boom) {
		t.Fatalf("error %v, want the poll's", err)
	}
	rec, err := answer(false, nil, nil)
	if err != nil || rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Fatalf("empty poll: %v, %d %q; want 204 without a body", err, rec.Code, rec.Body)
	}
	rec, err = answer(true, nil, &api.WorkflowTask{InstanceID: "w"})
	if err != nil || rec.Code != http.StatusOK {
		t.Fatalf("found: %v, %d", err, rec.Code)
	}
	for _, want := range []string{`"history":[]`, `"messages":[]`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("body %s lacks %s", rec.Body, want)
		}
	}
}
