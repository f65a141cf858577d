package storage

import "time"

// Registration is a resource registered at run time, as the store keeps it:
// its definition is the JSON of a config.ResourceEntry (the configuration package's).
type Registration struct {
	ID         string
	Definition []byte
	Registered time.Time // first registered
	Updated    time.Time // last replaced
}
