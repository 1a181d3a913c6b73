package ui

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/tetherhq/tether/api"
)

// scheduleRoutes adds the schedule pages to m under the namespace prefix
// ns.
func (u *UI) scheduleRoutes(m *http.ServeMux, ns string) {
	m.HandleFunc("GET "+ns+"/schedules", u.listSchedules)
	m.HandleFunc("GET "+ns+"/schedules/{id}", u.schedule)
	m.HandleFunc("POST "+ns+"/schedules/{id}/pause", u.pauseSchedule(true))
	m.HandleFunc("POST "+ns+"/schedules/{id}/unpause", u.pauseSchedule(false))
	m.HandleFunc("POST "+ns+"/schedules/{id}/trigger", u.triggerSchedule)
}

// schedulesData is the content of the schedules page.
type schedulesData struct {
	Schedules []api.ScheduleSummary
	// Next and First are the links to the next and the first page.
	Next, First string
}

func (u *UI) listSchedules(w http.ResponseWriter, r *http.Request) {
	ns := r.PathValue("ns")
	q := url.Values{}
	d := &schedulesData{}
	if tok := r.URL.Query().Get("page_token"); tok != "" {
		q.Set("page_token", tok)
		d.First = nsURL(ns, "schedules")
	}
	p := &page{Title: "Schedules", Nav: "schedules", Data: d}
	var resp api.ListSchedulesResponse
	if _, err := u.client(w, r).do(r.Context(), http.MethodGet, nsPath(ns, "schedules"), q, nil, &resp); err != nil {
		p.Error, p.NeedsKey = err.Error(), needsKey(err)
		u.render(w, r, statusOf(err), "schedules", p)
		return
	}
	d.Schedules = resp.Schedules
	if resp.NextPageToken != "" {
		d.Next = nsURL(ns, "schedules") + "?page_token=" + url.QueryEscape(resp.NextPageToken)
	}
	u.render(w, r, http.StatusOK, "schedules", p)
}

// scheduleData is the content of a schedule's page.
type scheduleData struct {
	S *api.Schedule
	// Spec is the spec in words, one line per calendar, cron expression,
	// interval or skip calendar.
	Spec []string
	// ReadOnlyRole is the role of a key that may read the schedule but not
	// trigger, pause or unpause it ("" when it may).
	ReadOnlyRole string
}

func (u *UI) schedule(w http.ResponseWriter, r *http.Request) {
	u.showSchedule(w, r, http.StatusOK, "", "")
}

// showSchedule renders a schedule's page with a flash or a form error.
func (u *UI) showSchedule(w http.ResponseWriter, r *http.Request, status int, flash, formErr string) {
	ns, id := r.PathValue("ns"), r.PathValue("id")
	var s api.Schedule
	if _, err := u.client(w, r).do(r.Context(), http.MethodGet, nsPath(ns, "schedules", id), nil, nil, &s); err != nil {
		u.fail(w, r, "Schedule "+id, err)
		return
	}
	d := &scheduleData{S: &s, ReadOnlyRole: readOnlyRole(r.Context(), u.client(w, r), ns)}
	for _, c := range s.Spec.Calendars {
		d.Spec = append(d.Spec, "calendar "+c.String())
	}
	for _, c := range s.Spec.CronExpressions {
		d.Spec = append(d.Spec, "cron "+c)
	}
	for _, iv := range s.Spec.Intervals {
		line := "every " + iv.Every.D().String()
		if iv.Offset != 0 {
			line += ", offset " + iv.Offset.D().String()
		}
		d.Spec = append(d.Spec, line)
	}
	for _, c := range s.Spec.Skip {
		d.Spec = append(d.Spec, "except "+c.String())
	}
	u.render(w, r, status, "schedule", &page{Title: "Schedule " + id, Nav: "schedules", Flash: flash, Error: formErr, Data: d})
}

func (u *UI) pauseSchedule(pause bool) http.HandlerFunc {
	op, done := "unpause", "Schedule unpaused."
	if pause {
		op, done = "pause", "Schedule paused."
	}
	return func(w http.ResponseWriter, r *http.Request) {
		ns, id := r.PathValue("ns"), r.PathValue("id")
		body := api.SchedulePauseRequest{Note: strings.TrimSpace(r.PostFormValue("note"))}
		if _, err := u.client(w, r).do(r.Context(), http.MethodPost, nsPath(ns, "schedules", id, op), nil, body, nil); err != nil {
			u.showSchedule(w, r, statusOf(err), "", "Not done: "+err.Error())
			return
		}
		u.redirect(w, r, nsURL(ns, "schedules", id), done)
	}
}

func (u *UI) triggerSchedule(w http.ResponseWriter, r *http.Request) {
	ns, id := r.PathValue("ns"), r.PathValue("id")
	var resp api.ScheduleTriggerResponse
	if _, err := u.client(w, r).do(r.Context(), http.MethodPost, nsPath(ns, "schedules", id, "trigger"), nil, api.ScheduleTriggerRequest{}, &resp); err != nil {
		u.showSchedule(w, r, statusOf(err), "", "Not triggered: "+err.Error())
		return
	}
	msg := "Triggered: " + resp.Outcome
	if resp.WorkflowID != "" {
		msg += " " + resp.WorkflowID
	}
	u.redirect(w, r, nsURL(ns, "schedules", id), msg+".")
}
