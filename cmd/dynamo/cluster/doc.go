// Package cluster holds the end-to-end test of several dynamo nodes sharing
// one PostgreSQL database: real processes of the real binary, a real
// (throwaway) PostgreSQL, a loopback origin that logs every request, and a
// node killed with SIGKILL in the middle of its polls. It has no code of
// its own.
package cluster
