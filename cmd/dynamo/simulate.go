package main

import (
	"context"
	"errors"
	"io"
)

func cmdSimulate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return errors.New("not implemented yet")
}
