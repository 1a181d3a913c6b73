package activity_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetherhq/tether/sdk/activity"
)

// An activity returns an error with a type of its own, which a retry policy's
// NonRetryableErrorTypes can match.
func ExampleNewNonRetryableError() {
	err := activity.NewNonRetryableError("CardDeclined", "card 4242 declined", map[string]string{"card": "4242"})
	var ae *activity.Error
	fmt.Println(errors.As(err, &ae), ae.ErrorType(), ae.Retryable())
	// Output: true CardDeclined false
}

// Outside a running activity, GetInfo returns the zero Info.
func ExampleGetInfo() {
	ctx := context.Background()
	info := activity.GetInfo(ctx)
	fmt.Println(activity.IsActivity(ctx), info.Attempt, info.ActivityType.Name == "")
	// Output: false 0 true
}
