package ui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tetherhq/tether/api"
)

// batchRoutes adds the batch pages to m under the namespace prefix ns:
// the jobs with a form that starts one over a list query (the workflows
// list links to it with its query), and a job's page with its progress
// and its pause, resume and cancel buttons (docs/ui.md).
func (u *UI) batchRoutes(m *http.ServeMux, ns string) {
	m.HandleFunc("GET "+ns+"/batches", u.listBatches)
	m.HandleFunc("POST "+ns+"/batches", u.startBatch)
	m.HandleFunc("GET "+ns+"/batches/{id}", u.batch)
	for _, op := range []string{"pause", "resume", "cancel"} {
		m.HandleFunc("POST "+ns+"/batches/{id}/"+op, u.changeBatch(op))
	}
}

// batchesData is the content of the batches page.
type batchesData struct {
	Batches []api.Batch
	// Next and First are the links to the next and the first page.
	Next, First string
	// Operations are the operations the form offers.
	Operations []string
	// The form's values (kept when a start is refused).
	Operation, Query, Reason, SignalName, SignalInput, Rate string
	Force                                                   bool
	// ResetType, ResetBuildID and ResetSignals ("reapply" or "drop") are
	// the reset's values (operation reset).
	ResetType, ResetBuildID, ResetSignals string
	// ResetTypes are the reset types a batch may use (not event: event
	// ids differ from one workflow to the next).
	ResetTypes []string
	// Count is how many workflows the form's query matches now (-1:
	// not counted).
	Count int64
	// ReadOnlyRole is the role of a key that may read jobs but not start
	// one ("" when it may).
	ReadOnlyRole string
}

func (u *UI) listBatches(w http.ResponseWriter, r *http.Request) {
	in := r.URL.Query()
	d := &batchesData{Query: strings.TrimSpace(in.Get("query")), Operation: in.Get("operation")}
	u.showBatches(w, r, http.StatusOK, "", d)
}

// showBatches renders the batches page with a form error (or none).
func (u *UI) showBatches(w http.ResponseWriter, r *http.Request, status int, formErr string, d *batchesData) {
	ns := r.PathValue("ns")
	c := u.client(w, r)
	d.Operations, d.Count = api.BatchOperations(), -1
	d.ResetTypes = []string{api.ResetFirstTurn, api.ResetLastTurn, api.ResetBuildID}
	if d.ResetType == "" {
		d.ResetType = api.ResetLastTurn
	}
	if d.ResetSignals == "" {
		d.ResetSignals = "reapply"
	}
	q := url.Values{}
	if tok := r.URL.Query().Get("page_token"); tok != "" {
		q.Set("page_token", tok)
		d.First = nsURL(ns, "batches")
	}
	p := &page{Title: "Batch operations", Nav: "batches", Error: formErr, Data: d}
	var resp api.ListBatchesResponse
	if _, err := c.do(r.Context(), http.MethodGet, nsPath(ns, "batches"), q, nil, &resp); err != nil {
		p.Error, p.NeedsKey = err.Error(), needsKey(err)
		u.render(w, r, statusOf(err), "batches", p)
		return
	}
	d.Batches = resp.Batches
	if resp.NextPageToken != "" {
		d.Next = nsURL(ns, "batches") + "?page_token=" + url.QueryEscape(resp.NextPageToken)
	}
	if d.Query != "" {
		var n api.CountWorkflowsResponse
		if _, err := c.do(r.Context(), http.MethodGet, nsPath(ns, "workflows", "count"), url.Values{"query": {d.Query}}, nil, &n); err == nil {
			d.Count = n.Count
		}
	}
	d.ReadOnlyRole = readOnlyRole(r.Context(), c, ns)
	u.render(w, r, status, "batches", p)
}

