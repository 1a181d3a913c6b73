package store_test

import (
	"testing"

	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
)

// Goal: the PostgreSQL provider passes the storage conformance suite.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Provider { return newStore(t) })
}
