package mocks_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/mocks"
)

// queryStatus is code under test: it queries a workflow's status.
func queryStatus(ctx context.Context, c client.Client, id string) (string, error) {
	v, err := c.QueryWorkflow(ctx, id, "", "status")
	if err != nil {
		return "", err
	}
	var s string
	if err := v.Get(&s); err != nil {
		return "", err
	}
	return s, nil
}

// Goal: samples-go's reqrespquery test shape: a query answers a
// mocks.Value whose Get is filled by Run.
func TestValueMock_QueryResult(t *testing.T) {
	c := mocks.NewClient(t)
	val := &mocks.Value{}
	val.On("Get", mock.AnythingOfType("*string")).Return(nil).Run(func(args mock.Arguments) {
		*args.Get(0).(*string) = "shipped"
	}).Once()
	c.On("QueryWorkflow", mock.Anything, "order-1", "", "status").Return(val, nil).Once()

	s, err := queryStatus(context.Background(), c, "order-1")
	require.NoError(t, err)
	require.Equal(t, "shipped", s)
	val.AssertExpectations(t)
}

// Goal: mocks.Values stands for converter.EncodedValues (the arguments a
// listener or a dynamic workflow reads).
func TestValuesMock_Get(t *testing.T) {
	vals := &mocks.Values{}
	vals.On("HasValues").Return(true)
	vals.On("Get", mock.AnythingOfType("*string"), mock.AnythingOfType("*int")).Return(func(ptrs ...any) error {
		*ptrs[0].(*string) = "a"
		*ptrs[1].(*int) = 2
		return nil
	}).Once()

	require.True(t, vals.HasValues())
	var s string
	var n int
	require.NoError(t, vals.Get(&s, &n))
	require.Equal(t, "a", s)
	require.Equal(t, 2, n)
	vals.AssertExpectations(t)
}
