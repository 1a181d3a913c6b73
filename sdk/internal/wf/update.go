package wf

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// UpdateHandlerOptions are the options of SetUpdateHandlerWithOptions
// (Temporal's workflow.UpdateHandlerOptions).
type UpdateHandlerOptions struct {
	// Validator, when set, is called with the update's arguments before
	// the update is accepted: func([ctx Context, ]args...) error. An error
	// rejects the update: the caller gets it, and nothing is recorded in
	// history. It must not block or change the workflow's state.
	Validator any
}

// updateHandler is one SetUpdateHandler registration.
type updateHandler struct {
	handler   *fnsig.Sig
	validator *fnsig.Sig
}

// SetUpdateHandler sets the handler of updateName (Temporal's
// workflow.SetUpdateHandler): func(ctx Context, args...) (R, error), or
// returning only an error. The handler runs as a workflow goroutine and may
// block (await activities, timers, signals); its return completes the
// update.
func SetUpdateHandler(ctx Context, updateName string, handler any) error {
	return SetUpdateHandlerWithOptions(ctx, updateName, handler, UpdateHandlerOptions{})
}

// SetUpdateHandlerWithOptions is SetUpdateHandler with a validator.
func setUpdateHandlerWithOptionsDirect(ctx Context, updateName string, handler any, opts UpdateHandlerOptions) error {
	if updateName == "" {
		return errors.New("workflow: SetUpdateHandler: empty update name")
	}
	h, err := fnsig.InspectActivity(handler, workflowContextType)
	if err != nil {
		return fmt.Errorf("workflow: SetUpdateHandler %q: handler: %w", updateName, err)
	}
	uh := &updateHandler{handler: h}
	if opts.Validator != nil {
		v, err := fnsig.InspectActivity(opts.Validator, workflowContextType)
		if err != nil {
			return fmt.Errorf("workflow: SetUpdateHandler %q: validator: %w", updateName, err)
		}
		if v.Out != nil {
			return fmt.Errorf("workflow: SetUpdateHandler %q: the validator must return only an error", updateName)
		}
		uh.validator = v
	}
	s := ctx.impl().s
	if s.updates == nil {
		s.updates = map[string]*updateHandler{}
	}
	s.updates[updateName] = uh
	return nil
}

// startUpdates handles the update messages of the batch just applied, in
// order: live, each is validated (a missing handler or a validator's error
// rejects it: a reject_update command and no event); replayed (it was
// accepted, or it would not be in history) it is not validated again. An
// accepted update's handler starts as a workflow goroutine, whose return
// issues complete_update.
func (s *state) startUpdates() {
	evs := s.pendingUpdates
	s.pendingUpdates = nil
	for i := range evs {
		ev := evs[i]
		h := s.updates[ev.UpdateName]
		if h == nil {
			if s.replaying {
				s.fatal = &NondeterminismError{Message: fmt.Sprintf("history has update %q (%s) accepted, the code has no handler of it", ev.UpdateID, ev.UpdateName)}
				return
			}
			known := make([]string, 0, len(s.updates))
			for k := range s.updates {
				known = append(known, k)
			}
			slices.Sort(known)
			s.rejectUpdate(ev.UpdateID, api.Error{Type: "UnknownUpdate",
				Message: fmt.Sprintf("unknown update name %s. KnownUpdateNames=[%s]", ev.UpdateName, strings.Join(known, " "))})
			continue
		}
		in, err := h.handler.DecodeInput(ev.Input)
		if err != nil {
			if s.replaying {
				s.fatal = fmt.Errorf("workflow: update %q: %w", ev.UpdateID, err)
				return
			}
			s.rejectUpdate(ev.UpdateID, api.Error{Type: "InvalidInput", Message: err.Error()})
			continue
		}
		if !s.replaying && (h.validator != nil || s.inbound != nil) {
			if err := s.validateUpdate(h, ev, in); err != nil {
				e := errconv.ToAPI(err)
				e.Retryable = nil
				s.rejectUpdate(ev.UpdateID, e)
				continue
			}
		}
		id := ev.UpdateID
		ctx := reflect.ValueOf(Context(s.rootCtx))
		s.runningHandlers++
		s.spawn("update "+id, func() {
			defer func() { s.runningHandlers-- }()
			out, err := s.executeUpdate(h, ev, ctx, in)
			if s.stopped() {
				return
			}
			cmd := api.Command{Type: api.CommandCompleteUpdate, UpdateID: id}
			if err == nil {
				cmd.Result, err = fnsig.Encode(out)
			}
			if err != nil {
				e := errconv.ToAPI(err)
				e.Retryable = nil
				cmd.Result, cmd.Error = nil, &e
			}
			s.issue(cmd)
		})
	}
}

// validate runs a validator on the update's arguments; a panic (a
// blocking call among them) is an error too.
func (s *state) validate(v *fnsig.Sig, ev api.Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("update validator panicked: %v", r)
		}
	}()
	in, err := v.DecodeInput(ev.Input)
	if err != nil {
		return err
	}
	_, err = v.Call(reflect.ValueOf(Context(s.rootCtx)), in)
	return err
}

// rejectUpdate issues a reject_update command.
func (s *state) rejectUpdate(id string, e api.Error) {
	if s.rejectedNow == nil {
		s.rejectedNow = map[string]bool{}
	}
	s.rejectedNow[id] = true
	s.commands = append(s.commands, api.Command{Type: api.CommandRejectUpdate, UpdateID: id, Error: &e})
}
