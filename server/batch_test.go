package server

// The batch routes' access, in the table of TestAuth_EveryRouteHasARule:
// a client key starts and steers jobs, a reader key reads them.
func init() {
	for k, v := range map[string]byte{
		"POST " + BasePath + "/batches":                  'c',
		"GET " + BasePath + "/batches":                   'v',
		"GET " + BasePath + "/batches/:batch_id":         'v',
		"POST " + BasePath + "/batches/:batch_id/pause":  'c',
		"POST " + BasePath + "/batches/:batch_id/resume": 'c',
		"POST " + BasePath + "/batches/:batch_id/cancel": 'c',
	} {
		routeAccess[k] = v
	}
}
