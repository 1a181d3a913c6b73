package store

// TripCounter is tripCounter, for the package's external tests.
type TripCounter = tripCounter
