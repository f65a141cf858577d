package api

// Store is what the api reads from storage (declared here, by its consumer).
type Store interface{}
