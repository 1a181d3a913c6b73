package server

import "github.com/tetherhq/tether/server/services/retention"

// RetentionConfig tunes the retention job (server/services/retention):
// retention.Config, under the name AppConfig has always used.
type RetentionConfig = retention.Config
