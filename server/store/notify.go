package store

import (
	"fmt"
	"strconv"
	"strings"
)

// NotifyChannel is the PostgreSQL channel on which the store announces new
// work, in the same transaction that creates it (NOTIFY is delivered on
// commit). Payloads are built by the Key functions below.
const NotifyChannel = "tether"

// WorkflowQueueKey names the wake-up of workflow pollers of a task queue.
func WorkflowQueueKey(namespace, taskQueue string) string {
	return "w|" + namespace + "|" + taskQueue
}

// ActivityQueueKey names the wake-up of activity pollers of a task queue.
func ActivityQueueKey(namespace, taskQueue string) string {
	return "a|" + namespace + "|" + taskQueue
}

// WorkerCancelKey names the wake-up of a worker some of whose attempts were
// just flagged cancelled.
func WorkerCancelKey(namespace, workerID string) string {
	return "c|" + namespace + "|" + workerID
}

// ResultKey names the wake-up of waiters on a workflow's result.
func ResultKey(namespace, instanceID string) string {
	return "r|" + namespace + "|" + instanceID
}

// ParseKey splits a notification payload into its kind ('w', 'a', 'c', 'r'),
// namespace and name.
func ParseKey(payload string) (kind byte, namespace, name string, err error) {
	parts := strings.SplitN(payload, "|", 3)
	if len(parts) != 3 || len(parts[0]) != 1 {
		return 0, "", "", fmt.Errorf("store: bad notification payload %q", payload)
	}
	return parts[0][0], parts[1], parts[2], nil
}

// NotificationPayload is the payload announcing items new things under
// key: the key itself for one, "key#items" for more. ('#' appears in no
// namespace or name.)
func NotificationPayload(key string, items int) string {
	if items <= 1 {
		return key
	}
	return key + "#" + strconv.Itoa(items)
}

// ParseNotification splits a payload built by NotificationPayload into its
// key (checked with ParseKey) and item count.
func ParseNotification(payload string) (key string, items int, err error) {
	key, count, many := strings.Cut(payload, "#")
	items = 1
	if many {
		items, err = strconv.Atoi(count)
		if err != nil || items < 1 {
			return "", 0, fmt.Errorf("store: bad notification payload %q", payload)
		}
	}
	if _, _, _, err := ParseKey(key); err != nil {
		return "", 0, err
	}
	return key, items, nil
}