func (u *UI) startBatch(w http.ResponseWriter, r *http.Request) {
	ns := r.PathValue("ns")
	d := &batchesData{
		Operation: r.PostFormValue("operation"), Query: strings.TrimSpace(r.PostFormValue("query")),
		Reason: strings.TrimSpace(r.PostFormValue("reason")), SignalName: strings.TrimSpace(r.PostFormValue("signal_name")),
		SignalInput: strings.TrimSpace(r.PostFormValue("signal_input")), Rate: strings.TrimSpace(r.PostFormValue("rate")),
		Force:     r.PostFormValue("force") != "",
		ResetType: r.PostFormValue("reset_type"), ResetBuildID: strings.TrimSpace(r.PostFormValue("reset_build_id")),
		ResetSignals: r.PostFormValue("reset_signals"),
	}
	if r.PostFormValue("confirm") == "" {
		u.showBatches(w, r, http.StatusBadRequest, "Start: tick the box to confirm.", d)
		return
	}
	req := api.BatchRequest{Operation: d.Operation, Query: d.Query, Reason: d.Reason, Force: d.Force}
	if d.Rate != "" {
		n, err := strconv.Atoi(d.Rate)
		if err != nil {
			u.showBatches(w, r, http.StatusBadRequest, "Rate: is not a number.", d)
			return
		}
		req.RatePerSecond = int32(n)
	}
	if d.Operation == api.BatchOpSignal {
		req.Signal = &api.BatchSignal{Name: d.SignalName}
		if d.SignalInput != "" {
			if !json.Valid([]byte(d.SignalInput)) {
				u.showBatches(w, r, http.StatusBadRequest, "Signal payload: is not valid JSON.", d)
				return
			}
			req.Signal.Input = json.RawMessage(d.SignalInput)
		}
	}
	if d.Operation == api.BatchOpReset {
		reapply := d.ResetSignals != "drop"
		req.Reset = &api.BatchReset{ResetType: d.ResetType, ReapplySignals: &reapply}
		if d.ResetType == api.ResetBuildID {
			req.Reset.BuildID = d.ResetBuildID
		}
	}
	var b api.Batch
	if _, err := u.client(w, r).do(r.Context(), http.MethodPost, nsPath(ns, "batches"), nil, req, &b); err != nil {
		u.showBatches(w, r, statusOf(err), "Not started: "+err.Error(), d)
		return
	}
	u.redirect(w, r, nsURL(ns, "batches", b.BatchID), "Batch started: "+strconv.FormatInt(b.Total, 10)+" workflows match.")
}

// batchData is the content of a job's page.
type batchData struct {
	B *api.Batch
	// Handled is done + failed; Percent is how much of the total that is
	// (at most 100).
	Handled, Percent int64
	// ReadOnlyRole is the role of a key that may read the job but not
	// pause, resume or cancel it ("" when it may).
	ReadOnlyRole string
}

func (u *UI) batch(w http.ResponseWriter, r *http.Request) {
	u.showBatch(w, r, http.StatusOK, "")
}

// showBatch renders a job's page with a form error (or none).
func (u *UI) showBatch(w http.ResponseWriter, r *http.Request, status int, formErr string) {
	ns, id := r.PathValue("ns"), r.PathValue("id")
	var b api.Batch
	if _, err := u.client(w, r).do(r.Context(), http.MethodGet, nsPath(ns, "batches", id), nil, nil, &b); err != nil {
		u.fail(w, r, "Batch "+id, err)
		return
	}
	d := &batchData{B: &b, Handled: b.Done + b.Failed, ReadOnlyRole: readOnlyRole(r.Context(), u.client(w, r), ns)}
	if b.Total > 0 {
		d.Percent = min(100, d.Handled*100/b.Total)
	}
	u.render(w, r, status, "batch", &page{Title: "Batch " + id, Nav: "batches", Error: formErr, Data: d})
}

func (u *UI) changeBatch(op string) http.HandlerFunc {
	done := map[string]string{"pause": "Batch paused.", "resume": "Batch resumed.", "cancel": "Batch canceled."}[op]
	return func(w http.ResponseWriter, r *http.Request) {
		ns, id := r.PathValue("ns"), r.PathValue("id")
		if _, err := u.client(w, r).do(r.Context(), http.MethodPost, nsPath(ns, "batches", id, op), nil, api.Empty{}, nil); err != nil {
			u.showBatch(w, r, statusOf(err), "Not done: "+err.Error())
			return
		}
		u.redirect(w, r, nsURL(ns, "batches", id), done)
	}
}
