package mocks

import (
	"github.com/stretchr/testify/mock"

	"github.com/tetherhq/tether/sdk/converter"
)

// Value is a mock of converter.EncodedValue, a query's result (Temporal's
// mocks.Value): the same type as EncodedValue.
type Value = EncodedValue

var _ converter.EncodedValue = (*Value)(nil)

// Values is a mock of converter.EncodedValues, the arguments or details
// of a call (Temporal's mocks.Values).
type Values struct {
	mock.Mock
}

var _ converter.EncodedValues = (*Values)(nil)

// HasValues mocks converter.EncodedValues.HasValues.
func (m *Values) HasValues() bool { return m.Called().Bool(0) }

// Get mocks converter.EncodedValues.Get: the call's arguments are each of
// valuePtrs; return an error, or a function of valuePtrs that fills them.
func (m *Values) Get(valuePtrs ...any) error {
	ret := m.Called(valuePtrs...)
	if fn, ok := ret.Get(0).(func(...any) error); ok {
		return fn(valuePtrs...)
	}
	return ret.Error(0)
}
