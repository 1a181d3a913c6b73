package fileprocessing

import "os"

// EnvAddress is the environment variable that names the Tether server for
// the sample's programs, as for the tether CLI. The API key, if the server
// requires one, comes from TETHER_API_KEY (read by the SDK's client).
const EnvAddress = "TETHER_ADDRESS"

// LocalAddress is the address of `tether dev`.
const LocalAddress = "http://127.0.0.1:7070"

// DefaultAddress is the default of the programs' -address flag:
// $TETHER_ADDRESS, or else the local dev server.
func DefaultAddress() string {
	if a := os.Getenv(EnvAddress); a != "" {
		return a
	}
	return LocalAddress
}
