package fnsig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Values are the encoded arguments of a call, as a dynamic workflow or
// activity receives them (they satisfy converter.EncodedValues): one
// argument travels as its JSON value, several as one JSON array.
type Values struct {
	// Raw is the call's input as it travelled.
	Raw json.RawMessage
}

// HasValues reports whether the call had any arguments (an input that is
// neither empty nor null).
func (v Values) HasValues() bool {
	t := bytes.TrimSpace(v.Raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// Get decodes the arguments into valuePtrs, in order. One pointer receives
// the whole input (one argument travels as itself); several receive the
// elements of the JSON array several arguments travel as, and pointers
// past its end are left unchanged. Without arguments it returns an error.
func (v Values) Get(valuePtrs ...any) error {
	if len(valuePtrs) == 0 {
		return nil
	}
	if !v.HasValues() {
		return errors.New("decode arguments: the call has none")
	}
	if len(valuePtrs) == 1 {
		if err := Decode(v.Raw, valuePtrs[0]); err != nil {
			return fmt.Errorf("decode argument: %w", err)
		}
		return nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(v.Raw, &parts); err != nil {
		return fmt.Errorf("decode %d arguments: want a JSON array: %w", len(valuePtrs), err)
	}
	for i, p := range valuePtrs {
		if i >= len(parts) {
			break
		}
		if err := Decode(parts[i], p); err != nil {
			return fmt.Errorf("decode argument %d: %w", i+1, err)
		}
	}
	return nil
}
